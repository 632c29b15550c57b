/* kcs calibrate --sweep on softmax, layernorm, attention and C-PRC-04's
 * reduce_sum: see calib_sweep_ops.h. */
#include "calib_sweep_ops.h"

#include <string.h>

#include "attrs.h"
#include "precondition.h"

/* The own kernels' conforming fp32 sums, in the orders of the gemm
 * catalogue, that every catalogue below opens with. */
#define OWN_FP32_SUMS                           \
    {"own", "fp32", "sequential", 0, NULL},     \
        {"own", "fp32", "pairwise", 0, NULL},   \
        {"own", "fp32", "blocked:64", 0, NULL}, \
        {"own", "fp32", "splitk:4", 0, NULL},   \
        {"own", "fp32:rz", "sequential", 0, NULL}

/* softmax and layernorm: every reduction of the own kernels goes through
 * call->acc under call->schedule (cpu/softmax.c, cpu/norm.c), so the
 * accumulators and orders are those of the gemm catalogue; the narrow
 * accumulators sum the softmax denominator or the layernorm mean and
 * variance below the declared fp32. C-PRC-02's worst-case clause (sound for
 * every fp32 order, truncating too) sees the 16-bit formats and 14-bit sums
 * (its normalisation-beyond-bound and denominator-beyond-bound signatures
 * name them); 16- and 18-bit sums, and a bf16 pairwise one from k ~ 10^4,
 * sit inside it and are C-PRC-06's (probabilistic, round-to-nearest):
 * under C-PRC-02 they are reported off-target. The calibration bad
 * kernel is the softmax without max-subtraction and the E[x^2] - E[x]^2
 * layernorm. */
static const kcs_sweep_kdef rows_kernels[] = {
    OWN_FP32_SUMS,
    {"own", "fp32:rz", "pairwise", 0, NULL},
    {"own", "fp64", "sequential", 0, NULL},
    {"native", NULL, NULL, 0, NULL},
    {"calib", NULL, NULL, 0, NULL}, /* calib:<ID>:good */
    {"own", "bf16", "sequential", 1, "C-PRC-02 C-PRC-06"},
    {"own", "fp16", "sequential", 1, "C-PRC-02 C-PRC-06"},
    {"own", "bits:14", "sequential", 1, "C-PRC-02 C-PRC-06"},
    {"own", "bits:16", "sequential", 1, "C-PRC-06"},
    {"own", "bits:18", "sequential", 1, "C-PRC-06"},
    {"own", "bf16", "pairwise", 1, "C-PRC-06"},
    {"calib", NULL, NULL, 2, NULL},
};

/* attention: unfused own composition in every order, the fused online
 * softmax (cpu/attention.c), OpenBLAS, the calibration's fp32 fused kernel;
 * bad: the same compositions with the scores, the softmax denominator and
 * the PV sums (own) or the running sum and output (fused) kept below the
 * declared fp32, and the calibration's fused kernel that hands P to the PV
 * product as bf16: narrowed intermediates. C-CMP-01's worst-case clause
 * (sound for truncating fp32 in any order) targets the 16-bit formats (P or
 * the whole composition in bf16 or fp16); finer accumulators (14, 16, 18
 * bits) fall inside it over much of its corner, and C-PRC-07, whose
 * random_walk magnitude sees them at every n to 4096, is theirs: under
 * C-CMP-01 they are reported off-target. */
static const kcs_sweep_kdef attention_kernels[] = {
    OWN_FP32_SUMS,
    {"own", "fp64", "sequential", 0, NULL},
    {"fused", "fp32", "sequential", 0, NULL},
    {"fused", "fp32:rz", "sequential", 0, NULL},
    {"native", NULL, NULL, 0, NULL},
    {"calib", NULL, NULL, 0, NULL},
    {"own", "bf16", "sequential", 1, "C-CMP-01 C-PRC-07"},
    {"own", "fp16", "sequential", 1, "C-CMP-01 C-PRC-07"},
    {"own", "bits:14", "sequential", 1, "C-PRC-07"},
    {"own", "bits:16", "sequential", 1, "C-PRC-07"},
    {"own", "bits:18", "sequential", 1, "C-PRC-07"},
    {"fused", "bf16", "sequential", 1, "C-CMP-01 C-PRC-07"},
    {"fused", "bits:16", "sequential", 1, "C-PRC-07"},
    {"calib:C-CMP-01:bad", NULL, NULL, 1, "C-PRC-07"}, /* P in bf16, fp32 sums */
    {"calib", NULL, NULL, 2, NULL},
};

/* reduce_sum under declared subnormal semantics (C-PRC-04): the conforming
 * sums of the gemm catalogue; bad: subnormal inputs read as zero (DAZ),
 * subnormal results flushed (FTZ), both (the calibration kernel), and an
 * fp16 running sum (no subnormal range for fp32's: every subnormal input
 * underflows to 0), all C-PRC-04's; the bf16 and 14-bit running sums keep
 * fp32's exponent range and lose precision, not subnormals: C-ORD-01's
 * mechanism on reduce_sum, reported off-target here. */
static const kcs_sweep_kdef reduce_kernels[] = {
    OWN_FP32_SUMS,
    {"own", "fp32:rz", "pairwise", 0, NULL},
    {"own", "fp64", "sequential", 0, NULL},
    {"native", NULL, NULL, 0, NULL},
    {"calib", NULL, NULL, 0, NULL},
    {"defect:daz", NULL, NULL, 1, "C-PRC-04"},
    {"defect:ftz", NULL, NULL, 1, "C-PRC-04"},
    {"own", "fp16", "sequential", 1, "C-PRC-04 C-ORD-01"},
    {"own", "bf16", "sequential", 1, "C-ORD-01"},
    {"own", "bits:14", "sequential", 1, "C-ORD-01"},
    {"calib", NULL, NULL, 2, NULL},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const kcs_sweep_kdef *kcs_sweep_ops_kernels(kcs_op op, size_t *n_p)
{
    switch (op) {
    case KCS_OP_SOFTMAX:
    case KCS_OP_LAYERNORM:
        *n_p = COUNT(rows_kernels);
        return rows_kernels;
    case KCS_OP_ATTENTION:
        *n_p = COUNT(attention_kernels);
        return attention_kernels;
    case KCS_OP_REDUCE_SUM:
        *n_p = COUNT(reduce_kernels);
        return reduce_kernels;
    default:
        *n_p = 0;
        return NULL;
    }
}

int kcs_sweep_ops_counted(const kcs_contract *c, const kcs_sweep_kdef *kd)
{
    if (kd->bad == 2)
        return 1;
    if (kd->bad != 1 || !kd->targets)
        return 0;
    size_t n = strlen(c->id);
    for (const char *p = kd->targets; (p = strstr(p, c->id)) != NULL; p += n)
        if ((p == kd->targets || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* v_min, v_min * f, ... up to v_max (always included), each >= floor. */
static int axis(int64_t v_min, int64_t v_max, int f, int64_t floor_v, int64_t *v, int max)
{
    int n = 0;
    for (int64_t x = v_min > 1 ? v_min : 1; x <= v_max && n < max;) {
        if (x >= floor_v)
            v[n++] = x;
        int64_t fac = f > 1 ? f : 4;
        if (x >= v_max)
            break;
        x = x > v_max / fac ? v_max : x * fac;
    }
    return n;
}

/* The rows' count of every point: 4, as the gemm sweep's m = n = 4. */
enum { SWEEP_ROWS = 4, AXIS_MAX = 32 };

int kcs_sweep_ops_points(const kcs_contract *c, const kcs_sweep_opts *o, kcs_sweep_point *pts,
                         int max)
{
    if (c->protocol != KCS_PROTO_ORACLE || c->special_nan > 0 || c->special_inf > 0 ||
        c->special_oob > 0)
        return 0;
    char sub[32];
    /* declared semantics: only subnormal=..., which the CPU's sums honour */
    int subnormal_only = c->attrs[0] &&
                         kcs_attrs_get(c->attrs, "subnormal", sub, sizeof sub) == 1 &&
                         !strchr(c->attrs, ';') && !strchr(c->attrs, ',');
    kcs_op ops[3];
    int n_ops = 0;
    if (!c->attrs[0]) {
        if (c->ops & (1u << KCS_OP_SOFTMAX))
            ops[n_ops++] = KCS_OP_SOFTMAX;
        if (c->ops & (1u << KCS_OP_LAYERNORM))
            ops[n_ops++] = KCS_OP_LAYERNORM;
        if (c->ops & (1u << KCS_OP_ATTENTION) &&
            !(c->ops & ((1u << KCS_OP_GEMM) | (1u << KCS_OP_BATCHED_GEMM))))
            ops[n_ops++] = KCS_OP_ATTENTION; /* a gemm contract is swept on gemm */
    } else if (subnormal_only && (c->ops & (1u << KCS_OP_REDUCE_SUM))) {
        ops[n_ops++] = KCS_OP_REDUCE_SUM;
    }
    int64_t kmax = c->k_max;
    if (o->max_k > 0 && o->max_k < kmax)
        kmax = o->max_k;
    int64_t ks[AXIS_MAX], ns[AXIS_MAX];
    int np = 0;
    for (int i = 0; i < n_ops; i++) {
        /* k over the op's own range (precondition.per_op narrows it) */
        const kcs_op_narrowing *nw = &c->per_op[ops[i]];
        int64_t klo = nw->set ? nw->range[2][0] : c->k_min;
        int64_t khi = nw->set && nw->range[2][1] < kmax ? nw->range[2][1] : kmax;
        int nk = axis(klo, khi, o->k_factor, o->min_k, ks, AXIS_MAX);
        /* attention: the sequence length n over its range as well (the
         * grid n x k); the other ops have one row length k */
        int nn = 1;
        ns[0] = 1;
        if (ops[i] == KCS_OP_ATTENTION) /* no declared bound on n: the measured 64 */
            nn = c->n_max > 65536 ? (ns[0] = c->n_min > 64 ? c->n_min : 64, 1)
                                  : axis(c->n_min, c->n_max, o->k_factor, 0, ns, AXIS_MAX);
        for (int a = 0; a < nn; a++)
            for (int b = 0; b < nk && np < max; b++) {
                /* rows: 4, or the precondition's least count for the op
                 * (a clause judges a call by its rows: a few rows are a
                 * few draws) */
                int64_t mlo = nw->set ? nw->range[0][0] : c->m_min;
                kcs_shape sh = {mlo > SWEEP_ROWS ? mlo : SWEEP_ROWS, ns[a], ks[b], 0};
                kcs_error pe = {0};
                if (kcs_precondition_op_shape(c, ops[i], &sh, &pe))
                    continue;
                pts[np].op = ops[i];
                pts[np].sh = sh;
                np++;
            }
    }
    return np;
}
