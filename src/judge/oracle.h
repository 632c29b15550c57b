/* Reference results: fp64 (BLAS), exact (MPFR), model:<profile>. */
#ifndef KCS_ORACLE_H
#define KCS_ORACLE_H

#include "contract.h"
#include "error.h"
#include "op.h"

/* Compute the reference output of call (ignores call->variant) into ref
 * (call->out_len), plus absref = |A||B| (+|C|) style magnitudes for
 * componentwise scaling, and *scale_p, the normwise backward-error
 * denominator. */
int kcs_oracle_run(kcs_oracle_kind kind, const char *profile, const kcs_call *call,
                   double *ref, double *absref, double *scale_p, kcs_error *err);

/* Replace absref by the magnitude a contract's oracle.magnitude names
 * (contract.h), from the call's inputs and the reference ref: a no-op for
 * first_order; random_walk for attention (oracle_random_walk.c). */
int kcs_oracle_magnitude(kcs_magnitude mag, const kcs_call *call, const double *ref,
                         double *absref, kcs_error *err);

/* Scratch of per_key doubles per key of an attention call (c->n keys,
 * oracle_attention.c): NULL with err set when there are no keys or no
 * memory. free() it. */
double *kcs_oracle_attn_scratch(const kcs_call *c, int per_key, kcs_error *err);

#endif
