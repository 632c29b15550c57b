/* The suite fixture of the unit suites that call the cpu backend directly
 * (test_ops.c, test_defect_exp.c): ctx opened before the suite runs,
 * closed after it. */
#ifndef KCS_TEST_CPU_FIXTURE_H
#define KCS_TEST_CPU_FIXTURE_H

#include <stdio.h>

#include "backend.h"

extern const kcs_backend_ops kcs_backend_cpu; /* backends/cpu (no header) */
static kcs_backend_ctx *ctx;

static int open_cpu(void)
{
    kcs_error err = {0};
    if (kcs_backend_cpu.open(0, NULL, &ctx, &err)) {
        fprintf(stderr, "cpu backend: %s\n", err.msg);
        return 1;
    }
    return 0;
}

static int close_cpu(void)
{
    kcs_backend_cpu.close(ctx);
    return 0;
}

#endif
