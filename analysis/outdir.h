/* All-or-nothing output directories (kcs reduce's report directory, kcs
 * publish's bundle): built as DIR.partial-<pid>, then swapped in for DIR in
 * one rename (renameat2 RENAME_EXCHANGE where the file system has it),
 * after which the old directory is removed. A failed build removes its
 * partial directory and leaves DIR as it was. Only an empty directory or
 * an earlier output of the same command (one of its marker files in it) is
 * replaced: any other directory is refused. */
#ifndef KCS_OUTDIR_H
#define KCS_OUTDIR_H

#include <stddef.h>

#include "error.h"

/* Check DIR (markers: NULL-terminated file names one of which an earlier
 * output has; what: how that output is named in the refusal, e.g. "kcs
 * report directory (no report.md)"; cmd: the command named in it) and
 * create DIR.partial-<pid> into tmp. */
int kcs_outdir_begin(const char *dir, const char *const *markers, const char *what,
                     const char *cmd, char *tmp, size_t len, kcs_error *err);
/* Put tmp in place of dir (and fsync dir's parent); on failure tmp is removed. */
int kcs_outdir_publish(const char *tmp, const char *dir, kcs_error *err);
/* Remove a directory tree (nothing followed through symbolic links). */
void kcs_outdir_remove(const char *dir);

#endif
