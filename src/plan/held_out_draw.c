/* Held-out shapes drawn over the precondition (held_out_draw.h). */
#include "held_out_draw.h"

#include <math.h>

#include "rng.h"

typedef struct dim {
    int64_t lo, hi, v;
    int stratum;
} dim;

/* A log-uniform integer in stratum s of count over [lo, hi]. */
static int64_t draw_in(kcs_rng *r, int64_t lo, int64_t hi, int s, int count)
{
    if (hi <= lo)
        return lo;
    double a = log((double)lo), b = log((double)hi + 1.0);
    double w = (b - a) / count;
    double x = exp(a + w * (s + kcs_rng_uniform(r)));
    int64_t v = (int64_t)floor(x);
    return v < lo ? lo : v > hi ? hi : v;
}

static void permute(kcs_rng *r, int *p, int count)
{
    for (int i = 0; i < count; i++)
        p[i] = i;
    for (int i = count - 1; i > 0; i--) {
        int j = (int)(kcs_rng_uniform(r) * (i + 1));
        j = j > i ? i : j;
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

static double work(const dim *d, int nd)
{
    double w = 1.0;
    for (int i = 0; i < nd; i++)
        w *= (double)d[i].v;
    return w;
}

int kcs_held_out_draw(const kcs_contract *c, kcs_op op, uint64_t seed, int count,
                      kcs_shape *out)
{
    if ((op != KCS_OP_GEMM && op != KCS_OP_BATCHED_GEMM) || count <= 0)
        return 0;
    if (count > KCS_MAX_SHAPES)
        count = KCS_MAX_SHAPES;
    int nd = op == KCS_OP_BATCHED_GEMM ? 4 : 3;
    dim base[4] = {
        {c->m_min, c->m_max < KCS_DRAW_MAX_DIM ? c->m_max : KCS_DRAW_MAX_DIM, 0, 0},
        {c->n_min, c->n_max < KCS_DRAW_MAX_DIM ? c->n_max : KCS_DRAW_MAX_DIM, 0, 0},
        {c->k_min, c->k_max, 0, 0},
        {c->batch_min, c->batch_max < KCS_DRAW_MAX_BATCH ? c->batch_max : KCS_DRAW_MAX_BATCH, 0,
         0},
    };
    const kcs_op_narrowing *nw = &c->per_op[op]; /* precondition.per_op: the op's own ranges */
    for (int i = 0; i < nd && nw->set; i++) {
        if (nw->range[i][0] > base[i].lo)
            base[i].lo = nw->range[i][0];
        if (nw->range[i][1] < base[i].hi)
            base[i].hi = nw->range[i][1];
    }
    for (int i = 0; i < nd; i++) {
        if (base[i].lo < 1)
            base[i].lo = 1;
        if (base[i].hi < base[i].lo)
            base[i].hi = base[i].lo;
    }
    kcs_rng r;
    kcs_rng_init(&r, seed, 0x4E1D0u, (uint64_t)op);
    int perm[4][KCS_MAX_SHAPES];
    for (int i = 0; i < nd; i++)
        permute(&r, perm[i], count);
    for (int s = 0; s < count; s++) {
        dim d[4];
        int top = 0;
        for (int i = 0; i < nd; i++) {
            d[i] = base[i];
            d[i].stratum = perm[i][s];
            d[i].v = draw_in(&r, d[i].lo, d[i].hi, d[i].stratum, count);
            if (d[i].stratum > d[top].stratum)
                top = i;
        }
        /* over the work cap: halve the largest other dimension, then the
         * kept one, never below the precondition's minimum */
        while (work(d, nd) > KCS_DRAW_MAX_WORK) {
            int j = -1;
            for (int i = 0; i < nd; i++)
                if (i != top && d[i].v > d[i].lo && (j < 0 || d[i].v > d[j].v))
                    j = i;
            if (j < 0)
                j = d[top].v > d[top].lo ? top : -1;
            if (j < 0)
                break;
            d[j].v = d[j].v / 2 < d[j].lo ? d[j].lo : d[j].v / 2;
        }
        out[s] = (kcs_shape){d[0].v, d[1].v, d[2].v, nd == 4 ? d[3].v : 0};
    }
    return count;
}
