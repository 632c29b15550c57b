/* The shape of the tiled device Freivalds kernels (v2, issue #47), in the
 * subset of C that C17, CUDA and HIP share: included by the device kernels
 * (backends/cuda/freivalds_tiled.cuh, with KCS_PHILOX_QUAL defined as
 * `static __device__ inline`) and by their C reference on the CPU
 * (src/arith/freivalds_tiled.c), so both use the same blocking, the same
 * probe packing and the same reduction tree, and return bitwise the same
 * terms. The algorithm and its cost model: docs/freivalds-device.md.
 *
 * Blocking. A pass over a row-major matrix X (rows x L, fp32) runs one block
 * of KCS_FV2_THREADS threads per KCS_FV2_RB consecutive rows. Columns come in
 * groups of 4 (one 16-byte load per row where L % 4 == 0); thread t takes
 * the groups g = t, t + T, t + 2T, ... in that order, the 4 columns of a
 * group in order, and keeps one fp64 accumulator per (row, probe) plus two
 * per row (sum |x| w, sum x^2). The block then sums each accumulator over
 * its T threads with a fixed halving tree (s = T/2, T/4, ..., 1:
 * part[t] += part[t + s] for t < s). Probes come in sweeps of at most
 * KCS_FV2_PB (a sweep never crosses a 32-probe word); for k <= KCS_FV2_PB
 * every matrix is read once.
 *
 * Probe packing. R_lj in {-1, +1} is the CPU's (kcs_freivalds_probes: bit
 * (j n + l) mod 32 of the ((j n + l) div 32)-th 32-bit word of the
 * Philox4x32-10 stream keyed by (seed, stream, "FREI")); the kernels keep
 * it as sign bits, P[c n + l] bit b set when R_{l, 32c + b} = -1, one
 * 32-bit word per column and 32 probes: 4 bytes per column instead of
 * 8 k. */
#ifndef KCS_FV_TILED_H
#define KCS_FV_TILED_H

#include <stdint.h>

#include "philox.h"

#define KCS_FV2_THREADS 128 /* threads per block (a power of two) */
#define KCS_FV2_RB 4        /* matrix rows per block */
#define KCS_FV2_PB 16       /* at most this many probes per sweep (divides 32) */
#define KCS_FV2_TAG 0x46524549u /* "FREI", as freivalds.c */

/* Probes per sweep for k probes: the smallest of 4, 8, 12, 16 that holds
 * k (the device kernels are compiled for those four), else 16. */
KCS_PHILOX_QUAL int kcs_fv2_sweep(int k)
{
    return k <= 4 ? 4 : k <= 8 ? 8 : k <= 12 ? 12 : 16;
}

/* The packed sign word of column l (0 <= l < n) and probes 32 c .. 32 c + 31
 * (those >= k are 0): bit b is 1 where R_{l, 32c + b} = -1. */
KCS_PHILOX_QUAL uint32_t kcs_fv2_probe_word(uint64_t seed, uint64_t stream, int64_t n, int k,
                                            int c, int64_t l)
{
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint64_t tag = KCS_FV2_TAG;
    uint32_t w = 0;
    for (int b = 0; b < 32 && 32 * c + b < k; b++) {
        int64_t t = (int64_t)(32 * c + b) * n + l; /* entry of Rt[j n + l] */
        int64_t word = t / 32;
        uint32_t ctr[4] = {(uint32_t)(word / 4), (uint32_t)tag, (uint32_t)stream,
                           (uint32_t)(stream >> 32) ^ (uint32_t)((tag >> 32) * 0x9E3779B1u)};
        uint32_t out[4];
        kcs_philox4x32_10_rounds(ctr, key, out);
        w |= ((out[word % 4] >> (t % 32)) & 1u) << b;
    }
    return w;
}

#endif
