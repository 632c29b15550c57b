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
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cblas.h>
#include <math.h>
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
#include "blockscale.h"
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
    double v1;      /* emulated rows: median of the kernels before the decoded ones; 0: none */
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
                            int old, int *rc_p)
{
    /* old: the kernels as they were before the decoded ones (blockfma_gemm.c) */
    if (old)
        setenv("KCS_BLOCKFMA_ISA", "v1", 1);
    else
        unsetenv("KCS_BLOCKFMA_ISA");
    double t0 = kcs_bench_now();
    *rc_p = kcs_emulated_gemm_lib(p, lp, s->N, s->N, s->N, s->A, s->B, NULL, s->D);
    double t = kcs_bench_now() - t0;
    unsetenv("KCS_BLOCKFMA_ISA");
    if (*rc_p)
        fprintf(stderr, "kcs bench arith: %s: out of memory\n", p->profile);
    return t;
}

/* Blackwell block-scaled inputs (blockscale.h): elements from random codes,
 * scales 2^-3 ... 2^3 (ue8m0) or their ue4m3 codes; N rounded down to a
 * multiple of the instruction's k. */
static int time_blockscaled(arith_state *s, const kcs_bs_scheme *bs, double *t, arith_row *row,
                            int64_t *kused)
{
    int64_t N = s->N, k = N / bs->kinst * bs->kinst;
    *kused = k;
    if (k < 1)
        return 1;
    int64_t ns = k / bs->block;
    double *SA = malloc(sizeof(double) * (size_t)(N * ns)),
           *SB = malloc(sizeof(double) * (size_t)(N * ns));
    if (!SA || !SB) {
        KCS_FREE(SA, SB);
        return 1;
    }
    kcs_rng r;
    kcs_rng_init(&r, 2024, 9, (uint64_t)N);
    kcs_bs_code ec = bs->fp4 ? KCS_BS_FP4_E2M1 : KCS_BS_CODE_COUNT;
    for (int64_t i = 0; i < N * k; i++) {
        unsigned code = (unsigned)(kcs_rng_u64(&r) & 0xFF);
        s->A[i] = bs->fp4 ? kcs_bs_decode(ec, code & 0xF)
                          : kcs_format_round(bs->elem, kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
        code = (unsigned)(kcs_rng_u64(&r) & 0xFF);
        s->B[i] = bs->fp4 ? kcs_bs_decode(ec, code & 0xF)
                          : kcs_format_round(bs->elem, kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
    }
    for (int64_t i = 0; i < N * ns; i++) {
        SA[i] = ldexp(1.0, (int)(kcs_rng_u64(&r) % 7) - 3);
        SB[i] = ldexp(1.0, (int)(kcs_rng_u64(&r) % 7) - 3);
    }
    int rc = 0;
    double *t_old = malloc(sizeof(double) * (size_t)s->reps), best_old;
    for (int rep = 0; rep < s->reps && !rc && t_old; rep++) {
        /* old: the model term by term (kcs_blockscaled_gemm_ref), as before */
        double t0 = kcs_bench_now();
        rc = kcs_blockscaled_gemm_ref(bs, N, N, k, s->A, SA, s->B, SB, NULL, s->D);
        double t1 = kcs_bench_now();
        rc = rc ? rc : kcs_blockscaled_gemm(bs, N, N, k, s->A, SA, s->B, SB, NULL, s->D);
        t[rep] = kcs_bench_now() - t1;
        t_old[rep] = t1 - t0;
    }
    if (!t_old)
        rc = 1;
    else {
        row->seconds = kcs_bench_median(t, s->reps, &row->best);
        row->v1 = kcs_bench_median(t_old, s->reps, &best_old);
    }
    free(t_old);
    KCS_FREE(SA, SB);
    return rc;
}

/* Both medians of an emulated row, the old and the new kernels alternating. */
static void time_pair(arith_state *s, const kcs_profile_params *p, const kcs_libpath *lp,
                      double *t, double *t_old, arith_row *row, int *rc_p)
{
    for (int r = 0; r < s->reps && !*rc_p; r++) {
        t_old[r] = time_emulated(s, p, lp, 1, rc_p);
        if (!*rc_p)
            t[r] = time_emulated(s, p, lp, 0, rc_p);
    }
    double best_old;
    row->seconds = kcs_bench_median(t, s->reps, &row->best);
    row->v1 = kcs_bench_median(t_old, s->reps, &best_old);
}

static int bench_arith(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "bench arith", "[--size N] [--reps R] [--profile P]",
        "GFLOP/s of the emulated matrix units (every profile/format row of the profile table,\n"
        "mixed fp8 inputs, nvidia-h100 fp8 through two library paths: fp8_promote=128,\n"
        "splitk=4, and the Blackwell block-scaled inputs),\n"
        "of OpenBLAS sgemm and of kcs's own gemm kernel (every schedule with fp32, bf16 and\n"
        "fp16 accumulators, and the exact accumulator model its fast paths are tested\n"
        "against), measured side by side in one run on m = n = k = N, medians over R\n"
        "repetitions.",
        "GFLOP/s counts 2 N^3 flops per gemm over the median wall time (best: over the\n"
        "fastest run). /sgemm and /own are ratios of medians (this row's GFLOP/s over the\n"
        "sgemm or own row's). OpenBLAS uses its own thread count (shown);\n"
        "the own and emulated kernels run on one thread. Each emulated row is timed twice,\n"
        "alternating: with today's kernels and with the kernels as they were before the\n"
        "decoded integer ones (KCS_BLOCKFMA_ISA=v1): 'v1 GFLOP/s' and '/v1' (the ratio of\n"
        "medians, v1 over today). Block-scaled rows run k rounded down to the instruction's\n"
        "k and are scaled to 2 N^3 flops."};
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
    /* mixed fp8 inputs (kcs_profile_lookup_mixed): A e4m3, B e5m2 */
    static const struct {
        const char *profile;
        kcs_format a, b;
    } mixed[] = {{"nvidia-h100", KCS_FMT_FP8_E4M3, KCS_FMT_FP8_E5M2},
                 {"amd-mi300", KCS_FMT_FP8_E4M3FNUZ, KCS_FMT_FP8_E5M2FNUZ}};
    enum { N_MIXED = sizeof mixed / sizeof mixed[0] };
    const kcs_bs_scheme *bss;
    int nbs = 0;
    kcs_bs_scheme_table(&bss, &nbs);
    arith_row *rows =
        calloc((size_t)nrows + 2 + N_OWN_EXTRA + N_LIB + N_MIXED + (size_t)nbs, sizeof *rows);
    double *t = malloc((size_t)reps * sizeof *t), *t_old = malloc((size_t)reps * sizeof *t);
    rc = 0;
    if (!s.A || !s.B || !s.D || !s.fa || !s.fb || !s.fd || !rows || !t || !t_old) {
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
        fill_fmt(s.B, nn, kcs_profile_in_b(p), 4);
        if (!only)
            fprintf(stderr, "kcs bench arith: %s %s%s%s\n", p->profile, kcs_format_name(p->in),
                    p->mixed ? " x " : "", p->mixed ? kcs_format_name(p->in_b) : "");
        time_pair(&s, p, NULL, t, t_old, &rows[n], &rc);
        char neab[16];
        if (p->step == KCS_STEP_PAIRWISE)
            snprintf(neab, sizeof neab, "-");
        else if (p->neab == KCS_NEAB_INF)
            snprintf(neab, sizeof neab, "inf");
        else
            snprintf(neab, sizeof neab, "%d", p->neab);
        snprintf(rows[n].kernel, sizeof rows[n].kernel, "emulated %s (F=%d neab=%s %s)",
                 p->profile, p->F, neab, kcs_step_kind_name(p->step));
        rows[n].format = p->mixed ? "fp8 mixed" : kcs_format_name(p->in);
        n++;
    }
    for (int i = 0; i < N_MIXED && !rc; i++) {
        kcs_profile_params mp;
        kcs_error err = {0};
        if (only && strcmp(mixed[i].profile, only) != 0)
            continue;
        if (kcs_profile_lookup_mixed(mixed[i].profile, mixed[i].a, mixed[i].b, &mp, &err)) {
            fprintf(stderr, "kcs bench arith: %s\n", err.msg);
            rc = 1;
            break;
        }
        fill_fmt(s.A, nn, mp.in, 3);
        fill_fmt(s.B, nn, mp.in_b, 4);
        time_pair(&s, &mp, NULL, t, t_old, &rows[n], &rc);
        snprintf(rows[n].kernel, sizeof rows[n].kernel, "emulated %s (F=%d, A %s x B %s)",
                 mp.profile, mp.F, kcs_format_name(mp.in), kcs_format_name(mp.in_b));
        rows[n].format = "fp8 mixed";
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
        time_pair(&s, p, &lp, t, t_old, &rows[n], &rc);
        snprintf(rows[n].kernel, sizeof rows[n].kernel, "emulated %s", libspecs[i]);
        rows[n].format = kcs_format_name(p->in);
        n++;
    }
    for (int i = 0; i < nbs && !rc && (!only || strcmp(only, "nvidia-b200") == 0); i++) {
        int64_t kb;
        if (time_blockscaled(&s, &bss[i], t, &rows[n], &kb)) {
            fprintf(stderr, "kcs bench arith: %s: --size below %d or out of memory\n",
                    bss[i].name, bss[i].kinst);
            continue;
        }
        /* GFLOP/s over 2 N^3 like every row: scale the time to k = N */
        rows[n].seconds *= (double)size / (double)kb;
        rows[n].best *= (double)size / (double)kb;
        rows[n].v1 *= (double)size / (double)kb;
        snprintf(rows[n].kernel, sizeof rows[n].kernel, "emulated nvidia-b200 block-scaled");
        rows[n].format = bss[i].name;
        n++;
    }
    if (rc)
        goto out;
    printf("%-48s %-9s %10s %10s %9s %9s %10s %7s\n", "kernel", "format", "GFLOP/s", "best",
           "/sgemm", "/own", "v1 GFLOP/s", "/v1");
    for (int i = 0; i < n; i++) {
        printf("%-48s %-9s %10.4g %10.4g %9.3g %9.3g", rows[i].kernel, rows[i].format,
               flops / rows[i].seconds / 1e9, flops / rows[i].best / 1e9,
               rows[0].seconds / rows[i].seconds, rows[1].seconds / rows[i].seconds);
        if (rows[i].v1 > 0)
            printf(" %10.4g %7.3g\n", flops / rows[i].v1 / 1e9, rows[i].v1 / rows[i].seconds);
        else
            printf(" %10s %7s\n", "-", "-");
    }
out:
    KCS_FREE(s.A, s.B, s.D, s.fa, s.fb, s.fd, rows, t, t_old);
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
