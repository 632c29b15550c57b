/* oracle.magnitude: random_walk (contract.h) for attention: per output
 * O_ic, a bound M_ic on the error a conforming composition that rounds to
 * nearest can make, in the form a clause lambda u M (lambda >= 6) needs.
 *
 * To first order O_ic's error is sum_r d_r c_r + e, over the roundings r
 * of the declared accumulator (|d_r| <= u, mean zero under round to
 * nearest) and e the deterministic part. With P the exact probabilities,
 * s the exact scores (scale = 1/sqrt(k) applied), A_ij = scale sum_t
 * |q_it k_jt|, Y = sum_j P_ij |V_jc| and t_j = V_jc - O_ic:
 *   score roundings (k - 1 additions in any order, k products, a prescale
 *   of q or k, the scale and a log2(e) factor: at most k + 4 per score,
 *   each |c| <= P_ij A_ij |t_j|, the products' squares summing to at most
 *   A_ij^2):                                   (k + 4) sum_j x_j^2,
 *                                              x_j = P_ij A_ij |t_j|
 *   the argument s_ij - m of exp (m the row maximum, or a running one):
 *                                              sum_j (P_ij D_j |t_j|)^2,
 *                                              D_j = |s_ij| + max_l |s_il|
 *   the divisions e_j / l and the products P_ij V_jc:
 *                                              2 sum_j (P_ij V_jc)^2
 *   every addition and rescaling of the output sum and of the denominator,
 *   in any merge tree over the keys (sequential, pairwise, blocked, split,
 *   a streaming online softmax): at most 3 per internal node (one addition,
 *   a rescaling of each child), each |c| at most the node's partial sum, a
 *   subset sum of the terms a_j = |P_ij V_jc| (output) or P_ij (the
 *   denominator, entering O as O_ic times its share of l). In any binary
 *   tree over n leaves at most n - s + 1 internal nodes hold s leaves or
 *   more (induction over the root's children), so the sum over the nodes
 *   of their partials squared is at most Q(a) = sum_{s=2..n} T_s^2, T_s
 *   the sum of the s largest a_j:              3 Q(|P V_c|) + 3 O_ic^2 Q(P)
 *   (beyond 512 keys Q is taken over the a_j rounded up to 1/16 of a
 *   binade: at most 13 % above, never below: kcs_rw_tree_q)
 *   the final division o / l (fused kernels):  O_ic^2
 * so sqrt(sum c_r^2) <= R = the root of that sum. Deterministic, bounded
 * worst case: exp within 4 ulp (8 u on each e_j: at most 16 u Y) and the
 * constants shared by a whole row (scale and log2(e), at most 4 u on every
 * score alike: 4 u |Z|, Z = sum_j P_ij s_ij t_j): W = 16 Y + 4 |Z|.
 * M = R + W / 6. A clause eta = lambda u(dtype_acc) with lambda >= 6 then
 * bounds the error by lambda u R + u W; R >= 2 |O_ic| (Q(P) >= 1, the
 * whole denominator, for n >= 2; and the final division) also covers the
 * rounding of the output itself as u(dtype_out) / 2 times M.
 * Derivation and power: contracts/C-PRC-07.yaml and contracts/README.md. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "oracle_ops.h"
#include "oracle_rw.h"

static int desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* sum_{i=1..c} (t + i v)^2 */
static double run_sq(double t, double v, double c)
{
    return c * t * t + t * v * c * (c + 1.0) + v * v * c * (c + 1.0) * (2.0 * c + 1.0) / 6.0;
}

double kcs_rw_tree_q_sorted(double *a, size_t n)
{
    qsort(a, n, sizeof *a, desc);
    double t = n ? a[0] : 0.0, q = 0.0;
    for (size_t s = 1; s < n; s++) {
        t += a[s];
        q += t * t;
    }
    return q;
}

/* Buckets of 1/RW_SUB of a binade below the largest value, RW_SPAN binades
 * deep (smaller values share one bucket bounded by 2^(emax - RW_SPAN)),
 * then the zeros. */
enum { RW_SUB = 16, RW_SPAN = 48, RW_NB = RW_SPAN * RW_SUB + 2 };

static double bucket_top(int idx, int emax)
{
    if (idx == RW_NB - 1)
        return 0.0;
    if (idx == RW_NB - 2)
        return ldexp(1.0, emax - RW_SPAN);
    int sub = RW_SUB - 1 - idx % RW_SUB;
    return ldexp(0.5 + (sub + 1.0) / (2.0 * RW_SUB), emax - idx / RW_SUB);
}

double kcs_rw_tree_q(double *a, size_t n)
{
    if (n <= 512)
        return kcs_rw_tree_q_sorted(a, n);
    double amax = 0.0;
    for (size_t j = 0; j < n; j++)
        amax = fmax(amax, a[j]);
    if (!(amax > 0.0))
        return 0.0;
    if (isinf(amax)) /* no finite bound (the contracts that use it admit finite inputs) */
        return INFINITY;
    int emax;
    frexp(amax, &emax);
    double cnt[RW_NB] = {0};
    for (size_t j = 0; j < n; j++) {
        int e;
        double mant = a[j] > 0.0 ? frexp(a[j], &e) : 0.0;
        int idx;
        if (mant == 0.0)
            idx = RW_NB - 1;
        else if (emax - e >= RW_SPAN)
            idx = RW_NB - 2;
        else
            idx = (emax - e) * RW_SUB + RW_SUB - 1 - (int)((mant - 0.5) * 2.0 * RW_SUB);
        cnt[idx] += 1.0;
    }
    double t = 0.0, q = 0.0, first = -1.0;
    for (int idx = 0; idx < RW_NB; idx++) {
        if (cnt[idx] == 0.0)
            continue;
        double v = bucket_top(idx, emax);
        if (first < 0.0)
            first = v;
        q += run_sq(t, v, cnt[idx]);
        t += v * cnt[idx];
    }
    return q - first * first; /* s = 1 is not a node */
}

static int attention(const kcs_call *c, const double *ref, double *mag, kcs_error *err)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    size_t nb = c->batch > 0 ? (size_t)c->batch : 1;
    double *P = kcs_oracle_attn_scratch(c, 4, err);
    if (!P)
        return err->code;
    double *A = P + n, *S = A + n, *T = S + n;
    double kk = (double)k + 4.0;
    for (size_t b = 0; b < nb; b++) {
        const double *K = c->in[1] + b * n * k, *V = c->in[2] + b * n * k;
        for (size_t i = 0; i < m; i++) {
            const double *q = c->in[0] + (b * m + i) * k;
            const double *o = ref + (b * m + i) * k;
            double smax = kcs_oracle_attention_row(q, K, n, k, S, A, P);
            for (size_t j = 0; j < n; j++)
                T[j] = P[j];
            double qp = kcs_rw_tree_q(T, n);
            for (size_t col = 0; col < k; col++) {
                double O = o[col], Y = 0.0, Z = 0.0, sx = 0.0, sd = 0.0, sp = 0.0;
                for (size_t j = 0; j < n; j++) {
                    double v = V[j * k + col], t = v - O, pj = P[j];
                    double x = pj * A[j] * fabs(t), d = pj * (fabs(S[j]) + smax) * fabs(t);
                    Y += pj * fabs(v);
                    Z += pj * S[j] * t;
                    sx += x * x;
                    sd += d * d;
                    sp += (pj * v) * (pj * v);
                    T[j] = pj * fabs(v);
                }
                double r2 = kk * sx + sd + 2.0 * sp + 3.0 * (kcs_rw_tree_q(T, n) + O * O * qp) + O * O;
                mag[(b * m + i) * k + col] = sqrt(r2) + (16.0 * Y + 4.0 * fabs(Z)) / 6.0;
            }
        }
    }
    free(P);
    return 0;
}

int kcs_oracle_magnitude(kcs_magnitude mag, const kcs_call *call, const double *ref,
                         double *absref, kcs_error *err)
{
    if (mag == KCS_MAG_FIRST_ORDER)
        return 0;
    if (mag != KCS_MAG_RANDOM_WALK)
        return kcs_fail(err, KCS_E_INVAL, "oracle: unknown magnitude %d", (int)mag);
    if (call->op != KCS_OP_ATTENTION)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "oracle: magnitude random_walk is defined for attention, not %s",
                        kcs_op_name(call->op));
    return attention(call, ref, absref, err);
}
