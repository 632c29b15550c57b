/* kernels_host: the host side shared by the backends that drive the OpenCL C
 * kernels of backends/kernels: opencl (the sources built at run time) and
 * level_zero (the same sources compiled offline to SPIR-V). It holds no
 * device API: each backend maps what is described here onto its own calls
 * (clSetKernelArg / clEnqueueNDRangeKernel, zeKernelSetArgumentValue /
 * zeCommandListAppendLaunchKernel).
 *
 * Contract (the same for both backends, so equal calls are served with the
 * same kernels, arguments and work sizes, and fail with the same codes and
 * messages, each starting with the backend's name, kcs_kh_device.name):
 *
 * 1. kcs_kh_check_call() validates a call: op offered, variant (native,
 *    own, fused for attention), shapes, input storage (KCS_KH_F32..BF16
 *    from dtype_in), accumulator (fp32/fp64), fp64 support, the native
 *    work-group size (when the device asks for that check), schedule, and
 *    the input and output lengths. It gives the types (the -DKCS_TIN /
 *    -DKCS_TACC the kernels are built with) and the variant.
 *
 * 2. kcs_kh_plan_call() describes how the op runs, as a kcs_kh_plan:
 *    - bufs[]: device buffers, to be created in this order: an input
 *      (c->in[input], n values staged in the storage ty.tin), a scratch
 *      buffer (n elements of elem bytes, contents undefined), or a buffer
 *      initialised from host data (n elements of elem bytes at host; the
 *      data holds at least one element), or none (a NULL buffer handle,
 *      still passed as an argument: an absent optional input);
 *    - late_rc / late: an error to report once the buffers exist and
 *      before any launch (0: none); the backends always reported these
 *      checks after staging the inputs, so a call with several faults
 *      keeps reporting the same one;
 *    - launch[]: the kernels to run, in order: file ("gemm.cl"), kernel
 *      name, arguments (a buffer index into bufs, an int32, int64, float or
 *      double by value, or bytes of local memory) and the work sizes:
 *      dims, global[], and local[] when has_local (otherwise the backend's
 *      default: NULL local size for OpenCL, the driver's suggestion rounded
 *      up for Level Zero; the kernels check their bounds);
 *    - flag: index of an int32 buffer (gather's first bad position) to read
 *      back after the launches and hand to kcs_kh_flag_raised(), or -1;
 *    - out: index of the buffer of out_n output values (double when
 *      out_dbl, else float) to read back, rounding each to c->dtype_out;
 *      -1 when there is nothing to read (an empty attention).
 *    The plan owns host data: release it with kcs_kh_plan_free() after the
 *    launches (also on errors). On failure nothing needs freeing.
 *
 * 3. kcs_kh_run() does 1. and 2. and hands the plan to the backend's
 *    executor (kcs_kh_exec_fn), which maps it onto the device API.
 *
 * Buffer handles are the backend's (cl_mem, device pointers); a buffer
 * argument is passed as the handle by value (sizeof handle, &handle). */
#ifndef KCS_KERNELS_HOST_H
#define KCS_KERNELS_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* Input storage on the device (common.cl KCS_TIN). */
enum { KCS_KH_F32 = 0, KCS_KH_F64 = 1, KCS_KH_F16 = 2, KCS_KH_BF16 = 3 };

/* The types of one call: input storage, accumulator (0 float, 1 double). */
typedef struct kcs_kh_types {
    int tin;
    int tacc;
} kcs_kh_types;

/* The programs (OpenCL) or modules (Level Zero) a backend has built, by
 * kernel file and types. */
#define KCS_KH_MAX_BUILT 48
typedef struct kcs_kh_built {
    struct {
        const char *file; /* "gemm.cl", ... (static storage) */
        kcs_kh_types ty;
        void *handle;
    } at[KCS_KH_MAX_BUILT];
    int n;
} kcs_kh_built;

/* The handle built before for (file, ty) into *handle_p (NULL: not yet)
 * and 0, or KCS_E_INTERNAL "<backend>: <what> cache full" when it was not
 * and there is no room to add it. */
int kcs_kh_built_find(const kcs_kh_built *b, const char *file, const kcs_kh_types *ty,
                      void **handle_p, const char *backend, const char *what, kcs_error *err);
void kcs_kh_built_add(kcs_kh_built *b, const char *file, const kcs_kh_types *ty, void *handle);

/* Output buffers hold common.cl's out_t: double when the input or the
 * accumulator is double; val_t (the working format) likewise. */
#define KCS_KH_OUT_DBL(ty) ((ty)->tin == KCS_KH_F64 || (ty)->tacc)
#define KCS_KH_OUT_SIZE(ty) (KCS_KH_OUT_DBL(ty) ? sizeof(double) : sizeof(float))
#define KCS_KH_VAL_SIZE(ty) ((ty)->tin == KCS_KH_F64 ? sizeof(double) : sizeof(float))

/* What a backend's device offers the shared checks and plans. */
typedef struct kcs_kh_device {
    const char *name;     /* "opencl", "level_zero": first word of every message */
    const char *model;    /* device model (named when fp64 is missing) */
    const char *fp64_ext; /* "cl_khr_fp64": "<model> has no cl_khr_fp64 (fp64 input)";
                             NULL: "<model> has no fp64 (input)" */
    int has_fp64;
    size_t max_wg;          /* largest work-group */
    int check_native_wg;    /* refuse a call whose kernels need more work-items per group
                               than max_wg (gemm_tiled (ts/wpt)^2, native rows rwg,
                               attention's streaming kernel awg): level_zero, whose sizes
                               are fixed at build time */
    unsigned long long local_mem; /* local memory per work-group, bytes */
    int ts, wpt, rwg, awg;  /* -DKCS_TS, KCS_WPT, KCS_RWG, KCS_AWG of the kernels */
    int gemm_vec;           /* native gemm is gemm_vec (OpenCL CPU devices), else gemm_tiled */
} kcs_kh_device;

/* Validate a call (1. above); variant_p: 0 native, 1 own, 2 fused. */
int kcs_kh_check_call(const kcs_kh_device *dev, const kcs_call *c, kcs_kh_types *ty_p,
                      int *variant_p, kcs_error *err);

typedef enum {
    KCS_KH_ARG_BUF,   /* v.buf: index into the plan's bufs */
    KCS_KH_ARG_I32,   /* v.i32 (cl_int / int) */
    KCS_KH_ARG_I64,   /* v.i64 (cl_long / long) */
    KCS_KH_ARG_F32,   /* v.f32 */
    KCS_KH_ARG_F64,   /* v.f64 */
    KCS_KH_ARG_LOCAL, /* v.local bytes of local memory (value NULL) */
} kcs_kh_arg_kind;

typedef struct kcs_kh_arg {
    kcs_kh_arg_kind kind;
    union {
        int buf;
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
        size_t local;
    } v;
} kcs_kh_arg;

/* Size and value pointer of an argument that is not a buffer (LOCAL: the
 * bytes and NULL). */
size_t kcs_kh_arg_value(const kcs_kh_arg *a, const void **value_p);

typedef enum {
    KCS_KH_BUF_NONE,    /* a NULL handle */
    KCS_KH_BUF_INPUT,   /* c->in[input]: n values in storage ty.tin */
    KCS_KH_BUF_SCRATCH, /* n elements of elem bytes */
    KCS_KH_BUF_HOST,    /* n elements of elem bytes copied from host */
} kcs_kh_buf_kind;

typedef struct kcs_kh_buf {
    kcs_kh_buf_kind kind;
    int input;
    size_t n, elem;
    const void *host;
} kcs_kh_buf;

#define KCS_KH_MAX_ARGS 13
#define KCS_KH_MAX_BUFS 5
#define KCS_KH_MAX_LAUNCHES 3

typedef struct kcs_kh_launch {
    const char *file, *name;
    int nargs;
    kcs_kh_arg args[KCS_KH_MAX_ARGS];
    int dims;
    size_t global[3];
    int has_local;
    size_t local[3];
} kcs_kh_launch;

/* Set every argument of l on kernel through set(kernel, index, size, value);
 * a buffer argument passes a pointer to its handle, bufs + elem * (buffer
 * index) (cl_mem, a device pointer). set returns 0 or its API's error code;
 * the first error comes back, with what = "<api>(<kernel>, <index>)". */
typedef long (*kcs_kh_set_arg_fn)(void *kernel, unsigned index, size_t size, const void *value);
long kcs_kh_set_args(void *kernel, kcs_kh_set_arg_fn set, const kcs_kh_launch *l,
                     const void *bufs, size_t elem, const char *api, char what[96]);

typedef struct kcs_kh_plan {
    int nbufs;
    kcs_kh_buf bufs[KCS_KH_MAX_BUFS];
    int late_rc;
    kcs_error late;
    int nlaunch;
    kcs_kh_launch launch[KCS_KH_MAX_LAUNCHES];
    int flag;
    int out;
    size_t out_n;
    int out_dbl;
    int32_t flag_init; /* host data of the flag buffer */
    void *owned;       /* host data of other buffers (gather's indices) */
} kcs_kh_plan;

/* Describe a validated call (2. above) into *plan. */
int kcs_kh_plan_call(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                     int variant, kcs_kh_plan *plan, kcs_error *err);
void kcs_kh_plan_free(kcs_kh_plan *plan);
/* A backend's executor of a plan: creates the buffers in order, reports
 * kcs_kh_late(), runs the launches in order, checks the flag, reads the
 * output back, releases the buffers. */
typedef int (*kcs_kh_exec_fn)(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                              const kcs_kh_plan *plan, kcs_error *err);
/* A backend's run(): check the call, plan it, execute the plan, free it. */
int kcs_kh_run(const kcs_kh_device *dev, kcs_backend_ctx *ctx, const kcs_call *c,
               kcs_kh_exec_fn exec, kcs_error *err);
/* A device API's buffers and launches, for kcs_kh_exec: a buffer is a
 * pointer-sized handle (cl_mem, a device pointer; NULL: none). */
typedef struct kcs_kh_exec_ops {
    /* buffer i of the plan (p->bufs[i]) */
    int (*make_buf)(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                    const kcs_kh_plan *p, int i, void **buf_p, kcs_error *err);
    int (*launch)(kcs_backend_ctx *ctx, const kcs_kh_types *ty, const kcs_kh_launch *l,
                  void *const *buf, kcs_error *err);
    /* the flag buffer's int32 back to the host */
    int (*read_flag)(kcs_backend_ctx *ctx, const kcs_call *c, void *buf, int32_t *bad_p,
                     kcs_error *err);
    int (*download)(kcs_backend_ctx *ctx, const void *buf, size_t n, int dbl, kcs_format fmt,
                    double *out, kcs_error *err);
    void (*release)(kcs_backend_ctx *ctx, void *buf); /* buf may be NULL */
} kcs_kh_exec_ops;

/* The executor (kcs_kh_exec_fn) over ops: creates the buffers in order,
 * reports kcs_kh_late(), runs the launches in order, checks the flag
 * (kcs_kh_flag_raised on dev), reads the output back, releases the buffers. */
int kcs_kh_exec(kcs_backend_ctx *ctx, const kcs_kh_device *dev, const kcs_kh_exec_ops *ops,
                const kcs_call *c, const kcs_kh_types *ty, const kcs_kh_plan *p,
                kcs_error *err);

/* The late error of a plan into err (and its code), or 0. */
int kcs_kh_late(const kcs_kh_plan *plan, kcs_error *err);
/* The flag read back: 0 when no index was out of range, else KCS_E_RAISED
 * naming it (also in c->msg). */
int kcs_kh_flag_raised(const kcs_kh_device *dev, const kcs_call *c, int32_t bad,
                       kcs_error *err);

#endif
