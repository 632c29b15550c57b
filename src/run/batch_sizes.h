/* The batch sizes b < m at which protocol batch_invariance computes the op
 * on the first b rows alone (and compares them bitwise with the first b
 * rows of the full call). Shared by the protocol (protocol.c) and the
 * calibration sweep's batch probe (calib_sweep_proto.c), which must hold
 * every size the protocol visits. */
#ifndef KCS_BATCH_SIZES_H
#define KCS_BATCH_SIZES_H

#include <stdint.h>

/* The most sizes kcs_batch_sizes returns for any m (< 2^63). */
#define KCS_BATCH_SIZES_MAX 200

/* The sizes for a call of m rows whose trial seed is seed, into bs[] (at
 * most cap), ascending order not guaranteed, without repeats: every
 * b <= 64; each power of two P in (64, m) and P - 1; m - 1; and
 * KCS_BATCH_SIZES_DRAWN sizes drawn log-uniformly in (64, m - 1) from the
 * seed (the same seed gives the same sizes). Returns how many. */
#define KCS_BATCH_SIZES_DRAWN 8
int kcs_batch_sizes(int64_t m, uint64_t seed, int64_t *bs, int cap);

#endif
