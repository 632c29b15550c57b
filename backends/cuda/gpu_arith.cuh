/* gpu_arith.cuh: input loads, accumulator arithmetic and reduction
 * schedules of the CUDA and HIP kernels: the device-side twin of
 * backends/kernels/common.cl (same definitions, same order of operations),
 * extended with narrow accumulators run in a double carrier exactly as
 * backends/cpu/acc.c does. Portable CUDA/HIP C++: no vendor types, only
 * float/double, fma, exp, sqrt, shared memory and __syncthreads.
 * Included inside namespace KCS_GPU_NS by gpu_kernels.cuh. */

/* ---- input loads ---------------------------------------------------------- */
template <int TIN> struct In;
template <> struct In<KCS_GPU_IN_F32> {
    typedef float val;
    static __device__ float ld(const void *p, int64_t i) { return ((const float *)p)[i]; }
};
template <> struct In<KCS_GPU_IN_F64> {
    typedef double val;
    static __device__ double ld(const void *p, int64_t i) { return ((const double *)p)[i]; }
};
template <> struct In<KCS_GPU_IN_F16> {
    typedef float val;
    /* IEEE binary16 bits -> float, exact (what vload_half does) */
    static __device__ float ld(const void *p, int64_t i)
    {
        unsigned h = ((const unsigned short *)p)[i];
        unsigned e = (h >> 10) & 31u, f = h & 1023u;
        float v;
        if (e == 0)
            v = ldexpf((float)f, -24);
        else if (e == 31)
            v = f ? __int_as_float(0x7fc00000) : __int_as_float(0x7f800000);
        else
            v = ldexpf((float)(f | 1024u), (int)e - 25);
        return (h & 0x8000u) ? -v : v;
    }
};
template <> struct In<KCS_GPU_IN_BF16> {
    typedef float val;
    static __device__ float ld(const void *p, int64_t i)
    {
        return __uint_as_float((unsigned)((const unsigned short *)p)[i] << 16);
    }
};

template <int TACC> struct AccT {
    typedef double t; /* F64 and NARROW */
};
template <> struct AccT<KCS_GPU_ACC_F32> {
    typedef float t;
};

static __device__ inline float kfma(float a, float b, float c) { return fmaf(a, b, c); }
static __device__ inline double kfma(double a, double b, double c) { return fma(a, b, c); }
static __device__ inline float kexp(float x) { return expf(x); }
static __device__ inline double kexp(double x) { return exp(x); }
static __device__ inline float ksqrt(float x) { return sqrtf(x); }
static __device__ inline double ksqrt(double x) { return sqrt(x); }
static __device__ inline float kmax(float a, float b) { return fmaxf(a, b); }
static __device__ inline double kmax(double a, double b) { return fmax(a, b); }

/* RN_float(s + t) for a double t, rounded once (common.cl kcs_add_fd). */
static __device__ inline float add_fd(float s, double t)
{
    double x = (double)s, r = x + t;
    if (isfinite(r)) {
        double bp = r - x;
        double e = (x - (r - bp)) + (t - bp);
        if (e != 0.0 && !(__double_as_longlong(r) & 1)) /* rounded to odd */
            r = nextafter(r, e > 0.0 ? (double)INFINITY : -(double)INFINITY);
    }
    return (float)r;
}

/* Round to p significant bits, exponent floor emin, RNE; overflow beyond
 * maxf to +-Inf (NaN for formats without Inf): kcs_format_round with
 * KCS_ROUND_DEFAULT and kcs_round_bits(.., KCS_RNE). */
static __device__ inline double round_prec(double x, const kcs_gpu_red &r)
{
    if (isnan(x))
        return x;
    if (isinf(x))
        return r.has_inf ? x : (double)NAN;
    if (x == 0.0)
        return r.has_neg_zero ? x : 0.0;
    double ax = fabs(x);
    int e = ilogb(ax);
    if (e < r.emin)
        e = r.emin;
    int sc = r.p - 1 - e;
    double v = ldexp(rint(ldexp(ax, sc)), -sc); /* rint: ties to even */
    if (v > r.maxf)
        v = r.has_inf ? (double)INFINITY : (double)NAN;
    if (v == 0.0)
        return (signbit(x) && r.has_neg_zero) ? -0.0 : 0.0;
    return signbit(x) ? -v : v;
}

/* wide: holds every val and acc value exactly (common.cl wide_t / out_t) */
template <int TIN, int TACC> struct WideT {
    typedef double t;
};
template <> struct WideT<KCS_GPU_IN_F32, KCS_GPU_ACC_F32> {
    typedef float t;
};
template <> struct WideT<KCS_GPU_IN_F16, KCS_GPU_ACC_F32> {
    typedef float t;
};
template <> struct WideT<KCS_GPU_IN_BF16, KCS_GPU_ACC_F32> {
    typedef float t;
};

/* The accumulator arithmetic of one (input storage, accumulator) pair.
 * val is also the working format of the elementwise steps of the row ops
 * and attention (double for fp64 inputs, float otherwise: cpu/work.h). */
template <int TIN, int TACC> struct Ar {
    typedef typename In<TIN>::val val;
    typedef typename AccT<TACC>::t acc;
    typedef typename WideT<TIN, TACC>::t wide;
    kcs_gpu_red r;

    __device__ explicit Ar(const kcs_gpu_red &rr) : r(rr) {}

    /* a result of the accumulator's arithmetic, rounded into it */
    __device__ acc rn(acc x) const
    {
        if constexpr (TACC == KCS_GPU_ACC_NARROW)
            return round_prec(x, r);
        else
            return x;
    }
    /* RN_acc(x + t), x and t doubles, one rounding (cpu/acc.c kcs_acc_add) */
    __device__ double add_exact(double x, double t) const
    {
        double s = x + t;
        if (!isfinite(s))
            return round_prec(s, r);
        double bp = s - x;
        double e = (x - (s - bp)) + (t - bp);
        if (e != 0.0 && !(__double_as_longlong(s) & 1)) /* rounded to odd (acc.c) */
            s = nextafter(s, e > 0.0 ? (double)INFINITY : -(double)INFINITY);
        return round_prec(s, r);
    }
    /* s <- RN_acc(s + a*b) */
    __device__ acc step(acc s, val a, val b) const
    {
        if constexpr (TACC == KCS_GPU_ACC_NARROW) {
            double p = (double)a * (double)b;
            return add_exact(s, p);
        } else if constexpr (TIN == KCS_GPU_IN_F64 && TACC == KCS_GPU_ACC_F32) {
            return add_fd(s, a * b);
        } else if constexpr (TIN == KCS_GPU_IN_F64) {
            double p = a * b;
            return s + p;
        } else {
            return kfma((acc)a, (acc)b, s);
        }
    }
    /* s <- RN_acc(s + x), x an input value */
    __device__ acc step1(acc s, val x) const
    {
        if constexpr (TACC == KCS_GPU_ACC_NARROW)
            return add_exact(s, (double)x);
        else if constexpr (TIN == KCS_GPU_IN_F64 && TACC == KCS_GPU_ACC_F32)
            return add_fd(s, x);
        else
            return s + (acc)x;
    }
    /* s <- RN_acc(s + c), c a double (gemm's C) */
    __device__ acc stepd(acc s, double c) const
    {
        if constexpr (TACC == KCS_GPU_ACC_NARROW)
            return add_exact(s, c);
        else if constexpr (TACC == KCS_GPU_ACC_F32)
            return add_fd(s, c);
        else
            return s + c;
    }
    /* RN_acc(a*b): a pairwise leaf */
    __device__ acc prod(val a, val b) const
    {
        if constexpr (TACC == KCS_GPU_ACC_NARROW) {
            return round_prec((double)a * (double)b, r);
        } else if constexpr (TIN == KCS_GPU_IN_F64 || TACC == KCS_GPU_ACC_F32) {
            val p = a * b;
            return (acc)p;
        } else {
            return (acc)a * (acc)b; /* exact in double */
        }
    }
    /* RN_acc(x) for an input value */
    __device__ acc load(val x) const { return rn((acc)x); }
    __device__ acc add(acc x, acc y) const
    {
        if constexpr (TACC == KCS_GPU_ACC_NARROW)
            return add_exact(x, y);
        else
            return x + y;
    }
    /* RN_w(a / b), RN_w(a * b) into the working format (common.cl
     * KCS_WDIV, KCS_WMUL); RN_acc(a * b) (KCS_AMUL) */
    __device__ val wdiv(wide a, wide b) const { return (val)(a / b); }
    __device__ val wmul(wide a, wide b) const { return (val)(a * b); }
    __device__ acc amul(wide a, wide b) const { return rn((acc)(a * b)); }
};

/* ---- schedules (common.cl KCS_REDUCE) -------------------------------------- */
#define KCS_GPU_STACK 64

/* Reduce n terms: step(s, t) adds term t with one rounding, leaf(t) is term
 * t rounded to the accumulator; partial results combine with ar.add. */
template <class AR, class STEP, class LEAF>
static __device__ typename AR::acc kcs_reduce(const AR &ar, int64_t n, int kind, int64_t param,
                                             STEP step, LEAF leaf)
{
    typedef typename AR::acc acc;
    if (kind == KCS_GPU_SCHED_PAIRWISE) {
        /* recursive halving as an explicit post-order walk: frame f covers
         * [lo, lo+len); state 0 = descend left, 1 = right, 2 = combine */
        int64_t lo[KCS_GPU_STACK], ln[KCS_GPU_STACK];
        int st[KCS_GPU_STACK];
        acc lv[KCS_GPU_STACK];
        int sp = 0;
        acc res = 0;
        if (n > 0) {
            lo[0] = 0;
            ln[0] = n;
            st[0] = 0;
            sp = 1;
        }
        while (sp > 0) {
            int f = sp - 1;
            int64_t L = ln[f];
            if (L == 1) {
                res = leaf(lo[f]);
                sp--;
            } else if (st[f] == 0) {
                st[f] = 1;
                lo[sp] = lo[f];
                ln[sp] = L / 2;
                st[sp] = 0;
                sp++;
            } else if (st[f] == 1) {
                lv[f] = res;
                st[f] = 2;
                lo[sp] = lo[f] + L / 2;
                ln[sp] = L - L / 2;
                st[sp] = 0;
                sp++;
            } else {
                res = ar.add(lv[f], res);
                sp--;
            }
        }
        return res;
    }
    if (kind == KCS_GPU_SCHED_BLOCKED || kind == KCS_GPU_SCHED_SPLITK) {
        int64_t c = kind == KCS_GPU_SCHED_BLOCKED ? param : (n + param - 1) / param;
        if (c < 1)
            c = 1;
        acc tot = 0;
        for (int64_t b = 0; b < n; b += c) {
            int64_t e = b + c < n ? b + c : n;
            acc bs = 0;
            for (int64_t t = b; t < e; t++)
                bs = step(bs, t);
            tot = ar.add(tot, bs);
        }
        return tot;
    }
    acc s = 0;
    for (int64_t t = 0; t < n; t++)
        s = step(s, t);
    return s;
}

/* Work-group tree over KCS_GPU_TREE_THREADS values (common.cl kcs_wg_sum,
 * kcs_wg_max): op 0 sum, 1 max. Every thread of the block calls it. */
template <class T> static __device__ T tree_reduce(T *l, T v, int op)
{
    int lid = threadIdx.x;
    l[lid] = v;
    __syncthreads();
    for (int off = KCS_GPU_TREE_THREADS / 2; off > 0; off >>= 1) {
        if (lid < off)
            l[lid] = op ? kmax(l[lid], l[lid + off]) : l[lid] + l[lid + off];
        __syncthreads();
    }
    T r = l[0];
    __syncthreads();
    return r;
}

/* Launch helpers */
static inline unsigned kcs_blocks(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b);
}

#define KCS_GID() ((int64_t)blockIdx.x * blockDim.x + threadIdx.x)

/* Call F<TIN, TACC>(args...) for the runtime pair in r. */
#define KCS_GPU_DISPATCH(r, F, ...)                                                               \
    do {                                                                                          \
        switch ((r)->tin * 3 + (r)->tacc) {                                                       \
        case 0: F<0, 0>(__VA_ARGS__); break;                                                      \
        case 1: F<0, 1>(__VA_ARGS__); break;                                                      \
        case 2: F<0, 2>(__VA_ARGS__); break;                                                      \
        case 3: F<1, 0>(__VA_ARGS__); break;                                                      \
        case 4: F<1, 1>(__VA_ARGS__); break;                                                      \
        case 5: F<1, 2>(__VA_ARGS__); break;                                                      \
        case 6: F<2, 0>(__VA_ARGS__); break;                                                      \
        case 7: F<2, 1>(__VA_ARGS__); break;                                                      \
        case 8: F<2, 2>(__VA_ARGS__); break;                                                      \
        case 9: F<3, 0>(__VA_ARGS__); break;                                                      \
        case 10: F<3, 1>(__VA_ARGS__); break;                                                     \
        case 11: F<3, 2>(__VA_ARGS__); break;                                                     \
        default: return -1;                                                                       \
        }                                                                                         \
    } while (0)
