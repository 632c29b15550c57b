/* The tidy tables as CSV and the data dictionary (tables/), all headers
 * and descriptions from pub_cols.c. */
#define _GNU_SOURCE
#include "pub_csv.h"
#include "pub_tables.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "store_describe.h"

static int mkdir_p(const char *d, kcs_error *err)
{
    if (mkdir(d, 0777) && errno != EEXIST)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create: %s", d, strerror(errno));
    return 0;
}

static void header(FILE *f, const char *table)
{
    int first, n = kcs_pub_table_cols(table, &first), nc;
    const kcs_pub_col *c = kcs_pub_cols(&nc);
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        kcs_csv_cell(f, c[first + i].name);
    }
    fputc('\n', f);
}

/* One row of cells; the count must be the table's. */
static void row(FILE *f, const char *table, const char *const *cells, int n)
{
    int first, want = kcs_pub_table_cols(table, &first);
    for (int i = 0; i < want; i++) {
        if (i)
            fputc(',', f);
        kcs_csv_cell(f, i < n && cells[i] ? cells[i] : "");
    }
    fputc('\n', f);
}

static const char *bool_s(int b)
{
    return b < 0 ? "" : b ? "true" : "false";
}

int kcs_pub_write_tables(const kcs_pub_atlas *a, const char *out, kcs_error *err)
{
    char dir[4200], p[4400];
    snprintf(dir, sizeof dir, "%s/tables", out);
    int rc = mkdir_p(dir, err);
    if (rc)
        return rc;
    char b[24][32];
    char ibuf[4][32];
    FILE *f;
#define OPEN(name)                                                                                 \
    snprintf(p, sizeof p, "%s/" name ".csv", dir);                                                 \
    if (!(f = fopen(p, "w")))                                                                      \
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", p);                                    \
    header(f, name)
#define CLOSE()                                                                                    \
    if (fclose(f))                                                                                 \
    return kcs_fail(err, KCS_E_IO, "%s: write error", p)

    OPEN("measurements");
    for (int64_t i = 0; i < a->n_meas; i++) {
        const kcs_pub_meas *m = &a->meas[i];
        const kcs_pub_dev *d = &a->devs[m->dev];
        snprintf(ibuf[0], 32, "%" PRId64, i);
        snprintf(ibuf[1], 32, "%" PRId64, m->k);
        snprintf(ibuf[2], 32, "%d", m->n_cases);
        snprintf(ibuf[3], 32, "%" PRId64, m->n_trials);
        /* eta: the 10 digits kcs reduce --query gives, no more */
        char eta_s[32] = "";
        if (!isnan(m->eta))
            snprintf(eta_s, sizeof eta_s, "%.10g", m->eta);
        const char *cells[] = {ibuf[0], d->label, d->site, bool_s(m->imported), m->op,
                               m->dtype_in, m->dtype_out, ibuf[1], m->dist, ibuf[2], ibuf[3],
                               kcs_pub_num(m->max_scaled, b[0]), kcs_pub_num(m->max_abs, b[1]),
                               kcs_pub_num(m->max_backward, b[2]), kcs_pub_num(m->max_tau, b[3]),
                               kcs_pub_num(m->max_ulp, b[4]), kcs_pub_num(m->c, b[5]),
                               kcs_pub_num(m->alpha, b[6]), kcs_pub_num(m->alpha_lo, b[7]),
                               kcs_pub_num(m->alpha_hi, b[8]), eta_s,
                               bool_s(m->eta_valid), m->eta_note, "", m->signature};
        row(f, "measurements", cells, (int)(sizeof cells / sizeof *cells));
    }
    CLOSE();
    OPEN("pairs");
    for (int64_t i = 0; i < a->n_pairs; i++) {
        const kcs_pub_pair *x = &a->pairs[i];
        snprintf(ibuf[0], 32, "%" PRId64, i);
        snprintf(ibuf[1], 32, "%" PRId64, x->k);
        snprintf(ibuf[2], 32, "%d", x->n_cases);
        snprintf(ibuf[3], 32, "%d", x->n_identical);
        const char *cells[] = {ibuf[0], a->devs[x->dev_a].label, a->devs[x->dev_b].label, x->op,
                               x->dtype_in, x->dtype_out, ibuf[1], x->dist, ibuf[2], ibuf[3],
                               kcs_pub_num(x->max_abs, b[0]), kcs_pub_num(x->max_scaled, b[1])};
        row(f, "pairs", cells, (int)(sizeof cells / sizeof *cells));
    }
    CLOSE();
    OPEN("devices");
    for (int i = 0; i < a->n_fps; i++) {
        const kcs_pub_fp *x = &a->fps[i];
        const kcs_pub_dev *d = &a->devs[x->dev];
        snprintf(ibuf[0], 32, "%d", i);
        const char *cells[] = {ibuf[0], d->label, d->site, d->kind, d->backend, d->model,
                               d->profile, x->dtype_in, x->block_size, x->acc_bits, x->rounding,
                               x->step, x->order, x->nearest, x->source};
        row(f, "devices", cells, (int)(sizeof cells / sizeof *cells));
    }
    CLOSE();
    OPEN("tolerances");
    for (int i = 0; i < a->n_tols; i++) {
        const kcs_pub_tol *x = &a->tols[i];
        char n4[4][32];
        snprintf(ibuf[0], 32, "%d", i);
        snprintf(n4[0], 32, "%" PRId64, x->ranks);
        snprintf(n4[1], 32, "%" PRId64, x->trials);
        snprintf(n4[2], 32, "%" PRId64, x->heldout_trials);
        snprintf(n4[3], 32, "%" PRId64, x->heldout_flagged);
        /* the reducer writes nan for what it has not: empty cells here */
        const char *t[] = {x->u, x->c, x->alpha, x->alpha_lo, x->alpha_hi, x->n_min, x->n_max,
                           x->outputs_fitted};
        const char *tv[8];
        for (int j = 0; j < 8; j++)
            tv[j] = !strcmp(t[j], "nan") ? "" : t[j];
        const char *cells[] = {ibuf[0], x->op, x->dtype_in, x->dtype_out, x->acc, x->metric,
                               x->form, tv[0], tv[1], tv[2], tv[3], tv[4], tv[5], tv[6], tv[7],
                               n4[0], n4[1], n4[2], n4[3], kcs_pub_num(x->heldout_rate, b[0]),
                               kcs_pub_num(x->heldout_lo, b[1]), kcs_pub_num(x->heldout_hi, b[2]),
                               x->missing};
        row(f, "tolerances", cells, (int)(sizeof cells / sizeof *cells));
    }
    CLOSE();
    OPEN("sources");
    for (int i = 0; i < a->n_srcs; i++) {
        const kcs_pub_src *x = &a->srcs[i];
        snprintf(ibuf[0], 32, "%d", x->n_ranks);
        snprintf(ibuf[1], 32, "%" PRId64, x->n_cases);
        const char *cells[] = {x->site, x->kind, x->path, x->study_name, x->plan_hash,
                               x->created, x->software_version, x->git_hash, ibuf[0],
                               x->n_cases < 0 ? "" : ibuf[1], x->hosts};
        row(f, "sources", cells, (int)(sizeof cells / sizeof *cells));
    }
    CLOSE();

    /* the data dictionary: the tidy tables' columns, then the datasets' fields */
    FILE *md;
    snprintf(p, sizeof p, "%s/dictionary.csv", dir);
    if (!(f = fopen(p, "w")))
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", p);
    char pm[4400];
    snprintf(pm, sizeof pm, "%s/dictionary.md", dir);
    if (!(md = fopen(pm, "w"))) {
        fclose(f);
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", pm);
    }
    fputs("file,field,type,units,description\n", f);
    fputs("# Data dictionary\n\nGenerated by kcs publish from the fields' own descriptions: "
          "the tidy tables' columns (defined once, in kcs's analysis/publish/pub_cols.c) and "
          "the datasets' fields (the descriptions the store writes into every dataset, "
          "src/store/store_describe.c).\n",
          md);
    int nc;
    const kcs_pub_col *c = kcs_pub_cols(&nc);
    const char *last = "";
    for (int i = 0; i < nc; i++) {
        char file[64];
        snprintf(file, sizeof file, "tables/%s.csv", c[i].table);
        if (strcmp(last, c[i].table))
            fprintf(md, "\n## %s\n\n| field | type | description |\n|---|---|---|\n", file);
        last = c[i].table;
        const char *desc = c[i].description;
        char pw[400];
        if (!strcmp(c[i].name, "power") && a->power_note[0]) {
            snprintf(pw, sizeof pw, "%s (here: %s)", desc, a->power_note);
            desc = pw;
        }
        kcs_csv_cell(f, file);
        fputc(',', f);
        kcs_csv_cell(f, c[i].name);
        fprintf(f, ",%s,,", c[i].type);
        kcs_csv_cell(f, desc);
        fputc('\n', f);
        fprintf(md, "| %s | %s | %s |\n", c[i].name, c[i].type, desc);
    }
    const char *tabs[][2] = {{"results", "/results"}, {"cases", "/cases"},
                             {"ranks", "/provenance/ranks"}};
    for (size_t t = 0; t < sizeof tabs / sizeof *tabs; t++) {
        int n;
        const kcs_field_doc *d = kcs_store_field_docs(tabs[t][0], &n);
        fprintf(md, "\n## data/*.h5 %s\n\n| field | units | description |\n|---|---|---|\n",
                tabs[t][1]);
        for (int i = 0; i < n; i++) {
            char file[64];
            snprintf(file, sizeof file, "data/*.h5:%s", tabs[t][1]);
            kcs_csv_cell(f, file);
            fputc(',', f);
            kcs_csv_cell(f, d[i].name);
            fputs(",,", f);
            kcs_csv_cell(f, d[i].units ? d[i].units : "");
            fputc(',', f);
            kcs_csv_cell(f, d[i].description ? d[i].description : "");
            fputc('\n', f);
            fprintf(md, "| %s | %s | %s |\n", d[i].name, d[i].units ? d[i].units : "",
                    d[i].description ? d[i].description : "");
        }
    }
    int bad = fclose(md) != 0;
    bad |= fclose(f) != 0;
    return bad ? kcs_fail(err, KCS_E_IO, "%s: write error", dir) : 0;
#undef OPEN
#undef CLOSE
}
