/* gpu_kernels.cuh: the kernels of the CUDA and HIP backends and their
 * extern "C" launchers (gpu_launch.h). One source for both vendors, so the
 * two backends compute the same values; each kernel is the twin of the
 * OpenCL kernel named in its comment (backends/kernels/NAME.cl), with the same
 * order of operations.
 *
 * The includer defines, before including this file:
 *   KCS_GPU_NS            namespace of the device code (kcs_cuda / kcs_hip)
 *   KCS_GPU_FN(name)      launcher symbol (kcs_cuda_##name / kcs_hip_##name)
 *   KCS_GPU_STREAM(p)     void * -> the vendor's stream type
 *   KCS_GPU_LAST_ERROR()  the vendor's status of the last launch, as int
 * and compiles without FP contraction (nvcc -fmad=false, hipcc
 * -ffp-contract=off): every fma below is written out. */
#include <math.h>
#include <stdint.h>

#include "gpu_launch.h"

namespace KCS_GPU_NS {

#include "gpu_arith.cuh"

/* ---- gemm (gemm.cl) -------------------------------------------------------- */

/* gemm_own: one thread per output element, global batch*m*n */
template <int TIN, int TACC>
__global__ void gemm_own(kcs_gpu_red r, int64_t batch, int64_t m, int64_t n, int64_t k,
                         const void *A, const void *B, const double *C, void *D)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    int64_t id = KCS_GID();
    if (id >= batch * m * n)
        return;
    int64_t j = id % n, i = (id / n) % m, b = id / (m * n);
    AR ar(r);
    int64_t ao = (b * m + i) * k, bo = b * k * n + j;
    acc s = kcs_reduce(
        ar, k, r.sched, r.param,
        [&](acc s0, int64_t t) {
            return ar.step(s0, In<TIN>::ld(A, ao + t), In<TIN>::ld(B, bo + t * n));
        },
        [&](int64_t t) { return ar.prod(In<TIN>::ld(A, ao + t), In<TIN>::ld(B, bo + t * n)); });
    if (C)
        s = ar.stepd(s, C[id]);
    ((acc *)D)[id] = s;
}

template <class T> __global__ void fill_zero(T *p, int64_t n)
{
    int64_t id = KCS_GID();
    if (id < n)
        p[id] = 0;
}

/* atomic: chunk ch of output o summed in order, committed by atomicAdd */
template <int TIN, int TACC>
__global__ void gemm_atomic(kcs_gpu_red r, int64_t batch, int64_t m, int64_t n, int64_t k,
                            int64_t nch, const void *A, const void *B, void *D)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    int64_t id = KCS_GID();
    if (id >= batch * m * n * nch)
        return;
    int64_t ch = id % nch, o = id / nch;
    int64_t j = o % n, i = (o / n) % m, b = o / (m * n);
    AR ar(r);
    int64_t ao = (b * m + i) * k, bo = b * k * n + j;
    int64_t lo = ch * KCS_GPU_ATOMIC_CHUNK, hi = lo + KCS_GPU_ATOMIC_CHUNK < k ? lo + KCS_GPU_ATOMIC_CHUNK : k;
    acc s = 0;
    for (int64_t t = lo; t < hi; t++)
        s = ar.step(s, In<TIN>::ld(A, ao + t), In<TIN>::ld(B, bo + t * n));
    atomicAdd((acc *)D + o, s);
}

/* D[o] <- RN_acc(D[o] + C[o]) */
template <int TIN, int TACC>
__global__ void add_c(kcs_gpu_red r, int64_t total, const double *C, void *D)
{
    typedef Ar<TIN, TACC> AR;
    int64_t id = KCS_GID();
    if (id >= total)
        return;
    AR ar(r);
    typename AR::acc *d = (typename AR::acc *)D;
    d[id] = ar.stepd(d[id], C[id]);
}

/* gemm_tiled: 64×64 tile per block of 16×16 threads, each 4×4 outputs
 * strided by 16, k in slices of 16 through shared memory, fma in acc. */
#define KCS_TS 64
#define KCS_TSK 16
#define KCS_WPT 4
#define KCS_RTS (KCS_TS / KCS_WPT)

template <int TIN, int TACC>
__global__ void gemm_tiled(kcs_gpu_red r, int64_t m, int64_t n, int64_t k, const void *A,
                           const void *B, const double *C, void *D)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    __shared__ acc As[KCS_TSK][KCS_TS];
    __shared__ acc Bs[KCS_TSK][KCS_TS];
    AR ar(r);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t b = blockIdx.z;
    const int64_t i0 = (int64_t)blockIdx.y * KCS_TS, j0 = (int64_t)blockIdx.x * KCS_TS;
    const int tid = ty * KCS_RTS + tx;
    const int64_t sa = b * m * k, sb = b * k * n, sd = b * m * n;
    acc rr[KCS_WPT][KCS_WPT];
    for (int wi = 0; wi < KCS_WPT; wi++)
        for (int wj = 0; wj < KCS_WPT; wj++)
            rr[wi][wj] = 0;
    for (int64_t t0 = 0; t0 < k; t0 += KCS_TSK) {
        for (int e = tid; e < KCS_TS * KCS_TSK; e += KCS_RTS * KCS_RTS) {
            int row = e / KCS_TSK, col = e % KCS_TSK;
            int64_t gi = i0 + row, gk = t0 + col;
            As[col][row] = (gi < m && gk < k) ? (acc)In<TIN>::ld(A, sa + gi * k + gk) : (acc)0;
            int krow = e / KCS_TS, ncol = e % KCS_TS;
            int64_t gk2 = t0 + krow, gj = j0 + ncol;
            Bs[krow][ncol] = (gk2 < k && gj < n) ? (acc)In<TIN>::ld(B, sb + gk2 * n + gj) : (acc)0;
        }
        __syncthreads();
        for (int kk = 0; kk < KCS_TSK; kk++) {
            acc av[KCS_WPT], bv[KCS_WPT];
            for (int w = 0; w < KCS_WPT; w++) {
                av[w] = As[kk][ty + w * KCS_RTS];
                bv[w] = Bs[kk][tx + w * KCS_RTS];
            }
            for (int wi = 0; wi < KCS_WPT; wi++)
                for (int wj = 0; wj < KCS_WPT; wj++)
                    rr[wi][wj] = kfma(av[wi], bv[wj], rr[wi][wj]);
        }
        __syncthreads();
    }
    for (int wi = 0; wi < KCS_WPT; wi++) {
        int64_t gi = i0 + ty + wi * KCS_RTS;
        if (gi >= m)
            continue;
        for (int wj = 0; wj < KCS_WPT; wj++) {
            int64_t gj = j0 + tx + wj * KCS_RTS;
            if (gj >= n)
                continue;
            acc s = rr[wi][wj];
            if (C)
                s = ar.stepd(s, C[sd + gi * n + gj]);
            ((acc *)D)[sd + gi * n + gj] = s;
        }
    }
}

/* ---- row ops (rows.cl) ----------------------------------------------------- */

/* reduce_sum_own: one thread per row */
template <int TIN, int TACC>
__global__ void reduce_own(kcs_gpu_red r, int64_t m, int64_t k, const void *X, void *out)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    int64_t i = KCS_GID();
    if (i >= m)
        return;
    AR ar(r);
    int64_t o = i * k;
    acc s = kcs_reduce(
        ar, k, r.sched, r.param,
        [&](acc s0, int64_t t) { return ar.step1(s0, In<TIN>::ld(X, o + t)); },
        [&](int64_t t) { return ar.load(In<TIN>::ld(X, o + t)); });
    ((acc *)out)[i] = s;
}

/* reduce_sum_native: a block of 64 per row, strided sums, tree */
template <int TIN, int TACC>
__global__ void reduce_tree(kcs_gpu_red r, int64_t m, int64_t k, const void *X, void *out)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    __shared__ acc l[KCS_GPU_TREE_THREADS];
    (void)m;
    AR ar(r);
    int64_t i = blockIdx.x, o = i * k;
    int lid = threadIdx.x;
    acc s = 0;
    for (int64_t t = lid; t < k; t += KCS_GPU_TREE_THREADS)
        s = ar.step1(s, In<TIN>::ld(X, o + t));
    s = tree_reduce(l, s, 0);
    if (lid == 0)
        ((acc *)out)[i] = s;
}

template <int TIN, int TACC>
__global__ void reduce_atomic(kcs_gpu_red r, int64_t m, int64_t k, int64_t nch, const void *X,
                              void *out)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    int64_t id = KCS_GID();
    if (id >= m * nch)
        return;
    int64_t ch = id % nch, i = id / nch, o = i * k;
    AR ar(r);
    int64_t lo = ch * KCS_GPU_ATOMIC_CHUNK, hi = lo + KCS_GPU_ATOMIC_CHUNK < k ? lo + KCS_GPU_ATOMIC_CHUNK : k;
    acc s = 0;
    for (int64_t t = lo; t < hi; t++)
        s = ar.step1(s, In<TIN>::ld(X, o + t));
    atomicAdd((acc *)out + i, s);
}

/* Row ops (rows.cl): sums in the accumulator, elementwise steps in the
 * working format val, each rounded once, in this order:
 *   softmax    mx = max x; e = exp(x - mx); s = sum e; y = e / s
 *   layernorm  mu = sum(x) / k; d = x - mu; var = sum(d*d) / k;
 *              y = d / sqrt(var + eps) * gamma + beta
 *   rmsnorm    d = x; ms = sum(d*d) / k; y = d / sqrt(ms + eps) * gamma
 * Outputs are wide (exact for every val and acc value). */

/* softmax_own: one thread per row. attention runs it in place on its val
 * score buffer (TIN = the storage of val, OUT = val): every element is
 * read before the same thread overwrites it. */
template <int TIN, int TACC, class OUT>
__global__ void softmax_own(kcs_gpu_red r, int64_t m, int64_t k, const void *X, void *Y)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    typedef typename AR::val val;
    int64_t i = KCS_GID();
    if (i >= m)
        return;
    AR ar(r);
    int64_t o = i * k;
    val mx = -INFINITY;
    for (int64_t t = 0; t < k; t++)
        mx = kmax(mx, In<TIN>::ld(X, o + t));
    auto E = [&](int64_t t) { return kexp((val)(In<TIN>::ld(X, o + t) - mx)); };
    acc s = kcs_reduce(
        ar, k, r.sched, r.param, [&](acc s0, int64_t t) { return ar.step1(s0, E(t)); },
        [&](int64_t t) { return ar.load(E(t)); });
    for (int64_t t = 0; t < k; t++)
        ((OUT *)Y)[o + t] = (OUT)ar.wdiv(E(t), s);
}

template <int TIN, int TACC>
__global__ void softmax_tree(kcs_gpu_red r, int64_t m, int64_t k, const void *X, void *Y)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    typedef typename AR::val val;
    typedef typename AR::wide wide;
    __shared__ acc l[KCS_GPU_TREE_THREADS];
    __shared__ val lm[KCS_GPU_TREE_THREADS];
    (void)m;
    AR ar(r);
    int64_t o = (int64_t)blockIdx.x * k;
    int lid = threadIdx.x;
    val mx = -INFINITY;
    for (int64_t t = lid; t < k; t += KCS_GPU_TREE_THREADS)
        mx = kmax(mx, In<TIN>::ld(X, o + t));
    mx = tree_reduce(lm, mx, 1);
    acc s = 0;
    for (int64_t t = lid; t < k; t += KCS_GPU_TREE_THREADS)
        s = ar.step1(s, kexp((val)(In<TIN>::ld(X, o + t) - mx)));
    s = tree_reduce(l, s, 0);
    val inv = ar.wdiv(1, s);
    for (int64_t t = lid; t < k; t += KCS_GPU_TREE_THREADS)
        ((wide *)Y)[o + t] = (val)(kexp((val)(In<TIN>::ld(X, o + t) - mx)) * inv);
}

/* y = z * gamma + beta with the absent parts left out (rows.cl NORM_AFFINE) */
template <class V>
static __device__ V norm_affine(V z, const double *G, const double *Bt, int64_t t)
{
    if (G && Bt)
        return (V)(z * (V)G[t]) + (V)Bt[t];
    if (G)
        return (V)(z * (V)G[t]);
    if (Bt)
        return (V)(z + (V)Bt[t]);
    return z;
}

/* norm_own: layernorm (rms 0) / rmsnorm (rms 1), one thread per row */
template <int TIN, int TACC>
__global__ void norm_own(kcs_gpu_red r, int rms, int64_t m, int64_t k, const void *X,
                         const double *G, const double *Bt, double eps, void *Y)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    typedef typename AR::val val;
    typedef typename AR::wide wide;
    int64_t i = KCS_GID();
    if (i >= m)
        return;
    if (rms)
        Bt = NULL;
    AR ar(r);
    int64_t o = i * k;
    val mu = 0;
    if (!rms) {
        acc s = kcs_reduce(
            ar, k, r.sched, r.param,
            [&](acc s0, int64_t t) { return ar.step1(s0, In<TIN>::ld(X, o + t)); },
            [&](int64_t t) { return ar.load(In<TIN>::ld(X, o + t)); });
        mu = ar.wdiv(s, (wide)k);
    }
    auto D = [&](int64_t t) {
        val x = In<TIN>::ld(X, o + t);
        return rms ? x : (val)(x - mu);
    };
    acc v = kcs_reduce(
        ar, k, r.sched, r.param, [&](acc s0, int64_t t) { return ar.step(s0, D(t), D(t)); },
        [&](int64_t t) { return ar.prod(D(t), D(t)); });
    val var = ar.wdiv(v, (wide)k);
    val den = ksqrt((val)(var + (val)eps));
    for (int64_t t = 0; t < k; t++) {
        val z = D(t) / den;
        ((wide *)Y)[o + t] = norm_affine<val>(z, G, Bt, t);
    }
}

static __device__ inline float krsqrt(float x) { return rsqrtf(x); }
static __device__ inline double krsqrt(double x) { return rsqrt(x); }

template <int TIN, int TACC>
__global__ void norm_tree(kcs_gpu_red r, int rms, int64_t m, int64_t k, const void *X,
                          const double *G, const double *Bt, double eps, void *Y)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    typedef typename AR::val val;
    typedef typename AR::wide wide;
    __shared__ acc l[KCS_GPU_TREE_THREADS];
    (void)m;
    if (rms)
        Bt = NULL;
    AR ar(r);
    int64_t o = (int64_t)blockIdx.x * k;
    int lid = threadIdx.x;
    val mu = 0;
    if (!rms) {
        acc s = 0;
        for (int64_t t = lid; t < k; t += KCS_GPU_TREE_THREADS)
            s = ar.step1(s, In<TIN>::ld(X, o + t));
        mu = ar.wdiv(tree_reduce(l, s, 0), (wide)k);
    }
    acc v = 0;
    for (int64_t t = lid; t < k; t += KCS_GPU_TREE_THREADS) {
        val d = (val)(In<TIN>::ld(X, o + t) - mu);
        v = ar.step(v, d, d);
    }
    val var = ar.wdiv(tree_reduce(l, v, 0), (wide)k);
    val rstd = krsqrt((val)(var + (val)eps));
    for (int64_t t = lid; t < k; t += KCS_GPU_TREE_THREADS) {
        val z = (val)((val)(In<TIN>::ld(X, o + t) - mu) * rstd);
        ((wide *)Y)[o + t] = norm_affine<val>(z, G, Bt, t);
    }
}

#include "gpu_attention.cuh"

/* ---- gather (gather.cl) ---------------------------------------------------- */

/* one thread per (p, c), c < max(k, 1) (with k == 0 a bad index still
 * raises); the table travels as doubles (every format is exact in double) */
__global__ void gather_rows(int mode, int64_t m, int64_t k, int64_t n, const double *T,
                            const int64_t *idx, double *Yo, unsigned long long *bad)
{
    int64_t kk = k > 0 ? k : 1;
    int64_t id = KCS_GID();
    if (id >= n * kk)
        return;
    int64_t p = id / kk, c = id % kk;
    int64_t row = idx[p];
    if (row < 0 || row >= m) {
        if (mode == KCS_GPU_OOB_RAISE) {
            if (c == 0)
                atomicMin(bad, (unsigned long long)p);
            return;
        }
        if (c >= k)
            return;
        if (mode == KCS_GPU_OOB_ZERO || m == 0) {
            Yo[p * k + c] = 0.0;
            return;
        }
        row = row < 0 ? 0 : m - 1;
    }
    if (c >= k)
        return;
    Yo[p * k + c] = T[row * k + c];
}

/* ---- host-side launch helpers --------------------------------------------- */

template <int TIN, int TACC>
static void launch_gemm(void *st, const kcs_gpu_red *r, int64_t batch, int64_t m, int64_t n,
                        int64_t k, const void *a, const void *b, const double *c, void *d)
{
    typedef typename AccT<TACC>::t acc;
    int64_t total = batch * m * n;
    if (r->sched == KCS_GPU_SCHED_ATOMIC) {
        int64_t nch = (k + KCS_GPU_ATOMIC_CHUNK - 1) / KCS_GPU_ATOMIC_CHUNK;
        fill_zero<acc><<<kcs_blocks(total, 256), 256, 0, KCS_GPU_STREAM(st)>>>((acc *)d, total);
        if (nch > 0)
            gemm_atomic<TIN, TACC><<<kcs_blocks(total * nch, 256), 256, 0, KCS_GPU_STREAM(st)>>>(
                *r, batch, m, n, k, nch, a, b, d);
        if (c)
            add_c<TIN, TACC><<<kcs_blocks(total, 256), 256, 0, KCS_GPU_STREAM(st)>>>(*r, total, c, d);
        return;
    }
    gemm_own<TIN, TACC><<<kcs_blocks(total, 128), 128, 0, KCS_GPU_STREAM(st)>>>(
        *r, batch, m, n, k, a, b, c, d);
}

template <int TIN, int TACC>
static void launch_gemm_tiled(void *st, const kcs_gpu_red *r, int64_t batch, int64_t m,
                              int64_t n, int64_t k, const void *a, const void *b,
                              const double *c, void *d)
{
    dim3 grid(kcs_blocks(n, KCS_TS), kcs_blocks(m, KCS_TS), (unsigned)batch);
    dim3 block(KCS_RTS, KCS_RTS, 1);
    gemm_tiled<TIN, TACC><<<grid, block, 0, KCS_GPU_STREAM(st)>>>(*r, m, n, k, a, b, c, d);
}

template <int TIN, int TACC>
static void launch_reduce(void *st, const kcs_gpu_red *r, int64_t m, int64_t k, const void *x,
                          void *out)
{
    typedef typename AccT<TACC>::t acc;
    if (r->sched == KCS_GPU_SCHED_TREE) {
        reduce_tree<TIN, TACC><<<(unsigned)m, KCS_GPU_TREE_THREADS, 0, KCS_GPU_STREAM(st)>>>(
            *r, m, k, x, out);
    } else if (r->sched == KCS_GPU_SCHED_ATOMIC) {
        int64_t nch = (k + KCS_GPU_ATOMIC_CHUNK - 1) / KCS_GPU_ATOMIC_CHUNK;
        fill_zero<acc><<<kcs_blocks(m, 256), 256, 0, KCS_GPU_STREAM(st)>>>((acc *)out, m);
        if (nch > 0)
            reduce_atomic<TIN, TACC><<<kcs_blocks(m * nch, 256), 256, 0, KCS_GPU_STREAM(st)>>>(
                *r, m, k, nch, x, out);
    } else {
        reduce_own<TIN, TACC><<<kcs_blocks(m, 64), 64, 0, KCS_GPU_STREAM(st)>>>(*r, m, k, x, out);
    }
}

template <int TIN, int TACC>
static void launch_softmax(void *st, const kcs_gpu_red *r, int64_t m, int64_t k, const void *x,
                           void *out)
{
    typedef typename WideT<TIN, TACC>::t wide;
    if (r->sched == KCS_GPU_SCHED_TREE)
        softmax_tree<TIN, TACC><<<(unsigned)m, KCS_GPU_TREE_THREADS, 0, KCS_GPU_STREAM(st)>>>(
            *r, m, k, x, out);
    else
        softmax_own<TIN, TACC, wide><<<kcs_blocks(m, 64), 64, 0, KCS_GPU_STREAM(st)>>>(*r, m, k,
                                                                                      x, out);
}

template <int TIN, int TACC>
static void launch_norm(void *st, const kcs_gpu_red *r, int rms, int64_t m, int64_t k,
                        const void *x, const double *g, const double *bt, double eps, void *out)
{
    if (r->sched == KCS_GPU_SCHED_TREE)
        norm_tree<TIN, TACC><<<(unsigned)m, KCS_GPU_TREE_THREADS, 0, KCS_GPU_STREAM(st)>>>(
            *r, rms, m, k, x, g, bt, eps, out);
    else
        norm_own<TIN, TACC><<<kcs_blocks(m, 64), 64, 0, KCS_GPU_STREAM(st)>>>(*r, rms, m, k, x, g,
                                                                             bt, eps, out);
}

/* elementwise (rows.cl): y = f(x) per value, one thread each, in the
 * working format val; fn as kcs_ew_fn (0 exp, 1 tanh, 2 silu, 3 gelu_tanh,
 * 4 rsqrt), own = 1: the stable forms of rows.cl's own kernel. The vendor
 * libraries' accurate functions (expf, tanhf, rsqrtf: no fast-math
 * intrinsics; nvcc builds without --use_fast_math). */
static __device__ inline float ew_tanh(float x) { return tanhf(x); }
static __device__ inline double ew_tanh(double x) { return tanh(x); }
static __device__ inline float ew_rsqrt(float x) { return rsqrtf(x); }
static __device__ inline double ew_rsqrt(double x) { return rsqrt(x); }

template <class V> static __device__ inline V ew_f(int fn, int own, V x)
{
    const V one = 1, a_half = (V)0.5, two = 2;
    const V c0 = (V)0.79788456080286535588, c1 = (V)0.044715;
    if (fn == 0)
        return kexp(x);
    if (fn == 1)
        return ew_tanh(x);
    if (fn == 4)
        return own ? one / ksqrt(x) : ew_rsqrt(x);
    if (own && isinf(x))
        return x > 0 ? x : -(V)0;
    if (fn == 2)
        return x / (one + kexp(-x));
    V x3 = x * x * x;
    V in = x + c1 * x3;
    return own ? x / (one + kexp(-(two * c0 * in))) : a_half * x * (one + ew_tanh(c0 * in));
}

template <int TIN, int TACC>
__global__ void elementwise_k(int64_t n, int fn, int own, const void *X, void *Y)
{
    typedef typename In<TIN>::val val;
    typedef typename WideT<TIN, TACC>::t wide;
    int64_t i = KCS_GID();
    if (i >= n)
        return;
    ((wide *)Y)[i] = (wide)ew_f<val>(fn, own, (val)In<TIN>::ld(X, i));
}

template <int TIN, int TACC>
static void launch_elementwise(void *st, const kcs_gpu_red *r, int64_t n, int fn, int own,
                               const void *x, void *out)
{
    (void)r;
    if (n > 0)
        elementwise_k<TIN, TACC><<<kcs_blocks(n, 256), 256, 0, KCS_GPU_STREAM(st)>>>(n, fn, own,
                                                                                      x, out);
}

} /* namespace KCS_GPU_NS */

/* ---- extern "C" launchers -------------------------------------------------- */

extern "C" int KCS_GPU_FN(gemm)(void *stream, const kcs_gpu_red *r, int64_t batch, int64_t m,
                                int64_t n, int64_t k, const void *a, const void *b,
                                const double *c, void *d)
{
    KCS_GPU_DISPATCH(r, KCS_GPU_NS::launch_gemm, stream, r, batch, m, n, k, a, b, c, d);
    return KCS_GPU_LAST_ERROR();
}

extern "C" int KCS_GPU_FN(gemm_tiled)(void *stream, const kcs_gpu_red *r, int64_t batch,
                                      int64_t m, int64_t n, int64_t k, const void *a,
                                      const void *b, const double *c, void *d)
{
    KCS_GPU_DISPATCH(r, KCS_GPU_NS::launch_gemm_tiled, stream, r, batch, m, n, k, a, b, c, d);
    return KCS_GPU_LAST_ERROR();
}

extern "C" int KCS_GPU_FN(reduce_rows)(void *stream, const kcs_gpu_red *r, int64_t m, int64_t k,
                                       const void *x, void *out)
{
    KCS_GPU_DISPATCH(r, KCS_GPU_NS::launch_reduce, stream, r, m, k, x, out);
    return KCS_GPU_LAST_ERROR();
}

extern "C" int KCS_GPU_FN(softmax)(void *stream, const kcs_gpu_red *r, int64_t m, int64_t k,
                                   const void *x, void *out)
{
    KCS_GPU_DISPATCH(r, KCS_GPU_NS::launch_softmax, stream, r, m, k, x, out);
    return KCS_GPU_LAST_ERROR();
}

extern "C" int KCS_GPU_FN(elementwise)(void *stream, const kcs_gpu_red *r, int64_t n, int fn,
                                       int own, const void *x, void *out)
{
    KCS_GPU_DISPATCH(r, KCS_GPU_NS::launch_elementwise, stream, r, n, fn, own, x, out);
    return KCS_GPU_LAST_ERROR();
}

extern "C" int KCS_GPU_FN(norm)(void *stream, const kcs_gpu_red *r, int rms, int64_t m,
                                int64_t k, const void *x, const double *gamma,
                                const double *beta, double eps, void *out)
{
    KCS_GPU_DISPATCH(r, KCS_GPU_NS::launch_norm, stream, r, rms, m, k, x, gamma, beta, eps, out);
    return KCS_GPU_LAST_ERROR();
}

extern "C" int KCS_GPU_FN(attention)(void *stream, const kcs_gpu_red *r, int64_t block,
                                     int64_t batch, int64_t m, int64_t n, int64_t k, double scale,
                                     const void *q, const void *kk, const void *v, void *scratch,
                                     void *out)
{
    KCS_GPU_DISPATCH(r, KCS_GPU_NS::launch_attention, stream, r, block, batch, m, n, k, scale, q,
                     kk, v, scratch, out);
    return KCS_GPU_LAST_ERROR();
}

extern "C" int KCS_GPU_FN(gather)(void *stream, int mode, int64_t m, int64_t k, int64_t n,
                                  const double *table, const int64_t *idx, double *out,
                                  unsigned long long *bad)
{
    int64_t total = n * (k > 0 ? k : 1);
    if (total > 0)
        KCS_GPU_NS::gather_rows<<<KCS_GPU_NS::kcs_blocks(total, 256), 256, 0,
                                  KCS_GPU_STREAM(stream)>>>(mode, m, k, n, table, idx, out, bad);
    return KCS_GPU_LAST_ERROR();
}
