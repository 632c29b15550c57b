/* Timing helpers shared by the kcs bench sub-benchmarks (bench*.c). */
#ifndef KCS_BENCH_UTIL_H
#define KCS_BENCH_UTIL_H

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define KCS_BENCH_CLONES                                                                         \
    __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define KCS_BENCH_CLONES
#endif

/* Defines `static double NAME(const T *x, size_t n)`: the sum of x[0..n) with four
 * independent accumulators of the vector type VT (of T), the streaming-read floor the
 * benchmarks compare against. */
#define KCS_BENCH_STREAM_SUM(NAME, T, VT)                                                        \
    KCS_BENCH_CLONES static double NAME(const T *x, size_t n)                                    \
    {                                                                                            \
        VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                               \
        size_t i = 0, w = sizeof(VT) / sizeof(T);                                                \
        for (; i + 4 * w <= n; i += 4 * w) {                                                     \
            VT v[4];                                                                             \
            memcpy(v, x + i, sizeof v);                                                          \
            a0 += v[0];                                                                          \
            a1 += v[1];                                                                          \
            a2 += v[2];                                                                          \
            a3 += v[3];                                                                          \
        }                                                                                        \
        a0 += a1 + a2 + a3;                                                                      \
        double s = 0;                                                                            \
        for (size_t k = 0; k < w; k++)                                                           \
            s += a0[k];                                                                          \
        for (; i < n; i++)                                                                       \
            s += x[i];                                                                           \
        return s;                                                                                \
    }

/* Monotonic wall clock, seconds. */
double kcs_bench_now(void);
/* Sorts v[0..n); returns the median and, if best_p, the minimum. n >= 1. */
double kcs_bench_median(double *v, int n, double *best_p);
/* bench_freivalds_device.c: `kcs bench freivalds --backend B`. */
int kcs_bench_freivalds_device(const char *backend, int device, const long *sizes, int ns,
                               const long *ks, int nk, long reps, int nt);

#endif
