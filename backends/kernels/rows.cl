/* rows.cl: row-wise ops on x (m rows of length k): reduce_sum, softmax,
 * layernorm, rmsnorm. Sums in the accumulator (acc_t), elementwise steps in
 * the working format (val_t), each rounded once, in this order:
 *   softmax    mx = max x; e = exp(x - mx); s = sum e; y = e / s
 *   layernorm  mu = sum(x) / k; d = x - mu; var = sum(d*d) / k;
 *              y = d / sqrt(var + eps) * gamma + beta
 *   rmsnorm    d = x; ms = sum(d*d) / k; y = d / sqrt(ms + eps) * gamma
 * with eps = RN_w(1e-5) and the d*d terms added with one rounding (fma)
 * into the accumulator: the definitions of the cpu backend's own kernels.
 *   own:    one work-item per row, sums under the call's schedule
 *           (KCS_REDUCE), global (m).
 *   native: one work-group of KCS_RWG (a power of two) work-items per row:
 *           strided partial sums, a tree in local memory, y = d * rsqrt(.)
 *           (softmax: e * (1/s)); global (m*RWG), local (RWG).
 * has_g / has_b == 0: gamma = 1 / beta = 0 (the pointer may be NULL); gamma
 * and beta together are written as one expression z * gamma + beta, which
 * -cl-mad-enable may contract. */

#ifndef KCS_RWG
#define KCS_RWG 64
#endif
#if KCS_TIN == 1
#define KCS_EPS 1e-5
#else
#define KCS_EPS 1e-5f /* == (float)1e-5 */
#endif

#define ROW_X(t) ((val_t)LD(xr, (t)))
#define ROW_STEP(s, t) kcs_step1((s), ROW_X(t))
#define ROW_LEAF(t) ((acc_t)ROW_X(t))

__kernel void reduce_sum_own(IN_PTR X, __global out_t *Y, long m, long k, int kind, long param)
{
    long i = get_global_id(0);
    if (i >= m)
        return;
    IN_PTR xr = X + i * k;
    acc_t s;
    KCS_REDUCE(s, k, kind, param, ROW_STEP, ROW_LEAF)
    Y[i] = s;
}

__kernel void softmax_own(IN_PTR X, __global out_t *Y, long m, long k, int kind, long param)
{
    long i = get_global_id(0);
    if (i >= m)
        return;
    IN_PTR xr = X + i * k;
    val_t mx = -INFINITY;
    for (long t = 0; t < k; t++)
        mx = fmax(mx, ROW_X(t));
#define SM_E(t) exp((val_t)(ROW_X(t) - mx))
#define SM_STEP(s, t) kcs_step1((s), SM_E(t))
#define SM_LEAF(t) ((acc_t)SM_E(t))
    acc_t s;
    KCS_REDUCE(s, k, kind, param, SM_STEP, SM_LEAF)
    for (long t = 0; t < k; t++)
        Y[i * k + t] = KCS_WDIV(SM_E(t), s);
#undef SM_E
#undef SM_STEP
#undef SM_LEAF
}

/* y = z * gamma + beta with the absent parts left out */
#define NORM_AFFINE(z, t)                                                                         \
    (has_g && has_b ? (z) * (val_t)LD(G, (t)) + (val_t)LD(Bt, (t))                                \
     : has_g        ? (z) * (val_t)LD(G, (t))                                                     \
     : has_b        ? (z) + (val_t)LD(Bt, (t))                                                    \
                    : (z))

/* rms == 0: layernorm, 1: rmsnorm (beta unused) */
__kernel void norm_own(IN_PTR X, IN_PTR G, IN_PTR Bt, __global out_t *Y, long m, long k,
                       int has_g, int has_b, int rms, int kind, long param)
{
    long i = get_global_id(0);
    if (i >= m)
        return;
    if (rms)
        has_b = 0;
    IN_PTR xr = X + i * k;
    val_t mu = 0;
    if (!rms) {
        acc_t s;
        KCS_REDUCE(s, k, kind, param, ROW_STEP, ROW_LEAF)
        mu = KCS_WDIV(s, k);
    }
#define NV_D(t) (rms ? ROW_X(t) : (val_t)(ROW_X(t) - mu))
#define NV_STEP(s, t) kcs_step((s), NV_D(t), NV_D(t))
#define NV_LEAF(t) kcs_prod(NV_D(t), NV_D(t))
    acc_t v;
    KCS_REDUCE(v, k, kind, param, NV_STEP, NV_LEAF)
    val_t var = KCS_WDIV(v, k);
    val_t den = sqrt((val_t)(var + KCS_EPS));
    for (long t = 0; t < k; t++) {
        val_t z = NV_D(t) / den;
        Y[i * k + t] = NORM_AFFINE(z, t);
    }
#undef NV_D
#undef NV_STEP
#undef NV_LEAF
}

__kernel __attribute__((reqd_work_group_size(KCS_RWG, 1, 1))) void
reduce_sum_native(IN_PTR X, __global out_t *Y, long m, long k)
{
    __local acc_t l[KCS_RWG];
    long i = get_group_id(0);
    int lid = get_local_id(0);
    IN_PTR xr = X + i * k;
    acc_t s = 0;
    for (long t = lid; t < k; t += KCS_RWG)
        s = kcs_step1(s, ROW_X(t));
    s = kcs_wg_sum(l, s, KCS_RWG);
    if (lid == 0)
        Y[i] = s;
}

__kernel __attribute__((reqd_work_group_size(KCS_RWG, 1, 1))) void
softmax_native(IN_PTR X, __global out_t *Y, long m, long k)
{
    __local acc_t l[KCS_RWG];
    __local val_t lm[KCS_RWG];
    long i = get_group_id(0);
    int lid = get_local_id(0);
    IN_PTR xr = X + i * k;
    val_t mx = -INFINITY;
    for (long t = lid; t < k; t += KCS_RWG)
        mx = fmax(mx, ROW_X(t));
    mx = kcs_wg_max(lm, mx, KCS_RWG);
    acc_t s = 0;
    for (long t = lid; t < k; t += KCS_RWG)
        s = kcs_step1(s, exp((val_t)(ROW_X(t) - mx)));
    s = kcs_wg_sum(l, s, KCS_RWG);
    val_t inv = KCS_WDIV(1, s);
    for (long t = lid; t < k; t += KCS_RWG)
        Y[i * k + t] = exp((val_t)(ROW_X(t) - mx)) * inv;
}

__kernel __attribute__((reqd_work_group_size(KCS_RWG, 1, 1))) void
norm_native(IN_PTR X, IN_PTR G, IN_PTR Bt, __global out_t *Y, long m, long k, int has_g,
            int has_b, int rms)
{
    __local acc_t l[KCS_RWG];
    long i = get_group_id(0);
    int lid = get_local_id(0);
    if (rms)
        has_b = 0;
    IN_PTR xr = X + i * k;
    val_t mu = 0;
    if (!rms) {
        acc_t s = 0;
        for (long t = lid; t < k; t += KCS_RWG)
            s = kcs_step1(s, ROW_X(t));
        mu = KCS_WDIV(kcs_wg_sum(l, s, KCS_RWG), k);
    }
    acc_t v = 0;
    for (long t = lid; t < k; t += KCS_RWG) {
        val_t d = (val_t)(ROW_X(t) - mu);
        v = kcs_step(v, d, d);
    }
    val_t var = KCS_WDIV(kcs_wg_sum(l, v, KCS_RWG), k);
    val_t rstd = rsqrt((val_t)(var + KCS_EPS));
    for (long t = lid; t < k; t += KCS_RWG) {
        val_t z = (val_t)(ROW_X(t) - mu) * rstd;
        Y[i * k + t] = NORM_AFFINE(z, t);
    }
}

/* elementwise: y = f(x) over n = m*k values, one work-item each, in the
 * working format (val_t). fn as kcs_ew_fn (src/arith/elementwise.h): 0 exp,
 * 1 tanh, 2 silu, 3 gelu_tanh, 4 rsqrt; own = 0 (native): the builtins in
 * the formulas ML frameworks write (silu = x / (1 + exp(-x)), gelu_tanh =
 * 0.5 x (1 + tanh(c0 (x + c1 x^3))), rsqrt()); own = 1: the stable forms
 * of the cpu backend's own kernel (gelu_tanh = x / (1 + exp(-2 c0 (x + c1
 * x^3))), limits -0 at -Inf for silu and gelu_tanh, rsqrt = 1 / sqrt(x)).
 * The accuracy is the device library's (OpenCL full profile: exp 3 ulp,
 * tanh 5 ulp, rsqrt 2 ulp; -cl-fast-relaxed-math relaxes them). */
#if KCS_TIN == 1
#define EW_C0 0.79788456080286535588
#define EW_C1 0.044715
#else
#define EW_C0 0.79788456080286535588f
#define EW_C1 0.044715f
#endif

__kernel void elementwise(IN_PTR X, __global out_t *Y, long n, int fn, int own)
{
    long i = get_global_id(0);
    if (i >= n)
        return;
    val_t x = LD(X, i), y;
    val_t one = 1, a_half = (val_t)0.5, two = 2;
    if (fn == 0) {
        y = exp(x);
    } else if (fn == 1) {
        y = tanh(x);
    } else if (fn == 4) {
        y = own ? one / sqrt(x) : rsqrt(x);
    } else if (own && isinf(x)) {
        y = x > 0 ? x : -(val_t)0;
    } else if (fn == 2) {
        y = x / (one + exp(-x));
    } else {
        val_t x3 = x * x * x;
        val_t in = x + EW_C1 * x3;
        y = own ? x / (one + exp(-(two * EW_C0 * in))) : a_half * x * (one + tanh(EW_C0 * in));
    }
    Y[i] = y;
}
