/* kernels_host internals: building a kcs_kh_plan (kh_args.c) and the plans
 * of attention and gather (kh_attn.c). */
#ifndef KCS_KH_PLAN_H
#define KCS_KH_PLAN_H

#include <stdlib.h>

#include "kernels_host.h"

/* Append a buffer; returns its index. */
int kcs_kh_buf_add(kcs_kh_plan *p, kcs_kh_buf_kind kind, int input, size_t n, size_t elem,
                   const void *host);
/* Append a launch over dims dimensions of global sizes g0, g1, g2. */
kcs_kh_launch *kcs_kh_launch_add(kcs_kh_plan *p, const char *file, const char *name, int dims,
                                 size_t g0, size_t g1, size_t g2);
void kcs_kh_set_local(kcs_kh_launch *l, size_t l0, size_t l1, size_t l2);
/* Append arguments, one letter of spec each, passed as: b a buffer index
 * (int), i an int32 (int), L an int64 (int64_t, exactly), l bytes of local
 * memory (size_t), v a value in the working format of ty (double; float
 * unless the input storage is double). */
void kcs_kh_args(kcs_kh_launch *l, const kcs_kh_types *ty, const char *spec, ...);

int kcs_kh_plan_attention(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                          int variant, kcs_kh_plan *p, kcs_error *err);
int kcs_kh_plan_gather(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                       kcs_kh_plan *p, kcs_error *err);

#endif
