#include "stage_time.h"

#include <string.h>
#include <time.h>

double kcs_stage_seconds[2 * KCS_STAGE_COUNT];

double kcs_stage_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double kcs_stage_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void kcs_stage_reset(void)
{
    memset(kcs_stage_seconds, 0, sizeof kcs_stage_seconds);
}

const char *kcs_stage_name(kcs_stage s)
{
    static const char *const names[KCS_STAGE_COUNT] = {
        "inputs", "oracle", "kernel", "metrics", "verdict", "store", "journal", "sync"};
    return (unsigned)s < KCS_STAGE_COUNT ? names[s] : "?";
}
