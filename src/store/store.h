/* The HDF5 dataset (schema version 2, DESIGN §5), written with parallel
 * HDF5 and collective transfers: every rank creates every object in plan
 * order; each rank writes its own rows. Strings in datasets are
 * fixed-length (parallel HDF5 cannot write variable-length data). */
#ifndef KCS_STORE_H
#define KCS_STORE_H

#include <mpi.h>
#include <stdint.h>

#include "error.h"
#include "study.h"

/* 2: /samples is one dataset [n_cases, n_ranks, n_samples] (row i: the
 * case in row i of /cases); 1: one dataset /samples/<case_id> [n_ranks,
 * n_samples] per case (still read; merged datasets keep that form). */
#define KCS_SCHEMA_VERSION 2
#define KCS_SCHEMA_VERSION_MIN 1
#define KCS_STR_SHORT 32
#define KCS_STR_LONG 128

/* What happened to one (case, rank, trial): /results.status. Rows keep the
 * name (the dataset's text); code compares kcs_status values. */
typedef enum kcs_status {
    KCS_ST_UNKNOWN = -1, /* text that is none of these (a damaged or newer file) */
    KCS_ST_OK,           /* the call returned an output, judged */
    KCS_ST_RAISED,       /* the kernel raised an error on purpose (judged: raise semantics) */
    KCS_ST_ERROR,        /* the call or its judgement failed */
    KCS_ST_UNSUPPORTED,  /* the backend does not offer the op / variant */
    KCS_ST_TIMEOUT,      /* the call ran past its time limit */
    KCS_ST_CRASHED,      /* the call died of a signal */
    KCS_ST_UNAVAILABLE,  /* the rank's backend or device could not be opened */
    KCS_ST_SKIPPED,      /* not run: a case with fewer trials than the table's width */
    KCS_ST_ABSENT,       /* the reducer's placeholder for a rank a merged dataset lacks */
    KCS_ST_COUNT
} kcs_status;

const char *kcs_status_name(kcs_status s);
kcs_status kcs_status_of(const char *text);
/* Store s's name into a record's status field. */
#define KCS_SET_STATUS(field, s) snprintf((field), sizeof(field), "%s", kcs_status_name(s))

/* One row of /results. */
typedef struct kcs_result_rec {
    int64_t case_id;
    int32_t rank;
    int32_t trial;
    char status[16];   /* kcs_status_name() of a kcs_status */
    uint64_t output_digest;
    double tau, eta;
    double max_abs, max_rel, max_ulp, mean_ulp, backward_err;
    double max_scaled, effective_acc_bits;
    int64_t nan_count, inf_count;
    int32_t guard_ok;
    int64_t time_ns;
    char verdict[24];
    char signature[64];
    char message[KCS_ERRMSG_MAX]; /* the whole reason of a status other than ok ("" when ok;
                                     raised: the kernel's own reason) */
} kcs_result_rec;

/* One row of /cases. */
typedef struct kcs_case_rec {
    int64_t case_id;
    char contract[KCS_STR_SHORT];
    char op[KCS_STR_SHORT];
    char variant[KCS_STR_SHORT];
    char dtype_in[16], dtype_acc[16], dtype_out[16];
    int64_t m, n, k, batch;
    char input_dist[KCS_STR_SHORT];
    uint64_t seed;
    uint64_t input_digest;
    int32_t trials;
} kcs_case_rec;

/* One row of /provenance/ranks. */
typedef struct kcs_rank_rec {
    int32_t rank;
    char host[64];
    char backend[16];
    int32_t device;
    char vendor[64], model[KCS_STR_LONG], arch[64], driver[64], runtime[64], uuid[48];
    char profile[KCS_STR_SHORT];
    char variant[64];
    char status[16];
    char blas[256];          /* the BLAS library of this rank's process (cpu native kernels) */
    int32_t blas_threads;    /* its thread count during the run */
    char why[KCS_ERRMSG_MAX]; /* why the rank is unavailable, in full ("" when ok) */
} kcs_rank_rec;

typedef struct kcs_store kcs_store;

typedef struct kcs_store_meta {
    const char *command_line;
    const kcs_study *study;
    const kcs_plan *plan;
    int n_ranks;           /* must equal the size of the communicator */
    int n_samples;         /* samples per case and rank (/samples) */
    const char *backends;  /* backends compiled in, for /provenance/build */
    const char *order;     /* record_order: every rank's summation trees (JSON, the
                              same text on every rank) for /provenance/order; NULL:
                              no such dataset */
} kcs_store_meta;

/* Collective: create path (must not exist: KCS_E_EXISTS) and every object
 * of the schema. Every
 * rank passes the same meta (checked: plan hash, sizes, text lengths). All
 * functions below are collective and return the same code on every rank
 * (a failure on one rank is agreed on, with that rank's message). */
int kcs_store_create(const char *path, MPI_Comm comm, const kcs_store_meta *meta,
                     kcs_store **st_p, kcs_error *err);
/* Collective: every rank passes its own record; rank 0 gathers and writes
 * /provenance/ranks (the rank field is set to the sender's rank). */
int kcs_store_write_ranks(kcs_store *st, const kcs_rank_rec *mine, kcs_error *err);
/* Collective: write the /cases table, recs[n_cases] in plan order (identical
 * on every rank; only rank 0's is used, other ranks may pass NULL). */
int kcs_store_write_cases(kcs_store *st, const kcs_case_rec *recs, kcs_error *err);
/* Collective per case (every rank calls it with the same case_idx, in the
 * same order): this rank's trials of case case_idx (index into the plan)
 * and its sample row. recs[0..n_trials), n_trials <= plan max_trials; the
 * store sets case_id, rank and trial of each row from case_idx, the rank
 * and the position, and writes the slots n_trials..max_trials-1 as status
 * "skipped" (numbers NaN / 0). samples: n_samples values, or NULL (a row of
 * NaN). The rows are copied into a batch of consecutive cases, written to
 * /results and /samples with one collective write each when
 * the batch is full (KCS_STORE_BATCH_CASES cases, default: as many as fit
 * in KCS_STORE_BATCH_BYTES = 16 MiB of this rank's rows and samples; rank
 * 0's values count), when a case does not follow the batch's last one, or
 * at kcs_store_flush/kcs_store_close. A bad call (case_idx or n_trials out
 * of range) fails the flush that follows, on every rank. Whoever needs the
 * rows to survive a crash before the flush keeps them elsewhere (the
 * runner's journal). */
int kcs_store_write_case_results(kcs_store *st, int64_t case_idx, const kcs_result_rec *recs,
                                 int n_trials, const double *samples, kcs_error *err);
/* Collective: write the buffered cases now (a no-op when none are). */
int kcs_store_flush(kcs_store *st, kcs_error *err);
/* Collective: write the last batch, mark the complete attribute, close.
 * On failure the file is closed without it (as kcs_store_abort). */
int kcs_store_close(kcs_store *st, kcs_error *err);
/* Abort: close without marking complete (after an error). Collective: every
 * rank calls it (the functions above fail on all ranks alike, so a caller
 * that aborts on failure does). NULL is a no-op. */
void kcs_store_abort(kcs_store *st);

/* The HDF5 compound types of the records (hid_t values; the caller
 * H5Tclose()s them; negative on failure). Used by the reader too. */
int64_t kcs_h5_result_type(void);
int64_t kcs_h5_case_type(void);
int64_t kcs_h5_rank_type(void);

#endif
