/* The BLAS library kcs calls (OpenBLAS: the CPU backend's native kernels
 * and the fp64 oracle) and its thread count, for provenance and for
 * `kcs exec --threads N`. */
#ifndef KCS_BLAS_INFO_H
#define KCS_BLAS_INFO_H

#include <stddef.h>

/* The BLAS library of the native kernels ("path (config, core)") and its
 * current thread count (blas_info.c). */
void kcs_blas_info(char *buf, size_t len, int *threads_p);
/* Set the BLAS thread count: 0, KCS_E_INVAL (n < 1) or KCS_E_UNSUPPORTED
 * (the library kept another count, e.g. above its build's maximum). */
int kcs_blas_set_threads(int n);

#endif
