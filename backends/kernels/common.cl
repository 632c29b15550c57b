/* common.cl: types, accumulation steps and reduction schedules shared by
 * every kcs OpenCL C kernel. The host prepends it to each kernel file and
 * builds with these definitions:
 *   KCS_TIN      input storage: 0 float, 1 double, 2 half (ushort bits read
 *                with vload_half, core OpenCL 1.2, no cl_khr_fp16 needed),
 *                3 bfloat16 (ushort bits, the high half of a float)
 *   KCS_TACC     accumulator: 0 float, 1 double (needs cl_khr_fp64)
 *   KCS_CONTRACT 0: `#pragma OPENCL FP_CONTRACT OFF` (a*b+c stays two
 *                roundings); 1: the compiler default (PoCL 3.1 contracts
 *                a*b+c into fma). The host sets 1 when the build options
 *                ask for -cl-mad-enable, -cl-fast-relaxed-math or
 *                -cl-unsafe-math-optimizations.
 *
 * Arithmetic of the own kernels (the same as the cpu backend's own
 * kernels, backends/cpu/acc.c, so equal schedules agree bit for bit):
 *   step    s <- RN_acc(s + a*b)   one rounding, i.e. fma in the accumulator
 *                                  (for double inputs: the product rounded
 *                                  to double, then one rounding into acc)
 *   leaf    RN_acc(a*b)            a pairwise leaf is the rounded product
 *   add     RN_acc(x + y)
 * Schedules (kind values match kcs_schedule_kind):
 *   0 sequential  s = 0; s = step(s, t) for t = 0..n-1
 *   1 pairwise    recursive halving: sum(t[0..n)) = sum(first n/2) +
 *                 sum(rest); a single term is its leaf; n = 0 gives 0
 *   2 blocked:B   blocks of B consecutive terms, each summed sequentially
 *                 from 0, block sums added in order to a total from 0
 *   3 splitk:S    blocked with B = ceil(n/S)
 */
#if KCS_TIN == 1 || KCS_TACC == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if !KCS_CONTRACT
#pragma OPENCL FP_CONTRACT OFF
#endif

#define KCS_SCHED_SEQUENTIAL 0
#define KCS_SCHED_PAIRWISE 1
#define KCS_SCHED_BLOCKED 2
#define KCS_SCHED_SPLITK 3

#if KCS_TACC == 1
typedef double acc_t;
#else
typedef float acc_t;
#endif

/* val_t: the type an input element is loaded into (exact), and the working
 * format of elementwise steps (subtract, exp, divide, sqrt, scale): double
 * for double inputs, float otherwise (as the cpu backend's cpu/work.h).
 * wide_t holds acc_t and val_t values exactly; out_t, the element type of
 * every output buffer, is wide_t (the host rounds to dtype_out). */
#if KCS_TIN == 1
typedef double val_t;
#define IN_PTR __global const double *
#define LD(p, i) ((p)[i])
#elif KCS_TIN == 2
typedef float val_t;
#define IN_PTR __global const half *
#define LD(p, i) vload_half((size_t)(i), (p))
#elif KCS_TIN == 3
typedef float val_t;
#define IN_PTR __global const ushort *
#define LD(p, i) as_float((uint)(p)[i] << 16)
#else
typedef float val_t;
#define IN_PTR __global const float *
#define LD(p, i) ((p)[i])
#endif

#if KCS_TIN == 1 || KCS_TACC == 1
typedef double wide_t;
#else
typedef float wide_t;
#endif
typedef wide_t out_t;
/* RN_w(a / b), RN_w(a * b) for operands in val_t or acc_t: computed in
 * wide_t, rounded once more into val_t (innocuous for float operands). */
#define KCS_WDIV(a, b) ((val_t)((wide_t)(a) / (wide_t)(b)))
#define KCS_WMUL(a, b) ((val_t)((wide_t)(a) * (wide_t)(b)))
/* RN_acc(a * b) */
#define KCS_AMUL(a, b) ((acc_t)((wide_t)(a) * (wide_t)(b)))

#if KCS_TIN == 1 && KCS_TACC == 0
/* RN_float(s + t) for a double t, rounded once: TwoSum gives the exact
 * error e of the double sum; the sum rounded to odd (an even sum nudged
 * one double ulp toward e; an odd one left) is on the same side of every
 * float and float midpoint as the exact sum (cpu/acc.c kcs_acc_add). */
inline float kcs_add_fd(float s, double t)
{
    double x = (double)s, r = x + t;
    if (isfinite(r)) {
        double bp = r - x;
        double e = (x - (r - bp)) + (t - bp);
        if (e != 0.0 && !(as_ulong(r) & 1))
            r = nextafter(r, e > 0.0 ? (double)INFINITY : -(double)INFINITY);
    }
    return (float)r;
}
#endif

/* s + a*b with one rounding into the accumulator. */
inline acc_t kcs_step(acc_t s, val_t a, val_t b)
{
#if KCS_TIN == 1 && KCS_TACC == 0
    return kcs_add_fd(s, a * b);
#elif KCS_TIN == 1
    double p = a * b;
    return s + p;
#else
    return fma((acc_t)a, (acc_t)b, s);
#endif
}

/* s + x, x an input value, one rounding into the accumulator. */
inline acc_t kcs_step1(acc_t s, val_t x)
{
#if KCS_TIN == 1 && KCS_TACC == 0
    return kcs_add_fd(s, x);
#else
    return s + (acc_t)x;
#endif
}

/* RN_acc(a*b): a pairwise leaf. */
inline acc_t kcs_prod(val_t a, val_t b)
{
#if KCS_TIN == 1 || KCS_TACC == 0
    val_t p = a * b;
    return (acc_t)p;
#else
    return (acc_t)a * (acc_t)b; /* exact in double */
#endif
}

/* Sum STEP over t in [lo, hi) sequentially from 0: STEP(s, t) -> new s. */
#define KCS_SUM_RANGE(res, lo, hi, STEP)                                                          \
    {                                                                                             \
        acc_t s_ = 0;                                                                             \
        for (long t_ = (lo); t_ < (hi); t_++)                                                     \
            s_ = STEP(s_, t_);                                                                    \
        (res) = s_;                                                                               \
    }

#define KCS_STACK 64
/* Pairwise (recursive halving) sum of LEAF(t), t in [0, n), as an explicit
 * post-order walk: frame f covers [lo, lo+len); state 0 = descend left,
 * 1 = descend right, 2 = combine. */
#define KCS_PAIRWISE(res, n, LEAF)                                                                \
    {                                                                                             \
        long lo_[KCS_STACK], ln_[KCS_STACK];                                                      \
        int st_[KCS_STACK];                                                                       \
        acc_t lv_[KCS_STACK];                                                                     \
        int sp_ = 0;                                                                              \
        acc_t r_ = 0;                                                                             \
        if ((n) > 0) {                                                                            \
            lo_[0] = 0;                                                                           \
            ln_[0] = (n);                                                                         \
            st_[0] = 0;                                                                           \
            sp_ = 1;                                                                              \
        }                                                                                         \
        while (sp_ > 0) {                                                                         \
            int f_ = sp_ - 1;                                                                     \
            long L_ = ln_[f_];                                                                    \
            if (L_ == 1) {                                                                        \
                r_ = LEAF(lo_[f_]);                                                               \
                sp_--;                                                                            \
            } else if (st_[f_] == 0) {                                                            \
                st_[f_] = 1;                                                                      \
                lo_[sp_] = lo_[f_];                                                               \
                ln_[sp_] = L_ / 2;                                                                \
                st_[sp_] = 0;                                                                     \
                sp_++;                                                                            \
            } else if (st_[f_] == 1) {                                                            \
                lv_[f_] = r_;                                                                     \
                st_[f_] = 2;                                                                      \
                lo_[sp_] = lo_[f_] + L_ / 2;                                                      \
                ln_[sp_] = L_ - L_ / 2;                                                           \
                st_[sp_] = 0;                                                                     \
                sp_++;                                                                            \
            } else {                                                                              \
                r_ = lv_[f_] + r_;                                                                \
                sp_--;                                                                            \
            }                                                                                     \
        }                                                                                         \
        (res) = r_;                                                                               \
    }

/* Reduce n terms under schedule (kind, param): STEP(s, t) adds term t to s
 * with one rounding, LEAF(t) is term t rounded to the accumulator. */
#define KCS_REDUCE(res, n, kind, param, STEP, LEAF)                                               \
    {                                                                                             \
        long n__ = (n);                                                                           \
        if ((kind) == KCS_SCHED_PAIRWISE) {                                                       \
            KCS_PAIRWISE(res, n__, LEAF)                                                          \
        } else if ((kind) == KCS_SCHED_BLOCKED || (kind) == KCS_SCHED_SPLITK) {                   \
            long c__ = (kind) == KCS_SCHED_BLOCKED ? (long)(param)                                \
                                                   : (n__ + (long)(param)-1) / (long)(param);     \
            if (c__ < 1)                                                                          \
                c__ = 1;                                                                          \
            acc_t tot__ = 0;                                                                      \
            for (long b__ = 0; b__ < n__; b__ += c__) {                                           \
                long e__ = b__ + c__ < n__ ? b__ + c__ : n__;                                     \
                acc_t bs__;                                                                       \
                KCS_SUM_RANGE(bs__, b__, e__, STEP)                                               \
                tot__ = tot__ + bs__;                                                             \
            }                                                                                     \
            (res) = tot__;                                                                        \
        } else {                                                                                  \
            KCS_SUM_RANGE(res, 0, n__, STEP)                                                      \
        }                                                                                         \
    }

/* Tree over the wg (a power of two) values v of a 1-D work-group in local
 * memory l[wg]; every work-item gets the result. kcs_wg_sum adds in the
 * accumulator, kcs_wg_max takes the maximum (exact, any order). */
inline acc_t kcs_wg_sum(__local acc_t *l, acc_t v, int wg)
{
    int lid = get_local_id(0);
    l[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = wg / 2; off > 0; off >>= 1) {
        if (lid < off)
            l[lid] = l[lid] + l[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc_t r = l[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

inline val_t kcs_wg_max(__local val_t *l, val_t v, int wg)
{
    int lid = get_local_id(0);
    l[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = wg / 2; off > 0; off >>= 1) {
        if (lid < off)
            l[lid] = fmax(l[lid], l[lid + off]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    val_t r = l[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
