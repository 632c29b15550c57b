/* Held-out GEMM shapes drawn over a contract's precondition
 * (measurement.held_out_draw: N). A kernel that special-cases the shapes a
 * contract lists (correct up to m = 256, wrong above) passes a fixed list;
 * drawn shapes reach the precondition's whole range. The N shapes are a
 * Latin hypercube in log space: each dimension's range (capped, below) is
 * cut into N strata of equal log width and every stratum of every
 * dimension is used once, so some shape has m in the top N-th of its
 * range, another n, another k. A shape whose work m n k batch is above
 * KCS_DRAW_MAX_WORK shrinks its other dimensions first (the one in the
 * highest stratum keeps its value), within the precondition. The draw
 * depends only on the seed, so every rank of a study draws alike. */
#ifndef KCS_HELD_OUT_DRAW_H
#define KCS_HELD_OUT_DRAW_H

#include <stdint.h>

#include "contract.h"

#define KCS_DRAW_MAX_DIM 4096            /* m and n drawn up to this (and the precondition) */
#define KCS_DRAW_MAX_BATCH 8             /* batched_gemm: batch drawn up to this */
#define KCS_DRAW_MAX_WORK ((double)(1 << 24)) /* multiply-adds of one drawn shape */

/* Fill out[0 .. count) with count shapes for op (gemm or batched_gemm; 0
 * for other ops, which are not drawn) from seed. Returns the number drawn. */
int kcs_held_out_draw(const kcs_contract *c, kcs_op op, uint64_t seed, int count,
                      kcs_shape *out);

#endif
