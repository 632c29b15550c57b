/* The SPIR-V modules of the Level Zero backend: every backends/kernels/NAME.cl
 * file (with common.cl prepended) compiled offline for each input storage
 * (tin, common.cl KCS_TIN) and accumulator (tacc, KCS_TACC), validated by
 * spirv-val at build time and embedded by embed_spv.cmake. */
#ifndef KCS_L0_SPIRV_H
#define KCS_L0_SPIRV_H

#include <stddef.h>

typedef struct kcs_l0_spirv {
    const char *file; /* "gemm.cl", ... */
    int tin, tacc;
    const unsigned char *data;
    size_t size;
} kcs_l0_spirv;

/* Terminated by an entry with file == NULL. */
extern const kcs_l0_spirv kcs_l0_spirv_modules[];

#endif
