/* The CPU backend's ops table: one device (this host), reference kernels,
 * and emulated silicon profiles selected at open time. */
#include <cblas.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "build_info.h"
#include "cpu.h"
#include "calib.h"
#include "declares.h"
#include "profile.h"

/* Ops the CPU backend implements; NULL entries answer KCS_E_UNSUPPORTED. */
static const kcs_cpu_op_fn cpu_ops[KCS_OP_COUNT] = {
    [KCS_OP_GEMM] = kcs_cpu_gemm,
    [KCS_OP_BATCHED_GEMM] = kcs_cpu_gemm,
    [KCS_OP_REDUCE_SUM] = kcs_cpu_reduce_sum,
    [KCS_OP_DOT] = kcs_cpu_dot,
    [KCS_OP_SOFTMAX] = kcs_cpu_softmax,
    [KCS_OP_LAYERNORM] = kcs_cpu_layernorm,
    [KCS_OP_RMSNORM] = kcs_cpu_rmsnorm,
    [KCS_OP_ATTENTION] = kcs_cpu_attention,
    [KCS_OP_GATHER] = kcs_cpu_gather,
    [KCS_OP_ALLREDUCE] = kcs_cpu_allreduce,
    [KCS_OP_ELEMENTWISE] = kcs_cpu_elementwise,
    [KCS_OP_NORM] = kcs_cpu_norm,
};

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ')
                    p++;
                p[strcspn(p, "\n")] = 0;
                snprintf(buf, len, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

static void cpu_fill_info(kcs_device_info *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->backend, sizeof d->backend, "cpu");
    d->index = 0;
    cpu_model(d->model, sizeof d->model);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(d->arch, sizeof d->arch, "%.63s", u.machine);
        snprintf(d->driver, sizeof d->driver, "%.20s %.42s", u.sysname, u.release);
    }
    snprintf(d->vendor, sizeof d->vendor, "host");
    snprintf(d->runtime, sizeof d->runtime, "%.63s", openblas_get_config());
    snprintf(d->uuid, sizeof d->uuid, "cpu-0");
}

static int cpu_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    (void)err;
    if (max > 0)
        cpu_fill_info(&out[0]);
    *count_p = 1;
    return 0;
}

static int cpu_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                    kcs_error *err)
{
    if (device_index > 0)
        return kcs_fail(err, KCS_E_NODEV, "cpu: no device %d (the cpu backend has device 0)",
                        device_index);
    if (cfg && cfg->profile && cfg->profile[0]) {
        /* Validate the profile spec (name and library path) now, not at
         * the first call. */
        char name[KCS_PROFILE_SPEC_MAX];
        kcs_libpath lp;
        kcs_error e = {0};
        if (kcs_profile_spec_parse(cfg->profile, name, &lp, &e))
            return kcs_fail(err, KCS_E_INVAL, "cpu: %s", e.msg);
    }
    kcs_backend_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return kcs_fail(err, KCS_E_NOMEM, "cpu: out of memory");
    if (cfg && cfg->profile)
        snprintf(ctx->profile, sizeof ctx->profile, "%s", cfg->profile);
    ctx->verbose = cfg ? cfg->verbose : 0;
    *ctx_p = ctx;
    return 0;
}

/* Fault-injection variants: instruments for testing the runner's timeout
 * and crash isolation, never a real implementation. */
static int cpu_fault(const kcs_call *call, kcs_error *err)
{
    if (strcmp(call->variant, "fault:hang") == 0) {
        for (;;) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (strcmp(call->variant, "fault:segv") == 0) {
        raise(SIGSEGV);
        return kcs_fail(err, KCS_E_INTERNAL, "cpu: fault:segv survived its signal");
    }
    return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: unknown fault variant '%s'", call->variant);
}

static int cpu_run(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err)
{
    if (call->variant && strncmp(call->variant, "fault:", 6) == 0)
        return cpu_fault(call, err);
    if (call->variant && strncmp(call->variant, "calib:", 6) == 0)
        return kcs_cpu_calib(ctx, call, err); /* calibration kernels (cpu/calib.h) */
    if (kcs_cpu_exp_variant_known(call->variant))
        return kcs_cpu_exp_variant(call, err); /* C-PRC-05's sweep kernels (cpu/defect_exp.c) */
    if (call->variant && strncmp(call->variant, "defect:", 7) == 0)
        return kcs_cpu_defect(call, err); /* bad kernels for signatures (cpu/defect.c) */
    if (call->op < 0 || call->op >= KCS_OP_COUNT || !cpu_ops[call->op])
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: op %s is not offered by this backend",
                        kcs_op_name(call->op));
    if (ctx->profile[0] && call->op != KCS_OP_GEMM && call->op != KCS_OP_BATCHED_GEMM)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "cpu: profile %s emulates matrix units; op %s has no emulation",
                        ctx->profile, kcs_op_name(call->op));
    if (kcs_cpu_nan_mask_applies(ctx, call))
        return kcs_cpu_nan_masked(ctx, cpu_ops[call->op], call, err);
    return cpu_ops[call->op](ctx, call, err);
}

static int cpu_describe(kcs_backend_ctx *ctx, kcs_device_info *info, kcs_error *err)
{
    (void)err;
    cpu_fill_info(info);
    if (ctx->profile[0])
        snprintf(info->arch, sizeof info->arch, "emulated %s", ctx->profile);
    return 0;
}

static void cpu_close(kcs_backend_ctx *ctx)
{
    free(ctx);
}

/* What the CPU backend's kernels declare (backend.h). The own kernels
 * compute every output row from its own inputs by the chosen schedule,
 * whatever m is (the fast paths are bit-identical to the model), so they
 * declare batch invariance; not under the atomic schedule (its order is
 * drawn per call) nor an emulated profile (a vendor library's dispatch).
 * OpenBLAS (native) claims nothing. The C-ORD-03 calibration kernels all
 * declare it: that is what their contract checks; so do the sweep's
 * batch-dependent and always-raising defects (defect_proto.c). The own
 * kernels also declare nan_mask: they implement nan=mask when asked
 * (nan_policy.c), and round_to_nearest where they do (below). */
static uint32_t cpu_declares(kcs_backend_ctx *ctx, const kcs_call *call)
{
    const char *v = call->variant ? call->variant : "";
    if (strncmp(v, "calib:C-ORD-03:", 15) == 0 || strncmp(v, "defect:batch-", 13) == 0 ||
        strcmp(v, "defect:always-raise") == 0)
        return KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT);
    if (strncmp(v, "calib:C-PRC-06:", 15) == 0 || /* their contracts bind only these */
        strncmp(v, "calib:C-PRC-07:", 15) == 0 ||
        strncmp(v, "calib:C-CMP-01:", 15) == 0) /* fp32 online softmax; bad: P in bf16,
                                                    both rounding to nearest */
        return KCS_DECL_BIT(KCS_DECL_ROUND_NEAREST);
    if (ctx && ctx->profile[0]) /* an emulated matrix unit declares nothing */
        return 0;
    int own = strcmp(v, "own") == 0;
    uint32_t d = 0;
    /* the own kernels implement nan=mask (nan_policy.c) */
    if (own || strcmp(v, "own:exact") == 0)
        d |= KCS_DECL_BIT(KCS_DECL_NAN_MASK);
    if (own && call->schedule.kind != KCS_SCHED_ATOMIC)
        d |= KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT);
    /* rounding to nearest: the own and fused kernels unless their
     * accumulator truncates (acc ...:rz); the native kernels (OpenBLAS,
     * C loops in fp32/fp64) */
    if (((own || strcmp(v, "fused") == 0) && !call->acc.rz) || v[0] == 0 ||
        strcmp(v, "native") == 0)
        d |= KCS_DECL_BIT(KCS_DECL_ROUND_NEAREST);
    return d;
}

const kcs_backend_ops kcs_backend_cpu = {
    KCS_BACKEND_OPS(cpu, "cpu"),
    .declares = cpu_declares,
};
