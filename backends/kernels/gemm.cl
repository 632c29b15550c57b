/* gemm.cl: D = C + A*B (A mxk, B kxn, C and D mxn, row-major), batched
 * over get_global_id(2) / get_group_id(2) with element strides sa, sb, sd.
 * D holds the accumulated values (out_t); the host rounds to dtype_out.
 * has_c == 0: C is not read (may be NULL). */

/* own, sequential / pairwise / blocked / splitk inside one work-item:
 * one work-item per output element, global (n, m, batch). */
__kernel void gemm_own(IN_PTR A, IN_PTR B, IN_PTR C, __global out_t *D, long m, long n, long k,
                       long sa, long sb, long sd, int has_c, int kind, long param)
{
    long j = get_global_id(0), i = get_global_id(1), b = get_global_id(2);
    if (i >= m || j >= n)
        return;
    IN_PTR a = A + b * sa + i * k;
    IN_PTR bb = B + b * sb + j;
#define GEMM_STEP(s, t) kcs_step((s), LD(a, (t)), LD(bb, (t)*n))
#define GEMM_LEAF(t) kcs_prod(LD(a, (t)), LD(bb, (t)*n))
    acc_t s;
    KCS_REDUCE(s, k, kind, param, GEMM_STEP, GEMM_LEAF)
#undef GEMM_STEP
#undef GEMM_LEAF
    if (has_c)
        s = kcs_step1(s, LD(C, b * sd + i * n + j));
    D[b * sd + i * n + j] = s;
}

/* own splitk:S across work-items: partial p of output (i, j) sums the
 * terms [p*chunk, min((p+1)*chunk, k)) sequentially into W[p][b][i][j];
 * global (n, m, batch*S). gemm_splitk_sum then adds the S partials in order
 * from 0 (the same value as KCS_REDUCE's splitk inside one work-item). */
__kernel void gemm_splitk_part(IN_PTR A, IN_PTR B, __global acc_t *W, long m, long n, long k,
                               long sa, long sb, long batch, long chunk)
{
    long j = get_global_id(0), i = get_global_id(1);
    long bp = get_global_id(2), b = bp % batch, p = bp / batch;
    if (i >= m || j >= n)
        return;
    IN_PTR a = A + b * sa + i * k;
    IN_PTR bb = B + b * sb + j;
    long lo = p * chunk, hi = lo + chunk < k ? lo + chunk : k;
    acc_t s = 0;
    for (long t = lo; t < hi; t++)
        s = kcs_step(s, LD(a, t), LD(bb, t * n));
    W[(p * batch + b) * m * n + i * n + j] = s;
}

__kernel void gemm_splitk_sum(__global const acc_t *W, IN_PTR C, __global out_t *D, long m,
                              long n, long sd, long batch, long splits, int has_c)
{
    long j = get_global_id(0), i = get_global_id(1), b = get_global_id(2);
    if (i >= m || j >= n)
        return;
    acc_t s = 0;
    for (long p = 0; p < splits; p++)
        s = s + W[(p * batch + b) * m * n + i * n + j];
    if (has_c)
        s = kcs_step1(s, LD(C, b * sd + i * n + j));
    D[b * sd + i * n + j] = s;
}

/* native: tiled with local memory and register blocking. A work-group of
 * (KCS_TS/KCS_WPT)^2 work-items computes a KCS_TSxKCS_TS tile of D; each
 * work-item KCS_WPTxKCS_WPT outputs strided by KCS_TS/KCS_WPT (conflict-free
 * local reads, coalesced stores). Products accumulate with fma in acc_t;
 * out-of-range elements load as 0. Global (ceil(n/TS)*RTS, ceil(m/TS)*RTS,
 * batch), local (RTS, RTS, 1). */
#ifndef KCS_TS
#define KCS_TS 64
#endif
#ifndef KCS_TSK
#define KCS_TSK 16
#endif
#ifndef KCS_WPT
#define KCS_WPT 4
#endif
#define KCS_RTS (KCS_TS / KCS_WPT)

__kernel __attribute__((reqd_work_group_size(KCS_RTS, KCS_RTS, 1))) void
gemm_tiled(IN_PTR A, IN_PTR B, IN_PTR C, __global out_t *D, long m, long n, long k, long sa,
           long sb, long sd, int has_c)
{
    __local acc_t As[KCS_TSK][KCS_TS];
    __local acc_t Bs[KCS_TSK][KCS_TS];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const long b = get_group_id(2);
    const long i0 = get_group_id(1) * KCS_TS, j0 = get_group_id(0) * KCS_TS;
    const int tid = ty * KCS_RTS + tx;
    IN_PTR a = A + b * sa;
    IN_PTR bm = B + b * sb;
    acc_t r[KCS_WPT][KCS_WPT];
    for (int wi = 0; wi < KCS_WPT; wi++)
        for (int wj = 0; wj < KCS_WPT; wj++)
            r[wi][wj] = 0;
    for (long t0 = 0; t0 < k; t0 += KCS_TSK) {
        /* cooperative loads: TS*TSK elements of each tile, RTS*RTS loaders */
        for (int e = tid; e < KCS_TS * KCS_TSK; e += KCS_RTS * KCS_RTS) {
            int row = e / KCS_TSK, col = e % KCS_TSK; /* A tile: TS rows x TSK cols */
            long gi = i0 + row, gk = t0 + col;
            As[col][row] = (gi < m && gk < k) ? (acc_t)LD(a, gi * k + gk) : (acc_t)0;
            int krow = e / KCS_TS, ncol = e % KCS_TS; /* B tile: TSK rows x TS cols */
            long gk2 = t0 + krow, gj = j0 + ncol;
            Bs[krow][ncol] = (gk2 < k && gj < n) ? (acc_t)LD(bm, gk2 * n + gj) : (acc_t)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < KCS_TSK; kk++) {
            acc_t av[KCS_WPT], bv[KCS_WPT];
            for (int w = 0; w < KCS_WPT; w++) {
                av[w] = As[kk][ty + w * KCS_RTS];
                bv[w] = Bs[kk][tx + w * KCS_RTS];
            }
            for (int wi = 0; wi < KCS_WPT; wi++)
                for (int wj = 0; wj < KCS_WPT; wj++)
                    r[wi][wj] = fma(av[wi], bv[wj], r[wi][wj]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int wi = 0; wi < KCS_WPT; wi++) {
        long gi = i0 + ty + wi * KCS_RTS;
        if (gi >= m)
            continue;
        for (int wj = 0; wj < KCS_WPT; wj++) {
            long gj = j0 + tx + wj * KCS_RTS;
            if (gj >= n)
                continue;
            acc_t s = r[wi][wj];
            if (has_c)
                s = kcs_step1(s, LD(C, b * sd + gi * n + gj));
            D[b * sd + gi * n + gj] = s;
        }
    }
}

/* native on CPU devices (PoCL): explicit vectors instead of local memory.
 * A work-item computes KCS_VM rows × KCS_VW columns of D, one acc vector
 * per row, stepping k in order with fma (the caches do the tiling).
 * Global (ceil(m/VM), ceil(n/VW), batch): neighbouring work-items share
 * one column strip of B, which stays in cache. */
#ifndef KCS_VM
#define KCS_VM 8
#endif
#if KCS_TACC == 1
#define KCS_VW 8
typedef double8 accv_t;
#define VSTORE vstore8
#define VLOAD vload8
#else
#define KCS_VW 16
typedef float16 accv_t;
#define VSTORE vstore16
#define VLOAD vload16
#endif
#if KCS_TIN == 1 && KCS_TACC == 1
#define LDV(p, off) vload8(0, (p) + (off))
#elif KCS_TIN == 1
#define LDV(p, off) convert_float16(vload16(0, (p) + (off)))
#elif KCS_TIN == 2 && KCS_TACC == 1
#define LDV(p, off) convert_double8(vload_half8(0, (p) + (off)))
#elif KCS_TIN == 2
#define LDV(p, off) vload_half16(0, (p) + (off))
#elif KCS_TIN == 3 && KCS_TACC == 1
#define LDV(p, off) convert_double8(as_float8(convert_uint8(vload8(0, (p) + (off))) << 16))
#elif KCS_TIN == 3
#define LDV(p, off) as_float16(convert_uint16(vload16(0, (p) + (off))) << 16)
#elif KCS_TACC == 1
#define LDV(p, off) convert_double8(vload8(0, (p) + (off)))
#else
#define LDV(p, off) vload16(0, (p) + (off))
#endif

__kernel void gemm_vec(IN_PTR A, IN_PTR B, IN_PTR C, __global out_t *D, long m, long n, long k,
                       long sa, long sb, long sd, int has_c)
{
    const long i0 = get_global_id(0) * KCS_VM, j0 = get_global_id(1) * KCS_VW;
    const long b = get_global_id(2);
    if (i0 >= m || j0 >= n)
        return;
    IN_PTR a = A + b * sa + i0 * k;
    IN_PTR bm = B + b * sb + j0;
    const int full = j0 + KCS_VW <= n;
    const int rows = m - i0 < KCS_VM ? (int)(m - i0) : KCS_VM;
    accv_t r[KCS_VM];
    for (int w = 0; w < KCS_VM; w++)
        r[w] = 0;
    if (full && rows == KCS_VM) {
        for (long t = 0; t < k; t++) {
            accv_t bv = LDV(bm, t * n);
            for (int w = 0; w < KCS_VM; w++)
                r[w] = fma((accv_t)(acc_t)LD(a, w * k + t), bv, r[w]);
        }
    } else { /* edge tiles: missing rows and columns read as 0 */
        for (long t = 0; t < k; t++) {
            acc_t tmp[KCS_VW];
            for (int e = 0; e < KCS_VW; e++)
                tmp[e] = j0 + e < n ? (acc_t)LD(bm, t * n + e) : (acc_t)0;
            accv_t bv = VLOAD(0, tmp);
            for (int w = 0; w < KCS_VM; w++) {
                acc_t av = w < rows ? (acc_t)LD(a, w * k + t) : (acc_t)0;
                r[w] = fma((accv_t)av, bv, r[w]);
            }
        }
    }
    for (int w = 0; w < rows; w++) {
        __global out_t *d = D + b * sd + (i0 + w) * n + j0;
        acc_t out[KCS_VW];
        VSTORE(r[w], 0, out);
        for (int e = 0; e < KCS_VW && j0 + e < n; e++) {
            acc_t s = out[e];
            if (has_c)
                s = kcs_step1(s, LD(C, b * sd + (i0 + w) * n + j0 + e));
            d[e] = s;
        }
    }
}
