/* One writer per output, and a final rename that never replaces a file.
 *
 * `kcs run -o OUT` (rank 0) takes an exclusive lock on OUT.journal/lock
 * before anything else is written: a second job on the same output is
 * refused with the live job's host and pid. The lock is an flock (fcntl
 * as a fallback), released by the kernel when the job dies, so a lock file
 * left by a dead job is recognised as stale and taken over. */
#ifndef KCS_OUTLOCK_H
#define KCS_OUTLOCK_H

#include <stddef.h>

#include "error.h"

typedef struct kcs_outlock {
    int fd;            /* -1: not held */
    int created_dir;   /* this job created OUT.journal/ */
    char path[4096];   /* OUT.journal/lock */
    char dir[4096];    /* OUT.journal */
    char stale[256];   /* the previous owner's line when a dead job left one, else "" */
} kcs_outlock;

/* Create OUT.journal/ if needed and lock it. KCS_E_EXISTS (exit 2) when a
 * live job holds it (the message names it), KCS_E_IO when the directory or
 * the lock file cannot be made. */
int kcs_outlock_take(kcs_outlock *l, const char *out_path, kcs_error *err);
/* 1 when OUT.journal/ holds rank journals (rank-*.kj). */
int kcs_outlock_has_journals(const kcs_outlock *l);
/* Remove every rank-*.kj in OUT.journal/ (--force). */
void kcs_outlock_clear_journals(const kcs_outlock *l);
/* Release the lock. remove != 0: also delete the lock file and the
 * directory (when empty); else the lock file stays, naming this job. */
void kcs_outlock_release(kcs_outlock *l, int remove);

/* Move tmp to out. Without force an existing out is never replaced (hard
 * link then unlink, or renameat2(RENAME_NOREPLACE) where links are not
 * supported): KCS_E_EXISTS if out appeared meanwhile (tmp is kept). The
 * directory is fsynced afterwards. */
int kcs_publish(const char *tmp, const char *out, int force, kcs_error *err);
/* Copy src to dst (created, must not exist; src's mode), fsynced.
 * KCS_E_IO on failure (dst removed). */
int kcs_copy_file(const char *src, const char *dst, kcs_error *err);
/* fsync the directory holding path. */
int kcs_fsync_parent(const char *path);

#endif
