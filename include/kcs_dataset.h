/* Reading a kcs dataset from another program: the public API of libkcs.
 *
 * A kcs dataset is an HDF5 file written by `kcs run`; each table field
 * carries its own "<field>.description" and "<field>.units" attributes,
 * and h5py or h5dump read it too. This header
 * is all a C program needs to read one through libkcs: it includes nothing
 * of kcs's own, and libkcs exports these functions and nothing else
 * (cmake/libkcs.map). Build with `pkg-config --cflags --libs kcs` or the
 * CMake package (find_package(kcs), target kcs::kcs).
 *
 * Every function returns 0 on success or a negative KCS_DATASET_E_* code
 * and, when msg is not NULL, writes a message naming the file and the
 * object at fault into msg[msg_len]. Strings in the records point into
 * the handle: they stay valid until the next call on the same handle or
 * its close. A handle is not thread-safe; open one per thread. */
#ifndef KCS_DATASET_H
#define KCS_DATASET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KCS_DATASET_API_VERSION 1

enum {
    KCS_DATASET_OK = 0,
    KCS_DATASET_E_INVAL = -1, /* not a kcs dataset this library reads, or a bad argument */
    KCS_DATASET_E_NOMEM = -2,
    KCS_DATASET_E_IO = -3,    /* file system or HDF5 */
    KCS_DATASET_E_RANGE = -4, /* an index outside the table */
};

typedef struct kcs_dataset kcs_dataset;

/* The root attributes and the tables' shapes. */
typedef struct kcs_dataset_info {
    int schema_version;
    int n_ranks;
    int64_t n_cases;
    int max_trials; /* rows per (case, rank) in /results */
    int n_samples;  /* sampled outputs per case and rank */
    int complete;   /* 1: the run closed the file after its last case */
    const char *study_name;
    const char *software_version;
    const char *git_hash;
    const char *created; /* ISO-8601 UTC */
    const char *plan_hash;
} kcs_dataset_info;

/* One row of /cases. */
typedef struct kcs_dataset_case {
    int64_t case_id;
    const char *contract, *op, *variant;
    const char *dtype_in, *dtype_acc, *dtype_out;
    int64_t m, n, k, batch;
    const char *input_dist;
    uint64_t seed;
    uint64_t input_digest;
    int trials;
} kcs_dataset_case;

/* One row of /results: one trial of one case on one rank. */
typedef struct kcs_dataset_result {
    int64_t case_id;
    int rank, trial;
    const char *status;    /* "ok", "raised", "timeout", ... */
    const char *verdict;   /* "within_tolerance", "violation", "under_specified", ... */
    const char *signature; /* the matched signature names, comma-separated */
    const char *message;   /* why, for a status other than ok */
    uint64_t output_digest;
    double tau, eta;
    double max_abs, max_rel, max_ulp, mean_ulp, backward_err;
    int64_t nan_count, inf_count;
    int guard_ok;
    int64_t time_ns;
} kcs_dataset_result;

/* KCS_DATASET_API_VERSION of the library actually loaded. */
int kcs_dataset_api_version(void);

/* Open a dataset read-only (no MPI needed). An unfinished dataset opens;
 * info->complete says so. */
int kcs_dataset_open(const char *path, kcs_dataset **ds_p, char *msg, size_t msg_len);
void kcs_dataset_close(kcs_dataset *ds);
const kcs_dataset_info *kcs_dataset_get_info(const kcs_dataset *ds);

/* Row `index` (0 <= index < n_cases) of /cases. */
int kcs_dataset_get_case(kcs_dataset *ds, int64_t index, kcs_dataset_case *out, char *msg,
                         size_t msg_len);
/* The n_ranks * max_trials rows of the case in row `index` of /cases,
 * rank-major (rows[rank * max_trials + trial]); *rows_p points into ds. */
int kcs_dataset_get_results(kcs_dataset *ds, int64_t index, const kcs_dataset_result **rows_p,
                            int *n_p, char *msg, size_t msg_len);
/* The sampled outputs of case case_id, n_ranks rows of n_samples values
 * (row-major); *values_p points into ds. *n_p = 0 when the case has none. */
int kcs_dataset_get_samples(kcs_dataset *ds, int64_t case_id, const double **values_p, int *n_p,
                            char *msg, size_t msg_len);
/* A stored text: "/study" (the study YAML) or "/contracts/<id>" (a
 * contract's YAML). *text_p is malloc'd; free() it. */
int kcs_dataset_get_text(kcs_dataset *ds, const char *object, char **text_p, char *msg,
                         size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif
