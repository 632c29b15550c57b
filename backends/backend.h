/* The ops table every backend fills (DESIGN §4). The core never includes a
 * vendor header: each backend lives in backends/<name>/ and exports one
 * const kcs_backend_ops. Every slot is filled; an op a backend does not
 * offer returns KCS_E_UNSUPPORTED, a missing driver KCS_E_NODEV. */
#ifndef KCS_BACKEND_H
#define KCS_BACKEND_H

#include "error.h"
#include "freivalds.h"
#include "op.h"

/* 2: the freivalds slot; the vendor backends are loadable modules.
 * 3: the declares slot. */
#define KCS_BACKEND_ABI 3

typedef struct kcs_device_info {
    char backend[16];
    int index;
    char vendor[64];
    char model[128];
    char arch[64];
    char driver[64];
    char runtime[64];
    char uuid[48];
} kcs_device_info;

typedef struct kcs_backend_config {
    const char *profile; /* emulated silicon profile (cpu) or NULL */
    const char *path;    /* plugin library path (plugin) or NULL */
    const char *options; /* backend build options, e.g. "-cl-fast-relaxed-math" */
    int verbose;
} kcs_backend_config;

typedef struct kcs_backend_ctx kcs_backend_ctx; /* defined by each backend */

typedef struct kcs_backend_ops {
    int abi; /* KCS_BACKEND_ABI */
    const char *name;
    int (*discover)(kcs_device_info *out, int max, int *count_p, kcs_error *err);
    int (*open)(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                kcs_error *err);
    int (*run)(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);
    int (*describe)(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err);
    void (*close)(kcs_backend_ctx *ctx);
    /* Batched Freivalds check of C ~= A*B on the backend's device
     * (backends/freivalds_device.h), or NULL where the backend has none. */
    int (*freivalds)(int device, const float *A, const float *B, const float *C, long m,
                     long kk, long n, const kcs_fv_params *p, const kcs_fv_detail *detail,
                     kcs_fv_result *res_p, kcs_error *err);
    /* Seconds of one fp32 GEMM (m x kk by kk x n) by the backend's native
     * library on data already on the device (median of reps, timed by
     * device events, no transfers): what `kcs bench freivalds --backend`
     * sets the device check against. NULL where the backend has none. */
    int (*sgemm_seconds)(int device, long m, long kk, long n, int reps, double *seconds_p,
                         kcs_error *err);
    /* 1: run() executes the kernel in another process (plugin: the worker of
     * include/kcs_worker.h) and enforces call->time_limit_s itself; a crash
     * or timeout there fails that call only, and the backend stays usable
     * (a fresh worker takes the next call). */
    int isolated;
    /* What the kernel that would run `call` (its op, variant, schedule,
     * profile) declares about itself: a mask of KCS_DECL_BIT(kcs_decl)
     * (src/arith/declares.h), e.g. batch invariance. A plugin reports its
     * library's declaration, the CPU backend those of its own variants.
     * NULL: the backend's kernels declare nothing. */
    uint32_t (*declares)(kcs_backend_ctx *ctx, const kcs_call *call);
} kcs_backend_ops;

/* The first members of the ops of a backend whose entry points are named
 * P_discover, P_open, P_run, P_describe and P_close; the optional ones
 * follow, e.g.
 *   const kcs_backend_ops kcs_backend_cpu = {
 *       KCS_BACKEND_OPS(cpu, "cpu"),
 *       .declares = cpu_declares,
 *   }; */
#define KCS_BACKEND_OPS(P, NAME)                                                             \
    .abi = KCS_BACKEND_ABI, .name = NAME, .discover = P##_discover, .open = P##_open,         \
    .run = P##_run, .describe = P##_describe, .close = P##_close

/* The registry (backends/registry.c), the one list of backends. cpu and
 * plugin are part of libkcs; the vendor backends (opencl, cuda, hip,
 * level_zero) are modules, libkcs_backend_<name>.so in the kcs/ folder next
 * to libkcs (KCS_BACKEND_DIR overrides), each linking its vendor runtime,
 * loaded on first use: libkcs and kcs need no vendor library, and a node
 * without a runtime sees that backend as unavailable with the loader's
 * reason. Nothing is loaded until one of these asks for a backend (except
 * kcs_backend_count/_name, which load nothing).
 *
 * kcs_backends_all: NULL-terminated list of the backends built, not
 * excluded by KCS_BACKENDS ("-hip,-cuda" excludes, "cpu,opencl" selects),
 * whose module loads (loads every one). */
const kcs_backend_ops *const *kcs_backends_all(void);
/* The backend by name (loading its module), or NULL: see kcs_backend_why. */
const kcs_backend_ops *kcs_backend_find(const char *name);
/* Whether the backend is built but excluded by KCS_BACKENDS. */
int kcs_backend_excluded(const char *name);
/* Whether kcs has a backend of that name at all (built here or not). */
int kcs_backend_known(const char *name);
/* Every backend built, loaded or not, excluded or not: count and names. */
int kcs_backend_count(void);
const char *kcs_backend_name(int i);
/* Why kcs_backend_find(name) is NULL ("not compiled in", "excluded by
 * KCS_BACKENDS", "unavailable: <loader message>"), or NULL when it is not
 * (loads the module). */
const char *kcs_backend_why(const char *name);
/* Every backend built, "; "-separated: "name", "name: excluded by
 * KCS_BACKENDS", "name: unavailable: <why>" (module not loadable, or with
 * probe its driver/device missing), with probe "name: N devices". */
void kcs_backends_describe(char *buf, size_t len, int probe);
/* Whether the backend is a loadable module (its path in buf when so). */
int kcs_backend_module_path(const char *name, char *buf, size_t len);

#endif
