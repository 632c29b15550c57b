/* kcs publish: a citable, browsable, checkable bundle of kcs datasets.
 *
 * The bundle (docs/publish.md) is a pure function of its inputs, which it
 * holds: data/NN-NAME.h5 (the datasets, copied), probes/NN-NAME.json (`kcs probe
 * --json` output, copied), silicon/NAME/ (report-only real-silicon runs,
 * copied). Everything else (tables/, tolerances.json, the HTML atlas) is
 * generated from them by kcs_pub_generate with the bundle as the working
 * directory, so `kcs publish --verify` regenerates it and compares byte
 * for byte. */
#ifndef KCS_PUBLISH_H
#define KCS_PUBLISH_H

#include "error.h"

typedef struct kcs_publish_opts {
    const char *const *datasets;
    int n_datasets;
    const char *const *probes;
    int n_probes;
    const char *const *silicon; /* directories */
    int n_silicon;
    const char *out_dir;
    int quiet;                  /* no progress lines */
} kcs_publish_opts;

/* The bundle's inputs, relative to its root (sorted; the order gives the
 * datasets' rank order in the merged view). */
typedef struct kcs_pub_inputs {
    char **data;
    int n_data;
    char **probes;
    int n_probes;
    char **silicon;
    int n_silicon;
} kcs_pub_inputs;

/* List the inputs of the bundle in the current directory. */
int kcs_pub_inputs_list(kcs_pub_inputs *in, kcs_error *err);
void kcs_pub_inputs_free(kcs_pub_inputs *in);

/* Generate every derived file under out (a directory relative to the
 * current directory, which is the bundle's root holding the inputs). */
int kcs_pub_generate(const kcs_pub_inputs *in, const char *out, int quiet, kcs_error *err);

/* Write datapackage.json, CITATION.cff, LICENSE-data.txt in root (the
 * current directory): hashes of every file present. */
int kcs_pub_package(const char *root, kcs_error *err);

/* Run fn(ctx) with the current directory at dir, then return to the
 * previous one. */
int kcs_pub_in_dir(const char *dir, int (*fn)(void *), void *ctx, kcs_error *err);

/* kcs_pub_in_dir's function that generates a bundle's derived files into
 * out from the inputs of the current directory (kcs_pub_inputs_list), and
 * hashes the package when out is "." (publish; --verify generates into a
 * scratch directory and compares). */
typedef struct kcs_pub_gen_ctx {
    const char *out;
    int quiet;
    kcs_error *err;
} kcs_pub_gen_ctx;
int kcs_pub_gen_here(void *ctx);

int kcs_publish_run(const kcs_publish_opts *o, kcs_error *err);
/* 0 when everything matches; KCS_E_INVAL for bad input (exit 2);
 * *mismatch_p = count of mismatches (each named on stderr). */
int kcs_publish_verify(const char *dir, int quiet, int *mismatch_p, kcs_error *err);

#endif
