/* The componentwise magnitudes |A||B| + |C| of a GEMM, as an upper bound
 * tight to 0.08 % (one sgemm where the inputs allow, else a dgemm). */
#ifndef KCS_ORACLE_ABSPROD_H
#define KCS_ORACLE_ABSPROD_H

#include <stddef.h>

#include "error.h"

/* Longest k for the fp32 path: its excess 3 gamma_k stays below 0.08 %. */
#define KCS_ABSPROD_SGEMM_KMAX 4096

/* AR (m x n) = |C| + |A||B| (C may be NULL), A m x k and B k x n row-major.
 * On the fp32 path never below the exact value and above it by at most
 * 3 gamma_k(2^-24) + 2^-51 relative (plus k 2^-147); on the dgemm path
 * within dgemm's rounding of it.
 * 0, or KCS_E_NOMEM (AR then holds |C|). */
int kcs_absprod_gemm(size_t m, size_t n, size_t k, const double *A, const double *B,
                     const double *C, double *AR);

#endif
