/* The ops table every backend fills (DESIGN §4). The core never includes a
 * vendor header: each backend lives in backends/<name>/ and exports one
 * const kcs_backend_ops. Every slot is filled; an op a backend does not
 * offer returns KCS_E_UNSUPPORTED, a missing driver KCS_E_NODEV. */
#ifndef KCS_BACKEND_H
#define KCS_BACKEND_H

#include "error.h"
#include "op.h"

#define KCS_BACKEND_ABI 1
#define KCS_MAX_DEVICES 16

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
    /* 1: run() executes the kernel in another process (plugin: the worker of
     * include/kcs_worker.h) and enforces call->time_limit_s itself; a crash
     * or timeout there fails that call only, and the backend stays usable
     * (a fresh worker takes the next call). */
    int isolated;
} kcs_backend_ops;

/* The registry (backends/registry.c): NULL-terminated list of the backends
 * compiled in, filtered by KCS_BACKENDS ("-hip,-cuda" excludes, "cpu,opencl"
 * selects). */
const kcs_backend_ops *const *kcs_backends_all(void);
const kcs_backend_ops *kcs_backend_find(const char *name);
/* Whether the backend is compiled in but excluded by KCS_BACKENDS. */
int kcs_backend_excluded(const char *name);

#endif
