/* fp64 and exact references of the ops other than gemm (oracle_ops.c,
 * oracle_attention.c); kcs_oracle_run (oracle.c) dispatches here. Same
 * contract as kcs_oracle_run: ref and absref (may be NULL) of
 * kcs_op_out_len(call) elements, *scale_p the normwise denominator. */
#ifndef KCS_ORACLE_OPS_H
#define KCS_ORACLE_OPS_H

#include "error.h"
#include "op.h"

int kcs_oracle_fp64_op(const kcs_call *call, double *ref, double *absref, double *scale_p,
                       kcs_error *err);
/* dot / reduce_sum: overwrite ref with the exact result rounded to dtype_out. */
int kcs_oracle_exact_sum(const kcs_call *call, double *ref, kcs_error *err);
/* elementwise: oracle_elementwise.c */
int kcs_oracle_elementwise(const kcs_call *call, double *ref, double *absref, double *scale_p,
                           kcs_error *err);
int kcs_oracle_attention(const kcs_call *call, double *ref, double *absref, double *scale_p,
                         kcs_error *err);
/* One query row q (k values) against the n keys K (n x k): the scaled
 * scores S_j = q.K_j / sqrt(k), A_j = sum_t |q_t K_jt| / sqrt(k), and the
 * probabilities P = softmax(S), all in double. Returns max_j |S_j|. Shared
 * by the first-order and the random_walk magnitudes (oracle_attention.c,
 * oracle_random_walk.c). */
double kcs_oracle_attention_row(const double *q, const double *K, size_t n, size_t k, double *S,
                                double *A, double *P);

#endif
