/* kcs bench metrics: throughput of the metrics stage of a trial, the two
 * calls protocol.c makes on every output (metrics.h): kcs_metrics_compute
 * (abs/rel/ULP/backward/componentwise errors against the oracle) and
 * kcs_digest_values (XXH3 over the output format's encoding), each timed on
 * its own, next to a floor measured in the same run: a plain streaming sum
 * over the same bytes (the arrays that call reads), on one thread as the
 * stage runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "grow.h"
#include "cli.h"
#include "format.h"
#include "metrics.h"
#include "rng.h"
#include "tensor.h"

int kcs_bench_metrics(int argc, char **argv);

typedef double bm_vd __attribute__((vector_size(32)));

#define BM_MAX_SIZES 16
#define BM_MAX_FMTS 8
#define BM_MIN_REP_S 0.02 /* one repetition: at least this long of back-to-back calls */

static volatile double bm_sink;

/* The floor: sum of x[0..n) with independent vector accumulators. */
KCS_BENCH_STREAM_SUM(stream_sum, double, bm_vd)

/* A comma-separated list of counts, each a number or 2^N; -1 if malformed. */
static int parse_sizes(const char *s, long long *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0)
            return -1;
        if (*end == '^') {
            long long e = strtoll(end + 1, &end, 10);
            if (v != 2 || e < 0 || e > 40)
                return -1;
            v = 1ll << e;
        }
        if (n == max || (*end && *end != ','))
            return -1;
        out[n++] = v;
        s = *end ? end + 1 : end;
    }
    return n;
}

/* ref: the oracle (fp64); y: a kernel's output in fmt, a few ULP off;
 * absref: the |A||B| magnitudes (>= |ref|). */
static void fill(double *y, double *ref, double *absref, size_t n, kcs_format fmt)
{
    kcs_rng r;
    kcs_rng_init(&r, 2024, 11, (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        ref[i] = 8.0 * kcs_rng_normal(&r);
        absref[i] = 4.0 * fabs(ref[i]) + 0.5;
        double noisy = ref[i] * (1.0 + 0x1p-20 * kcs_rng_normal(&r));
        y[i] = kcs_format_round(fmt, noisy, KCS_ROUND_DEFAULT);
    }
}

enum { J_METRICS, J_FLOOR3, J_DIGEST, J_FLOOR1, J_COUNT };

typedef struct bm_data {
    const double *y, *ref, *absref;
    size_t n;
    kcs_format fmt;
    double sentinel;
} bm_data;

static void run_job(const bm_data *d, int job)
{
    kcs_metrics m;
    switch (job) {
    case J_METRICS:
        kcs_metrics_compute(d->y, d->ref, d->absref, d->n, d->fmt, 1e3, 1024, d->sentinel, &m);
        bm_sink += m.max_ulp;
        break;
    case J_FLOOR3:
        bm_sink += stream_sum(d->y, d->n) + stream_sum(d->ref, d->n) + stream_sum(d->absref, d->n);
        break;
    case J_DIGEST:
        bm_sink += (double)(kcs_digest_values(d->y, d->n, d->fmt) & 0xff);
        break;
    default:
        bm_sink += stream_sum(d->y, d->n);
        break;
    }
}

/* Median seconds per call of each job, repetitions interleaved (each
 * repetition runs every job in turn, so drift hits them alike). */
static void time_jobs(const bm_data *d, int reps, double *t, double med[J_COUNT])
{
    long inner[J_COUNT];
    for (int j = 0; j < J_COUNT; j++) {
        double t0 = kcs_bench_now();
        run_job(d, j); /* warm-up; sizes the repetition */
        double one = kcs_bench_now() - t0;
        inner[j] = one >= BM_MIN_REP_S ? 1 : (long)ceil(BM_MIN_REP_S / fmax(one, 1e-9));
    }
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < J_COUNT; j++) {
            double t0 = kcs_bench_now();
            for (long i = 0; i < inner[j]; i++)
                run_job(d, j);
            t[j * reps + r] = (kcs_bench_now() - t0) / (double)inner[j];
        }
    for (int j = 0; j < J_COUNT; j++)
        med[j] = kcs_bench_median(t + j * reps, reps, NULL);
}

/* Single-thread read bandwidth (GB/s): the floor kernel on mib MiB, median of 7. */
static double measure_bw(long long mib)
{
    size_t n = (size_t)mib << 17;
    double *x = malloc(n * sizeof *x), v[7];
    if (!x)
        return NAN;
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(i & 7);
    for (int r = 0; r < 7; r++) {
        double t0 = kcs_bench_now();
        bm_sink += stream_sum(x, n);
        v[r] = (double)(n * sizeof *x) / (kcs_bench_now() - t0) / 1e9;
    }
    free(x);
    return kcs_bench_median(v, 7, NULL);
}

int kcs_bench_metrics(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "bench metrics", "[--sizes LIST] [--formats LIST] [--reps R]",
        "Throughput of the metrics stage of a trial: kcs_metrics_compute (abs/rel/ULP/\n"
        "backward/componentwise errors of an output against its oracle) and kcs_digest_values\n"
        "(XXH3 over the output format's encoding), timed separately, each next to a floor\n"
        "measured in the same run: a streaming fp64 sum over the same arrays. One thread.",
        "metrics reads y, ref and |A||B| (24 bytes per element); digest reads y (8 bytes).\n"
        "ms/call: median over R repetitions of the time per call (a repetition makes\n"
        "back-to-back calls for at least 20 ms); GB/s: bytes read / ms/call; floor_ms: the\n"
        "streaming sum over the same bytes, timed interleaved with the stage;\n"
        "x_floor = ms/call / floor_ms. Sizes: counts or powers written 2^N."};
    const char *sizes_s = "2^16,2^20,2^24", *fmts_s = "fp32,bf16";
    long long reps = 5, bw_mib = 256;
    const kcs_opt opts[] = {
        {0, "sizes", KCS_OPT_STR, &sizes_s, "LIST", "elements per output (default 2^16,2^20,2^24)"},
        {0, "formats", KCS_OPT_STR, &fmts_s, "LIST", "output formats (default fp32,bf16)"},
        {0, "reps", KCS_OPT_INT, &reps, "R", "repetitions, median reported (default 5)"},
        {0, "bw-mib", KCS_OPT_INT, &bw_mib, "MIB", "buffer of the bandwidth line (default 256)"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    long long sizes[BM_MAX_SIZES];
    int ns = parse_sizes(sizes_s, sizes, BM_MAX_SIZES);
    kcs_format fmts[BM_MAX_FMTS];
    int nf = 0;
    for (const char *q = fmts_s; *q;) {
        char name[32];
        size_t len = strcspn(q, ",");
        snprintf(name, sizeof name, "%.*s", (int)len, q);
        if (nf == BM_MAX_FMTS || kcs_format_parse(name, &fmts[nf]) != 0) {
            fprintf(stderr, "kcs bench metrics: --formats: unknown or too many formats at '%s'\n",
                    name);
            return 2;
        }
        nf++;
        q += len + (q[len] == ',');
    }
    long long maxn = 0;
    for (int i = 0; i < ns; i++)
        maxn = sizes[i] > maxn ? sizes[i] : maxn;
    int bad_size = ns < 1;
    for (int i = 0; i < ns; i++)
        bad_size |= sizes[i] < 1 || sizes[i] > (1ll << 28);
    if (bad_size || nf < 1 || npos != 0 || reps < 1 || reps > 1000 || bw_mib < 1 ||
        bw_mib > 65536) {
        fprintf(stderr, "kcs bench metrics: --sizes: 1 to %d counts in [1, 2^28]; --formats: at "
                        "least one; --reps in [1, 1000]; --bw-mib in [1, 65536]; no positional "
                        "arguments\n", BM_MAX_SIZES);
        return 2;
    }
    double *y = malloc((size_t)maxn * sizeof *y), *ref = malloc((size_t)maxn * sizeof *ref);
    double *absref = malloc((size_t)maxn * sizeof *absref);
    double *t = malloc((size_t)(J_COUNT * reps) * sizeof *t);
    rc = 0;
    if (!y || !ref || !absref || !t) {
        fprintf(stderr, "kcs bench metrics: out of memory for %lld elements\n", maxn);
        rc = 1;
        goto out;
    }
    double bw = measure_bw(bw_mib);
    printf("kcs bench metrics: sizes %s elements, formats %s, median of %lld repetitions, "
           "1 thread\n", sizes_s, fmts_s, reps);
    printf("machine (this run): single-thread read bandwidth %.2f GB/s (streaming fp64 sum over "
           "%lld MiB, median of 7)\n", bw, bw_mib);
    printf("%10s %-6s %-8s %12s %10s %8s %12s %8s\n", "n", "format", "stage", "ms/call",
           "Melem/s", "GB/s", "floor_ms", "x_floor");
    for (int i = 0; i < ns; i++)
        for (int f = 0; f < nf; f++) {
            size_t n = (size_t)sizes[i];
            fill(y, ref, absref, n, fmts[f]);
            bm_data d = {y, ref, absref, n, fmts[f], kcs_sentinel(fmts[f])};
            double med[J_COUNT];
            time_jobs(&d, (int)reps, t, med);
            const char *name[2] = {"metrics", "digest"};
            double bytes[2] = {24.0 * (double)n, 8.0 * (double)n};
            for (int s = 0; s < 2; s++) {
                double tm = med[2 * s], fl = med[2 * s + 1];
                printf("%10zu %-6s %-8s %12.4g %10.4g %8.3g %12.4g %8.4g\n", n,
                       kcs_format_name(fmts[f]), name[s], tm * 1e3, (double)n / tm / 1e6,
                       bytes[s] / tm / 1e9, fl * 1e3, tm / fl);
            }
            fflush(stdout);
        }
out:
    KCS_FREE(y, ref, absref, t);
    return rc;
}
