/* Internals of the calibration wrappers (calib_wrap.c, calib_wrap_rows.c):
 * the wrapper's context and the helpers both files use. */
#ifndef KCS_CALIB_WRAP_IMPL_H
#define KCS_CALIB_WRAP_IMPL_H

#include "calib_wrap.h"

#define KCS_WRAP_MEMO 16

typedef struct kcs_wrap_memo {
    int used;
    kcs_op op;
    int64_t m, n, k, batch;
    double *y;
    size_t len;
    uint64_t stamp;
} kcs_wrap_memo;

/* The wrapper's context: the inner backend's ops and context (opaque
 * here: only passed back to the inner backend) and the memo of
 * calib:C-CMP-03:bad. */
struct kcs_backend_ctx {
    const kcs_backend_ops *inner;
    kcs_backend_ctx *ictx;
    kcs_wrap_memo memo[KCS_WRAP_MEMO];
    uint64_t clock;
};

/* One call of the inner backend's native variant of op on the given
 * inputs (in_len from the shape), with the template call's attrs, seed,
 * accumulator and message buffer; out holds kcs_op_out_len values. */
int kcs_wrap_native(kcs_backend_ctx *w, const kcs_call *tmpl, kcs_op op, int64_t m, int64_t n,
                    int64_t k, int64_t batch, kcs_format din, kcs_format dout, const double *in0,
                    const double *in1, const double *in2, double *out, kcs_error *err);
/* The call c run by the inner backend's native variant, its first and
 * second inputs replaced by in0 and in1 where these are not NULL. */
int kcs_wrap_forward(kcs_backend_ctx *w, const kcs_call *c, const double *in0,
                     const double *in1, kcs_error *err);
/* The inner backend's native op (reduce_sum or norm: one value per row)
 * of every block of `block` elements of each of c's m rows of k inputs,
 * the last block zero-padded (exact for both): *p_p, m * *nb_p values in
 * fp32 (free it; NULL on failure), *nb_p = ceil(k / block) per row. */
int kcs_wrap_blocks(kcs_backend_ctx *w, const kcs_call *c, kcs_op op, size_t block,
                    double **p_p, size_t *nb_p, kcs_error *err);
/* malloc of n doubles (+1), failing with KCS_E_NOMEM in err. */
double *kcs_wrap_alloc(size_t n, kcs_error *err);
double kcs_wrap_round(kcs_format f, double x);

/* The bad state of the non-gemm ops (softmax, layernorm, reduce_sum,
 * attention, gather). */
int kcs_wrap_rows_bad(kcs_backend_ctx *w, const kcs_call *c, const char *id, kcs_error *err);
/* C-PRC-06's bad softmax and layernorm (calib_wrap_rows_rn.c): the
 * backend's output moved to 16-bit round-to-nearest sums. */
int kcs_wrap_rows_rn_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err);
/* Batch bi of an attention call: S = Q K^T by the backend's gemm (K^T in
 * Kt, k x n), scaled by RN_fp32(1/sqrt(k)) in fp32, P = softmax(S) by the
 * backend's softmax (S, P: m x n). */
int kcs_wrap_attention_probs(kcs_backend_ctx *w, const kcs_call *c, size_t bi, double *Kt,
                             double *S, double *P, kcs_error *err);
/* C-PRC-07's bad attention (calib_wrap_attention_rn.c): the backend's
 * gemm and softmax, the PV sums in 16-bit round-to-nearest sums. */
int kcs_wrap_attention_rn_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err);
/* C-PRC-08's bad norm (calib_wrap_norm.c): the backend's norm of 16-element
 * blocks, their squares accumulated in bf16 on the host. */
int kcs_wrap_norm_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err);

#endif
