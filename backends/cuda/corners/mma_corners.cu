/* mma_corners: hand-made corner vectors (tests/data/mmasim-corners/) run
 * through the matrix instructions themselves, in inline PTX, picked by the
 * GPU's compute capability:
 *   sm_80 and later   mma.sync.aligned.m16n8k{16,8}.row.col.f32 (fp16, bf16, tf32)
 *   sm_89 and later   mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
 *   sm_90a            wgmma.mma_async.sync.aligned.m64n8k{16,8,32} (A in registers,
 *                     B in shared memory, no swizzle)
 *   sm_100a           tcgen05.mma.cta_group::1.kind::{f16,tf32,f8f6f4} M=128 N=16
 *                     (A, B in shared memory, D in tensor memory)
 * Built by scripts/device-check with the device's nvcc (-gencode for
 * sm_80, sm_90a, sm_100a as that nvcc has them); CI compiles it for each
 * (tests/CMakeLists.txt, ctest cuda.mma_corners_compile).
 *
 * Usage: mma_corners IN OUT
 *   IN   lines "name format k c_bits a_code... b_code..." (format fp16, bf16,
 *        tf32 or e4m3; codes in hexadecimal; k codes each), written by
 *        scripts/mma-corners.py from corners.json
 *   OUT  lines "name instruction status d_bits": status ok (d_bits the fp32
 *        word of D[0][0]), unsupported (this GPU or build lacks the
 *        instruction) or layout-failed (the instruction's self-check failed:
 *        its answer is not reported). OUT is written to OUT.part and renamed
 *        when complete; an existing OUT is refused.
 * Each vector is row 0 of A and column 0 of B of one instruction tile, the
 * rest zeros, C[0][0] = c. A vector longer than the instruction's k is
 * chained as a kernel chains it: the instruction on k-slices in ascending
 * order, the D of one slice the C of the next (kept as fp32 in between).
 * Before the vectors, each instruction is checked on a full tile of small
 * integers (every output exact) against the host: a wrong fragment or
 * descriptor layout fails there, not silently in a corner; for wgmma and
 * tcgen05 both readings of the descriptors' two byte offsets are tried and
 * the one that passes is used (printed). Exit: 0 done, 1 a CUDA error,
 * 2 bad input, 3 no device. */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum fmt { F16 = 0, BF16 = 1, TF32 = 2, E4M3 = 3 };
static const char *fmt_names[] = {"fp16", "bf16", "tf32", "e4m3"};
static int fmt_bytes(int f) { return f == TF32 ? 4 : f == E4M3 ? 1 : 2; }

enum path { P_MMA = 0, P_WGMMA = 1, P_TCGEN05 = 2 };
/* Tiles: mma.sync 16 x 8, wgmma 64 x 8, tcgen05 128 x 16; k per instruction
 * = 32 bytes of operand: 16 (fp16, bf16), 8 (tf32), 32 (e4m3). */
static int tile_m(int p) { return p == P_MMA ? 16 : p == P_WGMMA ? 64 : 128; }
static int tile_n(int p) { return p == P_TCGEN05 ? 16 : 8; }
static int inst_k(int f) { return 32 / fmt_bytes(f); }

/* ---- device ---------------------------------------------------------------- */

/* Operands: A (M x K) and B (K x N, row-major) as raw codes of esize bytes,
 * C and D (M x N) fp32 words. status[0] = 1 when the instruction ran, 0
 * when this build for this GPU lacks it. */
__device__ inline uint32_t code_at(const uint8_t *x, int idx, int es)
{
    uint32_t v = 0;
    for (int b = 0; b < es; b++)
        v |= (uint32_t)x[idx * es + b] << (8 * b);
    return v;
}

/* A 32-bit register of 4/es consecutive elements along k, lowest first. */
__device__ inline uint32_t pack_a(const uint8_t *A, int K, int row, int col, int es)
{
    uint32_t r = 0;
    for (int e = 0; e < 4 / es; e++)
        r |= code_at(A, row * K + col + e, es) << (8 * es * e);
    return r;
}

__device__ inline uint32_t pack_b(const uint8_t *B, int N, int krow, int col, int es)
{
    uint32_t r = 0;
    for (int e = 0; e < 4 / es; e++)
        r |= code_at(B, (krow + e) * N + col, es) << (8 * es * e);
    return r;
}

/* The m16n8 fragments (PTX ISA, "matrix fragments for mma.m16n8kK"), for
 * rows row0 .. row0 + 15 of A and D. */
__device__ inline void frag_a(const uint8_t *A, int K, int es, int row0, uint32_t a[4])
{
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, E = 4 / es;
    for (int r = 0; r < 4; r++)
        a[r] = pack_a(A, K, row0 + g + 8 * (r & 1), E * t + (K / 2) * (r >> 1), es);
}

__device__ inline void frag_b(const uint8_t *B, int K, int N, int es, uint32_t b[2])
{
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, E = 4 / es;
    for (int r = 0; r < 2; r++)
        b[r] = pack_b(B, N, E * t + (K / 2) * r, g, es);
}

__device__ inline int frag_d_index(int row0, int i, int N)
{
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    return (row0 + g + 8 * (i >> 1)) * N + 2 * t + (i & 1);
}

__global__ void k_mma(int f, const uint8_t *A, const uint8_t *B, const float *C, float *D,
                      int *status)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const int es = f == TF32 ? 4 : f == E4M3 ? 1 : 2, K = 32 / es, N = 8;
    uint32_t a[4], b[2];
    frag_a(A, K, es, 0, a);
    frag_b(B, K, N, es, b);
    float d[4];
    for (int i = 0; i < 4; i++)
        d[i] = C[frag_d_index(0, i, N)];
    int ran = 1;
    if (f == F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else if (f == BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else if (f == TF32)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else {
#if __CUDA_ARCH__ >= 890
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
        ran = 0;
#endif
    }
    for (int i = 0; i < 4; i++)
        D[frag_d_index(0, i, N)] = d[i];
    if (threadIdx.x == 0)
        *status = ran;
#else
    if (threadIdx.x == 0)
        *status = 0;
#endif
}

/* No-swizzle K-major layout of an R x K operand in shared memory: core
 * matrices of 8 rows x 16 bytes, core (ri, ki) at (ri * nk + ki) * 128 with
 * nk = 32 bytes / 16 = 2 core matrices along k. */
__device__ inline int kmajor_off(int row, int k, int es)
{
    int kc = 16 / es;
    return ((row / 8) * 2 + k / kc) * 128 + (row % 8) * 16 + (k % kc) * es;
}

__device__ inline void fill_kmajor_rows(uint8_t *sm, const uint8_t *X, int rows, int K, int es,
                                        bool x_is_b, int N)
{
    /* x_is_b: X is B (K x N row-major), stored as N rows of K (K-major) */
    for (int idx = threadIdx.x; idx < rows * K; idx += blockDim.x) {
        int r = idx / K, k = idx % K;
        int src = x_is_b ? k * N + r : r * K + k;
        for (int b = 0; b < es; b++)
            sm[kmajor_off(r, k, es) + b] = X[src * es + b];
    }
}

__device__ inline uint64_t desc_common(const void *smem, uint32_t lbo, uint32_t sbo)
{
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem);
    return (uint64_t)((addr >> 4) & 0x3FFF) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 |
           (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
}

__global__ void k_wgmma(int f, int variant, const uint8_t *A, const uint8_t *B, const float *C,
                        float *D, int *status)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) uint8_t smB[256];
    const int es = f == TF32 ? 4 : f == E4M3 ? 1 : 2, K = 32 / es, N = 8;
    fill_kmajor_rows(smB, B, N, K, es, true, N);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    int w = threadIdx.x / 32;
    uint32_t a[4];
    frag_a(A, K, es, 16 * w, a);
    float d[4];
    for (int i = 0; i < 4; i++)
        d[i] = C[frag_d_index(16 * w, i, N)];
    /* variant 0: LBO = 128 (between the two core matrices along k), SBO = 256; 1: swapped */
    uint64_t desc = variant ? desc_common(smB, 256, 128) : desc_common(smB, 128, 256);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    if (f == F16)
        asm volatile("{ wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, %8, 1, 1, 1, 0; }"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
    else if (f == BF16)
        asm volatile("{ wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, %8, 1, 1, 1, 0; }"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
    else if (f == TF32)
        asm volatile("{ wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, %8, 1, 1, 1; }"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
    else
        asm volatile("{ wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, %8, 1, 1, 1; }"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int i = 0; i < 4; i++)
        D[frag_d_index(16 * w, i, N)] = d[i];
    if (threadIdx.x == 0)
        *status = 1;
#else
    (void)f, (void)variant, (void)A, (void)B, (void)C, (void)D;
    if (threadIdx.x == 0)
        *status = 0;
#endif
}

__global__ void k_tcgen05(int f, int variant, const uint8_t *A, const uint8_t *B,
                          const float *C, float *D, int *status)
{
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
    constexpr int M = 128, N = 16;
    __shared__ __align__(128) uint8_t smA[M * 32];
    __shared__ __align__(128) uint8_t smB[N * 32];
    __shared__ __align__(8) uint64_t mbar;
    __shared__ uint32_t tmem_base;
    const int es = f == TF32 ? 4 : f == E4M3 ? 1 : 2, K = 32 / es;
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    fill_kmajor_rows(smA, A, M, K, es, false, N);
    fill_kmajor_rows(smB, B, N, K, es, true, N);
    if (threadIdx.x == 0) {
        uint32_t mb = (uint32_t)__cvta_generic_to_shared(&mbar);
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(mb) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    if (w == 0) {
        uint32_t dst = (uint32_t)__cvta_generic_to_shared(&tmem_base);
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;"
                     ::"r"(dst) : "memory");
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
    }
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    const uint32_t taddr = tmem_base;
    const uint32_t my = taddr + ((uint32_t)(32 * w) << 16); /* this warp's 32 lanes = rows */
    uint32_t c[16];
    for (int j = 0; j < 16; j++)
        c[j] = __float_as_uint(C[(32 * w + lane) * N + j]);
    asm volatile("tcgen05.st.sync.aligned.32x32b.x16.b32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,"
                 "%11,%12,%13,%14,%15,%16};"
                 ::"r"(my), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(c[5]),
                 "r"(c[6]), "r"(c[7]), "r"(c[8]), "r"(c[9]), "r"(c[10]), "r"(c[11]), "r"(c[12]),
                 "r"(c[13]), "r"(c[14]), "r"(c[15])
                 : "memory");
    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    if (threadIdx.x == 0) {
        /* descriptors: bits 46-48 = 0b001 (sm_100), no swizzle */
        uint64_t ver = (uint64_t)1 << 46;
        uint32_t lbo = variant ? 256 : 128, sbo = variant ? 128 : 256;
        uint64_t da = desc_common(smA, lbo, sbo) | ver, db = desc_common(smB, lbo, sbo) | ver;
        /* instruction descriptor: D f32 (bits 4-5 = 1), A/B type (bits 7-9, 10-12),
         * K-major A and B, N >> 3 at bit 17, M >> 4 at bit 24 */
        uint32_t ty = f == BF16 ? 1 : f == TF32 ? 2 : 0; /* f16 0, bf16 1, tf32 2, e4m3 0 */
        uint32_t idesc = (1u << 4) | (ty << 7) | (ty << 10) | ((uint32_t)(N >> 3) << 17) |
                         ((uint32_t)(M >> 4) << 24);
        uint32_t accumulate = 1;
        if (f == TF32)
            asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                         "tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, p; }"
                         ::"r"(taddr), "l"(da), "l"(db), "r"(idesc), "r"(accumulate) : "memory");
        else if (f == E4M3)
            asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                         "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p; }"
                         ::"r"(taddr), "l"(da), "l"(db), "r"(idesc), "r"(accumulate) : "memory");
        else
            asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                         "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p; }"
                         ::"r"(taddr), "l"(da), "l"(db), "r"(idesc), "r"(accumulate) : "memory");
        uint32_t mb = (uint32_t)__cvta_generic_to_shared(&mbar);
        asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                     ::"r"(mb) : "memory");
    }
    {
        uint32_t mb = (uint32_t)__cvta_generic_to_shared(&mbar), done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                         "selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(mb) : "memory");
    }
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    uint32_t d[16];
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,"
                 "%11,%12,%13,%14,%15}, [%16];"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]),
                   "=r"(d[6]), "=r"(d[7]), "=r"(d[8]), "=r"(d[9]), "=r"(d[10]), "=r"(d[11]),
                   "=r"(d[12]), "=r"(d[13]), "=r"(d[14]), "=r"(d[15])
                 : "r"(my) : "memory");
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
    for (int j = 0; j < 16; j++)
        D[(32 * w + lane) * N + j] = __uint_as_float(d[j]);
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    if (w == 0)
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" ::"r"(taddr)
                     : "memory");
    if (threadIdx.x == 0)
        *status = 1;
#else
    (void)f, (void)variant, (void)A, (void)B, (void)C, (void)D;
    if (threadIdx.x == 0)
        *status = 0;
#endif
}

/* ---- host ------------------------------------------------------------------ */

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 1;
    fprintf(stderr, "mma_corners: %s: %s\n", what, cudaGetErrorString(e));
    return 0;
}

typedef struct dev_bufs {
    uint8_t *A, *B;
    float *C, *D;
    int *status;
} dev_bufs;

/* One instruction on one tile (host arrays: A M x K, B K x N codes, C M x N);
 * D M x N out. Returns 1 ran, 0 unsupported, -1 CUDA error. */
static int run_tile(int path, int variant, int f, const uint8_t *A, const uint8_t *B,
                    const float *C, float *D, dev_bufs *db)
{
    int M = tile_m(path), N = tile_n(path), K = inst_k(f), es = fmt_bytes(f);
    if (!cuda_ok(cudaMemcpy(db->A, A, (size_t)(M * K * es), cudaMemcpyHostToDevice), "copy A") ||
        !cuda_ok(cudaMemcpy(db->B, B, (size_t)(K * N * es), cudaMemcpyHostToDevice), "copy B") ||
        !cuda_ok(cudaMemcpy(db->C, C, sizeof(float) * (size_t)(M * N), cudaMemcpyHostToDevice),
                 "copy C") ||
        !cuda_ok(cudaMemset(db->status, 0, sizeof(int)), "memset"))
        return -1;
    if (path == P_MMA)
        k_mma<<<1, 32>>>(f, db->A, db->B, db->C, db->D, db->status);
    else if (path == P_WGMMA)
        k_wgmma<<<1, 128>>>(f, variant, db->A, db->B, db->C, db->D, db->status);
    else
        k_tcgen05<<<1, 128>>>(f, variant, db->A, db->B, db->C, db->D, db->status);
    int st = 0;
    if (!cuda_ok(cudaGetLastError(), "launch") || !cuda_ok(cudaDeviceSynchronize(), "kernel") ||
        !cuda_ok(cudaMemcpy(&st, db->status, sizeof st, cudaMemcpyDeviceToHost), "status") ||
        !cuda_ok(cudaMemcpy(D, db->D, sizeof(float) * (size_t)(M * N), cudaMemcpyDeviceToHost),
                 "copy D"))
        return -1;
    return st ? 1 : 0;
}

/* Small integers as codes of f (exact: |a|, |b| <= 3; products and sums of
 * a tile exact in fp32). */
static uint32_t small_code(int f, int v)
{
    float x = (float)v;
    uint32_t u;
    memcpy(&u, &x, 4);
    if (f == TF32)
        return u;
    if (f == BF16)
        return u >> 16;
    if (f == F16) { /* |v| <= 3: exponent 15 + e, two fraction bits */
        if (v == 0)
            return 0;
        uint32_t s = v < 0 ? 0x8000u : 0, a = (uint32_t)(v < 0 ? -v : v);
        return s | (a == 1 ? 0x3C00u : a == 2 ? 0x4000u : 0x4200u);
    }
    if (v == 0) /* e4m3: bias 7 */
        return 0;
    uint32_t s = v < 0 ? 0x80u : 0, a = (uint32_t)(v < 0 ? -v : v);
    return s | (a == 1 ? 0x38u : a == 2 ? 0x40u : 0x44u);
}

static void put_code(uint8_t *x, int idx, int es, uint32_t code)
{
    for (int b = 0; b < es; b++)
        x[idx * es + b] = (uint8_t)(code >> (8 * b));
}

/* The full-tile check: every output of the instruction equals the host's
 * exact product. Returns 1 pass, 0 fail, -1 CUDA error, 2 unsupported. */
static int layout_check(int path, int variant, int f, dev_bufs *db, int *bad_p)
{
    int M = tile_m(path), N = tile_n(path), K = inst_k(f), es = fmt_bytes(f);
    uint8_t *A = (uint8_t *)calloc((size_t)(M * K), (size_t)es);
    uint8_t *B = (uint8_t *)calloc((size_t)(K * N), (size_t)es);
    float *C = (float *)calloc((size_t)(M * N), sizeof(float));
    float *D = (float *)calloc((size_t)(M * N), sizeof(float));
    int *av = (int *)calloc((size_t)(M * K), sizeof(int)), *bv = (int *)calloc((size_t)(K * N), sizeof(int));
    if (!A || !B || !C || !D || !av || !bv) {
        fprintf(stderr, "mma_corners: out of memory\n");
        exit(1);
    }
    uint32_t s = 12345u + (uint32_t)(path * 7 + f);
    for (int i = 0; i < M * K; i++) {
        s = s * 1664525u + 1013904223u;
        av[i] = (int)((s >> 24) % 7) - 3;
        put_code(A, i, es, small_code(f, av[i]));
    }
    for (int i = 0; i < K * N; i++) {
        s = s * 1664525u + 1013904223u;
        bv[i] = (int)((s >> 24) % 7) - 3;
        put_code(B, i, es, small_code(f, bv[i]));
    }
    for (int i = 0; i < M * N; i++)
        C[i] = (float)(i % 5) - 2.0f;
    int rc = run_tile(path, variant, f, A, B, C, D, db), bad = 0;
    if (rc == 1) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                int e = (int)C[i * N + j];
                for (int k = 0; k < K; k++)
                    e += av[i * K + k] * bv[k * N + j];
                bad += D[i * N + j] != (float)e;
            }
        rc = bad ? 0 : 1;
    } else if (rc == 0) {
        rc = 2;
    }
    *bad_p = bad;
    free(A), free(B), free(C), free(D), free(av), free(bv);
    return rc;
}

typedef struct vec {
    char name[96];
    int f, k;
    uint32_t c;
    uint32_t *a, *b;
} vec;

static int parse_fmt(const char *s)
{
    for (int f = 0; f < 4; f++)
        if (!strcmp(s, fmt_names[f]))
            return f;
    return -1;
}

static const char *inst_name(int path, int f)
{
    static const char *n[3][4] = {
        {"mma.sync.m16n8k16.f32.f16", "mma.sync.m16n8k16.f32.bf16", "mma.sync.m16n8k8.f32.tf32",
         "mma.sync.m16n8k32.f32.e4m3"},
        {"wgmma.m64n8k16.f32.f16", "wgmma.m64n8k16.f32.bf16", "wgmma.m64n8k8.f32.tf32",
         "wgmma.m64n8k32.f32.e4m3"},
        {"tcgen05.mma.m128n16k16.f32.f16", "tcgen05.mma.m128n16k16.f32.bf16",
         "tcgen05.mma.m128n16k8.f32.tf32", "tcgen05.mma.m128n16k32.f32.e4m3"}};
    return n[path][f];
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mma_corners IN OUT\n");
        return 2;
    }
    struct stat st;
    if (stat(argv[2], &st) == 0) {
        fprintf(stderr, "mma_corners: %s exists (not overwritten)\n", argv[2]);
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        fprintf(stderr, "mma_corners: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    vec v[64];
    int nv = 0, line = 0;
    char fs[16];
    while (nv < 64) {
        vec *x = &v[nv];
        int r = fscanf(in, "%95s %15s %d %x", x->name, fs, &x->k, &x->c);
        if (r == EOF)
            break;
        line++;
        x->f = r == 4 ? parse_fmt(fs) : -1;
        if (r != 4 || x->f < 0 || x->k < 1 || x->k > 1024) {
            fprintf(stderr, "mma_corners: %s: vector %d: bad header (name format k c_bits)\n",
                    argv[1], line);
            return 2;
        }
        x->a = (uint32_t *)calloc((size_t)x->k, 4);
        x->b = (uint32_t *)calloc((size_t)x->k, 4);
        for (int i = 0; i < 2 * x->k; i++)
            if (fscanf(in, "%x", i < x->k ? &x->a[i] : &x->b[i - x->k]) != 1) {
                fprintf(stderr, "mma_corners: %s: vector %d (%s): expected %d codes\n", argv[1],
                        line, x->name, 2 * x->k);
                return 2;
            }
        nv++;
    }
    fclose(in);
    if (nv == 0) {
        fprintf(stderr, "mma_corners: %s: no vectors\n", argv[1]);
        return 2;
    }

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        fprintf(stderr, "mma_corners: no device (cudaGetDeviceCount: %s)\n",
                cudaGetErrorString(cudaGetLastError()));
        return 3;
    }
    cudaDeviceProp prop;
    if (!cuda_ok(cudaGetDeviceProperties(&prop, 0), "properties"))
        return 1;
    int cc = prop.major * 10 + prop.minor;
    printf("mma_corners: %s, compute capability %d.%d\n", prop.name, prop.major, prop.minor);
    dev_bufs db;
    if (!cuda_ok(cudaMalloc(&db.A, 128 * 32), "malloc") || !cuda_ok(cudaMalloc(&db.B, 16 * 32), "malloc") ||
        !cuda_ok(cudaMalloc(&db.C, 128 * 16 * 4), "malloc") ||
        !cuda_ok(cudaMalloc(&db.D, 128 * 16 * 4), "malloc") ||
        !cuda_ok(cudaMalloc(&db.status, 4), "malloc"))
        return 1;

    char part[4096];
    snprintf(part, sizeof part, "%s.part", argv[2]);
    FILE *out = fopen(part, "w");
    if (!out) {
        fprintf(stderr, "mma_corners: %s: %s\n", part, strerror(errno));
        return 1;
    }
    fprintf(out, "# device %s cc %d.%d\n", prop.name, prop.major, prop.minor);
    /* the paths this GPU has: mma.sync from 8.0; wgmma on 9.0; tcgen05 on 10.x */
    int paths[3], np = 0;
    if (cc >= 80)
        paths[np++] = P_MMA;
    if (cc == 90)
        paths[np++] = P_WGMMA;
    if (cc == 100 || cc == 103)
        paths[np++] = P_TCGEN05;
    for (int pi = 0; pi < np; pi++) {
        int path = paths[pi];
        for (int f = 0; f < 4; f++) {
            int used = -1, bad = 0;
            for (int var = 0; var < (path == P_MMA ? 1 : 2) && used < 0; var++) {
                int rc = layout_check(path, var, f, &db, &bad);
                if (rc < 0) {
                    fclose(out);
                    return 1;
                }
                fprintf(out, "# layout %s variant %d: %s (%d outputs differ)\n", inst_name(path, f),
                        var, rc == 1 ? "ok" : rc == 2 ? "unsupported" : "FAILED", bad);
                if (rc == 1)
                    used = var;
                if (rc == 2)
                    used = -2;
            }
            for (int i = 0; i < nv; i++) {
                if (v[i].f != f)
                    continue;
                if (used < 0) {
                    fprintf(out, "%s %s %s -\n", v[i].name, inst_name(path, f),
                            used == -2 ? "unsupported" : "layout-failed");
                    continue;
                }
                int M = tile_m(path), N = tile_n(path), K = inst_k(f), es = fmt_bytes(f);
                uint8_t *A = (uint8_t *)calloc((size_t)(M * K), (size_t)es);
                uint8_t *B = (uint8_t *)calloc((size_t)(K * N), (size_t)es);
                float *C = (float *)calloc((size_t)(M * N), sizeof(float));
                float *D = (float *)calloc((size_t)(M * N), sizeof(float));
                memcpy(&C[0], &v[i].c, 4);
                int rc = 1;
                for (int k0 = 0; k0 < v[i].k && rc == 1; k0 += K) { /* chained slices */
                    memset(A, 0, (size_t)(M * K * es));
                    memset(B, 0, (size_t)(K * N * es));
                    for (int kk = 0; kk < K && k0 + kk < v[i].k; kk++) {
                        put_code(A, kk, es, v[i].a[k0 + kk]);         /* row 0 */
                        put_code(B, kk * N, es, v[i].b[k0 + kk]);     /* column 0 */
                    }
                    rc = run_tile(path, used, f, A, B, C, D, &db);
                    C[0] = D[0];
                }
                if (rc < 0) {
                    fclose(out);
                    return 1;
                }
                uint32_t d;
                memcpy(&d, &D[0], 4);
                if (rc == 1)
                    fprintf(out, "%s %s ok 0x%08x\n", v[i].name, inst_name(path, f), d);
                else
                    fprintf(out, "%s %s unsupported -\n", v[i].name, inst_name(path, f));
                free(A), free(B), free(C), free(D);
            }
        }
    }
    if (fclose(out) != 0 || rename(part, argv[2]) != 0) {
        fprintf(stderr, "mma_corners: cannot complete %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    printf("mma_corners: %d vectors, results in %s\n", nv, argv[2]);
    return 0;
}
