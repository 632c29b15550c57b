/* The OpenCL C sources of backends/kernels/, embedded at build time by
 * backends/opencl/embed.cmake (a generated C file defines the table). */
#ifndef KCS_OCL_SOURCES_H
#define KCS_OCL_SOURCES_H

typedef struct kcs_ocl_source {
    const char *name; /* file name, e.g. "gemm.cl" */
    const char *text; /* NUL-terminated source */
} kcs_ocl_source;

/* Ordered by file name, terminated by {NULL, NULL}. */
extern const kcs_ocl_source kcs_ocl_sources[];

#endif
