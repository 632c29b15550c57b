/* The summation trees that kcs's own schedules and emulated matrix units
 * prescribe (src/base/order_tree.h): what `kcs probe --order` must recover
 * from them (tests/unit/run/test_probe_order.c), and the arithmetic that
 * evaluates a tree on given summands (`kcs exec --order`, the prediction of
 * a probed library's output bits). */
#ifndef KCS_ORDER_EXPECT_H
#define KCS_ORDER_EXPECT_H

#include <stdint.h>

#include "error.h"
#include "op.h"
#include "order_tree.h"
#include "profile.h"

/* The tree of kcs_cpu_sum (src/arith/acc.h) over n terms under schedule s;
 * seed: the atomic schedule's (for gemm, kcs_cpu_gemm_tile_seed's). Adding
 * the accumulator's initial zero leaves no trace, so it is no leaf. */
int kcs_order_expect_schedule(const kcs_schedule *s, int n, uint64_t seed, kcs_otree *t,
                              kcs_error *err);
/* The tree of kcs_emulated_gemm's reduction of n products under profile row
 * p (C absent): blocks of p->F along k, c chained through them; global
 * alignment: one node (c, products); pairwise: (c, pairwise tree of the
 * products). Late c addition adds c after the product sum, but aligned to
 * (and cut at) the product sum's quantum whenever c does not dominate, so
 * +-big among the products swamps c with them: the tree that swamping
 * shows, and so this one, is global alignment's. Exact blocks (neab = inf)
 * swamp nothing inside a block: no tree explains their answers. */
int kcs_order_expect_profile(const kcs_profile_params *p, int n, kcs_otree *t, kcs_error *err);

/* The leaf arithmetic a tree is evaluated with. */
typedef enum kcs_order_leaf {
    KCS_ORDER_LEAF_FMA32 = 0, /* fp32: a node adding a product does one fma into fp32
                                 (the product exact); other additions round to fp32;
                                 a node of two products rounds the smaller index's
                                 product first (an accumulator that starts at 0) */
    KCS_ORDER_LEAF_FP64,      /* fp64, the same rules with fma into fp64 */
    KCS_ORDER_LEAF_PROFILE,   /* nodes of > 2 children: the profile's block FMA */
} kcs_order_leaf;

/* Evaluate the tree on products a[i]*b[i] (i < t->n). prof: the row for
 * KCS_ORDER_LEAF_PROFILE (else NULL). */
double kcs_order_eval(const kcs_otree *t, kcs_order_leaf leaf, const kcs_profile_params *prof,
                      const double *a, const double *b);

#endif
