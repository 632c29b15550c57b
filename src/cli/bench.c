/* kcs bench: performance measurements, one sub-benchmark per entry of the
 * benches[] table ({name, fn, help}); `kcs bench <name> --help` for each.
 * Every one reports medians over repetitions, with the machine facts and
 * floors it compares against measured side by side in the same run.
 *   arith      GFLOP/s of the emulated matrix units (every row of the
 *              profile table), of OpenBLAS sgemm and of the own kernel
 *              (sequential, fp32 accumulator), with ratios.
 *   freivalds  batched Freivalds verification vs sgemm (bench_freivalds.c).
 *   metrics    the metrics stage of a trial (error metrics, XXH3 digest) vs
 *              a streaming sum over the same bytes (bench_metrics.c).
 *   hdf5       the parallel HDF5 store writer under MPI vs write()/fsync of
 *              the same payload in the same directory (bench_hdf5.c).
 *   study      kcs_runner_run of a whole study end to end, next to its
 *              load/plan, backend-open and kernel-call times (bench_study.c).
 *   isolation  per-call cost of a plugin in its worker process against the
 *              same library loaded into kcs (bench_isolation.c). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "grow.h"
#include "cli.h"
#include "freivalds.h"
#include "backend.h"
#include "profile.h"
#include "rng.h"

static void fill_fmt(double *x, size_t n, kcs_format f, uint64_t stream)
{
    kcs_rng r;
    kcs_rng_init(&r, 2024, stream, (uint64_t)n);
    for (size_t i = 0; i < n; i++)
        x[i] = kcs_format_round(f, kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
}

/* ---- arith ----------------------------------------------------------------- */

typedef struct arith_row {
    char kernel[80];
    const char *format;
    double seconds; /* median */
    double best;    /* minimum */
} arith_row;

typedef struct arith_state {
    int64_t N;
    int reps;
    double *A, *B, *D;
    float *fa, *fb, *fd;
} arith_state;

static double time_sgemm(arith_state *s)
{
    int N = (int)s->N;
    double t0 = kcs_bench_now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, s->fa, N, s->fb, N,
                0.0f, s->fd, N);
    return kcs_bench_now() - t0;
}

/* The own kernel (fast paths where they apply) or, with model set, the
 * exact accumulator model it is tested against. */
static double time_own(arith_state *s, kcs_schedule sched, kcs_format acc, int model, int *rc_p)
{
    kcs_call c = {0};
    c.op = KCS_OP_GEMM;
    c.variant = "own";
    c.schedule = sched;
    c.dtype_in = c.dtype_out = KCS_FMT_FP32;
    c.acc.fmt = acc;
    c.m = c.n = c.k = s->N;
    c.in[0] = s->A;
    c.in[1] = s->B;
    c.out = s->D;
    c.out_len = (size_t)(s->N * s->N);
    kcs_error err = {0};
    kcs_backend_config cfg = {0};
    kcs_backend_ctx *ctx = NULL;
    const kcs_backend_ops *cpu = kcs_backend_find("cpu");
    if (!cpu || cpu->open(0, &cfg, &ctx, &err)) {
        fprintf(stderr, "kcs bench arith: cpu backend: %s\n", cpu ? err.msg : "not built");
        *rc_p = 1;
        return 0;
    }
    double t0 = kcs_bench_now();
    c.variant = model ? "own:exact" : "own";
    *rc_p = cpu->run(ctx, &c, &err);
    double t = kcs_bench_now() - t0;
    cpu->close(ctx);
    if (*rc_p)
        fprintf(stderr, "kcs bench arith: own kernel: %s\n", err.msg);
    return t;
}

static double time_emulated(arith_state *s, const kcs_profile_params *p, const kcs_libpath *lp,
                            int *rc_p)
{
    double t0 = kcs_bench_now();
    *rc_p = kcs_emulated_gemm_lib(p, lp, s->N, s->N, s->N, s->A, s->B, NULL, s->D);
    double t = kcs_bench_now() - t0;
    if (*rc_p)
        fprintf(stderr, "kcs bench arith: %s: out of memory\n", p->profile);
    return t;
}

static int bench_arith(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "bench arith", "[--size N] [--reps R] [--profile P]",
        "GFLOP/s of the emulated matrix units (every profile/format row of the profile table,\n"
        "and nvidia-h100 fp8 through two library paths: fp8_promote=128, splitk=4),\n"
        "of OpenBLAS sgemm and of kcs's own gemm kernel (every schedule with fp32, bf16 and\n"
        "fp16 accumulators, and the exact accumulator model its fast paths are tested\n"
        "against), measured side by side in one run on m = n = k = N, medians over R\n"
        "repetitions.",
        "GFLOP/s counts 2 N^3 flops per gemm over the median wall time (best: over the\n"
        "fastest run). /sgemm and /own are ratios of medians (this row's GFLOP/s over the\n"
        "sgemm or own row's). OpenBLAS uses its own thread count (shown);\n"
        "the own and emulated kernels run on one thread."};
    long long size = 512, reps = 3;
    const char *only = NULL;
    const kcs_opt opts[] = {
        {0, "size", KCS_OPT_INT, &size, "N", "m = n = k (default 512)"},
        {0, "reps", KCS_OPT_INT, &reps, "R", "repetitions per kernel, median reported (default 3)"},
        {0, "profile", KCS_OPT_STR, &only, "P", "only the rows of this profile"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (npos != 0 || size < 1 || size > 8192 || reps < 1 || reps > 1000) {
        fprintf(stderr, "kcs bench arith: --size in [1, 8192], --reps in [1, 1000], no "
                        "positional arguments\n");
        return 2;
    }
    const kcs_profile_params *table;
    int nt = 0;
    kcs_profile_table(&table, &nt);
    int nrows = 0;
    for (int i = 0; i < nt; i++)
        nrows += !only || strcmp(table[i].profile, only) == 0;
    if (only && nrows == 0) {
        fprintf(stderr, "kcs bench arith: no profile '%s' in the table\n", only);
        return 2;
    }
    size_t nn = (size_t)size * (size_t)size;
    arith_state s = {.N = size, .reps = (int)reps};
    s.A = malloc(nn * sizeof *s.A);
    s.B = malloc(nn * sizeof *s.B);
    s.D = malloc(nn * sizeof *s.D);
    s.fa = malloc(nn * sizeof *s.fa);
    s.fb = malloc(nn * sizeof *s.fb);
    s.fd = malloc(nn * sizeof *s.fd);
    enum { N_OWN_EXTRA = 16 }; /* 5 schedules x 3 accumulators - 1 + the model */
    /* library paths on top of one instruction (profile.h): nvidia-h100 fp8 */
    static const char *const libspecs[] = {"nvidia-h100,fp8_promote=128",
                                           "nvidia-h100,splitk=4"};
    enum { N_LIB = sizeof libspecs / sizeof libspecs[0] };
    arith_row *rows = calloc((size_t)nrows + 2 + N_OWN_EXTRA + N_LIB, sizeof *rows);
    double *t = malloc((size_t)reps * sizeof *t);
    rc = 0;
    if (!s.A || !s.B || !s.D || !s.fa || !s.fb || !s.fd || !rows || !t) {
        fprintf(stderr, "kcs bench arith: out of memory for N = %lld\n", size);
        rc = 1;
        goto out;
    }
    double flops = 2.0 * (double)size * (double)size * (double)size;
    printf("kcs bench arith: m = n = k = %lld, median of %lld runs; OpenBLAS %s, %d threads\n",
           size, reps, openblas_get_config(), openblas_get_num_threads());
    /* native sgemm and own kernel on fp32 inputs */
    fill_fmt(s.A, nn, KCS_FMT_FP32, 1);
    fill_fmt(s.B, nn, KCS_FMT_FP32, 2);
    for (size_t i = 0; i < nn; i++) {
        s.fa[i] = (float)s.A[i];
        s.fb[i] = (float)s.B[i];
    }
    time_sgemm(&s); /* warm-up: thread pool, pages */
    for (int r = 0; r < reps; r++)
        t[r] = time_sgemm(&s);
    snprintf(rows[0].kernel, sizeof rows[0].kernel, "native sgemm (OpenBLAS)");
    rows[0].format = "fp32";
    rows[0].seconds = kcs_bench_median(t, (int)reps, &rows[0].best);
    const kcs_schedule scheds[] = {{KCS_SCHED_SEQUENTIAL, 0}, {KCS_SCHED_PAIRWISE, 0},
                                   {KCS_SCHED_BLOCKED, 64}, {KCS_SCHED_SPLITK, 4},
                                   {KCS_SCHED_ATOMIC, 0}};
    const kcs_format accs[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16};
    int n = 1;
    for (int si = 0; si < 5 && !rc; si++)
        for (int ai = 0; ai < 3 && !rc; ai++) {
            for (int r = 0; r < reps && !rc; r++)
                t[r] = time_own(&s, scheds[si], accs[ai], 0, &rc);
            char sb[32];
            snprintf(rows[n].kernel, sizeof rows[n].kernel, "own (%s, %s acc)",
                     kcs_schedule_str(&scheds[si], sb, sizeof sb), kcs_format_name(accs[ai]));
            rows[n].format = "fp32";
            rows[n].seconds = kcs_bench_median(t, (int)reps, &rows[n].best);
            n++;
        }
    for (int r = 0; r < reps && !rc; r++)
        t[r] = time_own(&s, scheds[0], KCS_FMT_FP32, 1, &rc);
    snprintf(rows[n].kernel, sizeof rows[n].kernel, "own exact model (sequential, fp32 acc)");
    rows[n].format = "fp32";
    rows[n].seconds = kcs_bench_median(t, (int)reps, &rows[n].best);
    n++;
    if (rc)
        goto out;
    for (int i = 0; i < nt && !rc; i++) {
        const kcs_profile_params *p = &table[i];
        if (only && strcmp(p->profile, only) != 0)
            continue;
        fill_fmt(s.A, nn, p->in, 3);
        fill_fmt(s.B, nn, p->in, 4);
        for (int r = 0; r < reps && !rc; r++)
            t[r] = time_emulated(&s, p, NULL, &rc);
        char neab[16];
        if (p->step == KCS_STEP_PAIRWISE)
            snprintf(neab, sizeof neab, "-");
        else if (p->neab == KCS_NEAB_INF)
            snprintf(neab, sizeof neab, "inf");
        else
            snprintf(neab, sizeof neab, "%d", p->neab);
        snprintf(rows[n].kernel, sizeof rows[n].kernel, "emulated %s (F=%d neab=%s %s)",
                 p->profile, p->F, neab, kcs_step_kind_name(p->step));
        rows[n].format = kcs_format_name(p->in);
        rows[n].seconds = kcs_bench_median(t, (int)reps, &rows[n].best);
        n++;
    }
    for (int i = 0; i < N_LIB && !rc; i++) {
        char name[KCS_PROFILE_SPEC_MAX];
        kcs_libpath lp;
        kcs_error err = {0};
        const kcs_profile_params *p;
        if (kcs_profile_spec_parse(libspecs[i], name, &lp, &err) ||
            kcs_profile_lookup(name, KCS_FMT_FP8_E4M3, &p, &err)) {
            fprintf(stderr, "kcs bench arith: %s\n", err.msg);
            rc = 1;
            break;
        }
        if (only && strcmp(name, only) != 0)
            continue;
        fill_fmt(s.A, nn, p->in, 3);
        fill_fmt(s.B, nn, p->in, 4);
        for (int r = 0; r < reps && !rc; r++)
            t[r] = time_emulated(&s, p, &lp, &rc);
        snprintf(rows[n].kernel, sizeof rows[n].kernel, "emulated %s", libspecs[i]);
        rows[n].format = kcs_format_name(p->in);
        rows[n].seconds = kcs_bench_median(t, (int)reps, &rows[n].best);
        n++;
    }
    if (rc)
        goto out;
    printf("%-48s %-9s %10s %10s %9s %9s\n", "kernel", "format", "GFLOP/s", "best", "/sgemm",
           "/own");
    for (int i = 0; i < n; i++)
        printf("%-48s %-9s %10.4g %10.4g %9.3g %9.3g\n", rows[i].kernel, rows[i].format,
               flops / rows[i].seconds / 1e9, flops / rows[i].best / 1e9,
               rows[0].seconds / rows[i].seconds, rows[1].seconds / rows[i].seconds);
out:
    KCS_FREE(s.A, s.B, s.D, s.fa, s.fb, s.fd, rows, t);
    return rc ? 1 : 0;
}

/* ---- the sub-benchmark table ------------------------------------------------ */

static const kcs_subcmd benches[] = {
    {"arith", bench_arith, "GFLOP/s: emulated matrix units vs OpenBLAS sgemm vs own kernel"},
    {"freivalds", kcs_bench_freivalds,
     "Freivalds verification vs OpenBLAS sgemm (--false-alarms, --detection)"},
    {"metrics", kcs_bench_metrics, "error metrics and XXH3 digest of an output vs a read floor"},
    {"hdf5", kcs_bench_hdf5, "parallel HDF5 store writer (MPI) vs write()/fsync of the payload"},
    {"study", kcs_bench_study, "end-to-end kcs_runner_run of a study vs load/plan and kernels"},
    {"isolation", kcs_bench_isolation,
     "per-call cost of a plugin in its worker process vs loaded into kcs (fp32 GEMMs)"},
};

int kcs_cmd_bench(int argc, char **argv)
{
    return kcs_cli_dispatch("kcs bench", "benchmark",
                            "usage: kcs bench <benchmark> [options]  (kcs bench <benchmark> "
                            "--help)\n\nbenchmarks:\n",
                            benches, sizeof benches / sizeof benches[0], argc, argv);
}
