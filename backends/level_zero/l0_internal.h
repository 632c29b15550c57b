/* Level Zero backend internals: the context, the module cache, buffer and
 * launch helpers (l0_util.c), driver/device enumeration (l0_device.c) and
 * the executor of the plans of backends/kernels_host (l0_exec.c). The
 * kernels are the OpenCL C sources of backends/kernels compiled offline to
 * SPIR-V (l0_spirv.h); kernels_host chooses them, their arguments and work
 * sizes, shared with the opencl backend. Only files in
 * backends/level_zero/ include this header (and so ze_api.h). */
#ifndef KCS_L0_INTERNAL_H
#define KCS_L0_INTERNAL_H

#include <level_zero/ze_api.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "kernels_host.h"

/* Work sizes the SPIR-V was compiled with (-DKCS_TS=64 ... in CMake) */
#define KCS_L0_TS 64
#define KCS_L0_WPT 4
#define KCS_L0_RWG 64
#define KCS_L0_AWG 64

struct kcs_backend_ctx {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    ze_command_list_handle_t list; /* immediate, synchronous */
    kcs_device_info info;
    kcs_kh_device kh; /* fp64, work-group and local memory sizes, KCS_L0_TS... */
    char options[256]; /* module build flags (cfg->options) */
    kcs_kh_built mods; /* ze_module_handle_t */
    int verbose;
};

/* l0_util.c */
const char *kcs_l0_strerror(ze_result_t r);
/* "level_zero: <what>: <ZE name> (0x...)"; KCS_E_NOMEM for allocation
 * failures, KCS_E_DEVICE otherwise. */
int kcs_l0_fail(kcs_error *err, const char *what, ze_result_t r);
static inline int kcs_ze_check(ze_result_t r, const char *what, kcs_error *err)
{
    return r == ZE_RESULT_SUCCESS ? 0 : kcs_l0_fail(err, what, r);
}
/* KCS_ZE_CHECK(err, zeMemAllocDevice, (...)): call, name it in the message. */
#define KCS_ZE_CHECK(err, fn, args) kcs_ze_check(fn args, #fn, (err))

/* Launch l->name of l->file built for the types, its buffer arguments from
 * buf. Without l->has_local the driver suggests a group size and the grid
 * is rounded up (the kernels check their bounds); else the global sizes
 * are multiples of local. Synchronous. Nothing is launched when a global
 * size is 0. */
int kcs_l0_launch(kcs_backend_ctx *ctx, const kcs_kh_types *ty, const kcs_kh_launch *l,
                  void *const *buf, kcs_error *err);
void kcs_l0_release_modules(kcs_backend_ctx *ctx);

/* Device buffers (n = 0 gives one element); NULL-safe free. */
int kcs_l0_alloc(kcs_backend_ctx *ctx, size_t n, size_t elem, void **p_p, kcs_error *err);
void kcs_l0_free(kcs_backend_ctx *ctx, void *p);
int kcs_l0_put(kcs_backend_ctx *ctx, void *dst, const void *src, size_t bytes, kcs_error *err);
int kcs_l0_get(kcs_backend_ctx *ctx, void *dst, const void *src, size_t bytes, kcs_error *err);
/* n doubles (exact in storage tin) -> a new device buffer */
int kcs_l0_upload(kcs_backend_ctx *ctx, int tin, kcs_format fmt, const double *x, size_t n,
                  void **p_p, kcs_error *err);
/* n float (dbl 0) / double (dbl 1) results -> out, each rounded to fmt */
int kcs_l0_download(kcs_backend_ctx *ctx, const void *buf, size_t n, int dbl, kcs_format fmt,
                    double *out, kcs_error *err);

/* l0_device.c: GPU devices of every driver, in driver order. */
int kcs_l0_devices(ze_driver_handle_t *drivers, ze_device_handle_t *devs, int max,
                   int *count_p, kcs_error *err);
int kcs_l0_device_info(ze_driver_handle_t drv, ze_device_handle_t dev, int index,
                       kcs_device_info *info, int *has_fp64_p, uint32_t *max_group_p,
                       uint32_t *local_mem_p, kcs_error *err);
/* Ordinal of a compute-capable command queue group. */
int kcs_l0_compute_ordinal(ze_device_handle_t dev, uint32_t *ordinal_p, kcs_error *err);

/* l0_exec.c: run a plan of kernels_host (kcs_kh_exec_fn). */
int kcs_l0_exec(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                const kcs_kh_plan *plan, kcs_error *err);

#endif
