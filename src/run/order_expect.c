/* Expected summation trees of kcs's schedules and emulated matrix units,
 * and evaluating a tree on summands (order_expect.h). */
#include "order_expect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"
#include "format.h"

/* -1 stands for an empty sum (the accumulator's zero: no node). */
static int join(kcs_otree *t, int x, int y)
{
    if (x < 0)
        return y;
    if (y < 0)
        return x;
    int k[2] = {x, y};
    return kcs_otree_node(t, k, 2);
}

static int seq(kcs_otree *t, const int *idx, int n)
{
    int cur = -1;
    for (int i = 0; i < n; i++)
        cur = join(t, cur, idx[i]);
    return cur;
}

static int pairwise(kcs_otree *t, int lo, int n) /* acc.c sum_pairwise: h = n / 2 */
{
    if (n <= 0)
        return -1;
    if (n == 1)
        return lo;
    int h = n / 2;
    int l = pairwise(t, lo, h);
    return join(t, l, pairwise(t, lo + h, n - h));
}

static int chunks(kcs_otree *t, const int *idx, int n, int chunk)
{
    int total = -1;
    for (int s = 0; s < n; s += chunk)
        total = join(t, total, seq(t, idx + s, n - s < chunk ? n - s : chunk));
    return total;
}

int kcs_order_expect_schedule(const kcs_schedule *s, int n, uint64_t seed, kcs_otree *t,
                              kcs_error *err)
{
    int rc = kcs_otree_init(t, n, err);
    if (rc)
        return rc;
    int *idx = malloc((size_t)n * sizeof *idx);
    uint32_t *perm = s->kind == KCS_SCHED_ATOMIC ? malloc((size_t)n * sizeof *perm) : NULL;
    if (!idx || (s->kind == KCS_SCHED_ATOMIC && !perm)) {
        free(idx);
        free(perm);
        kcs_otree_free(t);
        return kcs_fail(err, KCS_E_NOMEM, "order: out of memory");
    }
    for (int i = 0; i < n; i++)
        idx[i] = i;
    switch (s->kind) {
    case KCS_SCHED_PAIRWISE: t->root = pairwise(t, 0, n); break;
    case KCS_SCHED_BLOCKED: t->root = chunks(t, idx, n, s->param > 0 ? (int)s->param : 1); break;
    case KCS_SCHED_SPLITK: {
        int64_t chunk = s->param > 0 ? ((int64_t)n + s->param - 1) / s->param : n;
        t->root = chunks(t, idx, n, chunk > 0 ? (int)chunk : 1);
        break;
    }
    case KCS_SCHED_ATOMIC:
        kcs_atomic_order(seed, n, perm);
        for (int i = 0; i < n; i++)
            idx[i] = (int)perm[i];
        t->root = seq(t, idx, n);
        break;
    case KCS_SCHED_SEQUENTIAL:
    default: t->root = seq(t, idx, n); break;
    }
    free(idx);
    free(perm);
    return 0;
}

/* blockfma.c pair_tree over F slots (h = (n + 1) / 2); slots >= real are the
 * padding's zero products. */
static int pair_slots(kcs_otree *t, int lo, int n, int real_end)
{
    if (n == 1)
        return lo < real_end ? lo : -1;
    int h = (n + 1) / 2;
    int l = pair_slots(t, lo, h, real_end);
    return join(t, l, pair_slots(t, lo + h, n - h, real_end));
}

int kcs_order_expect_profile(const kcs_profile_params *p, int n, kcs_otree *t, kcs_error *err)
{
    int rc = kcs_otree_init(t, n, err);
    if (rc)
        return rc;
    int F = p->F, *k = malloc((size_t)(F + 1) * sizeof *k);
    if (!k) {
        kcs_otree_free(t);
        return kcs_fail(err, KCS_E_NOMEM, "order: out of memory");
    }
    int c = -1;
    for (int s = 0; s < n; s += F) {
        int e = s + F < n ? s + F : n, nk = 0;
        switch (p->step) {
        case KCS_STEP_PAIRWISE: c = join(t, c, pair_slots(t, s, F, e)); break;
        case KCS_STEP_LATE_C: /* c is cut at the products' quantum: swamps as global */
        case KCS_STEP_GLOBAL:
        default:
            if (c >= 0)
                k[nk++] = c;
            for (int i = s; i < e; i++)
                k[nk++] = i;
            c = nk == 1 ? k[0] : kcs_otree_node(t, k, nk);
            break;
        }
    }
    t->root = c;
    free(k);
    return 0;
}

/* ---- evaluation ------------------------------------------------------------- */

typedef struct ev {
    const kcs_otree *t;
    kcs_order_leaf leaf;
    const kcs_profile_params *prof;
    const double *a, *b;
} ev;

static double rnd(const ev *E, double x)
{
    return E->leaf == KCS_ORDER_LEAF_FP64 ? x : (double)(float)x;
}

/* rnd(x + a*b) with the product exact (fp32 inputs: 48 bits; fp64: fma) */
static double fma_r(const ev *E, double x, int leaf)
{
    if (E->leaf == KCS_ORDER_LEAF_FP64)
        return fma(E->a[leaf], E->b[leaf], x);
    kcs_acc acc = {.fmt = KCS_FMT_FP32};
    return kcs_acc_add(&acc, x, E->a[leaf] * E->b[leaf]);
}

static int min_leaf(const kcs_otree *t, int v)
{
    while (v >= t->n)
        v = t->kids[t->kid0[v]]; /* an upper bound is enough for ordering leaves */
    return v;
}

/* fp32 flush to zero of a pairwise profile (blockfma.c's ftz32) */
static double ftz(const ev *E, double x)
{
    return E->prof->flush && fabs(x) < 0x1p-126 ? copysign(0.0, x) : x;
}

/* A pairwise profile (amd-mi250): every node is one fp32 addition and a
 * leaf the fp32 product, with the profile's flushing of subnormal inputs,
 * products and sums (blockfma.c step_pairwise; its padding's zero products
 * change no nonzero sum). The tree supplies the order, inside a block and
 * across blocks. */
static double eval_pairwise(const ev *E, int v)
{
    const kcs_otree *t = E->t;
    const kcs_profile_params *p = E->prof;
    if (v < t->n) {
        double tiny = ldexp(1.0, kcs_format_get(p->in)->emin);
        double tiny_b = ldexp(1.0, kcs_format_get(kcs_profile_in_b(p))->emin);
        double x = E->a[v], y = E->b[v];
        if (p->flush) {
            int pos = p->flush_sign == KCS_FSIGN_POSITIVE;
            x = fabs(x) < tiny ? (pos ? 0.0 : copysign(0.0, x)) : x;
            y = fabs(y) < tiny_b ? (pos ? 0.0 : copysign(0.0, y)) : y;
        }
        return ftz(E, (double)(float)(x * y));
    }
    float acc = 0.0f;
    for (int i = 0; i < t->nkid[v]; i++) {
        float x = (float)eval_pairwise(E, t->kids[t->kid0[v] + i]);
        acc = i ? (float)ftz(E, (double)(acc + x)) : x;
    }
    return acc;
}

static double eval(const ev *E, int v)
{
    const kcs_otree *t = E->t;
    if (E->leaf == KCS_ORDER_LEAF_PROFILE && E->prof && E->prof->step == KCS_STEP_PAIRWISE)
        return eval_pairwise(E, v);
    if (v < t->n)
        return rnd(E, E->a[v] * E->b[v]);
    int c = t->nkid[v];
    const int *k = t->kids + t->kid0[v];
    if (E->leaf == KCS_ORDER_LEAF_PROFILE && E->prof) {
        /* one block step: c = the internal child's value (0 when none) */
        double cv = 0.0, a[64], b[64];
        int np = 0;
        for (int i = 0; i < c && np < 64; i++) {
            if (k[i] >= t->n) {
                cv = eval(E, k[i]);
            } else {
                a[np] = E->a[k[i]];
                b[np++] = E->b[k[i]];
            }
        }
        return kcs_blockfma_step(E->prof, cv, a, b, np);
    }
    /* fma leaves: internal children first (rounded adds), then the
     * products in index order, each one fma; two products: the smaller
     * index rounded first */
    double acc = 0.0;
    int have = 0;
    for (int i = 0; i < c; i++)
        if (k[i] >= t->n) {
            double x = eval(E, k[i]);
            acc = have ? rnd(E, acc + x) : x;
            have = 1;
        }
    int *lv = malloc((size_t)c * sizeof *lv), nl = 0;
    if (!lv)
        return NAN;
    for (int i = 0; i < c; i++)
        if (k[i] < t->n)
            lv[nl++] = min_leaf(t, k[i]);
    for (int i = 1; i < nl; i++) {
        int x = lv[i], j = i - 1;
        while (j >= 0 && lv[j] > x) {
            lv[j + 1] = lv[j];
            j--;
        }
        lv[j + 1] = x;
    }
    for (int i = 0; i < nl; i++) {
        if (!have) {
            acc = rnd(E, E->a[lv[i]] * E->b[lv[i]]);
            have = 1;
        } else {
            acc = fma_r(E, acc, lv[i]);
        }
    }
    free(lv);
    return acc;
}

double kcs_order_eval(const kcs_otree *t, kcs_order_leaf leaf, const kcs_profile_params *prof,
                      const double *a, const double *b)
{
    if (t->root < 0)
        return 0.0;
    ev E = {t, leaf, prof, a, b};
    return eval(&E, t->root);
}
