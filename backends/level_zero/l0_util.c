/* Level Zero helpers: status names, the module cache (embedded SPIR-V ->
 * ze_module per (file, types)), kernel launches on the immediate command
 * list, device buffers and the host <-> device conversions of kcs values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "l0_internal.h"
#include "l0_spirv.h"

const char *kcs_l0_strerror(ze_result_t r)
{
    switch (r) {
#define N(c) case c: return #c
        N(ZE_RESULT_SUCCESS);
        N(ZE_RESULT_NOT_READY);
        N(ZE_RESULT_ERROR_DEVICE_LOST);
        N(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
        N(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
        N(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
        N(ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
        N(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET);
        N(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE);
        N(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS);
        N(ZE_RESULT_ERROR_NOT_AVAILABLE);
        N(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
        N(ZE_RESULT_ERROR_UNINITIALIZED);
        N(ZE_RESULT_ERROR_UNSUPPORTED_VERSION);
        N(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        N(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        N(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        N(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        N(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        N(ZE_RESULT_ERROR_INVALID_SIZE);
        N(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        N(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
        N(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
        N(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        N(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
        N(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT);
        N(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
        N(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
        N(ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
        N(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME);
        N(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
        N(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION);
        N(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
        N(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
        N(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE);
        N(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED);
        N(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
        N(ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
        N(ZE_RESULT_ERROR_UNKNOWN);
#undef N
    default: return "unknown Level Zero result";
    }
}

int kcs_l0_fail(kcs_error *err, const char *what, ze_result_t r)
{
    int code = (r == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY || r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
                   ? KCS_E_NOMEM
                   : KCS_E_DEVICE;
    return kcs_fail(err, code, "level_zero: %s: %s (0x%08x)", what, kcs_l0_strerror(r),
                    (unsigned)r);
}

/* ---- modules ----------------------------------------------------------------- */

static const kcs_l0_spirv *spirv_of(const char *file, const kcs_kh_types *ty)
{
    for (const kcs_l0_spirv *s = kcs_l0_spirv_modules; s->file; s++)
        if (s->tin == ty->tin && s->tacc == ty->tacc && strcmp(s->file, file) == 0)
            return s;
    return NULL;
}

static int build_failed(ze_module_build_log_handle_t log, const char *file, ze_result_t r,
                        kcs_error *err)
{
    char text[600] = "";
    size_t len = 0;
    if (log && zeModuleBuildLogGetString(log, &len, NULL) == ZE_RESULT_SUCCESS && len > 0) {
        char *full = malloc(len + 1);
        if (full && zeModuleBuildLogGetString(log, &len, full) == ZE_RESULT_SUCCESS) {
            full[len] = 0;
            snprintf(text, sizeof text, "%s", full);
        }
        free(full);
    }
    return kcs_fail(err, KCS_E_DEVICE, "level_zero: zeModuleCreate(%s): %s (0x%08x); build log: %s",
                    file, kcs_l0_strerror(r), (unsigned)r, text[0] ? text : "(empty)");
}

static int module(kcs_backend_ctx *ctx, const char *file, const kcs_kh_types *ty,
                  ze_module_handle_t *mod_p, kcs_error *err)
{
    void *built;
    int full = kcs_kh_built_find(&ctx->mods, file, ty, &built, "level_zero", "module", err);
    *mod_p = built;
    if (full || built)
        return full;
    const kcs_l0_spirv *s = spirv_of(file, ty);
    if (!s)
        return kcs_fail(err, KCS_E_INTERNAL, "level_zero: no SPIR-V for %s (tin %d, tacc %d)",
                        file, ty->tin, ty->tacc);
    ze_module_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
        .format = ZE_MODULE_FORMAT_IL_SPIRV,
        .inputSize = s->size,
        .pInputModule = s->data,
        .pBuildFlags = ctx->options,
    };
    ze_module_handle_t mod = NULL;
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = zeModuleCreate(ctx->context, ctx->device, &desc, &mod, &log);
    if (r != ZE_RESULT_SUCCESS) {
        build_failed(log, file, r, err);
        if (log)
            zeModuleBuildLogDestroy(log);
        if (mod)
            zeModuleDestroy(mod);
        return err->code;
    }
    if (log)
        zeModuleBuildLogDestroy(log);
    kcs_kh_built_add(&ctx->mods, s->file, ty, mod);
    *mod_p = mod;
    return 0;
}

void kcs_l0_release_modules(kcs_backend_ctx *ctx)
{
    for (int i = 0; i < ctx->mods.n; i++)
        zeModuleDestroy(ctx->mods.at[i].handle);
    ctx->mods.n = 0;
}

/* ---- launches ------------------------------------------------------------------ */

static long set_arg(void *k, unsigned i, size_t size, const void *value)
{
    return (long)zeKernelSetArgumentValue((ze_kernel_handle_t)k, (uint32_t)i, size, value);
}

static int set_args(ze_kernel_handle_t k, const kcs_kh_launch *l, void *const *buf,
                    kcs_error *err)
{
    char what[96];
    long r = kcs_kh_set_args(k, set_arg, l, buf, sizeof buf[0], "zeKernelSetArgumentValue", what);
    return r ? kcs_l0_fail(err, what, (ze_result_t)r) : 0;
}

int kcs_l0_launch(kcs_backend_ctx *ctx, const kcs_kh_types *ty, const kcs_kh_launch *l,
                  void *const *buf, kcs_error *err)
{
    const char *name = l->name;
    uint32_t g[3] = {1, 1, 1}, gs[3] = {1, 1, 1};
    for (int d = 0; d < l->dims; d++) {
        if (l->global[d] == 0)
            return 0;
        if (l->global[d] > UINT32_MAX)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero: %s: global size %zu too large",
                            name, l->global[d]);
        g[d] = (uint32_t)l->global[d];
        if (l->has_local)
            gs[d] = (uint32_t)l->local[d];
    }
    ze_module_handle_t mod = NULL;
    int rc = module(ctx, l->file, ty, &mod, err);
    if (rc)
        return rc;
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
    ze_kernel_handle_t k = NULL;
    char what[96];
    snprintf(what, sizeof what, "zeKernelCreate(%s)", name);
    ze_result_t r = zeKernelCreate(mod, &kd, &k);
    if (r != ZE_RESULT_SUCCESS)
        return kcs_l0_fail(err, what, r);
    if (!l->has_local)
        rc = KCS_ZE_CHECK(err, zeKernelSuggestGroupSize,
                          (k, g[0], g[1], g[2], &gs[0], &gs[1], &gs[2]));
    if (!rc)
        rc = KCS_ZE_CHECK(err, zeKernelSetGroupSize, (k, gs[0], gs[1], gs[2]));
    if (!rc)
        rc = set_args(k, l, buf, err);
    if (!rc) {
        ze_group_count_t groups = {(g[0] + gs[0] - 1) / gs[0], (g[1] + gs[1] - 1) / gs[1],
                                   (g[2] + gs[2] - 1) / gs[2]};
        rc = KCS_ZE_CHECK(err, zeCommandListAppendLaunchKernel,
                          (ctx->list, k, &groups, NULL, 0, NULL));
    }
    if (rc)
        kcs_error_prefix(err, "%s", name);
    zeKernelDestroy(k);
    return rc;
}

/* ---- buffers ----------------------------------------------------------------- */

int kcs_l0_alloc(kcs_backend_ctx *ctx, size_t n, size_t elem, void **p_p, kcs_error *err)
{
    ze_device_mem_alloc_desc_t d = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    size_t bytes = (n ? n : 1) * elem;
    return KCS_ZE_CHECK(err, zeMemAllocDevice, (ctx->context, &d, bytes, 64, ctx->device, p_p));
}

void kcs_l0_free(kcs_backend_ctx *ctx, void *p)
{
    if (p)
        zeMemFree(ctx->context, p);
}

int kcs_l0_put(kcs_backend_ctx *ctx, void *dst, const void *src, size_t bytes, kcs_error *err)
{
    if (!bytes)
        return 0;
    return KCS_ZE_CHECK(err, zeCommandListAppendMemoryCopy,
                        (ctx->list, dst, src, bytes, NULL, 0, NULL));
}

int kcs_l0_get(kcs_backend_ctx *ctx, void *dst, const void *src, size_t bytes, kcs_error *err)
{
    return kcs_l0_put(ctx, dst, src, bytes, err); /* the list is synchronous */
}

int kcs_l0_upload(kcs_backend_ctx *ctx, int tin, kcs_format fmt, const double *x, size_t n,
                  void **p_p, kcs_error *err)
{
    size_t es = tin == KCS_KH_F64 ? 8 : tin == KCS_KH_F32 ? 4 : 2;
    void *host = malloc((n ? n : 1) * es), *dev = NULL;
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "level_zero: out of memory packing %zu inputs", n);
    for (size_t i = 0; i < n; i++) {
        if (tin == KCS_KH_F64)
            ((double *)host)[i] = x[i];
        else if (tin == KCS_KH_F32)
            ((float *)host)[i] = (float)x[i];
        else
            ((uint16_t *)host)[i] = (uint16_t)kcs_format_encode(fmt, x[i]);
    }
    int rc = kcs_l0_alloc(ctx, n, es, &dev, err);
    if (!rc)
        rc = kcs_l0_put(ctx, dev, host, n * es, err);
    free(host);
    if (rc) {
        kcs_l0_free(ctx, dev);
        return rc;
    }
    *p_p = dev;
    return 0;
}

int kcs_l0_download(kcs_backend_ctx *ctx, const void *buf, size_t n, int dbl, kcs_format fmt,
                    double *out, kcs_error *err)
{
    size_t es = dbl ? 8 : 4;
    void *host = malloc((n ? n : 1) * es);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "level_zero: out of memory reading %zu outputs", n);
    int rc = kcs_l0_get(ctx, host, buf, n * es, err);
    for (size_t i = 0; !rc && i < n; i++) {
        double v = dbl ? ((double *)host)[i] : (double)((float *)host)[i];
        out[i] = kcs_format_round(fmt, v, KCS_ROUND_DEFAULT);
    }
    free(host);
    return rc;
}
