/* fp64 reference of attention: O = softmax(Q K^T / sqrt(k)) V per batch
 * (Q m×k, K and V n×k, O m×k), all in double from the exact inputs.
 * absref, the first-order magnitude of O's errors:
 *   absref_ic = sum_j P_ij (|V_jc| + A_ij |V_jc - O_ic|),
 *   A_ij = sum_t |q_it k_jt| / sqrt(k)
 * The first term bounds relative errors of the PV sum (and of the softmax
 * denominator, which scales a whole row of P); the second propagates
 * relative errors of the scores: with s_j -> s_j + e_j, |e_j| <= eps A_ij,
 * dP_j = P_j (e_j - sum_l P_l e_l), so dO_c = sum_j P_j e_j (V_jc - O_c).
 * scale = ||absref||_F. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "oracle_ops.h"

double kcs_oracle_attention_row(const double *q, const double *K, size_t n, size_t k, double *S,
                                double *A, double *P)
{
    double sc = 1.0 / sqrt((double)(k ? k : 1)), mx = -INFINITY, smax = 0.0, sum = 0.0;
    for (size_t j = 0; j < n; j++) {
        double s = 0.0, a = 0.0;
        for (size_t t = 0; t < k; t++) {
            s += q[t] * K[j * k + t];
            a += fabs(q[t] * K[j * k + t]);
        }
        S[j] = s * sc;
        A[j] = a * sc;
        mx = fmax(mx, S[j]);
        smax = fmax(smax, fabs(S[j]));
    }
    for (size_t j = 0; j < n; j++) {
        P[j] = exp(S[j] - mx);
        sum += P[j];
    }
    for (size_t j = 0; j < n; j++)
        P[j] /= sum;
    return smax;
}

double *kcs_oracle_attn_scratch(const kcs_call *c, int per_key, kcs_error *err)
{
    size_t n = (size_t)c->n;
    if (n < 1) {
        kcs_fail(err, KCS_E_INVAL, "oracle attention: needs n >= 1 keys");
        return NULL;
    }
    double *P = malloc((size_t)per_key * n * sizeof *P);
    if (!P)
        kcs_fail(err, KCS_E_NOMEM, "oracle attention: out of memory");
    return P;
}

int kcs_oracle_attention(const kcs_call *c, double *ref, double *absref, double *scale_p,
                         kcs_error *err)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    size_t nb = c->batch > 0 ? (size_t)c->batch : 1;
    double *P = kcs_oracle_attn_scratch(c, 3, err);
    if (!P)
        return err->code;
    double *A = P + n, *S = A + n, ss = 0.0;
    for (size_t b = 0; b < nb; b++) {
        const double *K = c->in[1] + b * n * k, *V = c->in[2] + b * n * k;
        for (size_t i = 0; i < m; i++) {
            const double *q = c->in[0] + (b * m + i) * k;
            double *o = ref + (b * m + i) * k;
            kcs_oracle_attention_row(q, K, n, k, S, A, P);
            for (size_t col = 0; col < k; col++) {
                double s = 0.0;
                for (size_t j = 0; j < n; j++)
                    s += P[j] * V[j * k + col];
                o[col] = s;
                double a = 0.0;
                for (size_t j = 0; j < n; j++)
                    a += P[j] * (fabs(V[j * k + col]) + A[j] * fabs(V[j * k + col] - s));
                ss += a * a;
                if (absref)
                    absref[(b * m + i) * k + col] = a;
            }
        }
    }
    free(P);
    *scale_p = sqrt(ss);
    return 0;
}
