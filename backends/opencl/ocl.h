/* OpenCL backend internals: the context, the program cache, buffer and
 * launch helpers (ocl_util.c, ocl_device.c) and the op entry points
 * (ocl_gemm.c, ocl_rows.c, ocl_attention.c, ocl_gather.c). Only files in
 * backends/opencl/ include this header (and so the vendor header). */
#ifndef KCS_OCL_H
#define KCS_OCL_H

#include <CL/cl.h>
#include <stddef.h>

#include "backend.h"

/* Input storage on the device (the KCS_TIN value of common.cl). */
enum { KCS_OCL_F32 = 0, KCS_OCL_F64 = 1, KCS_OCL_F16 = 2, KCS_OCL_BF16 = 3 };

#define KCS_OCL_MAX_PROGS 48
#define KCS_OCL_OPTS_MAX 512

typedef struct kcs_ocl_prog {
    const char *file; /* "gemm.cl", ... (static storage) */
    int tin, tacc;
    cl_program prog;
} kcs_ocl_prog;

struct kcs_backend_ctx {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    kcs_device_info info;
    char options[KCS_OCL_OPTS_MAX]; /* the user's build options (cfg->options) */
    int contract;                   /* options allow a*b+c contraction */
    int has_fp64;
    int cpu; /* native gemm uses gemm_vec (CPU devices), not gemm_tiled */
    size_t max_wg;
    cl_ulong local_mem;
    int ts, wpt, rwg, awg; /* gemm tile, per-work-item block, row and attention groups */
    kcs_ocl_prog progs[KCS_OCL_MAX_PROGS];
    int n_progs;
    int verbose;
};

/* The types of one call: input storage, accumulator (0 float, 1 double). */
typedef struct kcs_ocl_types {
    int tin;
    int tacc;
} kcs_ocl_types;

/* Output buffers hold common.cl's out_t: double when the input or the
 * accumulator is double; val_t (the working format) likewise. */
#define KCS_OCL_OUT_DBL(ty) ((ty)->tin == KCS_OCL_F64 || (ty)->tacc)
#define KCS_OCL_OUT_SIZE(ty) (KCS_OCL_OUT_DBL(ty) ? sizeof(cl_double) : sizeof(cl_float))
#define KCS_OCL_VAL_SIZE(ty) ((ty)->tin == KCS_OCL_F64 ? sizeof(cl_double) : sizeof(cl_float))

/* One kernel argument. */
typedef struct kcs_ocl_arg {
    size_t size;
    const void *value;
} kcs_ocl_arg;
#define KCS_OCL_ARG(x) ((kcs_ocl_arg){sizeof(x), &(x)})
#define KCS_OCL_LOCAL(bytes) ((kcs_ocl_arg){(bytes), NULL})

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
                   const kcs_ocl_types *ty, cl_kernel *kernel_p, kcs_error *err);
int kcs_ocl_set_args(cl_kernel k, const char *name, const kcs_ocl_arg *args, int n,
                     kcs_error *err);
/* Enqueue over dims dimensions; nothing is enqueued when a global size is 0.
 * local may be NULL. */
int kcs_ocl_launch(kcs_backend_ctx *ctx, cl_kernel k, const char *name, int dims,
                   const size_t *global, const size_t *local, kcs_error *err);

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
void kcs_ocl_release(cl_mem *bufs, int n);

/* Ops (ocl_gemm.c, ocl_rows.c, ocl_attention.c, ocl_gather.c): the call is
 * already validated (variant, shapes, lengths, types). own: 1 for "own". */
int kcs_ocl_gemm(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty, int own,
                 kcs_error *err);
int kcs_ocl_rows(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty, int own,
                 kcs_error *err);
/* attention: variant 0 native, 1 own, 2 fused */
int kcs_ocl_attention(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty,
                      int variant, kcs_error *err);
int kcs_ocl_gather(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_ocl_types *ty,
                   kcs_error *err);

/* ocl_device.c: devices in discovery order (platforms in order; GPU, CPU and
 * accelerator devices of each), and their descriptions. */
int kcs_ocl_devices(cl_platform_id *plats, cl_device_id *devs, int max, int *count_p,
                    kcs_error *err);
int kcs_ocl_device_info(cl_platform_id plat, cl_device_id dev, int index,
                        kcs_device_info *info, kcs_error *err);

#endif
