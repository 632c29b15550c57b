/* OpenCL backend internals: the context, the program cache, buffer helpers
 * (ocl_util.c, ocl_device.c) and the executor of the plans of
 * backends/kernels_host (ocl_exec.c), which chooses the kernels, their
 * arguments and work sizes, shared with the level_zero backend. Only files
 * in backends/opencl/ include this header (and so the vendor header). */
#ifndef KCS_OCL_H
#define KCS_OCL_H

#include <CL/cl.h>
#include <stddef.h>

#include "backend.h"
#include "kernels_host.h"

#define KCS_OCL_OPTS_MAX 512

struct kcs_backend_ctx {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    kcs_device_info info;
    char options[KCS_OCL_OPTS_MAX]; /* the user's build options (cfg->options) */
    int contract;                   /* options allow a*b+c contraction */
    /* fp64, work-group and local memory sizes, gemm tile (ts), per-work-
     * item block (wpt), row and attention groups (rwg, awg); gemm_vec:
     * native gemm uses gemm_vec (CPU devices), not gemm_tiled */
    kcs_kh_device kh;
    kcs_kh_built progs; /* cl_program */
    int verbose;
};

/* ocl_buildlog.c: clBuildProgram, its diagnostics to KCS_OPENCL_BUILD_LOG
 * (or stderr with verbose), never to the user's stderr otherwise. */
cl_int kcs_ocl_build(kcs_backend_ctx *ctx, cl_program prog, const char *file, const char *opts);

/* ocl_util.c */
const char *kcs_ocl_strerror(cl_int code);
/* Fill err with "opencl: <what>: <CL name> (<code>)" and return the kcs code
 * (KCS_E_NOMEM for allocation failures, KCS_E_DEVICE otherwise). */
int kcs_ocl_fail(kcs_error *err, const char *what, cl_int code);
/* Copy a string into a fixed buffer, truncating. */
void kcs_ocl_copy(char *dst, size_t len, const char *src);

/* The kernel `name` of backends/kernels/<file> built for the types (cached
 * per (file, types) on the context). Release it with clReleaseKernel. */
int kcs_ocl_kernel(kcs_backend_ctx *ctx, const char *file, const char *name,
                   const kcs_kh_types *ty, cl_kernel *kernel_p, kcs_error *err);
/* Upload n doubles (exact in the storage tin) as a read-only buffer; which
 * names the input in messages. */
int kcs_ocl_upload(kcs_backend_ctx *ctx, int tin, const double *x, size_t n, int which,
                   cl_mem *buf_p, kcs_error *err);
/* A device buffer of n elements of elem bytes (n = 0 gives one element). */
int kcs_ocl_alloc(kcs_backend_ctx *ctx, size_t n, size_t elem, cl_mem *buf_p, kcs_error *err);
/* Read n float (dbl = 0) or double (dbl = 1) elements back, round each to
 * fmt and store into out[0..n). */
int kcs_ocl_download(kcs_backend_ctx *ctx, cl_mem buf, size_t n, int dbl, kcs_format fmt,
                     double *out, kcs_error *err);

/* ocl_exec.c: run a plan of kernels_host (kcs_kh_exec_fn). */
int kcs_ocl_exec(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                 const kcs_kh_plan *plan, kcs_error *err);

/* ocl_device.c: devices in discovery order (platforms in order; GPU, CPU and
 * accelerator devices of each), and their descriptions. */
int kcs_ocl_devices(cl_platform_id *plats, cl_device_id *devs, int max, int *count_p,
                    kcs_error *err);
int kcs_ocl_device_info(cl_platform_id plat, cl_device_id dev, int index,
                        kcs_device_info *info, kcs_error *err);

#endif
