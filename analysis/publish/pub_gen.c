/* kcs publish's generator: the reducer's code on the bundle's datasets,
 * then the tidy tables (measurements, pairs, devices, tolerances, sources),
 * tolerances.json and the HTML atlas. Pure function of the bundle's inputs
 * (publish.h): the current directory is the bundle's root, every path it
 * writes into a file is relative to it. */
#define _GNU_SOURCE
#include "publish.h"
#include "pub_csv.h"
#include "pub_tables.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "build_info.h"
#include "outdir.h"
#include "profile.h"
#include "format.h"
#include "h5out.h"
#include "reduce.h"
#include "stats.h"
#include "tolerances.h"
#include "view.h"

/* ---- a string-keyed index (open addressing) ---- */
typedef struct keymap {
    char **keys;
    int64_t *vals;
    size_t cap, n;
} keymap;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int64_t km_get(const keymap *m, const char *key)
{
    if (!m->cap)
        return -1;
    for (size_t i = fnv(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return -1;
        if (!strcmp(m->keys[i], key))
            return m->vals[i];
    }
}

static int km_put(keymap *m, const char *key, int64_t val)
{
    if (2 * (m->n + 1) > m->cap) {
        keymap b = {0};
        b.cap = m->cap ? 2 * m->cap : 1024;
        b.keys = calloc(b.cap, sizeof *b.keys);
        b.vals = calloc(b.cap, sizeof *b.vals);
        if (!b.keys || !b.vals) {
            free(b.keys);
            free(b.vals);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = fnv(m->keys[i]) & (b.cap - 1);
                while (b.keys[j])
                    j = (j + 1) & (b.cap - 1);
                b.keys[j] = m->keys[i];
                b.vals[j] = m->vals[i];
            }
        b.n = m->n;
        free(m->keys);
        free(m->vals);
        *m = b;
    }
    size_t i = fnv(key) & (m->cap - 1);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    if (!(m->keys[i] = strdup(key)))
        return -1;
    m->vals[i] = val;
    m->n++;
    return 0;
}

static void km_free(keymap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- helpers ---- */
#define GROW(arr, n, cap)                                                                          \
    ((n) < (cap) ? 0                                                                               \
                 : ((cap) = (cap) ? 2 * (cap) : 64,                                                \
                    (arr = realloc(arr, (size_t)(cap) * sizeof *(arr))) ? 0 : -1))

/* A cell by column index (j < 0: the column is absent, ""); the loops over
 * the reducer's big tables look their columns up once, not per row. */
static const char *cellj(const kcs_csv *c, int row, int j)
{
    return j < 0 ? "" : c->rows[row][j];
}

static const char *cell(const kcs_csv *c, int row, const char *col)
{
    return cellj(c, row, kcs_csv_col(c, col));
}

static double numof(const char *s)
{
    if (!s[0])
        return NAN;
    char *end;
    double x = strtod(s, &end);
    return *end ? NAN : x;
}

static double cellnumj(const kcs_csv *c, int row, int j)
{
    return numof(cellj(c, row, j));
}

static double cellnum(const kcs_csv *c, int row, const char *col)
{
    return numof(cell(c, row, col));
}

static double fmax_nan(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

static void site_of(const char *path, char *site, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(site, len, "%s", b);
    size_t n = strlen(site);
    if (n > 3 && !strcmp(site + n - 3, ".h5"))
        site[n - 3] = '\0';
}

typedef struct gen {
    const kcs_pub_inputs *in;
    const char *out;
    char rdir[4200];
    kcs_view *v;
    kcs_pub_atlas a;
    int cap_devs, cap_fps, cap_tols;
    int64_t cap_meas, cap_pairs;
    keymap mkey, pkey;
    int *rank_dev; /* view rank -> device */
    kcs_toljudge *tj;
    kcs_csv tolmodel;
} gen;

static int add_dev(gen *g, const kcs_pub_dev *d, kcs_error *err)
{
    if (GROW(g->a.devs, g->a.n_devs, g->cap_devs))
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    g->a.devs[g->a.n_devs] = *d;
    return g->a.n_devs++;
}

/* Labels: the implementation name; @SITE appended where two sites share one. */
static void dedupe_labels(gen *g)
{
    int n = g->a.n_devs;
    char dup[n ? n : 1];
    memset(dup, 0, sizeof dup);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!strcmp(g->a.devs[i].label, g->a.devs[j].label) &&
                strcmp(g->a.devs[i].site, g->a.devs[j].site))
                dup[i] = dup[j] = 1;
    for (int i = 0; i < n; i++)
        if (dup[i]) {
            kcs_pub_dev *d = &g->a.devs[i];
            size_t l = strlen(d->label);
            snprintf(d->label + l, sizeof d->label - l, " @%s", d->site);
        }
}

static int64_t meas_for(gen *g, int dev, const char *op, const char *din, const char *dout,
                        int64_t k, const char *dist, int imported, kcs_error *err)
{
    char key[512];
    snprintf(key, sizeof key, "%d|%s|%s|%s|%" PRId64 "|%s", dev, op, din, dout, k, dist);
    int64_t i = km_get(&g->mkey, key);
    if (i >= 0)
        return i;
    if (GROW(g->a.meas, g->a.n_meas, g->cap_meas) || km_put(&g->mkey, key, g->a.n_meas))
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    kcs_pub_meas *m = &g->a.meas[g->a.n_meas];
    memset(m, 0, sizeof *m);
    m->dev = dev;
    snprintf(m->op, sizeof m->op, "%s", op);
    snprintf(m->dtype_in, sizeof m->dtype_in, "%s", din);
    snprintf(m->dtype_out, sizeof m->dtype_out, "%s", dout);
    snprintf(m->dist, sizeof m->dist, "%s", dist);
    m->k = k;
    m->imported = imported;
    m->max_scaled = m->max_abs = m->max_backward = m->max_tau = m->max_ulp = NAN;
    m->c = m->alpha = m->alpha_lo = m->alpha_hi = m->eta = NAN;
    m->eta_valid = -1;
    m->group = -1;
    return g->a.n_meas++;
}

static void add_sig(char *sig, size_t len, const char *klass)
{
    if (!klass[0])
        return;
    for (const char *p = sig; (p = strstr(p, klass)); p++) {
        size_t l = strlen(klass);
        if ((p == sig || p[-1] == '|') && (p[l] == '\0' || p[l] == '|'))
            return;
    }
    size_t n = strlen(sig);
    snprintf(sig + n, len - n, "%s%s", n ? "|" : "", klass);
}

/* ---- from the datasets ---- */
static int read_csv(gen *g, const char *name, kcs_csv *c, kcs_error *err)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", g->rdir, name);
    return kcs_csv_read(p, c, err);
}

static int dataset_devices(gen *g, const kcs_csv *verd, kcs_error *err)
{
    kcs_view *v = g->v;
    size_t nr = (size_t)(v->n_ranks ? v->n_ranks : 1);
    int *first = malloc(nr * sizeof *first); /* rank -> its first row of verdicts.csv */
    if (!first || !(g->rank_dev = malloc(nr * sizeof *g->rank_dev))) {
        free(first);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    for (int r = 0; r < v->n_ranks; r++)
        first[r] = -1;
    int jr = kcs_csv_col(verd, "rank");
    for (int i = 0; i < verd->n_rows; i++) {
        int r = atoi(cellj(verd, i, jr));
        if (r >= 0 && r < v->n_ranks && first[r] < 0)
            first[r] = i;
    }
    for (int r = 0; r < v->n_ranks; r++) {
        const kcs_rank_rec *rr = &v->ranks[r];
        kcs_pub_dev d = {0};
        d.src = v->rank_src[r];
        d.rank = r;
        site_of(g->in->data[d.src], d.site, sizeof d.site);
        snprintf(d.backend, sizeof d.backend, "%s", rr->backend);
        snprintf(d.model, sizeof d.model, "%s", rr->model);
        snprintf(d.profile, sizeof d.profile, "%s", rr->profile);
        snprintf(d.kind, sizeof d.kind, "%s",
                 rr->profile[0] ? "emulated" : strcmp(rr->backend, "cpu") ? "native" : "cpu");
        /* the reducer's implementation name of this rank (verdicts.csv): its first row */
        if (first[r] >= 0)
            snprintf(d.impl, sizeof d.impl, "%s", cell(verd, first[r], "implementation"));
        if (!d.impl[0])
            snprintf(d.impl, sizeof d.impl, "%s:%d %s", rr->backend, rr->device, rr->variant);
        snprintf(d.label, sizeof d.label, "%s", d.impl);
        int rc = add_dev(g, &d, err);
        if (rc < 0) {
            free(first);
            return rc;
        }
        g->rank_dev[r] = rc;
    }
    free(first);
    return 0;
}

static void ref_case(gen *g, kcs_pub_text *t, int64_t c, int rank)
{
    kcs_view *v = g->v;
    int s = v->rank_src[rank];
    int64_t sc = v->cases[c].src_case_id[s];
    int sr = rank - v->src[s].first_rank, T = v->src[s].info.max_trials;
    int64_t row = (sc * v->src[s].info.n_ranks + sr) * T; /* /results is [case][rank][trial] */
    kcs_pub_text_add(t, "%s\t/results rows %" PRId64 "..%" PRId64 " (case_id %" PRId64
                        ", rank %d, trials 0..%d)\n",
                     g->in->data[s], row, row + T - 1, sc, sr, T - 1);
}

static int dataset_measurements(gen *g, const kcs_csv *verd, kcs_error *err)
{
    kcs_view *v = g->v;
    kcs_csv pts = {0}, sig = {0}, fits = {0};
    int rc;
    if ((rc = read_csv(g, "divergence_points.csv", &pts, err)) ||
        (rc = read_csv(g, "signatures.csv", &sig, err)) ||
        (rc = read_csv(g, "baseline_fits.csv", &fits, err)))
        goto out;
    /* (case, rank) -> measurement row */
    int64_t nr = v->n_ranks;
    int64_t *cr = malloc((size_t)(v->n_cases * nr + 1) * sizeof *cr);
    if (!cr) {
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
        goto out;
    }
    for (int64_t i = 0; i < v->n_cases * nr; i++)
        cr[i] = -1;
    for (int i = 0; i < verd->n_rows; i++) {
        int64_t c = strtoll(cell(verd, i, "case_id"), NULL, 10);
        int r = atoi(cell(verd, i, "rank"));
        if (c < 0 || c >= v->n_cases || r < 0 || r >= nr)
            continue;
        if (atoi(cell(verd, i, "n_trials")) <= 0)
            continue; /* absent or skipped everywhere */
        const kcs_case_rec *cs = &v->cases[c].rec;
        int64_t m = meas_for(g, g->rank_dev[r], cs->op, cs->dtype_in, cs->dtype_out, cs->k,
                             cs->input_dist, 0, err);
        if (m < 0) {
            rc = (int)m;
            break;
        }
        kcs_pub_meas *x = &g->a.meas[m];
        cr[c * nr + r] = m;
        x->n_cases++;
        x->n_trials += atoi(cell(verd, i, "n_trials"));
        x->max_backward = fmax_nan(x->max_backward, cellnum(verd, i, "max_backward_err"));
        x->max_tau = fmax_nan(x->max_tau, cellnum(verd, i, "max_tau"));
        x->max_ulp = fmax_nan(x->max_ulp, cellnum(verd, i, "max_ulp"));
        x->outputs = fmax(x->outputs, kcs_case_outputs(cs));
        snprintf(x->acc, sizeof x->acc, "%s", cs->dtype_acc);
        ref_case(g, &x->refs, c, r);
    }
    for (int i = 0; i < pts.n_rows && !rc; i++) {
        if (atoi(cell(&pts, i, "rank_b")) != -1)
            continue;
        int64_t c = strtoll(cell(&pts, i, "case_id"), NULL, 10);
        int r = atoi(cell(&pts, i, "rank_a"));
        if (c < 0 || c >= v->n_cases || r < 0 || r >= nr || cr[c * nr + r] < 0)
            continue;
        kcs_pub_meas *x = &g->a.meas[cr[c * nr + r]];
        x->max_abs = fmax_nan(x->max_abs, cellnum(&pts, i, "abs_div"));
        x->max_scaled = fmax_nan(x->max_scaled, cellnum(&pts, i, "scaled_div"));
        x->group = atoi(cell(&pts, i, "group"));
    }
    for (int i = 0; i < sig.n_rows && !rc; i++) {
        int64_t c = strtoll(cell(&sig, i, "case_id"), NULL, 10);
        int r = atoi(cell(&sig, i, "rank"));
        if (c < 0 || c >= v->n_cases || r < 0 || r >= nr || cr[c * nr + r] < 0)
            continue;
        kcs_pub_meas *x = &g->a.meas[cr[c * nr + r]];
        add_sig(x->signature, sizeof x->signature, cell(&sig, i, "klass"));
    }
    /* fits against the oracle: per (group, rank), the scaled metric where there.
     * baseline_fits.csv has a row per rank pair (hundreds of thousands): its
     * oracle rows (rank_b -1) are chained once per (group, rank_a, metric),
     * in file order, and each measurement walks its own two chains. */
    int fg = kcs_csv_col(&fits, "group"), fa = kcs_csv_col(&fits, "rank_a"),
        fb = kcs_csv_col(&fits, "rank_b"), fm = kcs_csv_col(&fits, "metric"),
        fal = kcs_csv_col(&fits, "alpha"), flo = kcs_csv_col(&fits, "alpha_lo"),
        fhi = kcs_csv_col(&fits, "alpha_hi"), fc = kcs_csv_col(&fits, "c_geomean");
    keymap chains = {0};
    int *next = malloc((size_t)(fits.n_rows + 1) * sizeof *next);
    int *ends = NULL, n_chain = 0, cap_chain = 0; /* [2 * chain]: first, last row */
    if (!next && !rc)
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
    for (int i = 0; i < fits.n_rows && !rc; i++) {
        const char *metric = cellj(&fits, i, fm);
        next[i] = -1;
        if (atoi(cellj(&fits, i, fb)) != -1 || (strcmp(metric, "scaled") && strcmp(metric, "abs")))
            continue;
        char key[96];
        snprintf(key, sizeof key, "%d|%d|%s", atoi(cellj(&fits, i, fg)), atoi(cellj(&fits, i, fa)),
                 metric);
        int64_t ch = km_get(&chains, key);
        if (ch < 0) {
            if (2 * n_chain + 2 > cap_chain) {
                int *e = realloc(ends, (size_t)(cap_chain = cap_chain ? 2 * cap_chain : 256) *
                                           sizeof *ends);
                if (!e) {
                    rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
                    break;
                }
                ends = e;
            }
            if (km_put(&chains, key, n_chain)) {
                rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
                break;
            }
            ch = n_chain++;
            ends[2 * ch] = i;
        } else {
            next[ends[2 * ch + 1]] = i;
        }
        ends[2 * ch + 1] = i;
    }
    for (int64_t m = 0; m < g->a.n_meas && !rc; m++) {
        kcs_pub_meas *x = &g->a.meas[m];
        if (x->imported || x->group < 0)
            continue;
        int rank = g->a.devs[x->dev].rank;
        for (int pass = 0; pass < 2; pass++) {
            char key[96];
            snprintf(key, sizeof key, "%d|%d|%s", x->group, rank, pass ? "abs" : "scaled");
            int64_t ch = km_get(&chains, key);
            for (int i = ch < 0 ? -1 : ends[2 * ch]; i >= 0; i = next[i]) {
                if (!isnan(x->alpha))
                    break;
                x->alpha = cellnumj(&fits, i, fal);
                x->alpha_lo = cellnumj(&fits, i, flo);
                x->alpha_hi = cellnumj(&fits, i, fhi);
                x->c = cellnumj(&fits, i, fc);
            }
        }
    }
    km_free(&chains);
    free(next);
    free(ends);
    free(cr);
out:
    kcs_csv_free(&pts);
    kcs_csv_free(&sig);
    kcs_csv_free(&fits);
    return rc;
}

static int dataset_pairs(gen *g, kcs_error *err)
{
    kcs_view *v = g->v;
    kcs_csv d = {0};
    int rc = read_csv(g, "divergence.csv", &d, err);
    int jc = kcs_csv_col(&d, "case_id"), ja = kcs_csv_col(&d, "rank_a"),
        jb = kcs_csv_col(&d, "rank_b"), jn = kcs_csv_col(&d, "n_compared"),
        ji = kcs_csv_col(&d, "identical"), jabs = kcs_csv_col(&d, "max_abs_diff"),
        jsc = kcs_csv_col(&d, "max_scaled_diff");
    for (int i = 0; i < d.n_rows && !rc; i++) {
        int64_t c = strtoll(cellj(&d, i, jc), NULL, 10);
        int ra = atoi(cellj(&d, i, ja)), rb = atoi(cellj(&d, i, jb));
        if (c < 0 || c >= v->n_cases || ra < 0 || rb < 0 || ra >= v->n_ranks ||
            rb >= v->n_ranks || atoi(cellj(&d, i, jn)) <= 0)
            continue;
        const kcs_case_rec *cs = &v->cases[c].rec;
        char key[512];
        snprintf(key, sizeof key, "%d|%d|%s|%s|%s|%" PRId64 "|%s", g->rank_dev[ra], g->rank_dev[rb],
                 cs->op, cs->dtype_in, cs->dtype_out, cs->k, cs->input_dist);
        int64_t p = km_get(&g->pkey, key);
        if (p < 0) {
            if (GROW(g->a.pairs, g->a.n_pairs, g->cap_pairs) || km_put(&g->pkey, key, g->a.n_pairs)) {
                rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
                break;
            }
            p = g->a.n_pairs++;
            kcs_pub_pair *x = &g->a.pairs[p];
            memset(x, 0, sizeof *x);
            x->dev_a = g->rank_dev[ra];
            x->dev_b = g->rank_dev[rb];
            snprintf(x->op, sizeof x->op, "%s", cs->op);
            snprintf(x->dtype_in, sizeof x->dtype_in, "%s", cs->dtype_in);
            snprintf(x->dtype_out, sizeof x->dtype_out, "%s", cs->dtype_out);
            snprintf(x->dist, sizeof x->dist, "%s", cs->input_dist);
            x->k = cs->k;
            x->max_abs = x->max_scaled = NAN;
        }
        kcs_pub_pair *x = &g->a.pairs[p];
        x->n_cases++;
        x->n_identical += atoi(cellj(&d, i, ji)) != 0;
        x->max_abs = fmax_nan(x->max_abs, cellnumj(&d, i, jabs));
        x->max_scaled = fmax_nan(x->max_scaled, cellnumj(&d, i, jsc));
        ref_case(g, &x->refs, c, ra);
        ref_case(g, &x->refs, c, rb);
    }
    kcs_csv_free(&d);
    return rc;
}

/* ---- tolerances ---- */
static int tolerances(gen *g, kcs_error *err)
{
    kcs_csv *t = &g->tolmodel;
    for (int i = 0; i < t->n_rows; i++) {
        if (GROW(g->a.tols, g->a.n_tols, g->cap_tols))
            return kcs_fail(err, KCS_E_NOMEM, "out of memory");
        kcs_pub_tol *x = &g->a.tols[g->a.n_tols++];
        memset(x, 0, sizeof *x);
#define CP(f, col) snprintf(x->f, sizeof x->f, "%s", cell(t, i, col))
        CP(op, "op"); CP(dtype_in, "dtype_in"); CP(dtype_out, "dtype_out"); CP(acc, "acc");
        CP(metric, "metric"); CP(form, "form"); CP(u, "u"); CP(c, "c"); CP(alpha, "alpha");
        CP(alpha_lo, "alpha_lo"); CP(alpha_hi, "alpha_hi"); CP(n_min, "n_min"); CP(n_max, "n_max");
        CP(outputs_fitted, "outputs_fitted"); CP(missing, "missing");
#undef CP
        x->ranks = strtoll(cell(t, i, "ranks"), NULL, 10);
        x->trials = strtoll(cell(t, i, "trials"), NULL, 10);
        x->heldout_trials = strtoll(cell(t, i, "heldout_trials"), NULL, 10);
        x->heldout_flagged = strtoll(cell(t, i, "heldout_flagged"), NULL, 10);
        x->heldout_rate = x->heldout_lo = x->heldout_hi = NAN;
        if (x->heldout_trials > 0) {
            x->heldout_rate = (double)x->heldout_flagged / (double)x->heldout_trials;
            kcs_clopper_pearson(x->heldout_flagged, x->heldout_trials, 0.95, &x->heldout_lo,
                                &x->heldout_hi);
        }
        /* its data: the measurement rows of the same key (conforming or not) */
        for (int64_t m = 0; m < g->a.n_meas; m++) {
            const kcs_pub_meas *y = &g->a.meas[m];
            if (!y->imported && !strcmp(y->op, x->op) && !strcmp(y->dtype_in, x->dtype_in) &&
                !strcmp(y->dtype_out, x->dtype_out) && y->refs.s)
                kcs_pub_text_add(&x->refs, "%s", y->refs.s);
        }
    }
    return 0;
}

static void eta_of(gen *g, kcs_pub_meas *x)
{
    if (x->imported) {
        snprintf(x->eta_note, sizeof x->eta_note,
                 "imported row: the bundle's tolerances.json is not applied to a report");
        return;
    }
    for (int i = 0; i < g->a.n_tols; i++) {
        const kcs_pub_tol *t = &g->a.tols[i];
        if (!strcmp(t->op, x->op) && !strcmp(t->dtype_in, x->dtype_in) &&
            !strcmp(t->dtype_out, x->dtype_out) && t->missing[0]) {
            snprintf(x->eta_note, sizeof x->eta_note, "withheld: %s", t->missing);
            return;
        }
    }
    if (!g->tj || !(x->outputs >= 1)) {
        snprintf(x->eta_note, sizeof x->eta_note, "no recommendation in tolerances.json");
        return;
    }
    char q[256];
    snprintf(q, sizeof q, "op=%s,dtype_in=%s,dtype_out=%s,acc=%s,k=%" PRId64 ",outputs=%.0f",
             x->op, x->dtype_in, x->dtype_out, x->acc, x->k, x->outputs);
    char *buf = NULL, *wbuf = NULL;
    size_t len = 0, wlen = 0;
    FILE *o = open_memstream(&buf, &len), *w = open_memstream(&wbuf, &wlen);
    kcs_error e = {0};
    int rc = o && w ? kcs_toljudge_query(g->tj, q, o, w, &e) : -1;
    if (o)
        fclose(o);
    if (w)
        fclose(w);
    const char *p = buf ? strstr(buf, "\"eta\": ") : NULL;
    if (rc == 0 && p && strncmp(p + 7, "null", 4)) {
        x->eta = strtod(p + 7, NULL);
        x->eta_valid = strstr(buf, "\"valid\": true") != NULL;
    } else {
        snprintf(x->eta_note, sizeof x->eta_note, "%s",
                 rc ? "no single recommendation in tolerances.json for this key"
                    : "the recommendation has no value at this k");
    }
    free(buf);
    free(wbuf);
}

/* ---- imported real-silicon runs ---- */
static int silicon(gen *g, int si, kcs_error *err)
{
    const char *dir = g->in->silicon[si];
    char p[4400];
    snprintf(p, sizeof p, "%s/study-verdicts.csv", dir);
    kcs_csv v = {0};
    int rc = kcs_csv_read(p, &v, err);
    if (rc)
        return rc;
    const char *need[] = {"rank", "op", "dtype_in", "k", "input_dist", "implementation",
                          "n_trials", "max_backward_err"};
    for (size_t j = 0; j < sizeof need / sizeof *need; j++)
        if (kcs_csv_col(&v, need[j]) < 0) {
            kcs_csv_free(&v);
            return kcs_fail(err, KCS_E_INVAL, "%s: no column %s (not a kcs verdicts table)", p,
                            need[j]);
        }
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    int first_dev = g->a.n_devs;
    for (int i = 0; i < v.n_rows && !rc; i++) {
        int r = atoi(cell(&v, i, "rank")), dev = -1;
        for (int d = first_dev; d < g->a.n_devs; d++)
            if (g->a.devs[d].rank == r)
                dev = d;
        if (dev < 0) {
            kcs_pub_dev d = {0};
            d.src = -1 - si;
            d.rank = r;
            snprintf(d.site, sizeof d.site, "%s (imported from report, raw HDF5 not kept)", dir);
            snprintf(d.kind, sizeof d.kind, "imported");
            snprintf(d.impl, sizeof d.impl, "%s", cell(&v, i, "implementation"));
            snprintf(d.label, sizeof d.label, "%s @%s [imported from report, raw HDF5 not kept]",
                     d.impl, name);
            const char *colon = strchr(d.impl, ':');
            snprintf(d.backend, sizeof d.backend, "%.*s", colon ? (int)(colon - d.impl) : 0,
                     d.impl);
            const char *pr = strstr(d.impl, "profile=");
            if (pr)
                snprintf(d.profile, sizeof d.profile, "%s", pr + 8);
            if ((dev = add_dev(g, &d, err)) < 0) {
                rc = dev;
                break;
            }
        }
        int64_t m = meas_for(g, dev, cell(&v, i, "op"), cell(&v, i, "dtype_in"), "",
                             strtoll(cell(&v, i, "k"), NULL, 10), cell(&v, i, "input_dist"), 1, err);
        if (m < 0) {
            rc = (int)m;
            break;
        }
        kcs_pub_meas *x = &g->a.meas[m];
        x->n_cases++;
        x->n_trials += atoi(cell(&v, i, "n_trials"));
        x->max_backward = fmax_nan(x->max_backward, cellnum(&v, i, "max_backward_err"));
        x->max_tau = fmax_nan(x->max_tau, cellnum(&v, i, "max_tau"));
        x->max_ulp = fmax_nan(x->max_ulp, cellnum(&v, i, "max_ulp"));
        kcs_pub_text_add(&x->refs, "%s\tline %d (case %s, rank %s)\n", p, v.line[i],
                         cell(&v, i, "case_id"), cell(&v, i, "rank"));
    }
    if (!rc) {
        kcs_pub_src *s = &g->a.srcs[g->a.n_srcs++];
        memset(s, 0, sizeof *s);
        snprintf(s->site, sizeof s->site, "%s", dir);
        snprintf(s->kind, sizeof s->kind, "imported");
        snprintf(s->path, sizeof s->path, "%s", p);
        snprintf(s->study_name, sizeof s->study_name, "%s", name);
        s->n_ranks = g->a.n_devs - first_dev;
        s->n_cases = -1;
    }
    kcs_csv_free(&v);
    return rc;
}

/* ---- fingerprints ---- */
/* The value of "key" in a flat JSON text: a string, a number, or an
 * object's "text" member (the probe's {"text": ..., "status": ...}). */
static void json_get(const char *json, const char *key, char *buf, size_t len)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    buf[0] = '\0';
    const char *p = strstr(json, pat);
    if (!p)
        return;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    if (*p == '{') {
        const char *t = strstr(p, "\"text\":");
        const char *end = strchr(p, '}');
        if (!t || (end && t > end))
            return;
        p = t + 7;
        while (*p == ' ')
            p++;
    }
    if (*p == '"') {
        p++;
        size_t n = 0;
        while (p[n] && p[n] != '"' && n + 1 < len)
            n++;
        snprintf(buf, len, "%.*s", (int)n, p);
    } else {
        size_t n = strcspn(p, ",}\n");
        if (!strncmp(p, "null", 4))
            return;
        snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    }
}

static int add_fp(gen *g, const kcs_pub_fp *fp, kcs_error *err)
{
    if (GROW(g->a.fps, g->a.n_fps, g->cap_fps))
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    g->a.fps[g->a.n_fps++] = *fp;
    return 0;
}

/* A probe file's fingerprint for device d when backend and model match
 * (the dtype_in it covers); 1 when one was added. */
static int probe_fp(gen *g, int d, const char *path, const char *json, kcs_error *err)
{
    const kcs_pub_dev *dv = &g->a.devs[d];
    char backend[32], model[128], din[16];
    json_get(json, "backend", backend, sizeof backend);
    json_get(json, "model", model, sizeof model);
    json_get(json, "dtype_in", din, sizeof din);
    if (!backend[0] || strcmp(backend, dv->backend))
        return 0;
    if (strstr(json, "\"trees\":")) {
        /* kcs probe --order --json: the summation order of the device's rows */
        char op[32], k[32], tree[4096], variant[32];
        json_get(json, "op", op, sizeof op);
        json_get(json, "k", k, sizeof k);
        json_get(json, "tree", tree, sizeof tree);
        json_get(json, "variant", variant, sizeof variant);
        if (strcmp(variant, "native") || !tree[0])
            return 0;
        int any = 0;
        for (int i = 0; i < g->a.n_fps; i++) {
            kcs_pub_fp *fp = &g->a.fps[i];
            if (fp->dev != d || (din[0] && fp->dtype_in[0] && strcmp(din, fp->dtype_in)))
                continue;
            int n = snprintf(fp->order, sizeof fp->order, "%s k=%s: %s", op, k, tree);
            if (n >= (int)sizeof fp->order)
                snprintf(fp->order + sizeof fp->order - 40, 40, "... (whole tree: %s)",
                         strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
            any = 1;
        }
        return any;
    }
    if (dv->model[0] && strcmp(model, dv->model))
        return 0;
    kcs_pub_fp fp = {0};
    fp.dev = d;
    snprintf(fp.dtype_in, sizeof fp.dtype_in, "%s", din);
    json_get(json, "F", fp.block_size, sizeof fp.block_size);
    json_get(json, "acc_bits", fp.acc_bits, sizeof fp.acc_bits);
    json_get(json, "rounding", fp.rounding, sizeof fp.rounding);
    json_get(json, "step", fp.step, sizeof fp.step);
    json_get(json, "order", fp.order, sizeof fp.order);
    char nearest[64] = "";
    const char *np = strstr(json, "\"nearest\":");
    if (np)
        json_get(np, "profile", nearest, sizeof nearest);
    snprintf(fp.nearest, sizeof fp.nearest, "%s", nearest);
    snprintf(fp.source, sizeof fp.source, "%s", path);
    if (!g->a.devs[d].model[0]) /* an imported run's device: its model from its probe */
        snprintf(g->a.devs[d].model, sizeof g->a.devs[d].model, "%s", model);
    int rc = add_fp(g, &fp, err);
    return rc ? rc : 1;
}

static int fingerprints(gen *g, kcs_error *err)
{
    for (int d = 0; d < g->a.n_devs; d++) {
        const kcs_pub_dev *dv = &g->a.devs[d];
        int found = 0, rc;
        if (dv->profile[0]) {
            const kcs_profile_params *rows;
            int n;
            char name[64];
            snprintf(name, sizeof name, "%s", dv->profile);
            name[strcspn(name, ",")] = '\0'; /* library path options after the profile */
            kcs_profile_table(&rows, &n);
            for (int i = 0; i < n; i++) {
                if (strcmp(rows[i].profile, name))
                    continue;
                kcs_pub_fp fp = {0};
                fp.dev = d;
                snprintf(fp.dtype_in, sizeof fp.dtype_in, "%s", kcs_format_name(rows[i].in));
                snprintf(fp.block_size, sizeof fp.block_size, "%d", rows[i].F);
                snprintf(fp.acc_bits, sizeof fp.acc_bits, "%d", kcs_profile_out_bits(&rows[i]));
                snprintf(fp.rounding, sizeof fp.rounding, "%s",
                         rows[i].rounding == KCS_RZ ? "rz" : rows[i].rounding == KCS_RNE ? "rne" : "other");
                snprintf(fp.step, sizeof fp.step, "%s", kcs_step_kind_name(rows[i].step));
                snprintf(fp.source, sizeof fp.source, "profile table of kcs %s (src/arith/profile.c)%s%s",
                         KCS_VERSION, rows[i].source ? ": " : "", rows[i].source ? rows[i].source : "");
                if ((rc = add_fp(g, &fp, err)))
                    return rc;
                found = 1;
            }
        } else if (strcmp(dv->kind, "cpu")) {
            for (int pass = 0; pass < 2; pass++) /* fingerprints, then orders */
                for (int i = 0; i < g->in->n_probes; i++) {
                    char *json = kcs_pub_slurp(g->in->probes[i], NULL);
                    if (!json)
                        return kcs_fail(err, KCS_E_IO, "%s: cannot read", g->in->probes[i]);
                    rc = 0;
                    if (!strstr(json, "\"trees\":") == !pass)
                        rc = probe_fp(g, d, g->in->probes[i], json, err);
                    free(json);
                    if (rc < 0)
                        return rc;
                    found |= pass == 0 && rc;
                }
            if (dv->src < 0) {
                const char *dir = g->in->silicon[-1 - dv->src];
                DIR *dd = opendir(dir);
                struct dirent *e;
                char *names[64];
                int nn = 0;
                while (dd && (e = readdir(dd)) && nn < 64)
                    if (!strncmp(e->d_name, "probe-", 6) && strstr(e->d_name, ".json"))
                        names[nn++] = strdup(e->d_name);
                if (dd)
                    closedir(dd);
                for (int a = 0; a < nn; a++)
                    for (int b = a + 1; b < nn; b++)
                        if (strcmp(names[a], names[b]) > 0) {
                            char *t = names[a];
                            names[a] = names[b];
                            names[b] = t;
                        }
                for (int a = 0; a < nn; a++) {
                    char p[4400];
                    snprintf(p, sizeof p, "%s/%s", dir, names[a]);
                    char *json = kcs_pub_slurp(p, NULL);
                    rc = json ? probe_fp(g, d, p, json, err) : 0;
                    free(json);
                    if (rc < 0)
                        return rc;
                    found |= rc;
                }
                for (int a = 0; a < nn; a++)
                    free(names[a]);
            }
        }
        if (!found) {
            kcs_pub_fp fp = {0};
            fp.dev = d;
            snprintf(fp.source, sizeof fp.source, "%s",
                     !strcmp(dv->kind, "cpu")
                         ? "not characterised: the CPU backend's kernels (fp64/fp32 schedules), no matrix unit"
                         : "no probe file given for this device (kcs publish --probe FILE.json)");
            if ((rc = add_fp(g, &fp, err)))
                return rc;
        }
    }
    return 0;
}

static void dataset_sources(gen *g)
{
    kcs_view *v = g->v;
    for (int s = 0; s < v->n_src; s++) {
        kcs_pub_src *x = &g->a.srcs[g->a.n_srcs++];
        const kcs_store_info *in = &v->src[s].info;
        memset(x, 0, sizeof *x);
        site_of(g->in->data[s], x->site, sizeof x->site);
        snprintf(x->kind, sizeof x->kind, "dataset");
        snprintf(x->path, sizeof x->path, "%s", g->in->data[s]);
        snprintf(x->study_name, sizeof x->study_name, "%s", in->study_name);
        snprintf(x->plan_hash, sizeof x->plan_hash, "%s", in->plan_hash);
        snprintf(x->created, sizeof x->created, "%s", in->created);
        snprintf(x->software_version, sizeof x->software_version, "%s", in->software_version);
        snprintf(x->git_hash, sizeof x->git_hash, "%s", in->git_hash);
        x->n_ranks = in->n_ranks;
        x->n_cases = in->n_cases;
        for (int r = 0; r < v->n_ranks; r++) {
            if (v->rank_src[r] != s || !v->ranks[r].host[0] || strstr(x->hosts, v->ranks[r].host))
                continue;
            size_t l = strlen(x->hosts);
            snprintf(x->hosts + l, sizeof x->hosts - l, "%s%s", l ? " " : "", v->ranks[r].host);
        }
    }
}

/* A kcs detect dataset: the reducer's detection table, with Clopper-Pearson
 * intervals of the power. */
static int detection(gen *g, const char *path, int idx, kcs_error *err)
{
    char rdir[4400];
    snprintf(rdir, sizeof rdir, "%s/.reduce-detect-%d", g->out, idx);
    const char *in[1] = {path};
    kcs_reduce_opts ro = {.inputs = in, .n_inputs = 1, .out_dir = rdir, .quiet = 1, .no_plots = 1};
    int rc = kcs_reduce_run(&ro, err);
    if (rc)
        return rc;
    char p[4500];
    snprintf(p, sizeof p, "%s/detection.csv", rdir);
    kcs_csv c = {0};
    if ((rc = kcs_csv_read(p, &c, err))) {
        kcs_outdir_remove(rdir);
        return rc;
    }
    kcs_pub_det *d = realloc(g->a.dets, (size_t)(g->a.n_dets + c.n_rows + 1) * sizeof *d);
    if (!d) {
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
    } else {
        g->a.dets = d;
        for (int i = 0; i < c.n_rows; i++) {
            kcs_pub_det *x = &g->a.dets[g->a.n_dets++];
            memset(x, 0, sizeof *x);
            site_of(path, x->site, sizeof x->site);
            snprintf(x->op, sizeof x->op, "%s", cell(&c, i, "op"));
            snprintf(x->dtype_in, sizeof x->dtype_in, "%s", cell(&c, i, "dtype_in"));
            snprintf(x->detector, sizeof x->detector, "%s", cell(&c, i, "detector"));
            snprintf(x->kind, sizeof x->kind, "%s", cell(&c, i, "kind"));
            x->m = strtoll(cell(&c, i, "m"), NULL, 10);
            x->n = strtoll(cell(&c, i, "n"), NULL, 10);
            x->k = strtoll(cell(&c, i, "k"), NULL, 10);
            x->magnitude = cellnum(&c, i, "magnitude");
            x->magnitude_data = cellnum(&c, i, "magnitude_data");
            x->trials = strtoll(cell(&c, i, "trials"), NULL, 10);
            x->detected = strtoll(cell(&c, i, "detected"), NULL, 10);
            x->p_detect = cellnum(&c, i, "p_detect");
            x->p_lo = x->p_hi = NAN;
            if (x->trials > 0)
                kcs_clopper_pearson(x->detected, x->trials, 0.95, &x->p_lo, &x->p_hi);
            snprintf(x->ref, sizeof x->ref, "%s\t/analysis/detection row %d", path, i);
        }
    }
    kcs_csv_free(&c);
    kcs_outdir_remove(rdir);
    return rc;
}

static int cmp_meas(const void *pa, const void *pb, void *ctx)
{
    const kcs_pub_meas *a = pa, *b = pb;
    const kcs_pub_dev *d = ctx;
    int c;
    /* a page's block is (op, dtype_in, distribution): imported rows, whose
     * dtype_out is not recorded, sit beside the datasets' */
    if ((c = strcmp(a->op, b->op)) || (c = strcmp(a->dtype_in, b->dtype_in)) ||
        (c = strcmp(a->dist, b->dist)) || (c = strcmp(a->dtype_out, b->dtype_out)))
        return c;
    if (a->dev != b->dev)
        return (c = strcmp(d[a->dev].label, d[b->dev].label)) ? c : a->dev - b->dev;
    return (a->k > b->k) - (a->k < b->k);
}

static int cmp_pair(const void *pa, const void *pb)
{
    const kcs_pub_pair *a = pa, *b = pb;
    int c;
    if ((c = strcmp(a->op, b->op)) || (c = strcmp(a->dtype_in, b->dtype_in)) ||
        (c = strcmp(a->dtype_out, b->dtype_out)) || (c = strcmp(a->dist, b->dist)))
        return c;
    if (a->dev_a != b->dev_a)
        return a->dev_a - b->dev_a;
    if (a->dev_b != b->dev_b)
        return a->dev_b - b->dev_b;
    return (a->k > b->k) - (a->k < b->k);
}

static int copy_file(const char *from, const char *to, kcs_error *err)
{
    FILE *a = fopen(from, "rb");
    if (!a)
        return kcs_fail(err, KCS_E_IO, "%s: cannot read", from);
    FILE *b = fopen(to, "wb");
    if (!b) {
        fclose(a);
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", to);
    }
    char buf[65536];
    size_t got;
    int bad = 0;
    while ((got = fread(buf, 1, sizeof buf, a)) > 0)
        bad |= fwrite(buf, 1, got, b) != got;
    bad |= ferror(a);
    fclose(a);
    bad |= fclose(b) != 0;
    return bad ? kcs_fail(err, KCS_E_IO, "%s: cannot copy %s to it", to, from) : 0;
}

int kcs_pub_generate(const kcs_pub_inputs *in, const char *out, int quiet, kcs_error *err)
{
    gen g = {0};
    g.in = in;
    g.out = out;
    int rc = 0;
    snprintf(g.rdir, sizeof g.rdir, "%s/.reduce", out);
    /* study datasets go through the merged view; kcs detect datasets apart */
    kcs_pub_inputs studies = *in;
    char **sd = calloc((size_t)in->n_data + 1, sizeof *sd), **dd = calloc((size_t)in->n_data + 1, sizeof *dd);
    int n_det = 0;
    if (!sd || !dd) {
        free(sd);
        free(dd);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    studies.data = sd;
    studies.n_data = 0;
    for (int i = 0; i < in->n_data; i++) {
        char *content = NULL;
        kcs_error e = {0};
        int det = kcs_h5in_root_str(in->data[i], "content", &content, &e) == 0 && content &&
                  !strcmp(content, "detection");
        free(content);
        if (det)
            dd[n_det++] = in->data[i];
        else
            sd[studies.n_data++] = in->data[i];
    }
    g.in = &studies;
    in = &studies;
    if (in->n_data < 1) {
        free(sd);
        free(dd);
        return kcs_fail(err, KCS_E_INVAL, "no study dataset in the bundle (data/: only kcs detect "
                                          "datasets)");
    }
    if (!quiet)
        fprintf(stderr, "kcs publish: reducing %d dataset%s (the reducer's code: verdicts, "
                        "baselines, tolerances, signatures)\n",
                in->n_data, in->n_data > 1 ? "s" : "");
    kcs_reduce_opts ro = {
        .inputs = (const char *const *)in->data,
        .n_inputs = in->n_data,
        .out_dir = g.rdir,
        .quiet = 1,
        .no_plots = 1,
    };
    kcs_csv verd = {0};
    if ((rc = kcs_reduce_run(&ro, err)))
        return rc;
    if (!quiet)
        fprintf(stderr, "kcs publish: building the tables\n");
    char p[4400], q[4400];
    snprintf(p, sizeof p, "%s/tolerances.json", g.rdir);
    snprintf(q, sizeof q, "%s/tolerances.json", out);
    if ((rc = copy_file(p, q, err)) || (rc = kcs_view_open((const char *const *)in->data,
                                                          in->n_data, &g.v, err)))
        goto out;
    if (!(g.a.srcs = calloc((size_t)(in->n_data + in->n_silicon), sizeof *g.a.srcs))) {
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
        goto out;
    }
    dataset_sources(&g);
    if ((rc = read_csv(&g, "verdicts.csv", &verd, err)) ||
        (rc = read_csv(&g, "tolerance_model.csv", &g.tolmodel, err)) ||
        (rc = dataset_devices(&g, &verd, err)) || (rc = dataset_measurements(&g, &verd, err)) ||
        (rc = dataset_pairs(&g, err)))
        goto out;
    for (int i = 0; i < in->n_silicon && !rc; i++)
        rc = silicon(&g, i, err);
    if (rc)
        goto out;
    dedupe_labels(&g);
    for (int i = 0; i < n_det && !rc; i++)
        rc = detection(&g, dd[i], i, err);
    if (rc || (rc = tolerances(&g, err)))
        goto out;
    {
        kcs_error e = {0};
        if (kcs_toljudge_open(p, NULL, 0, &g.tj, &e))
            g.tj = NULL;
    }
    for (int64_t m = 0; m < g.a.n_meas; m++)
        eta_of(&g, &g.a.meas[m]);
    if ((rc = fingerprints(&g, err)))
        goto out;
    qsort_r(g.a.meas, (size_t)g.a.n_meas, sizeof *g.a.meas, cmp_meas, g.a.devs);
    qsort(g.a.pairs, (size_t)g.a.n_pairs, sizeof *g.a.pairs, cmp_pair);
    snprintf(g.a.power_note, sizeof g.a.power_note, "%s",
             g.a.n_dets ? "this bundle's detection curves: tables/detection.csv"
                        : "no kcs detect dataset in this bundle");
    if (!quiet)
        fprintf(stderr, "kcs publish: %" PRId64 " measurement rows, %" PRId64
                        " pair rows, %d devices; writing tables and pages\n",
                g.a.n_meas, g.a.n_pairs, g.a.n_devs);
    if ((rc = kcs_pub_write_tables(&g.a, out, err)) || (rc = kcs_pub_write_html(&g.a, out, err)))
        goto out;
out:
    kcs_csv_free(&verd);
    kcs_csv_free(&g.tolmodel);
    kcs_toljudge_free(g.tj);
    if (g.v)
        kcs_view_close(g.v);
    free(g.rank_dev);
    km_free(&g.mkey);
    km_free(&g.pkey);
    kcs_pub_atlas_free(&g.a);
    kcs_outdir_remove(g.rdir);
    free(sd);
    free(dd);
    return rc;
}
