/* Batched Freivalds verification on the device: the per-row terms of
 * src/freivalds.c computed by CUDA (this file, nvcc) or HIP (hip/freivalds.hip
 * includes it after defining KCS_FV_HIP and the KCS_FV_* macros).
 *
 * The host uploads A (m x kk), B (kk x n), C (m x n) as fp32, row-major, and
 * calls
 *   kcs_{cuda,hip}_freivalds_terms(stream, A, B, C, m, kk, n, k, seed,
 *                                  probe_stream, work, terms)
 * then copies `terms` back and passes its pieces to kcs_freivalds_finish()
 * (src/freivalds.h), which applies the same thresholds as the CPU path.
 *   work  : kcs_{cuda,hip}_freivalds_work_doubles(m, kk, n, k) doubles
 *   terms : kcs_{cuda,hip}_freivalds_terms_doubles(m, kk, n, k) doubles,
 *           laid out ya[m*k] yc[m*k] sab[m] na2[m] sc[m] nc2[m] nb2[1]
 * All arithmetic is fp64 (fp32 data converted exactly), so the check-error
 * terms of freivalds.c (gamma_{K+n}(2^-53), any summation order) hold. The
 * probes are the CPU's: R_lj = +-1 from Philox4x32-10 keyed by (seed,
 * probe_stream, "FREI"), bit b of 32-bit word q being entry 32 q + b of
 * Rt[j*n + l] (kcs_freivalds_probes). Passes: B once (B R, beta, row sums
 * of B o B), then A and C once (one block per row), then |B|_F^2.
 * k <= KCS_FV_DEV_MAX_PROBES per call.
 *
 * Those are the first device kernels (v1: every probe value read as a
 * double for every matrix element, one row per block). The tiled kernels
 * (v2, freivalds_tiled.cuh: packed sign bits, 4 rows per block, 16-byte
 * loads) compute the same terms through kcs_{cuda,hip}_freivalds_terms_v2
 * with kcs_{cuda,hip}_freivalds_work_doubles_v2 doubles of work; v1 stays
 * for side-by-side timing (kcs_fv_params.device_kernel). */
#ifndef KCS_FV_HIP
#include <cuda_runtime.h>
#define KCS_FV_FN(name) kcs_cuda_##name
#define KCS_FV_STREAM(p) ((cudaStream_t)(p))
#define KCS_FV_STREAM_T cudaStream_t
#define KCS_FV_LAST_ERROR() ((int)cudaGetLastError())
#endif

#include <stdint.h>

#define KCS_FV_DEV_MAX_PROBES 256
#define FV_THREADS 256 /* threads per block (a power of two) */
#define FV_PB 8        /* probes per sweep over a row */
#define FV_TAG 0x46524549u

namespace {

/* Philox4x32-10: the CPU's one definition (src/base/philox.h), on the device. */
#define KCS_PHILOX_QUAL static __host__ __device__ inline
#include "philox.h"
#include "fv_tiled.h"

__device__ void fv_philox(const uint32_t in[4], const uint32_t key_in[2], uint32_t out[4])
{
    kcs_philox4x32_10_rounds(in, key_in, out);
}

/* One thread per Philox block (128 probe entries), kcs_rng_init(seed,
 * stream, FV_TAG) counters: ctr = {block, tag, stream lo, stream hi}. */
__global__ void fv_probes(double *Rt, int64_t total, uint64_t seed, uint64_t stream)
{
    int64_t blk = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (blk * 128 >= total)
        return;
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint64_t tag = FV_TAG;
    uint32_t ctr[4] = {(uint32_t)blk, (uint32_t)tag, (uint32_t)stream,
                       (uint32_t)(stream >> 32) ^ (uint32_t)((tag >> 32) * 0x9E3779B1u)};
    uint32_t w[4];
    fv_philox(ctr, key, w);
    for (int q = 0; q < 4; q++)
        for (int b = 0; b < 32; b++) {
            int64_t t = blk * 128 + q * 32 + b;
            if (t < total)
                Rt[t] = (w[q] >> b) & 1u ? -1.0 : 1.0;
        }
}

/* Sum v over the block (shared-memory halving tree); result in thread 0. */
__device__ double fv_block_sum(double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = FV_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

/* y[j * ystride] = sum_l x[l] V[j L + l] for j < k (one block, one row x);
 * optionally wabs = sum |x_l| w_l (w NULL: 1) and sq = sum x_l^2. */
__device__ void fv_row(const float *x, int64_t L, const double *V, int k, double *y,
                       int64_t ystride, const double *w, double *wabs, double *sq, double *sh)
{
    for (int j0 = 0; j0 < k; j0 += FV_PB) {
        int jb = k - j0 < FV_PB ? k - j0 : FV_PB;
        double acc[FV_PB];
        for (int j = 0; j < FV_PB; j++)
            acc[j] = 0;
        double sa = 0, sq2 = 0;
        for (int64_t l = threadIdx.x; l < L; l += FV_THREADS) {
            double u = x[l];
#pragma unroll
            for (int j = 0; j < FV_PB; j++)
                if (j < jb)
                    acc[j] += u * V[(int64_t)(j0 + j) * L + l];
            if (j0 == 0) {
                sa += fabs(u) * (w ? w[l] : 1.0);
                sq2 += u * u;
            }
        }
        for (int j = 0; j < jb; j++) {
            double s = fv_block_sum(acc[j], sh);
            if (threadIdx.x == 0)
                y[(int64_t)(j0 + j) * ystride] = s;
        }
        if (j0 == 0) {
            double a = fv_block_sum(sa, sh), b = fv_block_sum(sq2, sh);
            if (threadIdx.x == 0) {
                *wabs = a;
                *sq = b;
            }
        }
    }
}

/* Pass 1, one block per row p of B: BRt[j kk + p], beta[p], sqB[p]. */
__global__ void fv_pass_b(const float *B, int64_t kk, int64_t n, const double *Rt, int k,
                          double *BRt, double *beta, double *sqB)
{
    __shared__ double sh[FV_THREADS];
    for (int64_t p = blockIdx.x; p < kk; p += gridDim.x)
        fv_row(B + p * n, n, Rt, k, BRt + p, kk, nullptr, &beta[p], &sqB[p], sh);
}

/* Pass 2, one block per row i: A(BR), (|A| beta), |a_i|^2; C R, |C| 1, |c_i|^2. */
__global__ void fv_pass_ac(const float *A, const float *C, int64_t m, int64_t kk, int64_t n,
                           const double *Rt, const double *BRt, const double *beta, int k,
                           double *terms)
{
    __shared__ double sh[FV_THREADS];
    double *ya = terms, *yc = terms + m * k, *sab = terms + 2 * m * k;
    double *na2 = sab + m, *sc = na2 + m, *nc2 = sc + m;
    for (int64_t i = blockIdx.x; i < m; i += gridDim.x) {
        fv_row(A + i * kk, kk, BRt, k, ya + i * k, 1, beta, &sab[i], &na2[i], sh);
        fv_row(C + i * n, n, Rt, k, yc + i * k, 1, nullptr, &sc[i], &nc2[i], sh);
    }
}

/* |B|_F^2 = sum_p sqB[p], one block. */
__global__ void fv_norm_b(const double *sqB, int64_t kk, double *out)
{
    __shared__ double sh[FV_THREADS];
    double s = 0;
    for (int64_t p = threadIdx.x; p < kk; p += FV_THREADS)
        s += sqB[p];
    s = fv_block_sum(s, sh);
    if (threadIdx.x == 0)
        *out = s;
}

#include "freivalds_tiled.cuh"

} // namespace

extern "C" {

int64_t KCS_FV_FN(freivalds_work_doubles)(int64_t m, int64_t kk, int64_t n, int k)
{
    (void)m;
    return (int64_t)k * n + (int64_t)k * kk + 2 * kk;
}

int64_t KCS_FV_FN(freivalds_terms_doubles)(int64_t m, int64_t kk, int64_t n, int k)
{
    (void)kk;
    (void)n;
    return 2 * m * k + 4 * m + 1;
}

/* Asynchronous on `stream`; returns the vendor's launch status (0: ok) or
 * -1 for bad arguments. */
int KCS_FV_FN(freivalds_terms)(void *stream, const float *A, const float *B, const float *C,
                               int64_t m, int64_t kk, int64_t n, int k, uint64_t seed,
                               uint64_t probe_stream, double *work, double *terms)
{
    if (m < 1 || kk < 1 || n < 1 || k < 1 || k > KCS_FV_DEV_MAX_PROBES || !A || !B || !C ||
        !work || !terms)
        return -1;
    double *Rt = work, *BRt = Rt + (int64_t)k * n, *beta = BRt + (int64_t)k * kk;
    double *sqB = beta + kk;
    int64_t total = (int64_t)k * n, nblk = (total + 127) / 128;
    int64_t g = (nblk + FV_THREADS - 1) / FV_THREADS;
    fv_probes<<<(unsigned)g, FV_THREADS, 0, KCS_FV_STREAM(stream)>>>(Rt, total, seed,
                                                                      probe_stream);
    int grid_b = (int)(kk < 65535 ? kk : 65535), grid_ac = (int)(m < 65535 ? m : 65535);
    fv_pass_b<<<grid_b, FV_THREADS, 0, KCS_FV_STREAM(stream)>>>(B, kk, n, Rt, k, BRt, beta,
                                                                sqB);
    fv_pass_ac<<<grid_ac, FV_THREADS, 0, KCS_FV_STREAM(stream)>>>(A, C, m, kk, n, Rt, BRt, beta,
                                                                  k, terms);
    fv_norm_b<<<1, FV_THREADS, 0, KCS_FV_STREAM(stream)>>>(sqB, kk, terms + 2 * m * k + 4 * m);
    return KCS_FV_LAST_ERROR();
}

/* v2: the tiled kernels (freivalds_tiled.cuh). Work: BRt[k kk], beta[kk],
 * sqB[kk], then the packed probes P[ceil(k/32) n] (32-bit words). */
int64_t KCS_FV_FN(freivalds_work_doubles_v2)(int64_t m, int64_t kk, int64_t n, int k)
{
    (void)m;
    int64_t words = (int64_t)((k + 31) / 32) * n;
    return (int64_t)k * kk + 2 * kk + (words + 1) / 2;
}

int KCS_FV_FN(freivalds_terms_v2)(void *stream, const float *A, const float *B, const float *C,
                                  int64_t m, int64_t kk, int64_t n, int k, uint64_t seed,
                                  uint64_t probe_stream, double *work, double *terms)
{
    if (m < 1 || kk < 1 || n < 1 || k < 1 || k > KCS_FV_DEV_MAX_PROBES || !A || !B || !C ||
        !work || !terms)
        return -1;
    KCS_FV_STREAM_T st = KCS_FV_STREAM(stream);
    double *BRt = work, *beta = BRt + (int64_t)k * kk, *sqB = beta + kk;
    uint32_t *P = (uint32_t *)(sqB + kk);
    int64_t words = (int64_t)((k + 31) / 32) * n;
    fv2_pack<<<(unsigned)((words + 255) / 256), 256, 0, st>>>(P, n, k, seed, probe_stream);
    int pb = kcs_fv2_sweep(k);
    for (int j0 = 0; j0 < k; j0 += pb) {
        switch (pb) {
        case 4:
            fv2_launch_sweep<4>(st, A, B, C, m, kk, n, k, j0, P, BRt, beta, sqB, terms);
            break;
        case 8:
            fv2_launch_sweep<8>(st, A, B, C, m, kk, n, k, j0, P, BRt, beta, sqB, terms);
            break;
        case 12:
            fv2_launch_sweep<12>(st, A, B, C, m, kk, n, k, j0, P, BRt, beta, sqB, terms);
            break;
        default:
            fv2_launch_sweep<16>(st, A, B, C, m, kk, n, k, j0, P, BRt, beta, sqB, terms);
            break;
        }
    }
    fv_norm_b<<<1, FV_THREADS, 0, st>>>(sqB, kk, terms + 2 * m * k + 4 * m);
    return KCS_FV_LAST_ERROR();
}

} // extern "C"
