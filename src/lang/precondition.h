/* Whether a case lies inside its contract's precondition (shape ranges,
 * input format, input distribution), with a message naming the range it
 * leaves. Used by kcs grade --shape and by the study loader. */
#ifndef KCS_PRECONDITION_H
#define KCS_PRECONDITION_H

#include "contract.h"
#include "error.h"

/* 0 when every dimension of s is inside c's precondition.shape ranges
 * and shape classes (batch 0 counts as 1); else KCS_E_INVAL, err->msg
 * "dimension X = V is outside the precondition's range [MIN, MAX] of
 * CONTRACT" (", multiples of N" after the range when X has a class), or
 * "dimension X = V is not a multiple of N: the precondition of CONTRACT
 * admits X in [MIN, MAX], multiples of N (precondition.shape.multiple_of.X)". */
int kcs_precondition_shape(const kcs_contract *c, const kcs_shape *s, kcs_error *err);
/* 0 when d is one of precondition.values.dist; else KCS_E_INVAL. */
int kcs_precondition_dist(const kcs_contract *c, kcs_dist d, kcs_error *err);
/* 0 when f is one of precondition.dtype_in; else KCS_E_INVAL. */
int kcs_precondition_dtype(const kcs_contract *c, kcs_format f, kcs_error *err);
/* 0 when f is one of precondition.dtype_out; else KCS_E_INVAL naming them. */
int kcs_precondition_dtype_out(const kcs_contract *c, kcs_format f, kcs_error *err);
/* 1 when s is inside c's precondition.shape ranges and classes. */
int kcs_precondition_shape_ok(const kcs_contract *c, const kcs_shape *s);
/* The same for one op of the scope: the contract's precondition, then
 * precondition.per_op.<op> where it narrows it ("dimension k = 2048 is
 * outside the precondition's range [2, 512] of C-PRC-02 for layernorm
 * (precondition.per_op.layernorm.shape.k)"). */
int kcs_precondition_op_shape(const kcs_contract *c, kcs_op op, const kcs_shape *s,
                              kcs_error *err);
int kcs_precondition_op_dtype(const kcs_contract *c, kcs_op op, kcs_format f, kcs_error *err);
/* 1 when f and s are inside c's precondition for op. */
int kcs_precondition_op_ok(const kcs_contract *c, kcs_op op, kcs_format f, const kcs_shape *s);
/* The input formats c admits for op (bit per kcs_format). */
uint32_t kcs_precondition_op_dtypes(const kcs_contract *c, kcs_op op);
/* The admitted value of dimension d (0..3: m, n, k, batch) nearest v: v
 * clamped to the range, then the next multiple of its class up, or down
 * when up leaves the range; 0 when the range holds no multiple. */
int64_t kcs_precondition_fit(const kcs_contract *c, int d, int64_t v);
/* Parse "MxNxK" or "MxNxKxBATCH" (positive integers). */
int kcs_shape_parse_text(const char *text, kcs_shape *s);

#endif
