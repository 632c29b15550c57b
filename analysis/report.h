/* The Markdown report of kcs reduce and the figures (internal to the
 * reducer). The report reads the spooled tables back in bounded chunks and
 * caps its long tables (the CSV files hold every row). */
#ifndef KCS_REPORT_H
#define KCS_REPORT_H

#include "baselines.h"
#include "reduce.h"
#include "signatures.h"
#include "spool.h"
#include "view.h"

/* Rows of a long table the report prints before pointing to the CSV. */
#define KCS_REPORT_MAX_ROWS 200

/* Two ranks of different merged datasets that name the same
 * implementation (backend, model, profile, variant). */
typedef struct kcs_twin {
    int a, b;
    int64_t shared;    /* cases both ran */
    int64_t identical; /* of those, bitwise identical on every trial */
} kcs_twin;

typedef struct kcs_report_data {
    kcs_view *view;
    const char *merged_path;      /* NULL: one dataset */
    kcs_spool *spools;            /* verdicts, divergence, divergence_points, signatures */
    const kcs_baseline_tables *tables;
    const kcs_sig_summary *sig;
    int64_t n_recomputed, n_not_recomputed;
    const char *recompute_why;
    /* the same implementation in two merged datasets: run-to-run evidence */
    const kcs_twin *twins;
    int n_twins;
    const char *out_dir;
    const struct kcs_tolset *tolset;      /* recommended tolerances */
    const struct kcs_toljudge *judge;     /* NULL unless --tolerances */
    const struct kcs_order_book *orders;  /* /provenance/order of every source
                                             (kcs_report_write loads it) */
} kcs_report_data;

int kcs_report_write(const char *path, const kcs_report_data *d, kcs_error *err);

/* Sections (report_baselines.c). */
void kcs_report_baselines(FILE *f, const kcs_report_data *d);
void kcs_report_signatures(FILE *f, const kcs_report_data *d);
/* record_order: the summation trees of /provenance/order (report_order.c);
 * nothing when no dataset has them. */
void kcs_report_orders(FILE *f, const kcs_report_data *d);

/* Run analysis/plot.py on the dataset when /usr/bin/python3 (or
 * KCS_PYTHON) with h5py and matplotlib is there; the report links the
 * figures it made. Prints one line saying why when it cannot. */
/* plot.py on dataset (the /analysis tables) and raw (the dataset reduced,
 * NULL when it is dataset itself). */
void kcs_plots_run(const kcs_reduce_opts *o, const char *report, const char *dataset,
                   const char *raw);
/* Whether a figure file exists in the report directory. */
int kcs_report_has_figure(const char *dir, const char *name);

#endif
