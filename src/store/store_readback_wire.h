/* The read-back's wire format (store_readback.c, store_readback_child.c):
 * on a socket pair, host byte order (parent and child are the same
 * executable on the same node): the spec as a fixed header, the path, then
 * the case ids and digests; the child answers 'P' for each step and finally
 * 'R', the code (int32), the message length (uint32) and the message. */
#ifndef KCS_STORE_READBACK_WIRE_H
#define KCS_STORE_READBACK_WIRE_H

#include <stdint.h>

#include "fdio.h"

#define MAGIC 0x3142524bu /* "KRB1" */

typedef struct wire_head {
    uint32_t magic, path_len;
    int32_t mode, rank, n_ranks, max_trials, n_samples, pad;
    int64_t n_cases;
    char plan_hash[32];
} wire_head;

#endif
