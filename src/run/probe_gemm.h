/* The probes' one contact with a backend (probe.c, probe_features.c):
 * D (1×1) = C + A (1×k) · B (k×1), or, with a tile T > 1, output (0, 0) of
 * a T×T×k gemm whose A has a in its row 0, B has b in its column 0, C has c
 * at (0, 0) and zeros elsewhere (a library routes a 1×1 output through
 * other kernels than a tile's: on an H200 cuBLAS took an fp32 dot product
 * for it, not the tensor cores); every other output must then be zero. */
#ifndef KCS_PROBE_GEMM_H
#define KCS_PROBE_GEMM_H

#include "backend.h"
#include "tensor.h"

typedef struct kcs_probe_gemm {
    const kcs_backend_ops *ops;
    kcs_backend_ctx *ctx;
    kcs_format in;
    int tile;              /* T: the gemm is T × T × k */
    double *tA, *tB, *tC;  /* T > 1: A (T×k), B (k×T), C (T×T) of that gemm */
    kcs_tensor *out;       /* T×T outputs with guards, poisoned before each call */
    kcs_error *err;
    const char *who;       /* message prefix: "probe", "probe features" */
} kcs_probe_gemm;

/* d_p = output (0, 0); an error names the backend and the shape. */
int kcs_probe_gemm_run(const kcs_probe_gemm *g, double c, const double *a, const double *b,
                       int k, double *d_p);

#endif
