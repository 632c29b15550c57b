/* attention.cl: O = softmax(Q*K^T * scale) * V per batch, Q m x d, K and V
 * n x d, O m x d (row-major, batch-major), d = call->k; scale =
 * RN_w(1.0 / sqrt((double)d)) from the host, in the working format (val_t):
 * the expression every backend and the oracle use (two fp64 roundings: in
 * fp64 it can be 1 ulp from the correctly rounded 1/sqrt(d)). The cpu
 * backend's definitions (backends/cpu/attention.c):
 *   own (unfused, three kernels, schedules honoured in every sum):
 *     attn_scores   S[b,i,j] = RN_w(sum_t q[i,t]*k[j,t] * scale)  (val_t)
 *     attn_softmax  P = softmax(S) row-wise, in place (as rows.cl)
 *     attn_pv       O[b,i,c] = sum_j P[b,i,j]*v[j,c]  (fma steps into acc)
 *   fused (attn_fused; the native variant and "fused"): one work-group of
 *     KCS_AWG work-items per query row streams the keys in blocks of B:
 *       s_j  = score (the dot under (kind, param): sequential for native)
 *       mnew = max(mx, max_block s_j)
 *       corr = exp(RN_w(mx - mnew))        (0 for the first block)
 *       p_j  = exp(RN_w(s_j - mnew))
 *       l    = RN_acc(RN_acc(l*corr) + [sum_block p_j]_acc)
 *       o_c  = RN_acc(RN_acc(o_c*corr) + [sum_block p_j*v_jc]_acc)
 *     [.]_acc: sequential, one rounding per addition; finally
 *     O = RN_w(o_c / l). Work-item lid owns the output columns
 *     lid + w*KCS_AWG, w < KCS_ACOLS (so d <= KCS_AWG*KCS_ACOLS). */

#ifndef KCS_AWG
#define KCS_AWG 64
#endif
#ifndef KCS_ACOLS
#define KCS_ACOLS 16
#endif

/* global (n, m, batch) */
__kernel void attn_scores(IN_PTR Q, IN_PTR K, __global val_t *S, long m, long n, long d,
                          val_t scale, int kind, long param)
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
    S[(b * m + i) * n + j] = KCS_WMUL(s, scale);
}

/* global (rows = batch*m), rows of length n */
__kernel void attn_softmax(__global val_t *S, long rows, long n, int kind, long param)
{
    long r = get_global_id(0);
    if (r >= rows)
        return;
    __global val_t *sr = S + r * n;
    val_t mx = -INFINITY;
    for (long t = 0; t < n; t++)
        mx = fmax(mx, sr[t]);
#define SX_E(t) exp((val_t)(sr[(t)] - mx))
#define SX_STEP(s, t) kcs_step1((s), SX_E(t))
#define SX_LEAF(t) ((acc_t)SX_E(t))
    acc_t s;
    KCS_REDUCE(s, n, kind, param, SX_STEP, SX_LEAF)
    for (long t = 0; t < n; t++)
        sr[t] = KCS_WDIV(SX_E(t), s);
#undef SX_E
#undef SX_STEP
#undef SX_LEAF
}

/* global (d, m, batch) */
__kernel void attn_pv(__global const val_t *P, IN_PTR V, __global out_t *O, long m, long n,
                      long d, int kind, long param)
{
    long c = get_global_id(0), i = get_global_id(1), b = get_global_id(2);
    if (i >= m || c >= d)
        return;
    __global const val_t *p = P + (b * m + i) * n;
    IN_PTR v = V + b * n * d + c;
#define PV_STEP(s, t) kcs_step((s), p[(t)], LD(v, (t)*d))
#define PV_LEAF(t) kcs_prod(p[(t)], LD(v, (t)*d))
    acc_t s;
    KCS_REDUCE(s, n, kind, param, PV_STEP, PV_LEAF)
#undef PV_STEP
#undef PV_LEAF
    O[(b * m + i) * d + c] = s;
}

/* global (m*KCS_AWG, batch), local (KCS_AWG, 1); ql: local val_t[d], pl:
 * local val_t[B] */
__kernel __attribute__((reqd_work_group_size(KCS_AWG, 1, 1))) void
attn_fused(IN_PTR Q, IN_PTR K, IN_PTR V, __global out_t *O, long m, long n, long d, val_t scale,
           long B, int kind, long param, __local val_t *ql, __local val_t *pl)
{
    __local val_t red[KCS_AWG];
    const long i = get_group_id(0), b = get_group_id(1);
    const int lid = get_local_id(0);
    IN_PTR q = Q + (b * m + i) * d;
    IN_PTR kb = K + b * n * d;
    IN_PTR vb = V + b * n * d;
    for (long c = lid; c < d; c += KCS_AWG)
        ql[c] = LD(q, c);
    barrier(CLK_LOCAL_MEM_FENCE);
    acc_t o[KCS_ACOLS];
    for (int w = 0; w < KCS_ACOLS; w++)
        o[w] = 0;
    val_t mx = -INFINITY;
    acc_t l = 0;
    for (long j0 = 0; j0 < n; j0 += B) {
        long cnt = n - j0 < B ? n - j0 : B;
        val_t bm = -INFINITY;
        for (long jj = lid; jj < cnt; jj += KCS_AWG) {
            IN_PTR kr = kb + (j0 + jj) * d;
#define FK_STEP(s, t) kcs_step((s), ql[(t)], LD(kr, (t)))
#define FK_LEAF(t) kcs_prod(ql[(t)], LD(kr, (t)))
            acc_t s;
            KCS_REDUCE(s, d, kind, param, FK_STEP, FK_LEAF)
#undef FK_STEP
#undef FK_LEAF
            pl[jj] = KCS_WMUL(s, scale);
            bm = fmax(bm, pl[jj]);
        }
        bm = kcs_wg_max(red, bm, KCS_AWG);
        val_t mnew = fmax(mx, bm);
        val_t corr = j0 == 0 ? (val_t)0 : exp((val_t)(mx - mnew));
        for (long jj = lid; jj < cnt; jj += KCS_AWG)
            pl[jj] = exp((val_t)(pl[jj] - mnew));
        barrier(CLK_LOCAL_MEM_FENCE);
        acc_t bl = 0;
        for (long jj = 0; jj < cnt; jj++)
            bl = kcs_step1(bl, pl[jj]);
        l = KCS_AMUL(l, corr) + bl;
        for (int w = 0; w < KCS_ACOLS; w++) {
            long c = lid + (long)w * KCS_AWG;
            if (c < d) {
                acc_t bo = 0;
                for (long jj = 0; jj < cnt; jj++)
                    bo = kcs_step(bo, pl[jj], LD(vb, (j0 + jj) * d + c));
                o[w] = KCS_AMUL(o[w], corr) + bo;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        mx = mnew;
    }
    for (int w = 0; w < KCS_ACOLS; w++) {
        long c = lid + (long)w * KCS_AWG;
        if (c < d)
            O[(b * m + i) * d + c] = KCS_WDIV(o[w], l);
    }
}
