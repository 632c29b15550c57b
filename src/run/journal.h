/* Per-rank append-only journals: what makes `kcs run --resume` lose nothing.
 *
 * Each rank appends one record per finished case to OUT.h5.journal/rank-R.kj
 * and fsyncs it before the case's collective HDF5 write. A record carries
 * the case's result rows, its sample row and its input digest, framed by a
 * magic number and closed by an XXH3 checksum of the whole record. A kill at
 * any moment leaves at most one torn record at the end of each journal,
 * which the reader detects and drops. The HDF5 file is never trusted after
 * a kill: resume rebuilds it from the journals and runs only what is
 * missing. The journals are removed once the dataset is complete. */
#ifndef KCS_JOURNAL_H
#define KCS_JOURNAL_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "store.h"

typedef struct kcs_journal_header {
    uint64_t plan_hash;
    int32_t n_ranks;
    int32_t rank;
    int32_t max_trials;
    int32_t n_samples;
    int64_t n_cases;
    char study_path[4096]; /* absolute, so `kcs run --resume OUT` finds it */
    /* Everything outside the study that shapes the results (format 2):
     * resume restores these or refuses to mix. plan_hash has them folded in. */
    char plugin[4096];       /* --plugin, absolute; "" none */
    uint64_t plugin_digest;  /* XXH3 of the plugin library's bytes */
    double case_timeout;     /* --case-timeout; 0 none */
    char backends_env[256];  /* KCS_BACKENDS at the start */
} kcs_journal_header;

/* One replayable case of this rank. */
typedef struct kcs_journal_entry {
    int present;
    uint64_t input_digest;
    kcs_result_rec *recs; /* max_trials rows */
    double *samples;      /* n_samples values */
    int broken;           /* the rank's backend hung or crashed by the end of this case */
    char why[256];        /* ... and why */
} kcs_journal_entry;

typedef struct kcs_journal {
    FILE *f;
    char path[4096];
    kcs_journal_header h;
} kcs_journal;

/* "OUT.h5.journal" and "OUT.h5.journal/rank-R.kj". */
void kcs_journal_dir(const char *out_path, char *buf, size_t len);
void kcs_journal_file(const char *out_path, int rank, char *buf, size_t len);

/* Start a new journal (truncating any old one). */
int kcs_journal_create(kcs_journal *j, const char *out_path, const kcs_journal_header *h,
                       kcs_error *err);
/* Read an existing journal: header into *h and, when entries != NULL,
 * the last valid record of each case into entries[n_cases] (allocating
 * recs/samples). A torn tail is dropped and the file truncated to its valid
 * prefix; then the journal is left open for appending. */
int kcs_journal_resume(kcs_journal *j, const char *out_path, int rank, kcs_journal_header *h,
                       kcs_journal_entry *entries, int64_t n_cases, kcs_error *err);
/* Only the header (to find the study of `kcs run --resume OUT`). */
int kcs_journal_read_header(const char *out_path, int rank, kcs_journal_header *h,
                            kcs_error *err);
/* Append one case durably (write + fflush + fsync), with the state of the
 * rank's backend after it (broken: a call hung or crashed; why). */
int kcs_journal_append(kcs_journal *j, int64_t case_idx, uint64_t input_digest,
                       const kcs_result_rec *recs, const double *samples, int broken,
                       const char *why, kcs_error *err);
void kcs_journal_close(kcs_journal *j);
void kcs_journal_entries_free(kcs_journal_entry *e, int64_t n);

#endif
