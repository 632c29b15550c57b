/* Host tensors: doubles exact in a declared format, with guard regions and
 * finite-sentinel poisoning (a NaN-propagation contract must be able to
 * expect NaN, so the poison is finite). */
#ifndef KCS_TENSOR_H
#define KCS_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"
#include "error.h"
#include "format.h"

#define KCS_GUARD_ELEMS 64

typedef struct kcs_tensor {
    double *base; /* allocation: guard | data | guard */
    double *data;
    size_t len;
    kcs_format fmt;
    double sentinel;
} kcs_tensor;

/* The finite sentinel of a format: a fixed, unlikely, exactly
 * representable value. */
double kcs_sentinel(kcs_format f);

int kcs_tensor_alloc(kcs_tensor *t, size_t len, kcs_format fmt, kcs_error *err);
void kcs_tensor_free(kcs_tensor *t);
/* Fill data and guards with the sentinel. */
void kcs_tensor_poison(kcs_tensor *t);
/* true when both guard regions still hold the sentinel. */
bool kcs_tensor_guards_ok(const kcs_tensor *t);
/* Where the guards were written: the first and last changed element,
 * relative to data[0] (negative: before the output; >= len: past its
 * end). false when both guards are intact. */
bool kcs_tensor_guard_breach(const kcs_tensor *t, long long *first, long long *last);
/* Count elements of data still equal to the sentinel. */
size_t kcs_tensor_count_sentinel(const kcs_tensor *t);

/* Fill x[0..len) from distribution d, rounded to fmt, from the stream
 * keyed by (seed, stream_a, stream_b). */
void kcs_fill(double *x, size_t len, kcs_dist d, kcs_format fmt, uint64_t seed,
              uint64_t stream_a, uint64_t stream_b);

#endif
