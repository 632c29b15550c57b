/* attention.cl: O = softmax(Q*K^T * scale) * V per batch, Q mxd, K and V
 * nxd, O mxd (row-major, batch-major); scale = RN_acc(1/sqrt(d)) from the
 * host. Results in the accumulator type.
 *   own (unfused, three kernels, schedules honoured in every sum):
 *     attn_scores   S[b,i,j] = (sum_t q[i,t]*k[j,t]) * scale  -> acc_t buffer
 *     attn_softmax  P = exp(S - max) / sum(exp(S - max)), in place per row
 *     attn_pv       O[b,i,c] = sum_j P[b,i,j] * v[j,c]  (steps fma(p, v, s))
 *   native (fused, attn_fused): one work-group of KCS_AWG work-items per
 *     query row; keys in blocks of KCS_AWG, online softmax (running max and
 *     rescaled running sum), each work-item owns the output columns
 *     lid + w*KCS_AWG, w < KCS_ACOLS (so d <= KCS_AWG*KCS_ACOLS). */

#ifndef KCS_AWG
#define KCS_AWG 64
#endif
#ifndef KCS_ACOLS
#define KCS_ACOLS 16
#endif

/* global (n, m, batch) */
__kernel void attn_scores(IN_PTR Q, IN_PTR K, __global acc_t *S, long m, long n, long d,
                          acc_t scale, int kind, long param)
{
    long j = get_global_id(0), i = get_global_id(1), b = get_global_id(2);
    if (i >= m || j >= n)
        return;
    IN_PTR q = Q + (b * m + i) * d;
    IN_PTR kr = K + (b * n + j) * d;
#define QK_STEP(s, t) kcs_step((s), LD(q, (t)), LD(kr, (t)))
#define QK_LEAF(t) kcs_prod(LD(q, (t)), LD(kr, (t)))
    acc_t s;
    KCS_REDUCE(s, d, kind, param, QK_STEP, QK_LEAF)
#undef QK_STEP
#undef QK_LEAF
    S[(b * m + i) * n + j] = s * scale;
}

/* global (rows = batch*m), rows of length n */
__kernel void attn_softmax(__global acc_t *S, long rows, long n, int kind, long param)
{
    long r = get_global_id(0);
    if (r >= rows)
        return;
    __global acc_t *sr = S + r * n;
    acc_t mx = -INFINITY;
    for (long t = 0; t < n; t++)
        mx = fmax(mx, sr[t]);
#define SX_LEAF(t) exp(sr[(t)] - mx)
#define SX_STEP(s, t) ((s) + SX_LEAF(t))
    acc_t s;
    KCS_REDUCE(s, n, kind, param, SX_STEP, SX_LEAF)
#undef SX_LEAF
#undef SX_STEP
    for (long t = 0; t < n; t++)
        sr[t] = exp(sr[t] - mx) / s;
}

/* global (d, m, batch) */
__kernel void attn_pv(__global const acc_t *P, IN_PTR V, __global acc_t *O, long m, long n,
                      long d, int kind, long param)
{
    long c = get_global_id(0), i = get_global_id(1), b = get_global_id(2);
    if (i >= m || c >= d)
        return;
    __global const acc_t *p = P + (b * m + i) * n;
    IN_PTR v = V + b * n * d + c;
#define PV_STEP(s, t) fma(p[(t)], (acc_t)LD(v, (t)*d), (s))
#define PV_LEAF(t) (p[(t)] * (acc_t)LD(v, (t)*d))
    acc_t s;
    KCS_REDUCE(s, n, kind, param, PV_STEP, PV_LEAF)
#undef PV_STEP
#undef PV_LEAF
    O[(b * m + i) * d + c] = s;
}

/* global (m*KCS_AWG, batch), local (KCS_AWG, 1); ql: local acc_t[d] */
__kernel __attribute__((reqd_work_group_size(KCS_AWG, 1, 1))) void
attn_fused(IN_PTR Q, IN_PTR K, IN_PTR V, __global acc_t *O, long m, long n, long d, acc_t scale,
           __local acc_t *ql)
{
    __local acc_t pl[KCS_AWG];
    __local acc_t red[KCS_AWG];
    const long i = get_group_id(0), b = get_group_id(1);
    const int lid = get_local_id(0);
    IN_PTR q = Q + (b * m + i) * d;
    IN_PTR kb = K + b * n * d;
    IN_PTR vb = V + b * n * d;
    for (long c = lid; c < d; c += KCS_AWG)
        ql[c] = (acc_t)LD(q, c);
    barrier(CLK_LOCAL_MEM_FENCE);
    acc_t o[KCS_ACOLS];
    for (int w = 0; w < KCS_ACOLS; w++)
        o[w] = 0;
    acc_t mrun = -INFINITY, l = 0;
    for (long j0 = 0; j0 < n; j0 += KCS_AWG) {
        long j = j0 + lid;
        acc_t s = -INFINITY;
        if (j < n) {
            IN_PTR kr = kb + j * d;
            acc_t dot = 0;
            for (long t = 0; t < d; t++)
                dot = fma(ql[t], (acc_t)LD(kr, t), dot);
            s = dot * scale;
        }
        acc_t bm = kcs_wg_reduce(red, s, 1, KCS_AWG);
        acc_t mnew = fmax(mrun, bm);
        acc_t corr = exp(mrun - mnew);
        acc_t p = j < n ? exp(s - mnew) : (acc_t)0;
        pl[lid] = p;
        acc_t bs = kcs_wg_reduce(red, p, 0, KCS_AWG); /* its barriers publish pl */
        l = l * corr + bs;
        long cnt = n - j0 < KCS_AWG ? n - j0 : KCS_AWG;
        for (int w = 0; w < KCS_ACOLS; w++) {
            long c = lid + (long)w * KCS_AWG;
            if (c < d) {
                acc_t a = o[w] * corr;
                for (long jj = 0; jj < cnt; jj++)
                    a = fma(pl[jj], (acc_t)LD(vb, (j0 + jj) * d + c), a);
                o[w] = a;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        mrun = mnew;
    }
    for (int w = 0; w < KCS_ACOLS; w++) {
        long c = lid + (long)w * KCS_AWG;
        if (c < d)
            O[(b * m + i) * d + c] = o[w] / l;
    }
}
