/* kcs probe --order (probe_order.h): the op calls that answer FPRev's
 * questions, and the per-output bookkeeping. */
#include "probe_order.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "order_tree.h"
#include "progress.h"
#include "tensor.h"

typedef struct oprobe {
    const kcs_backend_ops *ops;
    kcs_backend_ctx *ctx;
    const kcs_order_opts *o;
    kcs_call call;
    double *A, *B;        /* the op's inputs (B: gemm/dot second factor) */
    size_t lenA, lenB;
    kcs_tensor out;
    int nout;             /* outputs probed (gemm m*n, reduce_sum/layernorm m, dot 1) */
    double fa_big, fa_unit, fb_big, fb_unit; /* factors (B = 1s for single-input ops) */
    double unit;          /* the unit summand */
    int rep;              /* the representative output */
    int *agree;           /* per output: 1 while it answered as rep (unassigned ones) */
    int subnormal_units;  /* units from the smallest subnormals (narrow formats) */
    kcs_progress prog;
    int64_t resolved;     /* outputs with a tree */
    long pass_calls;      /* calls of this pass */
    long calls;
    char msg[256];
} oprobe;

static double p2(int e)
{
    return ldexp(1.0, e);
}

/* The summands: +-big and unit, as products of two factors for gemm/dot. */
static void pick_values(oprobe *P)
{
    const kcs_format_info *fi = kcs_format_get(P->o->in);
    int cap = P->o->in == KCS_FMT_FP64 ? 500 : 63;
    /* narrow formats: the smallest subnormal factors give the widest margin
     * (a flushing unit zeroes them: kcs_order_probe retries with normals) */
    int eb = fi->emax < cap ? fi->emax : cap;
    int es = eb >= 60 ? 0 : P->subnormal_units ? fi->emin - (fi->p - 1) : fi->emin;
    switch (P->o->op) {
    case KCS_OP_GEMM:
    case KCS_OP_DOT:
        P->fa_big = P->fb_big = p2(eb);
        P->fa_unit = P->fb_unit = p2(es);
        break;
    case KCS_OP_LAYERNORM: /* (x - mu)^2 must stay finite: big^2 below the range */
        P->fa_big = p2(eb >= 60 ? eb : eb / 2);
        P->fa_unit = 1.0;
        P->fb_big = P->fb_unit = 1.0;
        break;
    default: /* reduce_sum, allreduce: the values themselves */
        eb = fi->emax - 1 < 2 * cap ? fi->emax - 1 : 2 * cap;
        P->fa_big = p2(eb);
        P->fa_unit = eb >= 60 ? 1.0 : p2(es);
        P->fb_big = P->fb_unit = 1.0;
        break;
    }
    P->unit = P->fa_unit * P->fb_unit;
}

/* Put summand index i to value sel (0 unit, 1 +big, -1 -big). */
static void set_summand(oprobe *P, int i, int sel)
{
    const kcs_order_opts *o = P->o;
    double a = sel ? sel * P->fa_big : P->fa_unit, b = sel ? P->fb_big : P->fb_unit;
    int64_t k = o->k;
    switch (o->op) {
    case KCS_OP_GEMM:
        for (int64_t r = 0; r < o->m; r++)
            P->A[r * k + i] = a;
        for (int64_t c = 0; c < o->n; c++)
            P->B[(int64_t)i * o->n + c] = b;
        break;
    case KCS_OP_DOT:
        P->A[i] = a;
        P->B[i] = b;
        break;
    case KCS_OP_ALLREDUCE: /* contribution i: every one of the n elements */
        for (int64_t e = 0; e < o->n; e++)
            P->A[(int64_t)i * o->n + e] = a;
        break;
    default: /* reduce_sum, layernorm: m rows of k */
        for (int64_t r = 0; r < o->m; r++)
            P->A[r * k + i] = a;
        break;
    }
}

/* The subtree size output o reports, or -1 when its value is no count. */
static int size_of(oprobe *P, int o, int i, int j)
{
    int64_t k = P->o->k;
    double v;
    if (P->o->op == KCS_OP_LAYERNORM) {
        /* y_t / y_i = (1 - mu) / (big - mu), mu = (k - L) / k: L = k (1 - mu) */
        int t = 0;
        while (t == i || t == j)
            t++;
        double yt = P->out.data[(int64_t)o * k + t], yi = P->out.data[(int64_t)o * k + i];
        if (!isfinite(yt) || !isfinite(yi) || yi == 0.0)
            return -1;
        double L = (double)k * (yt / yi) * P->fa_big;
        double Lr = nearbyint(L);
        if (fabs(L - Lr) > 0.25 || Lr < 2 || Lr > (double)k)
            return -1;
        return (int)Lr;
    }
    v = P->out.data[o] / P->unit;
    if (!isfinite(v) || v != nearbyint(v) || v < 0 || v > (double)(k - 2))
        return -1;
    return (int)(k - (int64_t)v);
}

static int measure(void *user, int i, int j, int *size_p, kcs_error *err)
{
    oprobe *P = user;
    set_summand(P, i, 1);
    set_summand(P, j, -1);
    kcs_tensor_poison(&P->out);
    P->msg[0] = '\0';
    P->calls++;
    if (++P->pass_calls % 256 == 0) { /* a pass of a balanced tree: ~(k/2) log2 k calls */
        double k = (double)P->o->k, est = 0.5 * k * log2(k) + 2.0 * k;
        kcs_progress_part(&P->prog, P->resolved, fmin(0.99, (double)P->pass_calls / est));
    }
    int rc = P->ops->run(P->ctx, &P->call, err);
    set_summand(P, i, 0);
    set_summand(P, j, 0);
    if (rc)
        return kcs_error_prefix(err, "probe --order: %s %s", P->ops->name,
                                kcs_op_name(P->o->op));
    if (!kcs_tensor_guards_ok(&P->out) || kcs_tensor_count_sentinel(&P->out))
        return kcs_fail(err, KCS_E_DEVICE, "probe --order: %s %s wrote outside its output or "
                        "not all of it", P->ops->name, kcs_op_name(P->o->op));
    int L = size_of(P, P->rep, i, j);
    if (L < 0) {
        double v = P->o->op == KCS_OP_LAYERNORM ? P->out.data[(int64_t)P->rep * P->o->k]
                                                : P->out.data[P->rep];
        return kcs_fail(err, KCS_E_DEVICE, "probe --order: summands %d = +%g and %d = -%g, the "
                        "others %g: output %d is %.17g, not a count of the others (the "
                        "summands do not swamp in this accumulator at k = %lld, or the op "
                        "rounds its output too coarsely to count)", i, P->fa_big * P->fb_big,
                        j, P->fa_big * P->fb_big, P->unit, P->rep, v, (long long)P->o->k);
    }
    for (int o = 0; o < P->nout; o++)
        if (P->agree[o] && o != P->rep && size_of(P, o, i, j) != L)
            P->agree[o] = 0;
    *size_p = L;
    return 0;
}

static int setup(oprobe *P, kcs_error *err)
{
    const kcs_order_opts *o = P->o;
    kcs_call *c = &P->call;
    c->op = o->op;
    c->variant = o->variant ? o->variant : "native";
    c->schedule = o->schedule;
    c->dtype_in = o->in;
    c->dtype_out = o->in == KCS_FMT_FP64 ? KCS_FMT_FP64 : KCS_FMT_FP32;
    c->acc.fmt = c->dtype_out;
    c->k = o->k;
    c->m = o->m;
    c->n = o->n;
    c->batch = 1;
    c->attrs = "";
    c->seed = o->seed;
    c->msg = P->msg;
    c->msg_len = sizeof P->msg;
    size_t k = (size_t)o->k, m = (size_t)o->m, n = (size_t)o->n;
    switch (o->op) {
    case KCS_OP_GEMM:
        P->lenA = m * k;
        P->lenB = k * n;
        P->nout = (int)(m * n);
        break;
    case KCS_OP_DOT:
        P->lenA = P->lenB = k;
        P->nout = 1;
        c->m = c->n = 1;
        break;
    case KCS_OP_REDUCE_SUM:
        P->lenA = m * k;
        P->nout = (int)m;
        c->n = 1;
        break;
    case KCS_OP_ALLREDUCE: /* the op on one rank: k contributions of n elements */
        P->lenA = k * n;
        P->nout = (int)n;
        c->m = o->k;
        c->k = o->n;
        c->n = 1;
        break;
    case KCS_OP_LAYERNORM:
        if (k < 3)
            return kcs_fail(err, KCS_E_INVAL, "probe --order: layernorm needs -k >= 3");
        P->lenA = m * k;
        P->nout = (int)m;
        c->n = 1;
        break;
    default:
        return kcs_fail(err, KCS_E_INVAL, "probe --order: no probe for op %s (gemm, dot, "
                        "reduce_sum, layernorm, allreduce): %s",
                        kcs_op_name(o->op),
                        o->op == KCS_OP_SOFTMAX || o->op == KCS_OP_RMSNORM
                            ? "its reductions sum only positive terms (exp, x^2), so no pair "
                              "of summands can cancel"
                        : o->op == KCS_OP_ATTENTION
                            ? "its softmax sums only positive terms, and its score sum (q.k) "
                              "is not isolated by this probe (docs/order.md)"
                            : "it has no reduction to probe");
    }
    pick_values(P);
    P->A = malloc(P->lenA * sizeof *P->A);
    P->B = P->lenB ? malloc(P->lenB * sizeof *P->B) : NULL;
    P->agree = calloc((size_t)P->nout, sizeof *P->agree);
    if (!P->A || (P->lenB && !P->B) || !P->agree)
        return kcs_fail(err, KCS_E_NOMEM, "probe --order: out of memory");
    for (int64_t i = 0; i < o->k; i++)
        set_summand(P, (int)i, 0);
    size_t olen = kcs_op_out_len(c);
    int rc = kcs_tensor_alloc(&P->out, olen, c->dtype_out, err);
    if (rc)
        return rc;
    c->in[0] = P->A;
    c->in_len[0] = P->lenA;
    if (P->B) {
        c->in[1] = P->B;
        c->in_len[1] = P->lenB;
    }
    c->out = P->out.data;
    c->out_len = olen;
    return 0;
}

/* The same questions at another call seed: every output must answer as
 * its tree says, else the order changed with the call (r->call_varies). */
static int recheck(oprobe *P, kcs_order_result *r, const int *tree_of, kcs_error *err)
{
    int k = (int)P->o->k, nt = r->ntrees, rc = 0;
    kcs_otree *T = calloc((size_t)nt, sizeof *T);
    int **par = calloc((size_t)nt, sizeof *par), **sz = calloc((size_t)nt, sizeof *sz);
    if (!T || !par || !sz)
        rc = kcs_fail(err, KCS_E_NOMEM, "probe --order: out of memory");
    for (int t = 0; !rc && t < nt; t++) {
        if ((rc = kcs_otree_parse(r->trees[t].tree, &T[t], err)))
            break;
        par[t] = malloc((size_t)T[t].nodes * sizeof **par);
        sz[t] = malloc((size_t)T[t].nodes * sizeof **sz);
        if (!par[t] || !sz[t])
            rc = kcs_fail(err, KCS_E_NOMEM, "probe --order: out of memory");
        else
            kcs_otree_index(&T[t], par[t], sz[t]);
    }
    uint64_t saved = P->call.seed, x = P->o->seed ^ KCS_ORDER_RECHECK_SEED;
    P->call.seed = x;
    for (int q = 0; !rc && q < P->o->recheck && !r->call_varies; q++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((x >> 33) % (uint64_t)k), j = (int)((x >> 11) % (uint64_t)(k - 1));
        if (j >= i)
            j++;
        set_summand(P, i, 1);
        set_summand(P, j, -1);
        kcs_tensor_poison(&P->out);
        P->calls++;
        rc = P->ops->run(P->ctx, &P->call, err);
        set_summand(P, i, 0);
        set_summand(P, j, 0);
        for (int o = 0; !rc && o < P->nout && !r->call_varies; o++) {
            int t = tree_of[o];
            r->call_varies = size_of(P, o, i, j) != kcs_otree_lca_size(par[t], sz[t], i, j);
        }
    }
    P->call.seed = saved;
    for (int t = 0; t < nt; t++) {
        if (T)
            kcs_otree_free(&T[t]);
        if (par)
            free(par[t]);
        if (sz)
            free(sz[t]);
    }
    free(T);
    free(par);
    free(sz);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int probe_once(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, const kcs_order_opts *o,
                      int units, kcs_order_result *r, kcs_error *err);

int kcs_order_probe(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, const kcs_order_opts *o,
                    kcs_order_result *r, kcs_error *err)
{
    const kcs_format_info *fi = kcs_format_get(o->in);
    int narrow = fi->emax < 60;
    int rc = probe_once(ops, ctx, o, narrow, r, err);
    if (rc == KCS_E_DEVICE && narrow) { /* subnormal units flushed? normal ones */
        long calls = r->calls;
        rc = probe_once(ops, ctx, o, 0, r, err);
        r->calls += calls;
        if (rc)
            kcs_error_prefix(err, "with subnormal units and with normal ones");
    }
    if (!rc) { /* the margin: bits between big and the units, against what a
                  27-bit accumulator (fp32 + 3 extra bits) needs at this k */
        int need = 27 + 2;
        for (int64_t x = o->k; x > 1; x >>= 1)
            need++;
        r->margin_bits = (int)log2(r->big / r->unit);
        r->margin_short = r->margin_bits < need;
    }
    return rc;
}

static int probe_once(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, const kcs_order_opts *o,
                      int units, kcs_order_result *r, kcs_error *err)
{
    int subnormal_units = units == 1;
    memset(r, 0, sizeof *r);
    if (o->k < 2 || o->k > (1 << 20))
        return kcs_fail(err, KCS_E_INVAL, "probe --order: -k %lld outside 2..%d",
                        (long long)o->k, 1 << 20);
    if (o->m < 1 || o->n < 1 || o->m * o->n > (1 << 16))
        return kcs_fail(err, KCS_E_INVAL, "probe --order: -m %lld -n %lld: 1..65536 outputs",
                        (long long)o->m, (long long)o->n);
    double t0 = now_s();
    oprobe P = {.ops = ops, .ctx = ctx, .o = o, .subnormal_units = subnormal_units};
    int *tree_of = NULL, rc = setup(&P, err);
    if (!rc && !(tree_of = malloc((size_t)P.nout * sizeof *tree_of)))
        rc = kcs_fail(err, KCS_E_NOMEM, "probe --order: out of memory");
    /* every unit counted: all-unit summands must give k units exactly
     * (layernorm's output is 0 there: its check is the first answer) */
    if (!rc && o->op != KCS_OP_LAYERNORM) {
        kcs_tensor_poison(&P.out);
        P.calls++;
        rc = ops->run(ctx, &P.call, err);
        for (int i = 0; !rc && i < P.nout; i++)
            if (P.out.data[i] != (double)o->k * P.unit)
                rc = kcs_fail(err, KCS_E_DEVICE, "probe --order: %lld units of %g sum to %.17g "
                              "at output %d, not %g: units are flushed or not summed exactly",
                              (long long)o->k, P.unit, P.out.data[i], i, (double)o->k * P.unit);
    }
    r->noutputs = P.nout;
    r->big = P.fa_big * P.fb_big;
    r->unit = P.unit;
    for (int i = 0; !rc && i < P.nout; i++)
        tree_of[i] = -1;
    kcs_progress_start(&P.prog, o->progress && !rc, P.nout, "outputs with a tree");
    for (int pass = 0; !rc; pass++) {
        P.pass_calls = 0;
        P.rep = -1;
        for (int i = 0; i < P.nout; i++) {
            P.agree[i] = tree_of[i] < 0;
            if (P.rep < 0 && tree_of[i] < 0)
                P.rep = i;
        }
        if (P.rep < 0)
            break;
        kcs_otree t;
        long q = 0;
        rc = kcs_otree_recover((int)o->k, measure, &P, o->seed + (uint64_t)pass, o->verify, &t,
                               &q, err);
        if (rc) {
            if (P.nout > 1)
                kcs_error_prefix(err, "output %d", P.rep);
            break;
        }
        kcs_order_tree *nt = realloc(r->trees, (size_t)(r->ntrees + 1) * sizeof *nt);
        char *s = kcs_otree_str(&t);
        int fan = kcs_otree_max_fanin(&t);
        kcs_otree_free(&t);
        if (!nt || !s) {
            free(s);
            if (nt)
                r->trees = nt;
            rc = kcs_fail(err, KCS_E_NOMEM, "probe --order: out of memory");
            break;
        }
        r->trees = nt;
        kcs_order_tree *T = &r->trees[r->ntrees];
        memset(T, 0, sizeof *T);
        T->tree = s;
        T->max_fanin = fan;
        T->outputs = malloc((size_t)P.nout * sizeof *T->outputs);
        r->ntrees++;
        if (!T->outputs) {
            rc = kcs_fail(err, KCS_E_NOMEM, "probe --order: out of memory");
            break;
        }
        for (int i = 0; i < P.nout; i++)
            if (P.agree[i] && tree_of[i] < 0) {
                tree_of[i] = r->ntrees - 1;
                T->outputs[T->nout++] = i;
            }
        P.resolved += T->nout;
        kcs_progress_step(&P.prog, P.resolved);
    }
    kcs_progress_end(&P.prog);
    if (!rc && o->recheck > 0)
        rc = recheck(&P, r, tree_of, err);
    r->calls = P.calls;
    r->seconds = now_s() - t0;
    free(tree_of);
    free(P.A);
    free(P.B);
    free(P.agree);
    kcs_tensor_free(&P.out);
    if (rc) {
        long calls = r->calls;
        kcs_order_result_free(r);
        r->calls = calls;
    }
    return rc;
}

void kcs_order_result_free(kcs_order_result *r)
{
    for (int i = 0; i < r->ntrees; i++) {
        free(r->trees[i].tree);
        free(r->trees[i].outputs);
    }
    free(r->trees);
    memset(r, 0, sizeof *r);
}

char *kcs_order_ranges(const int *outputs, int n)
{
    size_t cap = (size_t)n * 24 + 8;
    char *s = malloc(cap), *p = s;
    if (!s)
        return NULL;
    *p = '\0';
    for (int a = 0; a < n;) {
        int b = a;
        while (b + 1 < n && outputs[b + 1] == outputs[b] + 1)
            b++;
        p += sprintf(p, "%s%d", a ? "," : "", outputs[a]);
        if (b > a)
            p += sprintf(p, "-%d", outputs[b]);
        a = b + 1;
    }
    return s;
}
