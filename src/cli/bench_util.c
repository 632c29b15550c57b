/* Timing helpers shared by the kcs bench sub-benchmarks (bench_util.h). */
#include "bench_util.h"

#include <stdlib.h>
#include <time.h>

double kcs_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kcs_bench_median(double *v, int n, double *best_p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    if (best_p)
        *best_p = v[0];
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
