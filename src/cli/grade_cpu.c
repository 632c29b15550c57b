/* kcs grade --backend cpu: the CPU backend's kernels bound as the graded
 * implementation (variant, accumulator, schedule and profile as a study's
 * placement would set them). */
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "cli.h"

int kcs_grade_bind_cpu(const char *variant, const char *acc, const char *schedule,
                       const char *profile, kcs_rank_binding *b, kcs_error *err)
{
    memset(b, 0, sizeof *b);
    snprintf(b->pl.backend, sizeof b->pl.backend, "cpu");
    snprintf(b->pl.variant, sizeof b->pl.variant, "%s", variant ? variant : "native");
    if (strcmp(b->pl.variant, "native") && strcmp(b->pl.variant, "own") &&
        strcmp(b->pl.variant, "fused") && strncmp(b->pl.variant, "calib:", 6))
        return kcs_fail(err, KCS_E_INVAL,
                        "--variant: '%s' is not native, own, fused or calib:ID:STATE", variant);
    b->pl.schedule.kind = KCS_SCHED_SEQUENTIAL;
    if (schedule && kcs_schedule_parse(schedule, &b->pl.schedule))
        return kcs_fail(err, KCS_E_INVAL, "--schedule: '%s' is not sequential, pairwise, "
                        "blocked:B, splitk:S or atomic", schedule);
    if (acc) {
        if (kcs_acc_parse(acc, &b->pl.acc))
            return kcs_fail(err, KCS_E_INVAL, "--acc: '%s' is not a format, bits:N or either "
                            "with :rz", acc);
        b->pl.acc_set = 1;
    }
    if (profile)
        snprintf(b->pl.profile, sizeof b->pl.profile, "%s", profile);
    const kcs_backend_ops *ops = kcs_backend_find("cpu");
    if (!ops)
        return kcs_fail(err, KCS_E_NODEV, "backend cpu is %s",
                        kcs_backend_excluded("cpu") ? "excluded by KCS_BACKENDS"
                                                    : "not compiled in");
    kcs_backend_config cfg = {.profile = profile};
    int rc = ops->open(0, &cfg, &b->ctx, err);
    if (rc) {
        b->ctx = NULL;
        return rc;
    }
    b->ops = ops;
    kcs_error e = {0};
    if (ops->describe(b->ctx, &b->info, &e) != 0)
        snprintf(b->why, sizeof b->why, "describe: %s", e.msg);
    snprintf(b->status, sizeof b->status, "ok");
    return 0;
}
