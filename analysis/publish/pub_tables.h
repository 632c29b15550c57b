/* The atlas's tidy tables (internal to kcs publish): built by pub_gen.c
 * from the reducer's output, written as CSV (columns and their
 * descriptions: pub_cols.c, the one definition) and rendered as HTML
 * (pub_html.c). */
#ifndef KCS_PUB_TABLES_H
#define KCS_PUB_TABLES_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

typedef struct kcs_pub_col {
    const char *table;       /* "measurements", ... */
    const char *name;
    const char *type;        /* Frictionless: string | integer | number | boolean */
    const char *description;
} kcs_pub_col;

/* Every column of every tidy table, table by table in file order. */
const kcs_pub_col *kcs_pub_cols(int *n_p);
/* The tidy tables' names (NULL-terminated). */
extern const char *const kcs_pub_tables[];
/* The table's columns: first index into kcs_pub_cols and count. */
int kcs_pub_table_cols(const char *table, int *first_p);

/* A growing text (refs lists). */
typedef struct kcs_pub_text {
    char *s;
    size_t n, cap;
} kcs_pub_text;
void kcs_pub_text_add(kcs_pub_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct kcs_pub_dev {
    char label[224];
    char site[96];
    char kind[16];           /* emulated | native | cpu | imported */
    char backend[16];
    char model[128];
    char profile[64];
    char impl[128];
    int src;                 /* data file index, or -1 - silicon index */
    int rank;                /* in the view (or in the imported table) */
} kcs_pub_dev;

typedef struct kcs_pub_meas {
    int dev;
    char op[32], dtype_in[16], dtype_out[16], dist[32], acc[16];
    int64_t k;
    int n_cases;
    int64_t n_trials;
    double max_scaled, max_abs, max_backward, max_tau, max_ulp;
    double c, alpha, alpha_lo, alpha_hi;
    double eta;
    int eta_valid;           /* -1: no eta */
    char eta_note[200];
    char signature[64];
    double outputs;
    int group;
    int imported;
    kcs_pub_text refs;
} kcs_pub_meas;

typedef struct kcs_pub_pair {
    int dev_a, dev_b;
    char op[32], dtype_in[16], dtype_out[16], dist[32];
    int64_t k;
    int n_cases, n_identical;
    double max_abs, max_scaled;
    kcs_pub_text refs;
} kcs_pub_pair;

typedef struct kcs_pub_fp {
    int dev;
    char dtype_in[16];
    char block_size[32], acc_bits[32], rounding[32], step[32], order[256], nearest[64];
    char source[512];
} kcs_pub_fp;

typedef struct kcs_pub_tol {
    char op[32], dtype_in[16], dtype_out[16], acc[16], metric[16], form[24];
    char u[32], c[32], alpha[32], alpha_lo[32], alpha_hi[32], n_min[32], n_max[32];
    char outputs_fitted[32];
    int64_t ranks, trials, heldout_trials, heldout_flagged;
    double heldout_rate, heldout_lo, heldout_hi;
    char missing[256];
    kcs_pub_text refs;
} kcs_pub_tol;

typedef struct kcs_pub_det {
    char site[96];
    char op[32], dtype_in[16], detector[24], kind[24];
    int64_t m, n, k;
    double magnitude, magnitude_data, p_detect, p_lo, p_hi;
    int64_t trials, detected;
    char ref[320];           /* data file and /analysis/detection row */
} kcs_pub_det;

typedef struct kcs_pub_src {
    char site[96];
    char kind[16];           /* dataset | imported */
    char path[256];
    char study_name[64], plan_hash[32], created[32], software_version[32], git_hash[48];
    int n_ranks;
    int64_t n_cases;
    char hosts[256];
} kcs_pub_src;

typedef struct kcs_pub_atlas {
    kcs_pub_dev *devs;
    int n_devs;
    kcs_pub_meas *meas;
    int64_t n_meas;
    kcs_pub_pair *pairs;
    int64_t n_pairs;
    kcs_pub_fp *fps;
    int n_fps;
    kcs_pub_tol *tols;
    int n_tols;
    kcs_pub_src *srcs;
    int n_srcs;
    kcs_pub_det *dets;
    int64_t n_dets;
    char power_note[256];
} kcs_pub_atlas;

void kcs_pub_atlas_free(kcs_pub_atlas *a);

/* %.17g, or "" for NaN (into buf of 32). */
const char *kcs_pub_num(double x, char *buf);
/* A whole file as a string (NULL if unreadable), its length in *len_p. */
char *kcs_pub_slurp(const char *path, size_t *len_p);

/* CSV writers (pub_write.c): tables/NAME.csv, dictionary.csv/.md under out. */
int kcs_pub_write_tables(const kcs_pub_atlas *a, const char *out, kcs_error *err);
/* HTML (pub_html.c): index.html, op-OP.html, rows/TABLE.html under out. */
int kcs_pub_write_html(const kcs_pub_atlas *a, const char *out, kcs_error *err);

#endif
