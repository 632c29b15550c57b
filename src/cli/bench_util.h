/* Timing helpers shared by the kcs bench sub-benchmarks (bench*.c). */
#ifndef KCS_BENCH_UTIL_H
#define KCS_BENCH_UTIL_H

/* Monotonic wall clock, seconds. */
double kcs_bench_now(void);
/* Sorts v[0..n); returns the median and, if best_p, the minimum. n >= 1. */
double kcs_bench_median(double *v, int n, double *best_p);
/* bench_freivalds_device.c: `kcs bench freivalds --backend B`. */
int kcs_bench_freivalds_device(const char *backend, int device, const long *sizes, int ns,
                               const long *ks, int nk, long reps, int nt);

#endif
