/* One view of one or several kcs datasets: the union of their cases
 * (matched by contract, op, dtypes, shape, input distribution and seed;
 * refused when a matched case has different input digests) and the
 * concatenation of their ranks (ranks of dataset 2 become n1.., ...).
 * Cases are read one at a time: results [n_ranks x max_trials] and
 * samples [n_ranks x n_samples]; a dataset that lacks a case contributes
 * rows with status "absent". Memory: O(n_cases) case records. */
#ifndef KCS_VIEW_H
#define KCS_VIEW_H

#include <stdint.h>

#include "error.h"
#include "store.h"
#include "store_read.h"

#define KCS_VIEW_MAX_SOURCES 16

typedef struct kcs_view_source {
    char *path;
    kcs_store_reader *r;
    kcs_store_info info;  /* command_line owned by the view */
    int first_rank;       /* its rank 0 in the view */
    char *study_text;     /* /study (NULL when unreadable) */
    uint64_t study_seed;  /* from the study text; seed_ok = 0 when it has none */
    int seed_ok;
    int64_t n_matched;    /* its cases also found in an earlier source */
    int64_t reads;        /* cases read since the reader was (re)opened */
} kcs_view_source;

/* HDF5 keeps a few KiB per object opened while a file stays open (a
 * 1 GiB dataset of 5000 cases: +25 MiB); the view reopens a source after
 * this many cases so that memory stays flat. */
#define KCS_VIEW_REOPEN 256

typedef struct kcs_view_case {
    kcs_case_rec rec;                       /* case_id = the index in the view */
    int64_t src_idx[KCS_VIEW_MAX_SOURCES];  /* row in the source's /cases, -1 absent */
    int64_t src_case_id[KCS_VIEW_MAX_SOURCES];
    int first_src;                          /* the first source holding it */
    /* where its inputs come from: the case id and study seed they were
     * generated with (a merged dataset keeps them in /provenance/case_origin) */
    int64_t origin_id;
    uint64_t origin_seed;
    int origin_ok;
} kcs_view_case;

/* One row of /provenance/case_origin in a merged dataset. */
typedef struct kcs_origin_rec {
    int64_t case_id;        /* in the merged dataset */
    int32_t source;         /* first dataset holding it */
    int64_t source_case_id; /* its id there: the key of its inputs */
    uint64_t study_seed;    /* the seed its inputs were generated with */
    int32_t seed_ok;
} kcs_origin_rec;

const kcs_field *kcs_origin_rec_fields(int *n_p);

typedef struct kcs_view {
    int n_src;
    kcs_view_source src[KCS_VIEW_MAX_SOURCES];
    int n_ranks, max_trials, n_samples;
    int samples_comparable; /* every source samples the same n_samples positions */
    kcs_rank_rec *ranks;    /* [n_ranks], rank renumbered */
    int *rank_src;          /* source of each rank */
    int64_t n_cases;
    kcs_view_case *cases;
    /* scratch of read_case */
    kcs_result_rec *scratch_res;
    double *scratch_samples;
} kcs_view;

/* Open every path (each must be a complete kcs dataset) and build the
 * union. KCS_E_INVAL (exit status 2) when two datasets disagree on the
 * inputs of a case, with a message naming both files and the case. */
int kcs_view_open(const char *const *paths, int n, kcs_view **v_p, kcs_error *err);
void kcs_view_close(kcs_view *v);

/* Case c of the view: res[n_ranks * max_trials] rank-major, samples
 * [n_ranks * n_samples] (NaN where a rank has none); *have_samples_p = 1
 * when at least one source had samples for it. samples may be NULL (results
 * only). */
int kcs_view_read_case(kcs_view *v, int64_t c, kcs_result_rec *res, double *samples,
                       int *have_samples_p, kcs_error *err);

/* Whether a result row counts as a trial that ran (not skipped/absent). */
int kcs_view_row_ran(const kcs_result_rec *x);

/* The study seed of a study text (its `seed:` key; kcs's default when
 * absent). 0 or KCS_E_INVAL. */
int kcs_view_study_seed(const char *text, uint64_t *seed_p, int *explicit_p, kcs_error *err);

/* Count digest d among the distinct digests set[0..*n_p) (at most cap). */
static inline void kcs_digest_seen(uint64_t *set, int *n_p, int cap, uint64_t d)
{
    int seen = 0;
    for (int i = 0; i < *n_p; i++)
        seen |= set[i] == d;
    if (!seen && *n_p < cap)
        set[(*n_p)++] = d;
}

#endif
