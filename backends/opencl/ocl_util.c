/* OpenCL helpers: status names, the program cache, and the host <-> device
 * conversions of kcs values. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "ocl.h"
#include "ocl_sources.h"

const char *kcs_ocl_strerror(cl_int code)
{
    switch (code) {
#define N(c) case c: return #c
        N(CL_SUCCESS);
        N(CL_DEVICE_NOT_FOUND);
        N(CL_DEVICE_NOT_AVAILABLE);
        N(CL_COMPILER_NOT_AVAILABLE);
        N(CL_MEM_OBJECT_ALLOCATION_FAILURE);
        N(CL_OUT_OF_RESOURCES);
        N(CL_OUT_OF_HOST_MEMORY);
        N(CL_PROFILING_INFO_NOT_AVAILABLE);
        N(CL_MEM_COPY_OVERLAP);
        N(CL_IMAGE_FORMAT_MISMATCH);
        N(CL_IMAGE_FORMAT_NOT_SUPPORTED);
        N(CL_BUILD_PROGRAM_FAILURE);
        N(CL_MAP_FAILURE);
        N(CL_MISALIGNED_SUB_BUFFER_OFFSET);
        N(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        N(CL_COMPILE_PROGRAM_FAILURE);
        N(CL_LINKER_NOT_AVAILABLE);
        N(CL_LINK_PROGRAM_FAILURE);
        N(CL_DEVICE_PARTITION_FAILED);
        N(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
        N(CL_INVALID_VALUE);
        N(CL_INVALID_DEVICE_TYPE);
        N(CL_INVALID_PLATFORM);
        N(CL_INVALID_DEVICE);
        N(CL_INVALID_CONTEXT);
        N(CL_INVALID_QUEUE_PROPERTIES);
        N(CL_INVALID_COMMAND_QUEUE);
        N(CL_INVALID_HOST_PTR);
        N(CL_INVALID_MEM_OBJECT);
        N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
        N(CL_INVALID_IMAGE_SIZE);
        N(CL_INVALID_SAMPLER);
        N(CL_INVALID_BINARY);
        N(CL_INVALID_BUILD_OPTIONS);
        N(CL_INVALID_PROGRAM);
        N(CL_INVALID_PROGRAM_EXECUTABLE);
        N(CL_INVALID_KERNEL_NAME);
        N(CL_INVALID_KERNEL_DEFINITION);
        N(CL_INVALID_KERNEL);
        N(CL_INVALID_ARG_INDEX);
        N(CL_INVALID_ARG_VALUE);
        N(CL_INVALID_ARG_SIZE);
        N(CL_INVALID_KERNEL_ARGS);
        N(CL_INVALID_WORK_DIMENSION);
        N(CL_INVALID_WORK_GROUP_SIZE);
        N(CL_INVALID_WORK_ITEM_SIZE);
        N(CL_INVALID_GLOBAL_OFFSET);
        N(CL_INVALID_EVENT_WAIT_LIST);
        N(CL_INVALID_EVENT);
        N(CL_INVALID_OPERATION);
        N(CL_INVALID_GL_OBJECT);
        N(CL_INVALID_BUFFER_SIZE);
        N(CL_INVALID_MIP_LEVEL);
        N(CL_INVALID_GLOBAL_WORK_SIZE);
        N(CL_INVALID_PROPERTY);
        N(CL_INVALID_IMAGE_DESCRIPTOR);
        N(CL_INVALID_COMPILER_OPTIONS);
        N(CL_INVALID_LINKER_OPTIONS);
        N(CL_INVALID_DEVICE_PARTITION_COUNT);
#undef N
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL status";
    }
}

int kcs_ocl_fail(kcs_error *err, const char *what, cl_int code)
{
    int kc = (code == CL_OUT_OF_HOST_MEMORY || code == CL_MEM_OBJECT_ALLOCATION_FAILURE)
                 ? KCS_E_NOMEM
                 : KCS_E_DEVICE;
    return kcs_fail(err, kc, "opencl: %s: %s (%d)", what, kcs_ocl_strerror(code), (int)code);
}

void kcs_ocl_copy(char *dst, size_t len, const char *src)
{
    if (len == 0)
        return;
    size_t n = 0;
    while (n < len - 1 && src[n])
        n++;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static const char *source_text(const char *file)
{
    for (const kcs_ocl_source *s = kcs_ocl_sources; s->name; s++)
        if (strcmp(s->name, file) == 0)
            return s->text;
    return NULL;
}

static int build_failed(kcs_backend_ctx *ctx, cl_program prog, const char *file,
                        const char *opts, cl_int rc, kcs_error *err)
{
    char log[700] = "";
    size_t len = 0;
    if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) ==
            CL_SUCCESS &&
        len > 0) {
        char *full = malloc(len + 1);
        if (full && clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, len, full,
                                          NULL) == CL_SUCCESS) {
            full[len] = 0;
            kcs_ocl_copy(log, sizeof log, full);
        }
        free(full);
    }
    return kcs_fail(err, rc == CL_INVALID_BUILD_OPTIONS ? KCS_E_INVAL : KCS_E_DEVICE,
                    "opencl: clBuildProgram(%s, \"%.120s\"): %s (%d); build log: %s", file, opts,
                    kcs_ocl_strerror(rc), (int)rc, log[0] ? log : "(empty)");
}

static int program(kcs_backend_ctx *ctx, const char *file, const kcs_kh_types *ty,
                   cl_program *prog_p, kcs_error *err)
{
    void *built;
    int full = kcs_kh_built_find(&ctx->progs, file, ty, &built, "opencl", "program", err);
    *prog_p = built;
    if (full || built)
        return full;
    const char *texts[2] = {source_text("common.cl"), source_text(file)};
    if (!texts[0] || !texts[1])
        return kcs_fail(err, KCS_E_INTERNAL, "opencl: kernel source %s not embedded", file);
    char opts[KCS_OCL_OPTS_MAX + 256];
    snprintf(opts, sizeof opts,
             "%s -DKCS_TIN=%d -DKCS_TACC=%d -DKCS_CONTRACT=%d -DKCS_TS=%d -DKCS_WPT=%d "
             "-DKCS_TSK=16 -DKCS_RWG=%d -DKCS_AWG=%d",
             ctx->options, ty->tin, ty->tacc, ctx->contract, ctx->kh.ts, ctx->kh.wpt, ctx->kh.rwg,
             ctx->kh.awg);
    cl_int rc;
    cl_program prog = clCreateProgramWithSource(ctx->context, 2, texts, NULL, &rc);
    if (rc != CL_SUCCESS)
        return kcs_ocl_fail(err, "clCreateProgramWithSource", rc);
    rc = kcs_ocl_build(ctx, prog, file, opts);
    if (rc != CL_SUCCESS) {
        build_failed(ctx, prog, file, opts, rc, err);
        clReleaseProgram(prog);
        return err->code;
    }
    kcs_kh_built_add(&ctx->progs, file, ty, prog);
    *prog_p = prog;
    return 0;
}

int kcs_ocl_kernel(kcs_backend_ctx *ctx, const char *file, const char *name,
                   const kcs_kh_types *ty, cl_kernel *kernel_p, kcs_error *err)
{
    cl_program prog = NULL;
    int rc = program(ctx, file, ty, &prog, err);
    if (rc)
        return rc;
    cl_int cr;
    cl_kernel k = clCreateKernel(prog, name, &cr);
    if (cr != CL_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "clCreateKernel(%s)", name);
        return kcs_ocl_fail(err, what, cr);
    }
    *kernel_p = k;
    return 0;
}

static const char *tin_name(int tin)
{
    static const char *const names[] = {"fp32", "fp64", "fp16", "bf16"};
    return names[tin];
}

/* Convert x into the storage of tin at dst[i]; 0 when exact. */
static int store_one(int tin, double x, void *dst, size_t i)
{
    switch (tin) {
    case KCS_KH_F64:
        ((double *)dst)[i] = x;
        return 0;
    case KCS_KH_F16:
        if (!kcs_format_exact(KCS_FMT_FP16, x))
            return -1;
        ((uint16_t *)dst)[i] = (uint16_t)kcs_format_encode(KCS_FMT_FP16, x);
        return 0;
    case KCS_KH_BF16: {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        if (isnan(x))
            u = 0x7fc00000u | (u & 0x80000000u);
        else if ((double)f != x || (u & 0xffffu))
            return -1;
        ((uint16_t *)dst)[i] = (uint16_t)(u >> 16);
        return 0;
    }
    default: {
        float f = (float)x;
        if ((double)f != x && !isnan(x))
            return -1;
        ((float *)dst)[i] = f;
        return 0;
    }
    }
}

int kcs_ocl_alloc(kcs_backend_ctx *ctx, size_t n, size_t elem, cl_mem *buf_p, kcs_error *err)
{
    cl_int rc;
    cl_mem b = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, (n ? n : 1) * elem, NULL, &rc);
    if (rc != CL_SUCCESS)
        return kcs_ocl_fail(err, "clCreateBuffer", rc);
    *buf_p = b;
    return 0;
}

int kcs_ocl_upload(kcs_backend_ctx *ctx, int tin, const double *x, size_t n, int which,
                   cl_mem *buf_p, kcs_error *err)
{
    size_t elem = tin == KCS_KH_F64 ? 8 : tin == KCS_KH_F32 ? 4 : 2;
    void *host = malloc((n ? n : 1) * elem);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "opencl: out of memory staging input %d", which);
    memset(host, 0, elem);
    for (size_t i = 0; i < n; i++) {
        if (store_one(tin, x[i], host, i)) {
            free(host);
            return kcs_fail(err, KCS_E_INVAL,
                            "opencl: input %d element %zu = %.17g is not exact in its %s storage",
                            which, i, x[i], tin_name(tin));
        }
    }
    cl_int rc;
    cl_mem b = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              (n ? n : 1) * elem, host, &rc);
    free(host);
    if (rc != CL_SUCCESS)
        return kcs_ocl_fail(err, "clCreateBuffer(input)", rc);
    *buf_p = b;
    return 0;
}

int kcs_ocl_download(kcs_backend_ctx *ctx, cl_mem buf, size_t n, int dbl, kcs_format fmt,
                     double *out, kcs_error *err)
{
    if (n == 0)
        return 0;
    size_t elem = dbl ? sizeof(double) : sizeof(float);
    void *host = malloc(n * elem);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "opencl: out of memory reading %zu results", n);
    cl_int rc = clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, n * elem, host, 0, NULL, NULL);
    if (rc != CL_SUCCESS) {
        free(host);
        return kcs_ocl_fail(err, "clEnqueueReadBuffer(output)", rc);
    }
    for (size_t i = 0; i < n; i++) {
        double v = dbl ? ((const double *)host)[i] : (double)((const float *)host)[i];
        out[i] = kcs_format_round(fmt, v, KCS_ROUND_DEFAULT);
    }
    free(host);
    return 0;
}
