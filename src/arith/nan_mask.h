/* The nan=mask semantics (a contract's attrs): a NaN input element is
 * treated as absent. Defined by one substitution before the op:
 *   reduce_sum, dot, gemm, batched_gemm, allreduce: a NaN element is 0, so
 *       it contributes nothing to a sum (a product with a NaN factor is 0;
 *       0 times an infinity is NaN under IEEE 754 as usual);
 *   softmax: a NaN element is -Inf, so its probability is 0 and the other
 *       elements of its row are normalised among themselves; a row whose
 *       elements are all NaN has nothing to normalise and is NaN (0/0).
 * Other ops (norms, attention, gather) do not define it; contracts that
 * hand nan=mask to them are refused by the loader. The fp64 reference
 * (judge/oracle.c) and the CPU backend's own kernels (backends/cpu) apply
 * the substitution to copies of the inputs. */
#ifndef KCS_NAN_MASK_H
#define KCS_NAN_MASK_H

#include <stdbool.h>

#include "op.h"

/* 1 when attrs hold nan=mask, 0 when not (absent, another value, or
 * malformed attrs: those are refused elsewhere). */
int kcs_nan_mask_declared(const char *attrs);
/* Whether nan=mask is defined for op. */
bool kcs_nan_mask_defined(kcs_op op);
/* The value a masked NaN takes for op: 0, or -Inf for softmax. */
double kcs_nan_mask_fill(kcs_op op);
/* *out = *c with every input copied into bufs[i] (to free with
 * kcs_nan_mask_free) and each NaN replaced by kcs_nan_mask_fill(c->op);
 * out->attrs keeps c's. 0, or KCS_E_NOMEM (nothing to free). */
int kcs_nan_mask_call(const kcs_call *c, kcs_call *out, double *bufs[KCS_MAX_INPUTS]);
void kcs_nan_mask_free(double *bufs[KCS_MAX_INPUTS]);

#endif
