/* gpu_attention.cuh: O = softmax(Q·K^T·scale)·V per batch (attention.cl,
 * the cpu backend's definitions). Q m×d, K and V n×d, O m×d, row-major,
 * batch-major; scale = RN_w(1/sqrt(d)) in the working format val. Included
 * inside namespace KCS_GPU_NS by gpu_kernels.cuh.
 *   own (unfused; block == 0): attn_scores S = RN_w(dot * scale) (val,
 *     schedule), softmax_own in place on S (schedule), attn_pv (steps
 *     s + p*v into acc, schedule);
 *   native / fused (attn_fused, block B > 0): one block of 64 threads per
 *     query row streams the keys in blocks of B:
 *       s_j  = RN_w(dot_j * scale)  (dot under r->sched: sequential for
 *                                   native, the call's schedule for fused)
 *       mnew = max(mx, max_block s_j)
 *       corr = exp(RN_w(mx - mnew))        (0 for the first block)
 *       p_j  = exp(RN_w(s_j - mnew))
 *       l    = RN_acc(RN_acc(l*corr) + [sum_block p_j]_acc)
 *       o_c  = RN_acc(RN_acc(o_c*corr) + [sum_block p_j*v_jc]_acc)
 *     [.]_acc sequential, one rounding per addition; O = RN_w(o_c / l).
 *     Thread lid owns the output columns lid + 64*w, w < 16 (d <= 1024). */

#define KCS_AWG KCS_GPU_TREE_THREADS
#define KCS_ACOLS 16

/* global batch*m*n */
template <int TIN, int TACC>
__global__ void attn_scores(kcs_gpu_red r, int64_t batch, int64_t m, int64_t n, int64_t d,
                            double scale_d, const void *Q, const void *K, void *S)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    typedef typename AR::val val;
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
    ((val *)S)[id] = ar.wmul(s, (val)scale_d);
}

/* global batch*m*d; P: the val probabilities */
template <int TIN, int TACC>
__global__ void attn_pv(kcs_gpu_red r, int64_t batch, int64_t m, int64_t n, int64_t d,
                        const void *P, const void *V, void *O)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    typedef typename AR::val val;
    typedef typename AR::wide wide;
    int64_t id = KCS_GID();
    if (id >= batch * m * d)
        return;
    int64_t c = id % d, i = (id / d) % m, b = id / (m * d);
    AR ar(r);
    const val *p = (const val *)P + (b * m + i) * n;
    int64_t vo = b * n * d + c;
    acc s = kcs_reduce(
        ar, n, r.sched, r.param,
        [&](acc s0, int64_t t) { return ar.step(s0, p[t], In<TIN>::ld(V, vo + t * d)); },
        [&](int64_t t) { return ar.prod(p[t], In<TIN>::ld(V, vo + t * d)); });
    ((wide *)O)[id] = s;
}

/* grid (m, batch), block 64; dynamic shared memory: ql[d], pl[B] (val) */
template <int TIN, int TACC>
__global__ void attn_fused(kcs_gpu_red r, int64_t m, int64_t n, int64_t d, double scale_d,
                           int64_t B, const void *Q, const void *K, const void *V, void *O)
{
    typedef Ar<TIN, TACC> AR;
    typedef typename AR::acc acc;
    typedef typename AR::val val;
    typedef typename AR::wide wide;
    extern __shared__ double kcs_dyn_shared[];
    val *ql = (val *)kcs_dyn_shared;
    val *pl = ql + d;
    __shared__ val red[KCS_AWG];
    AR ar(r);
    const val scale = (val)scale_d;
    const int64_t i = blockIdx.x, b = blockIdx.y;
    const int lid = threadIdx.x;
    const int64_t qo = (b * m + i) * d, kb = b * n * d, vb = b * n * d;
    for (int64_t c = lid; c < d; c += KCS_AWG)
        ql[c] = In<TIN>::ld(Q, qo + c);
    __syncthreads();
    acc o[KCS_ACOLS];
    for (int w = 0; w < KCS_ACOLS; w++)
        o[w] = 0;
    val mx = -INFINITY;
    acc l = 0;
    for (int64_t j0 = 0; j0 < n; j0 += B) {
        int64_t cnt = n - j0 < B ? n - j0 : B;
        val bm = -INFINITY;
        for (int64_t jj = lid; jj < cnt; jj += KCS_AWG) {
            int64_t kr = kb + (j0 + jj) * d;
            acc s = kcs_reduce(
                ar, d, r.sched, r.param,
                [&](acc s0, int64_t t) { return ar.step(s0, ql[t], In<TIN>::ld(K, kr + t)); },
                [&](int64_t t) { return ar.prod(ql[t], In<TIN>::ld(K, kr + t)); });
            pl[jj] = ar.wmul(s, scale);
            bm = kmax(bm, pl[jj]);
        }
        bm = tree_reduce(red, bm, 1);
        val mnew = kmax(mx, bm);
        val corr = j0 == 0 ? (val)0 : kexp((val)(mx - mnew));
        for (int64_t jj = lid; jj < cnt; jj += KCS_AWG)
            pl[jj] = kexp((val)(pl[jj] - mnew));
        __syncthreads();
        acc bl = 0;
        for (int64_t jj = 0; jj < cnt; jj++)
            bl = ar.step1(bl, pl[jj]);
        l = ar.add(ar.amul(l, corr), bl);
        for (int w = 0; w < KCS_ACOLS; w++) {
            int64_t c = lid + (int64_t)w * KCS_AWG;
            if (c < d) {
                acc bo = 0;
                for (int64_t jj = 0; jj < cnt; jj++)
                    bo = ar.step(bo, pl[jj], In<TIN>::ld(V, vb + (j0 + jj) * d + c));
                o[w] = ar.add(ar.amul(o[w], corr), bo);
            }
        }
        __syncthreads();
        mx = mnew;
    }
    for (int w = 0; w < KCS_ACOLS; w++) {
        int64_t c = lid + (int64_t)w * KCS_AWG;
        if (c < d)
            ((wide *)O)[(b * m + i) * d + c] = ar.wdiv(o[w], l);
    }
}

template <int TIN, int TACC>
static void launch_attention(void *st, const kcs_gpu_red *r, int64_t block, int64_t batch,
                             int64_t m, int64_t n, int64_t d, double scale, const void *q,
                             const void *kk, const void *v, void *scratch, void *out)
{
    typedef typename In<TIN>::val val;
    if (block > 0) {
        dim3 grid((unsigned)m, (unsigned)batch, 1);
        size_t shm = (size_t)(d + block) * sizeof(val);
        attn_fused<TIN, TACC><<<grid, KCS_AWG, shm, KCS_GPU_STREAM(st)>>>(*r, m, n, d, scale,
                                                                         block, q, kk, v, out);
        return;
    }
    /* the val score buffer is read back by softmax_own with its storage kind */
    constexpr int TS = TIN == KCS_GPU_IN_F64 ? KCS_GPU_IN_F64 : KCS_GPU_IN_F32;
    attn_scores<TIN, TACC><<<kcs_blocks(batch * m * n, 128), 128, 0, KCS_GPU_STREAM(st)>>>(
        *r, batch, m, n, d, scale, q, kk, scratch);
    softmax_own<TS, TACC, val><<<kcs_blocks(batch * m, 64), 64, 0, KCS_GPU_STREAM(st)>>>(
        *r, batch * m, n, scratch, scratch);
    attn_pv<TIN, TACC><<<kcs_blocks(batch * m * d, 128), 128, 0, KCS_GPU_STREAM(st)>>>(
        *r, batch, m, n, d, scratch, v, out);
}
