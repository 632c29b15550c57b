/* The tiled device Freivalds terms (v2, issue #47), included by freivalds.cu
 * inside its anonymous namespace (so by hip/freivalds.hip as well). Same
 * terms as the per-row kernels (v1) above them, from the blocking, probe
 * packing and reduction tree of src/base/fv_tiled.h; the C reference
 * src/arith/freivalds_tiled.c computes the same sums in the same order, so
 * a device's terms equal the reference's bit for bit (`kcs bench freivalds
 * --backend cuda` checks that before timing). Cost model:
 * docs/freivalds-device.md.
 *
 * Passes (k <= KCS_FV2_PB: each matrix read once):
 *   fv2_pack    P[c n + l]: the probes' sign bits, one word per column and 32 probes
 *   fv2_sign    over B: BRt[j kk + p] = sum_l B_pl R_lj, beta[p] = sum |B_pl|,
 *               sqB[p] = sum B_pl^2;  over C: yc[i k + j], sc[i], nc2[i]
 *   fv2_value   over A: ya[i k + j] = sum_p A_ip BRt[j kk + p],
 *               sab[i] = sum |A_ip| beta[p], na2[i] = sum A_ip^2
 *   fv_norm_b   |B|_F^2 (v1's, a 256-thread halving tree; the reference mirrors it)
 * Every sum is fp64 with one rounding per term (fma(x, +-1, acc) is acc + x
 * or acc - x; products fused), so the check-error terms of freivalds.c hold
 * for this order as for any. */
#define KCS_FV2_NCHUNK 16 /* accumulators summed per round of the block tree */

__global__ void fv2_pack(uint32_t *P, int64_t n, int k, uint64_t seed, uint64_t stream)
{
    int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int nc = (k + 31) / 32;
    if (id >= (int64_t)nc * n)
        return;
    int c = (int)(id / n);
    int64_t l = id % n;
    P[id] = kcs_fv2_probe_word(seed, stream, n, k, c, l);
}

/* The 4 values of columns l0 .. l0 + 3 of row x (zeros past L; rows past the
 * block's last: zeros): one 16-byte load when vec. */
__device__ inline void fv2_load4(const float *x, int64_t l0, int64_t L, bool vec, bool row,
                                 float d[4])
{
    if (!row) {
        d[0] = d[1] = d[2] = d[3] = 0;
    } else if (vec && l0 + 3 < L) {
        float4 v = *reinterpret_cast<const float4 *>(x + l0);
        d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
    } else {
#pragma unroll
        for (int c = 0; c < 4; c++)
            d[c] = l0 + c < L ? x[l0 + c] : 0.0f;
    }
}

/* Thread's rows of the block: the current group (converted to fp64) and the
 * next one's loads in flight while the current one is summed. */
#define FV2_PREFETCH(X, L, nrows)                                                              \
    float nx[RB][4];                                                                           \
    _Pragma("unroll") for (int r = 0; r < RB; r++)                                             \
        fv2_load4(X + (r0 + r) * (L), 4 * (int64_t)threadIdx.x, L, vec, r0 + r < (nrows), nx[r])
#define FV2_NEXT(X, L, nrows, g)                                                               \
    double x[RB][4];                                                                           \
    _Pragma("unroll") for (int r = 0; r < RB; r++) _Pragma("unroll") for (int c = 0; c < 4;   \
                                                                          c++) x[r][c] =      \
        nx[r][c];                                                                              \
    if ((g) + KCS_FV2_THREADS < G)                                                             \
        _Pragma("unroll") for (int r = 0; r < RB; r++)                                         \
            fv2_load4(X + (r0 + r) * (L), 4 * ((g) + KCS_FV2_THREADS), L, vec, r0 + r < (nrows), \
                      nx[r])

/* Sum NV accumulators acc[v] over the block's threads (the halving tree of
 * fv_tiled.h, KCS_FV2_NCHUNK at a time); out(v, sum) in thread v % NCHUNK. */
template <int NV, typename Out>
__device__ inline void fv2_block_reduce(const double (&acc)[NV], Out out)
{
    __shared__ double sh[KCS_FV2_NCHUNK][KCS_FV2_THREADS];
    const int t = threadIdx.x;
#pragma unroll
    for (int v0 = 0; v0 < NV; v0 += KCS_FV2_NCHUNK) {
#pragma unroll
        for (int q = 0; q < KCS_FV2_NCHUNK; q++)
            if (v0 + q < NV)
                sh[q][t] = acc[v0 + q < NV ? v0 + q : 0];
        __syncthreads();
        for (int s = KCS_FV2_THREADS / 2; s > 0; s >>= 1) {
            if (t < s) {
#pragma unroll
                for (int q = 0; q < KCS_FV2_NCHUNK; q++)
                    if (v0 + q < NV)
                        sh[q][t] += sh[q][t + s];
            }
            __syncthreads();
        }
        if (t < KCS_FV2_NCHUNK && v0 + t < NV)
            out(v0 + t, sh[t][0]);
        __syncthreads();
    }
}

/* Sign pass over X (rows x L): y[r ys_r + j ys_j] for the sweep's probes
 * j0 .. j0 + kb - 1 and, on the first sweep, xabs[r], xsq[r]. */
template <int PB>
__global__ void __launch_bounds__(KCS_FV2_THREADS)
    fv2_sign(const float *X, int64_t rows, int64_t L, const uint32_t *P, int k, int j0,
             double *y, int64_t ys_r, int64_t ys_j, double *xabs, double *xsq)
{
    constexpr int RB = KCS_FV2_RB, NA = PB + 2, NV = RB * NA;
    const int64_t r0 = (int64_t)blockIdx.x * RB;
    const int kb = k - j0 < PB ? k - j0 : PB;
    const uint32_t *Pc = P + (int64_t)(j0 / 32) * L;
    const int shift = j0 % 32;
    const bool vec = L % 4 == 0 && ((uintptr_t)X & 15) == 0;
    const int64_t G = (L + 3) / 4;
    double acc[NV];
#pragma unroll
    for (int v = 0; v < NV; v++)
        acc[v] = 0;
    FV2_PREFETCH(X, L, rows);
    for (int64_t g = threadIdx.x; g < G; g += KCS_FV2_THREADS) {
        const int64_t l0 = 4 * g;
        FV2_NEXT(X, L, rows, g);
        uint32_t w[4];
#pragma unroll
        for (int c = 0; c < 4; c++)
            w[c] = l0 + c < L ? Pc[l0 + c] >> shift : 0u;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            if (l0 + c < L) { /* (guards, not breaks: clang unrolls only those) */
#pragma unroll
                for (int j = 0; j < PB; j++) {
                    if (j < kb) {
                        /* +-1.0 from the sign bit: 0x3FF00000 | bit << 31, high word */
                        double s = __hiloint2double(
                            (int)(0x3FF00000u | ((w[c] >> j) & 1u) << 31), 0);
#pragma unroll
                        for (int r = 0; r < RB; r++)
                            acc[r * NA + j] = fma(x[r][c], s, acc[r * NA + j]);
                    }
                }
#pragma unroll
                for (int r = 0; r < RB; r++) {
                    acc[r * NA + PB] = acc[r * NA + PB] + fabs(x[r][c]);
                    acc[r * NA + PB + 1] = fma(x[r][c], x[r][c], acc[r * NA + PB + 1]);
                }
            }
        }
    }
    fv2_block_reduce<NV>(acc, [&](int v, double s) {
        int r = v / NA, j = v % NA;
        if (r0 + r >= rows)
            return;
        if (j < kb)
            y[(r0 + r) * ys_r + (int64_t)(j0 + j) * ys_j] = s;
        else if (j == PB && j0 == 0)
            xabs[r0 + r] = s;
        else if (j == PB + 1 && j0 == 0)
            xsq[r0 + r] = s;
    });
}

/* Value pass over A (m x K) with V = BRt (k x K, probe-major): ya[i k + j]
 * for the sweep's probes and, on the first sweep, sab[i], na2[i]. */
template <int PB>
__global__ void __launch_bounds__(KCS_FV2_THREADS)
    fv2_value(const float *A, int64_t m, int64_t K, const double *V, const double *beta, int k,
              int j0, double *ya, double *sab, double *na2)
{
    constexpr int RB = KCS_FV2_RB, NA = PB + 2, NV = RB * NA;
    const int64_t r0 = (int64_t)blockIdx.x * RB;
    const int kb = k - j0 < PB ? k - j0 : PB;
    const bool vec = K % 4 == 0 && ((uintptr_t)A & 15) == 0;
    const bool vec2 = K % 2 == 0 && ((uintptr_t)V & 15) == 0 && ((uintptr_t)beta & 15) == 0;
    const int64_t G = (K + 3) / 4;
    double acc[NV];
#pragma unroll
    for (int v = 0; v < NV; v++)
        acc[v] = 0;
    FV2_PREFETCH(A, K, m);
    for (int64_t g = threadIdx.x; g < G; g += KCS_FV2_THREADS) {
        const int64_t p0 = 4 * g;
        const bool full = p0 + 3 < K;
        FV2_NEXT(A, K, m, g);
#pragma unroll
        for (int j = 0; j < PB; j++) {
            if (j >= kb)
                continue;
            const double *vj = V + (int64_t)(j0 + j) * K + p0;
            double v[4];
            if (vec2 && full) {
                double2 a = *reinterpret_cast<const double2 *>(vj);
                double2 b = *reinterpret_cast<const double2 *>(vj + 2);
                v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
            } else {
#pragma unroll
                for (int c = 0; c < 4; c++)
                    v[c] = p0 + c < K ? vj[c] : 0.0;
            }
#pragma unroll
            for (int c = 0; c < 4; c++) {
                if (p0 + c < K) {
#pragma unroll
                    for (int r = 0; r < RB; r++)
                        acc[r * NA + j] = fma(x[r][c], v[c], acc[r * NA + j]);
                }
            }
        }
        if (j0 == 0) {
            double b[4];
            if (vec2 && full) {
                double2 a = *reinterpret_cast<const double2 *>(beta + p0);
                double2 c2 = *reinterpret_cast<const double2 *>(beta + p0 + 2);
                b[0] = a.x, b[1] = a.y, b[2] = c2.x, b[3] = c2.y;
            } else {
#pragma unroll
                for (int c = 0; c < 4; c++)
                    b[c] = p0 + c < K ? beta[p0 + c] : 0.0;
            }
#pragma unroll
            for (int c = 0; c < 4; c++) {
                if (p0 + c < K) {
#pragma unroll
                    for (int r = 0; r < RB; r++) {
                        acc[r * NA + PB] = fma(fabs(x[r][c]), b[c], acc[r * NA + PB]);
                        acc[r * NA + PB + 1] = fma(x[r][c], x[r][c], acc[r * NA + PB + 1]);
                    }
                }
            }
        }
    }
    fv2_block_reduce<NV>(acc, [&](int v, double s) {
        int r = v / NA, j = v % NA;
        if (r0 + r >= m)
            return;
        if (j < kb)
            ya[(r0 + r) * k + j0 + j] = s;
        else if (j == PB && j0 == 0)
            sab[r0 + r] = s;
        else if (j == PB + 1 && j0 == 0)
            na2[r0 + r] = s;
    });
}

template <int PB>
void fv2_launch_sweep(KCS_FV_STREAM_T st, const float *A, const float *B, const float *C,
                      int64_t m, int64_t kk, int64_t n, int k, int j0, const uint32_t *P,
                      double *BRt, double *beta, double *sqB, double *terms)
{
    double *ya = terms, *yc = terms + m * k, *sab = terms + 2 * m * k;
    double *na2 = sab + m, *sc = na2 + m, *nc2 = sc + m;
    unsigned gb = (unsigned)((kk + KCS_FV2_RB - 1) / KCS_FV2_RB);
    unsigned ga = (unsigned)((m + KCS_FV2_RB - 1) / KCS_FV2_RB);
    fv2_sign<PB><<<gb, KCS_FV2_THREADS, 0, st>>>(B, kk, n, P, k, j0, BRt, 1, kk, beta, sqB);
    fv2_sign<PB><<<ga, KCS_FV2_THREADS, 0, st>>>(C, m, n, P, k, j0, yc, k, 1, sc, nc2);
    fv2_value<PB><<<ga, KCS_FV2_THREADS, 0, st>>>(A, m, kk, BRt, beta, k, j0, ya, sab, na2);
}
