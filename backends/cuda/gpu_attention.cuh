/* gpu_attention.cuh: O = softmax(Q·K^T·scale)·V per batch (attention.cl).
 * Q m×d, K and V n×d, O m×d, row-major, batch-major; scale = RN_acc(1/sqrt(d))
 * from the host. Included inside namespace KCS_GPU_NS by gpu_kernels.cuh.
 *   own / unfused: attn_scores (schedule), softmax_own in place on the
 *     scores (schedule), attn_pv (schedule, steps fma(p, v, s));
 *   native / fused: attn_fused, one block of 64 threads per query row, keys
 *     in blocks of 64, online softmax (running max, rescaled running sum),
 *     thread lid owns output columns lid + 64*w, w < 16 (d <= 1024). */

#define KCS_AWG KCS_GPU_TREE_THREADS
#define KCS_ACOLS 16

/* global batch*m*n */
template <int TIN, int TACC>
__global__ void attn_scores(kcs_gpu_red r, int64_t batch, int64_t m, int64_t n, int64_t d,
                            double scale, const void *Q, const void *K, void *S)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    int64_t id = KCS_GID();
    if (id >= batch * m * n)
        return;
    int64_t j = id % n, i = (id / n) % m, b = id / (m * n);
    AR ar(r);
    int64_t qo = (b * m + i) * d, ko = (b * n + j) * d;
    acc s = kcs_reduce(
        ar, d, r.sched, r.param,
        [&](acc s0, int64_t t) {
            return ar.step(s0, In<TIN>::ld(Q, qo + t), In<TIN>::ld(K, ko + t));
        },
        [&](int64_t t) { return ar.prod(In<TIN>::ld(Q, qo + t), In<TIN>::ld(K, ko + t)); });
    ((acc *)S)[id] = ar.mul(s, (acc)scale);
}

/* global batch*m*d */
template <int TIN, int TACC>
__global__ void attn_pv(kcs_gpu_red r, int64_t batch, int64_t m, int64_t n, int64_t d,
                        const void *P, const void *V, void *O)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    int64_t id = KCS_GID();
    if (id >= batch * m * d)
        return;
    int64_t c = id % d, i = (id / d) % m, b = id / (m * d);
    AR ar(r);
    const acc *p = (const acc *)P + (b * m + i) * n;
    int64_t vo = b * n * d + c;
    acc s = kcs_reduce(
        ar, n, r.sched, r.param,
        [&](acc s0, int64_t t) {
            acc v = ar.load(In<TIN>::ld(V, vo + t * d));
            if constexpr (TACC == KCS_GPU_ACC_NARROW)
                return ar.add_exact(s0, p[t] * v);
            else
                return kfma(p[t], v, s0);
        },
        [&](int64_t t) { return ar.mul(p[t], ar.load(In<TIN>::ld(V, vo + t * d))); });
    ((acc *)O)[id] = s;
}

/* grid (m, batch), block 64, dynamic shared memory d accumulators */
template <int TIN, int TACC>
__global__ void attn_fused(int64_t m, int64_t n, int64_t d, double scale_d, const void *Q,
                           const void *K, const void *V, void *O)
{
    typedef typename AccT<TACC>::t acc;
    extern __shared__ double kcs_dyn_shared[];
    acc *ql = (acc *)kcs_dyn_shared;
    __shared__ acc pl[KCS_AWG];
    __shared__ acc red[KCS_AWG];
    const acc scale = (acc)scale_d;
    const int64_t i = blockIdx.x, b = blockIdx.y;
    const int lid = threadIdx.x;
    const int64_t qo = (b * m + i) * d, kb = b * n * d, vb = b * n * d;
    for (int64_t c = lid; c < d; c += KCS_AWG)
        ql[c] = (acc)In<TIN>::ld(Q, qo + c);
    __syncthreads();
    acc o[KCS_ACOLS];
    for (int w = 0; w < KCS_ACOLS; w++)
        o[w] = 0;
    acc mrun = -INFINITY, l = 0;
    for (int64_t j0 = 0; j0 < n; j0 += KCS_AWG) {
        int64_t j = j0 + lid;
        acc s = -INFINITY;
        if (j < n) {
            acc dot = 0;
            for (int64_t t = 0; t < d; t++)
                dot = kfma(ql[t], (acc)In<TIN>::ld(K, kb + j * d + t), dot);
            s = dot * scale;
        }
        acc bm = tree_reduce(red, s, 1);
        acc mnew = kmax(mrun, bm);
        acc corr = kexp(mrun - mnew);
        acc p = j < n ? kexp(s - mnew) : (acc)0;
        pl[lid] = p;
        acc bs = tree_reduce(red, p, 0); /* its barriers publish pl */
        l = l * corr + bs;
        int64_t cnt = n - j0 < KCS_AWG ? n - j0 : KCS_AWG;
        for (int w = 0; w < KCS_ACOLS; w++) {
            int64_t c = lid + (int64_t)w * KCS_AWG;
            if (c < d) {
                acc a = o[w] * corr;
                for (int64_t jj = 0; jj < cnt; jj++)
                    a = kfma(pl[jj], (acc)In<TIN>::ld(V, vb + (j0 + jj) * d + c), a);
                o[w] = a;
            }
        }
        __syncthreads();
        mrun = mnew;
    }
    for (int w = 0; w < KCS_ACOLS; w++) {
        int64_t c = lid + (int64_t)w * KCS_AWG;
        if (c < d)
            ((acc *)O)[(b * m + i) * d + c] = o[w] / l;
    }
}

template <int TIN, int TACC>
static void launch_attention(void *st, const kcs_gpu_red *r, int fused, int64_t batch,
                             int64_t m, int64_t n, int64_t d, double scale, const void *q,
                             const void *kk, const void *v, void *scratch, void *out)
{
    typedef typename AccT<TACC>::t acc;
    if (fused) {
        dim3 grid((unsigned)m, (unsigned)batch, 1);
        attn_fused<TIN, TACC><<<grid, KCS_AWG, (size_t)d * sizeof(acc), KCS_GPU_STREAM(st)>>>(
            m, n, d, scale, q, kk, v, out);
        return;
    }
    /* the score buffer is read back by softmax_own with its own storage kind */
    constexpr int TS = TACC == KCS_GPU_ACC_F32 ? KCS_GPU_IN_F32 : KCS_GPU_IN_F64;
    attn_scores<TIN, TACC><<<kcs_blocks(batch * m * n, 128), 128, 0, KCS_GPU_STREAM(st)>>>(
        *r, batch, m, n, d, scale, q, kk, scratch);
    softmax_own<TS, TACC><<<kcs_blocks(batch * m, 64), 64, 0, KCS_GPU_STREAM(st)>>>(
        *r, batch * m, n, scratch, scratch);
    attn_pv<TIN, TACC><<<kcs_blocks(batch * m * d, 128), 128, 0, KCS_GPU_STREAM(st)>>>(
        *r, batch, m, n, d, scratch, v, out);
}
