/* rows.cl: row-wise ops on x (m rows of length k): reduce_sum, softmax,
 * layernorm, rmsnorm. Outputs in the accumulator type.
 *   own:    one work-item per row, sums under the call's schedule
 *           (KCS_REDUCE), global (m).
 *   native: one work-group of KCS_RWG (a power of two) work-items per row:
 *           strided partial sums, then a tree in local memory; global
 *           (m*RWG), local (RWG).
 * Definitions (evaluated in acc_t, left to right):
 *   softmax    y = exp(x - max) / sum(exp(x - max))
 *   layernorm  mu = sum(x)/k, var = sum((x-mu)^2)/k,
 *              y = (x - mu) / sqrt(var + eps) * gamma + beta
 *   rmsnorm    ms = sum(x^2)/k, y = x / sqrt(ms + eps) * gamma
 * has_g / has_b == 0: gamma = 1 / beta = 0 (the pointer may be NULL). */

#ifndef KCS_RWG
#define KCS_RWG 64
#endif
#define KCS_EPS ((acc_t)1e-5)

#define ROW_TERM_STEP(s, t) kcs_step1((s), LD(xr, (t)))
#define ROW_TERM_LEAF(t) ((acc_t)LD(xr, (t)))

__kernel void reduce_sum_own(IN_PTR X, __global acc_t *Y, long m, long k, int kind, long param)
{
    long i = get_global_id(0);
    if (i >= m)
        return;
    IN_PTR xr = X + i * k;
    acc_t s;
    KCS_REDUCE(s, k, kind, param, ROW_TERM_STEP, ROW_TERM_LEAF)
    Y[i] = s;
}

__kernel void softmax_own(IN_PTR X, __global acc_t *Y, long m, long k, int kind, long param)
{
    long i = get_global_id(0);
    if (i >= m)
        return;
    IN_PTR xr = X + i * k;
    acc_t mx = -INFINITY;
    for (long t = 0; t < k; t++)
        mx = fmax(mx, (acc_t)LD(xr, t));
#define SM_LEAF(t) exp((acc_t)LD(xr, (t)) - mx)
#define SM_STEP(s, t) ((s) + SM_LEAF(t))
    acc_t s;
    KCS_REDUCE(s, k, kind, param, SM_STEP, SM_LEAF)
    for (long t = 0; t < k; t++)
        Y[i * k + t] = SM_LEAF(t) / s;
#undef SM_LEAF
#undef SM_STEP
}

/* rms == 0: layernorm, 1: rmsnorm (beta unused) */
__kernel void norm_own(IN_PTR X, IN_PTR G, IN_PTR Bt, __global acc_t *Y, long m, long k,
                       int has_g, int has_b, int rms, int kind, long param)
{
    long i = get_global_id(0);
    if (i >= m)
        return;
    IN_PTR xr = X + i * k;
    acc_t mu = 0, var;
    if (!rms) {
        acc_t s;
        KCS_REDUCE(s, k, kind, param, ROW_TERM_STEP, ROW_TERM_LEAF)
        mu = s / (acc_t)k;
    }
#define NV_LEAF(t) (((acc_t)LD(xr, (t)) - mu) * ((acc_t)LD(xr, (t)) - mu))
#define NV_STEP(s, t) ((s) + NV_LEAF(t))
    KCS_REDUCE(var, k, kind, param, NV_STEP, NV_LEAF)
#undef NV_LEAF
#undef NV_STEP
    var = var / (acc_t)k;
    acc_t den = sqrt(var + KCS_EPS);
    for (long t = 0; t < k; t++) {
        acc_t y = ((acc_t)LD(xr, t) - mu) / den;
        if (has_g)
            y = y * (acc_t)LD(G, t);
        if (has_b && !rms)
            y = y + (acc_t)LD(Bt, t);
        Y[i * k + t] = y;
    }
}

__kernel __attribute__((reqd_work_group_size(KCS_RWG, 1, 1))) void
reduce_sum_native(IN_PTR X, __global acc_t *Y, long m, long k)
{
    __local acc_t l[KCS_RWG];
    long i = get_group_id(0);
    int lid = get_local_id(0);
    IN_PTR xr = X + i * k;
    acc_t s = 0;
    for (long t = lid; t < k; t += KCS_RWG)
        s += (acc_t)LD(xr, t);
    s = kcs_wg_reduce(l, s, 0, KCS_RWG);
    if (lid == 0)
        Y[i] = s;
}

__kernel __attribute__((reqd_work_group_size(KCS_RWG, 1, 1))) void
softmax_native(IN_PTR X, __global acc_t *Y, long m, long k)
{
    __local acc_t l[KCS_RWG];
    long i = get_group_id(0);
    int lid = get_local_id(0);
    IN_PTR xr = X + i * k;
    acc_t mx = -INFINITY;
    for (long t = lid; t < k; t += KCS_RWG)
        mx = fmax(mx, (acc_t)LD(xr, t));
    mx = kcs_wg_reduce(l, mx, 1, KCS_RWG);
    acc_t s = 0;
    for (long t = lid; t < k; t += KCS_RWG)
        s += exp((acc_t)LD(xr, t) - mx);
    s = kcs_wg_reduce(l, s, 0, KCS_RWG);
    acc_t inv = (acc_t)1 / s;
    for (long t = lid; t < k; t += KCS_RWG)
        Y[i * k + t] = exp((acc_t)LD(xr, t) - mx) * inv;
}

__kernel __attribute__((reqd_work_group_size(KCS_RWG, 1, 1))) void
norm_native(IN_PTR X, IN_PTR G, IN_PTR Bt, __global acc_t *Y, long m, long k, int has_g,
            int has_b, int rms)
{
    __local acc_t l[KCS_RWG];
    long i = get_group_id(0);
    int lid = get_local_id(0);
    IN_PTR xr = X + i * k;
    acc_t mu = 0;
    if (!rms) {
        acc_t s = 0;
        for (long t = lid; t < k; t += KCS_RWG)
            s += (acc_t)LD(xr, t);
        mu = kcs_wg_reduce(l, s, 0, KCS_RWG) / (acc_t)k;
    }
    acc_t v = 0;
    for (long t = lid; t < k; t += KCS_RWG) {
        acc_t d = (acc_t)LD(xr, t) - mu;
        v = fma(d, d, v);
    }
    v = kcs_wg_reduce(l, v, 0, KCS_RWG) / (acc_t)k;
    acc_t rstd = rsqrt(v + KCS_EPS);
    for (long t = lid; t < k; t += KCS_RWG) {
        acc_t y = ((acc_t)LD(xr, t) - mu) * rstd;
        if (has_g)
            y = y * (acc_t)LD(G, t);
        if (has_b && !rms)
            y = y + (acc_t)LD(Bt, t);
        Y[i * k + t] = y;
    }
}
