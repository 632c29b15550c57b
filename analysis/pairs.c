/* Rank pairs of one case: divergence of trial 0's sampled outputs (absolute,
 * scaled by |A||B|, ULP), bitwise identity over trials, and where the
 * outputs differ (the pattern). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "rng.h"
#include "recompute.h"
#include "reduce.h"
#include "view.h"

void kcs_output_grid(const kcs_case_rec *cs, int64_t *rows_p, int64_t *cols_p)
{
    int64_t b = cs->batch > 0 ? cs->batch : 1;
    int64_t rows = 1, cols = 1;
    const char *op = cs->op;
    if (!strcmp(op, "gemm") || !strcmp(op, "batched_gemm")) {
        rows = b * cs->m;
        cols = cs->n;
    } else if (!strcmp(op, "attention")) {
        rows = b * cs->m;
        cols = cs->k;
    } else if (!strcmp(op, "softmax") || !strcmp(op, "layernorm") || !strcmp(op, "rmsnorm") ||
               !strcmp(op, "elementwise")) {
        rows = cs->m;
        cols = cs->k;
    } else if (!strcmp(op, "gather")) {
        rows = cs->n;
        cols = cs->k;
    } else if (!strcmp(op, "reduce_sum") || !strcmp(op, "norm")) {
        rows = cs->m;
    } else if (!strcmp(op, "allreduce")) {
        cols = cs->k;
    }
    *rows_p = rows > 0 ? rows : 1;
    *cols_p = cols > 0 ? cols : 1;
}

/* Whether the differing set is a union of blocks: block (i / th, j / tw);
 * every block holding sampled positions is all-differ or all-same, with
 * both kinds present and some block holding at least two positions. */
static int blockwise(const size_t *pos, const unsigned char *differ, int n, int64_t cols,
                     int64_t th, int64_t tw)
{
    /* sort-free check: a small open-addressing map block -> state */
    int cap = 1;
    while (cap < 2 * n)
        cap *= 2;
    int64_t *key = malloc((size_t)cap * sizeof *key);
    unsigned char *st = calloc((size_t)cap, 1); /* bit0 same, bit1 differ, bit2 seen twice */
    if (!key || !st) {
        free(key);
        free(st);
        return 0;
    }
    int64_t nbc = (cols + tw - 1) / tw;
    int ok = 1, multi = 0, any_same = 0, any_diff = 0;
    for (int i = 0; i < n && ok; i++) {
        int64_t r = (int64_t)pos[i] / cols, c = (int64_t)pos[i] % cols;
        int64_t b = (r / th) * nbc + c / tw;
        uint64_t h = (uint64_t)b * KCS_GOLDEN64;
        int p = (int)(h >> 40) & (cap - 1);
        while (st[p] && key[p] != b)
            p = (p + 1) & (cap - 1);
        if (st[p])
            st[p] |= 4;
        key[p] = b;
        st[p] |= differ[i] ? 2 : 1;
        if ((st[p] & 3) == 3)
            ok = 0;
        multi |= (st[p] & 4) != 0;
        any_same |= !differ[i];
        any_diff |= differ[i] != 0;
    }
    free(key);
    free(st);
    return ok && multi && any_same && any_diff;
}

const char *kcs_pattern_classify(const size_t *pos, const unsigned char *differ, int n,
                                 int64_t rows, int64_t cols, char *buf, size_t len)
{
    int nd = 0;
    for (int i = 0; i < n; i++)
        nd += differ[i] != 0;
    if (n == 0) {
        snprintf(buf, len, "-");
        return buf;
    }
    if (nd == 0) {
        snprintf(buf, len, "none");
        return buf;
    }
    if (nd == n) {
        snprintf(buf, len, "everywhere");
        return buf;
    }
    if (cols > 1 && blockwise(pos, differ, n, cols, 1, cols)) {
        snprintf(buf, len, "rows");
        return buf;
    }
    if (rows > 1 && cols > 1 && blockwise(pos, differ, n, cols, rows, 1)) {
        snprintf(buf, len, "cols");
        return buf;
    }
    /* the coarsest square tiling that explains the set */
    for (int64_t t = 1024; t >= 2; t /= 2) {
        if (t >= rows && t >= cols)
            continue;
        if (blockwise(pos, differ, n, cols, t, t)) {
            snprintf(buf, len, "tiles:%lld", (long long)t);
            return buf;
        }
    }
    snprintf(buf, len, "scattered");
    return buf;
}

void kcs_reduce_divergence(const kcs_case_rec *cs, const kcs_result_rec *res,
                           const double *samples, const double *absref, int n_ranks,
                           int max_trials, int n_samples, kcs_divergence_row *rows)
{
    kcs_format fmt = KCS_FMT_FP64;
    if (kcs_format_parse(cs->dtype_out, &fmt) != 0)
        fmt = KCS_FMT_FP64;
    int64_t grows, gcols;
    kcs_output_grid(cs, &grows, &gcols);
    size_t out_len = (size_t)(grows * gcols);
    size_t *pos = malloc((size_t)(n_samples > 0 ? n_samples : 1) * sizeof *pos);
    unsigned char *differ = malloc((size_t)(n_samples > 0 ? n_samples : 1));
    size_t *vpos = malloc((size_t)(n_samples > 0 ? n_samples : 1) * sizeof *vpos);
    for (int j = 0; pos && j < n_samples; j++)
        pos[j] = kcs_sample_index(j, out_len, n_samples);
    int idx = 0;
    for (int a = 0; a < n_ranks; a++) {
        for (int b = a + 1; b < n_ranks; b++, idx++) {
            kcs_divergence_row *row = &rows[idx];
            memset(row, 0, sizeof *row);
            row->case_id = cs->case_id;
            row->rank_a = a;
            row->rank_b = b;
            row->k = cs->k;
            double dmax = 0.0, smax = 0.0, scaled = 0.0, ulp = 0.0;
            int any = 0, nv = 0, scaled_ok = absref != NULL;
            for (int i = 0; samples && i < n_samples; i++) {
                double x = samples[a * n_samples + i], y = samples[b * n_samples + i];
                if (isnan(x) || isnan(y))
                    continue;
                any = 1;
                double d = fabs(x - y);
                dmax = fmax(dmax, d);
                smax = fmax(smax, fmax(fabs(x), fabs(y)));
                if (absref && absref[i] > 0.0)
                    scaled = fmax(scaled, d / absref[i]);
                else if (absref && d > 0.0)
                    scaled_ok = 0; /* a difference where |A||B| = 0: not scalable */
                double u = kcs_format_ulp_distance(fmt, x, y);
                if (!(u <= ulp))
                    ulp = u;
                if (pos && differ && vpos) {
                    vpos[nv] = pos[i];
                    differ[nv++] = x != y;
                }
            }
            row->n_compared = nv;
            row->max_abs_diff = any ? dmax : NAN;
            row->max_rel_diff = any && smax > 0.0 ? dmax / smax : (any ? 0.0 : NAN);
            row->max_scaled_diff = any && scaled_ok ? scaled : NAN;
            row->max_ulp_diff = any ? ulp : NAN;
            int nd = 0;
            for (int i = 0; i < nv; i++)
                nd += differ[i];
            row->frac_differ = nv ? (double)nd / nv : NAN;
            if (pos && differ && vpos)
                kcs_pattern_classify(vpos, differ, nv, grows, gcols, row->pattern,
                                     sizeof row->pattern);
            int same = 1, compared = 0;
            for (int t = 0; t < max_trials; t++) {
                const kcs_result_rec *x = &res[a * max_trials + t], *y = &res[b * max_trials + t];
                if ((kcs_status_of(x->status) != KCS_ST_OK) || (kcs_status_of(y->status) != KCS_ST_OK))
                    continue;
                compared = 1;
                same &= x->output_digest == y->output_digest;
            }
            row->identical = compared && same;
        }
    }
    free(pos);
    free(differ);
    free(vpos);
}
