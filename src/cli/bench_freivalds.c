/* kcs bench freivalds: the cost of batched Freivalds verification against
 * OpenBLAS sgemm, measured side by side in one run, next to the machine's
 * read bandwidth and fp64 rate measured in the same run; optionally the
 * false-alarm grid and the single-corruption detection study. */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "grow.h"
#include "cli.h"
#include "format.h"
#include "freivalds.h"
#include "rng.h"


typedef double bf_vd __attribute__((vector_size(64)));
typedef float bf_vf __attribute__((vector_size(64)));

/* ---- a tiny parallel-for --------------------------------------------- */

typedef void (*bf_fn)(void *ctx, int t, int nt);
typedef struct bf_job {
    bf_fn fn;
    void *ctx;
    int t, nt;
} bf_job;

static void *bf_trampoline(void *arg)
{
    bf_job *j = arg;
    j->fn(j->ctx, j->t, j->nt);
    return NULL;
}

/* fn(ctx, t, nt) for t < nt, on nt threads (inline when a thread fails to start). */
static void bf_parallel(int nt, bf_fn fn, void *ctx)
{
    pthread_t th[64];
    bf_job jobs[64];
    bool up[64] = {false};
    nt = nt < 1 ? 1 : nt > 64 ? 64 : nt;
    for (int t = 1; t < nt; t++) {
        jobs[t] = (bf_job){fn, ctx, t, nt};
        up[t] = pthread_create(&th[t], NULL, bf_trampoline, &jobs[t]) == 0;
    }
    fn(ctx, 0, nt);
    for (int t = 1; t < nt; t++) {
        if (up[t])
            pthread_join(th[t], NULL);
        else
            fn(ctx, t, nt);
    }
}

/* ---- machine: read bandwidth and fp64 mul+add rate -------------------- */

typedef struct bw_ctx {
    float *buf;
    size_t len;
    double sum[64];
} bw_ctx;

KCS_BENCH_STREAM_SUM(bw_sum, float, bf_vf)

static void bw_fill(void *p, int t, int nt)
{
    bw_ctx *c = p;
    size_t lo = c->len * (size_t)t / (size_t)nt, hi = c->len * (size_t)(t + 1) / (size_t)nt;
    for (size_t i = lo; i < hi; i++)
        c->buf[i] = (float)(i & 7);
}

static void bw_run(void *p, int t, int nt)
{
    bw_ctx *c = p;
    size_t lo = c->len * (size_t)t / (size_t)nt, hi = c->len * (size_t)(t + 1) / (size_t)nt;
    lo &= ~(size_t)63;
    hi = t == nt - 1 ? c->len : hi & ~(size_t)63;
    c->sum[t] = bw_sum(c->buf + lo, hi - lo);
}

KCS_BENCH_CLONES static double peak_kernel(long iters, double x)
{
    bf_vd a[12], m, y;
    for (int v = 0; v < 8; v++) {
        m[v] = x;
        y[v] = 1e-9 * x;
    }
    for (int i = 0; i < 12; i++)
        a[i] = m * (double)(i + 1);
    for (long t = 0; t < iters; t++) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 12
#endif
        for (int i = 0; i < 12; i++)
            a[i] = a[i] * m + y;
    }
    bf_vd s = a[0];
    for (int i = 1; i < 12; i++)
        s += a[i];
    return s[0] + s[7];
}

typedef struct peak_ctx {
    long iters;
    double x, out[64];
} peak_ctx;

static void peak_run(void *p, int t, int nt)
{
    (void)nt;
    peak_ctx *c = p;
    c->out[t] = peak_kernel(c->iters, c->x);
}

/* Best GB/s of a streaming sum over mib MiB and best GFLOP/s of fp64
 * mul+add, of 7 runs each: the floors must be what the machine can do, and
 * on a shared machine a median of a slow moment is not (a check measured
 * in a faster moment then looked faster than its floor). */
static void measure_machine(int nt, long mib, double *bw_p, double *gflops_p)
{
    bw_ctx c = {.len = (size_t)mib << 18};
    c.buf = malloc(c.len * sizeof(float));
    double v[7];
    if (c.buf) {
        bf_parallel(nt, bw_fill, &c);
        for (int r = 0; r < 7; r++) {
            double t0 = kcs_bench_now();
            bf_parallel(nt, bw_run, &c);
            v[r] = kcs_bench_now() - t0;
        }
        double best;
        kcs_bench_median(v, 7, &best);
        *bw_p = (double)(c.len * sizeof(float)) / best / 1e9;
        free(c.buf);
    } else {
        *bw_p = NAN;
    }
    volatile double xv = 0.9999999;
    peak_ctx pc = {.iters = 4000000, .x = xv};
    for (int r = 0; r < 7; r++) {
        double t0 = kcs_bench_now();
        bf_parallel(nt, peak_run, &pc);
        v[r] = kcs_bench_now() - t0;
    }
    double best;
    kcs_bench_median(v, 7, &best);
    *gflops_p = 2.0 * 12 * 8 * (double)pc.iters * nt / best / 1e9;
}

/* Best GFLOP/s of OpenBLAS dgemm at n = 1024 (its own threads): a kernel
 * that reaches the machine's fp64 rate, where the mul+add loop above may not
 * (its dependence chains, or a compiler that does not contract it). The
 * arithmetic floor uses the larger of the two, so it is never above what
 * fp64 arithmetic really costs here. */
static double measure_dgemm(void)
{
    const int n = 1024;
    double *a = malloc((size_t)3 * n * n * sizeof *a);
    if (!a)
        return NAN;
    double *b = a + (size_t)n * n, *c = b + (size_t)n * n, v[5];
    for (size_t i = 0; i < (size_t)2 * n * n; i++)
        a[i] = 1.0 + (double)(i % 7) * 0x1p-4;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    for (int r = 0; r < 5; r++) {
        double t0 = kcs_bench_now();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c,
                    n);
        v[r] = kcs_bench_now() - t0;
    }
    free(a);
    double best;
    kcs_bench_median(v, 5, &best);
    return 2.0 * n * n * (double)n / best / 1e9;
}

/* The floors' rates: the best seen in this run. Measured at the start and
 * again before each size of the cost sweep, so a machine that speeds up
 * or slows down during the run (other tenants) cannot put a floor above
 * what it really did. */
typedef struct bf_machine {
    int nt;
    long mib;
    double bw, gf_loop, gf_dgemm, gf;
} bf_machine;

static void machine_update(bf_machine *m)
{
    double bw, gl, gd = measure_dgemm();
    measure_machine(m->nt, m->mib, &bw, &gl);
    m->bw = fmax(m->bw, bw); /* fmax skips a NaN (a failed measurement) */
    m->gf_loop = fmax(m->gf_loop, gl);
    m->gf_dgemm = fmax(m->gf_dgemm, gd);
    m->gf = fmax(m->gf_dgemm, m->gf_loop);
}

static void machine_print(const char *when, const bf_machine *m)
{
    printf("machine (%s): read bandwidth %.2f GB/s (streaming fp32 sum over %ld MiB, best of "
           "7); fp64 rate %.1f GFLOP/s = max(mul+add loop %.1f, OpenBLAS dgemm n=1024 %.1f; "
           "best of 7 and 5)\n", when, m->bw, m->mib, m->gf, m->gf_loop, m->gf_dgemm);
}

/* ---- inputs ------------------------------------------------------------- */

typedef struct fill_ctx {
    float *x;
    long rows, cols;
    uint64_t seed, stream;
    kcs_format fmt;
    double decades; /* rows scaled by 10^(-decades i/(rows-1)) */
} fill_ctx;

static void fill_run(void *p, int t, int nt)
{
    fill_ctx *c = p;
    long lo = c->rows * t / nt, hi = c->rows * (t + 1) / nt;
    for (long i = lo; i < hi; i++) {
        kcs_rng r;
        kcs_rng_init(&r, c->seed, c->stream, (uint64_t)i);
        double scale = c->decades > 0 && c->rows > 1
                           ? pow(10.0, -c->decades * (double)i / (double)(c->rows - 1))
                           : 1.0;
        float *row = c->x + i * c->cols;
        for (long l = 0; l < c->cols; l += 2) {
            double u1 = 1.0 - kcs_rng_uniform(&r), u2 = kcs_rng_uniform(&r);
            double rad = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
            double z[2] = {rad * cos(th) * scale, rad * sin(th) * scale};
            for (int q = 0; q < 2 && l + q < c->cols; q++)
                row[l + q] = c->fmt == KCS_FMT_FP32
                                 ? (float)z[q]
                                 : (float)kcs_format_round(c->fmt, z[q], KCS_ROUND_DEFAULT);
        }
    }
}

static void fill(int nt, float *x, long rows, long cols, uint64_t seed, uint64_t stream,
                 kcs_format fmt, double decades)
{
    fill_ctx c = {x, rows, cols, seed, stream, fmt, decades};
    bf_parallel(nt, fill_run, &c);
}

static void gemm(const float *A, const float *B, float *C, long m, long kk, long n,
                 kcs_format out)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)kk, 1.0f, A,
                (int)kk, B, (int)n, 0.0f, C, (int)n);
    if (out != KCS_FMT_FP32)
        for (long i = 0; i < m * n; i++)
            C[i] = (float)kcs_format_round(out, C[i], KCS_ROUND_DEFAULT);
}

/* fp32-accumulating GEMM whose output is stored in fmt */
static void params_for(kcs_fv_params *p, kcs_format fmt, int k, int threads)
{
    kcs_fv_params_default(p);
    p->probes = k;
    p->threads = threads;
    if (fmt != KCS_FMT_FP32) {
        const kcs_format_info *fi = kcs_format_get(fmt);
        p->u_out = kcs_format_u(fmt);
        p->eta_out = ldexp(1.0, fi->emin - fi->p);
    }
}

static void fixed_tol(kcs_format fmt, double *atol, double *rtol)
{
    *atol = fmt == KCS_FMT_FP32 ? 1e-4 : 1e-2;
    *rtol = fmt == KCS_FMT_FP32 ? 1e-4 : 5e-2;
}

static int parse_list(const char *s, long *out, int max)
{
    int n = 0;
    const char *q = s;
    while (*q && n < max) {
        char *end;
        long v = strtol(q, &end, 10);
        if (end == q || v < 1)
            return -1;
        out[n++] = v;
        q = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

/* ---- 1. cost ------------------------------------------------------------ */

static int bench_cost(const long *sizes, int ns, const long *ks, int nk, int nt, long greps,
                      long vreps, bf_machine *mach)
{
    printf("\n== cost: OpenBLAS sgemm vs kcs_freivalds_verify (fp32 data, fp64 check, "
           "bounds included), medians ==\n");
    printf("%6s %4s %11s %11s %11s %8s %8s %8s %8s %6s %9s %9s %7s %5s\n", "n", "k", "sgemm_ms",
           "verify_rig", "verify_prob", "ratio%", "MB_read", "GB/s", "Gflop", "%bw", "memfl_ms",
           "arifl_ms", "x_floor", "pass");
    for (int si = 0; si < ns; si++) {
        long n = sizes[si];
        float *A = malloc(sizeof(float) * (size_t)(n * n));
        float *B = malloc(sizeof(float) * (size_t)(n * n));
        float *C = malloc(sizeof(float) * (size_t)(n * n));
        if (!A || !B || !C) {
            fprintf(stderr, "kcs bench freivalds: out of memory at n=%ld\n", n);
            free(A);
            free(B);
            free(C);
            return 1;
        }
        fill(nt, A, n, n, 1, 1, KCS_FMT_FP32, 0);
        fill(nt, B, n, n, 1, 2, KCS_FMT_FP32, 0);
        if (si > 0)
            machine_update(mach);
        double bw = mach->bw, gf = mach->gf;
        long gr = greps > 0 ? greps : (n >= 4096 ? 3 : 5);
        if (n <= 2048)
            gemm(A, B, C, n, n, n, KCS_FMT_FP32); /* warm-up: thread pool, pages */
        double *tg = calloc((size_t)gr, sizeof(double));
        double tgm = 0;
        for (int ki = 0; ki < nk; ki++) {
            int k = (int)ks[ki];
            long per = (vreps + gr - 1) / gr, nv = per * gr, cnt = 0;
            double *tr = calloc((size_t)nv, sizeof(double));
            double *tp = calloc((size_t)nv, sizeof(double));
            bool all_pass = true;
            for (long r = 0; r < gr; r++) {
                if (ki == 0) {
                    double t0 = kcs_bench_now();
                    gemm(A, B, C, n, n, n, KCS_FMT_FP32);
                    tg[r] = kcs_bench_now() - t0;
                }
                for (long v = 0; v < per; v++, cnt++) {
                    kcs_fv_params p;
                    params_for(&p, KCS_FMT_FP32, k, nt);
                    p.stream = (uint64_t)cnt;
                    kcs_fv_result res;
                    kcs_error err;
                    for (int mode = 0; mode < 2; mode++) {
                        p.mode = (kcs_fv_mode)mode;
                        if (kcs_freivalds_verify(A, B, C, n, n, n, &p, NULL, &res, &err)) {
                            fprintf(stderr, "kcs bench freivalds: %s\n", err.msg);
                            return 1;
                        }
                        (mode ? tp : tr)[cnt] = res.seconds;
                        all_pass = all_pass && res.pass;
                    }
                }
            }
            if (ki == 0)
                tgm = kcs_bench_median(tg, (int)gr, NULL);
            double mr = kcs_bench_median(tr, (int)nv, NULL);
            double mp = kcs_bench_median(tp, (int)nv, NULL);
            double bytes = 3.0 * 4.0 * (double)n * (double)n;
            double flops = (6.0 * k + 10.0) * (double)n * (double)n;
            double mem_floor = bytes / (bw * 1e9), ari_floor = flops / (gf * 1e9);
            double floor = fmax(mem_floor, ari_floor), tm = fmax(mr, mp);
            printf("%6ld %4d %11.2f %11.2f %11.2f %8.3f %8.1f %8.2f %8.3f %6.1f %9.2f %9.2f "
                   "%7.2f %5s\n",
                   n, k, tgm * 1e3, mr * 1e3, mp * 1e3, 100 * tm / tgm, bytes / 1e6,
                   bytes / tm / 1e9, flops / 1e9, 100 * bytes / tm / 1e9 / bw, mem_floor * 1e3,
                   ari_floor * 1e3, tm / floor, all_pass ? "yes" : "NO");
            fflush(stdout);
            free(tr);
            free(tp);
        }
        KCS_FREE(tg, A, B, C);
    }
    if (ns > 1)
        machine_print("fastest seen in this run, the floors above use it as it stood then", mach);
    return 0;
}

/* ---- 2. false alarms ----------------------------------------------------- */

/* The buffers one n x n product and its Freivalds check need, with k probes. */
typedef struct bf_ws {
    float *A, *B, *C;
    double *rt, *pt, *rm, *rowmax, *res, *cr;
    kcs_fv_detail d;
} bf_ws;

static void ws_free(bf_ws *w)
{
    KCS_FREE(w->A, w->B, w->C, w->rt, w->pt, w->rm, w->rowmax, w->res, w->cr);
}

/* 0, or 1 (all freed) when memory ran out. */
static int ws_alloc(bf_ws *w, long n, int k)
{
    size_t nn = (size_t)(n * n), nk = (size_t)(n * k), sd = sizeof(double);
    *w = (bf_ws){.A = malloc(sizeof(float) * nn), .B = malloc(sizeof(float) * nn),
                 .C = malloc(sizeof(float) * nn), .rt = malloc(sd * (size_t)n),
                 .pt = malloc(sd * (size_t)n), .rm = malloc(sd * (size_t)n),
                 .rowmax = malloc(sd * (size_t)n), .res = malloc(sd * nk), .cr = malloc(sd * nk)};
    if (!w->A || !w->B || !w->C || !w->rt || !w->pt || !w->rm || !w->rowmax || !w->res || !w->cr) {
        ws_free(w);
        return 1;
    }
    w->d = (kcs_fv_detail){.row_thresh_rig = w->rt, .row_thresh_prob = w->pt,
                           .row_resid = w->rm, .resid = w->res, .cr = w->cr};
    return 0;
}

static const kcs_format bf_fmts[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16};

static int bench_false_alarms(const long *sizes, int ns, long trials, long fresh_max,
                              long gemms_big, int k, int nt)
{
    printf("\n== false alarms: conforming GEMMs (OpenBLAS sgemm on inputs rounded to the "
           "dtype, output rounded to the dtype), k=%d ==\n", k);
    printf("   rigorous/probabilistic: kcs thresholds; fixed: max|r| <= atol + rtol max|CR| "
           "(fp32 1e-4/1e-4, bf16/fp16 1e-2/5e-2) on the same residuals\n");
    printf("   rows6: row i of A scaled by 10^(-6 i/(n-1)); n > %ld: G distinct GEMMs x D "
           "independent probe draws each\n", fresh_max);
    printf("%6s %5s %7s %5s %5s %6s %7s %7s %7s %10s %10s %10s\n", "n", "dtype", "inputs", "G",
           "D", "trials", "FA_rig", "FA_prob", "FA_fix", "maxtau_rig", "maxtau_prb",
           "maxrat_fix");
    for (int si = 0; si < ns; si++) {
        long n = sizes[si];
        long G = n <= fresh_max ? trials : gemms_big, D = (trials + G - 1) / G;
        bf_ws w;
        if (ws_alloc(&w, n, k))
            return 1;
        float *A = w.A, *B = w.B, *C = w.C;
        double *rt = w.rt, *pt = w.pt, *rm = w.rm, *res_ = w.res, *cr = w.cr;
        kcs_fv_detail d = w.d;
        for (int fi = 0; fi < 3; fi++)
            for (int kind = 0; kind < 2; kind++) {
                kcs_format f = bf_fmts[fi];
                long fa_r = 0, fa_p = 0, fa_f = 0, cnt = 0;
                double mt_r = 0, mt_p = 0, mr_f = 0;
                for (long g = 0; g < G; g++) {
                    uint64_t sd = 1000003u * (uint64_t)n + 97u * (uint64_t)fi + (uint64_t)kind;
                    fill(nt, A, n, n, sd, 2 * (uint64_t)g, f, kind ? 6.0 : 0.0);
                    fill(nt, B, n, n, sd, 2 * (uint64_t)g + 1, f, 0.0);
                    gemm(A, B, C, n, n, n, f);
                    for (long dd = 0; dd < D && cnt < trials; dd++, cnt++) {
                        kcs_fv_params p;
                        params_for(&p, f, k, nt);
                        p.seed = sd;
                        p.stream = (uint64_t)cnt;
                        kcs_fv_result res;
                        kcs_error err;
                        if (kcs_freivalds_verify(A, B, C, n, n, n, &p, &d, &res, &err)) {
                            fprintf(stderr, "kcs bench freivalds: %s\n", err.msg);
                            return 1;
                        }
                        double wr = 0, wp = 0;
                        for (long i = 0; i < n; i++) {
                            double a = rm[i] / rt[i], b = rm[i] / pt[i];
                            wr = isnan(a) || a > wr ? a : wr;
                            wp = isnan(b) || b > wp ? b : wp;
                        }
                        double atol, rtol, rf;
                        bool okf;
                        fixed_tol(f, &atol, &rtol);
                        kcs_freivalds_fixed(res_, cr, n, k, atol, rtol, &okf, &rf);
                        fa_r += !(wr <= 1);
                        fa_p += !(wp <= 1);
                        fa_f += !okf;
                        mt_r = fmax(mt_r, wr);
                        mt_p = fmax(mt_p, wp);
                        mr_f = fmax(mr_f, rf);
                    }
                }
                printf("%6ld %5s %7s %5ld %5ld %6ld %7ld %7ld %7ld %10.3g %10.3g %10.3g\n", n,
                       kcs_format_name(f), kind ? "rows6" : "normal", G, D, cnt, fa_r, fa_p,
                       fa_f, mt_r, mt_p, mr_f);
                fflush(stdout);
            }
        ws_free(&w);
    }
    return 0;
}

/* ---- 3. detection of one corrupted element ------------------------------- */

#define DET_LO (-40) /* grid 10^(e/4), e in [DET_LO, DET_HI] */
#define DET_HI 40

static int bench_detection(long n, long trials, const kcs_format *fmts, int nf, int k, int nt)
{
    printf("\n== detection: one element C_il += s * rho * scale, n=%ld, k=%d, %ld trials per "
           "row (random i, l, sign; fresh probes) ==\n", n, k, trials);
    printf("   rho grid 10^(e/4); rho100 = smallest rho with every trial caught there and "
           "above; scale = max_l |C_il| (row) or max |C| (global)\n");
    printf("%5s %7s %6s %11s %11s %11s %9s %9s\n", "dtype", "inputs", "scale", "rho100_fix",
           "rho100_rig", "rho100_prob", "fix/prob", "fix/rig");
    bf_ws w;
    if (ws_alloc(&w, n, k))
        return 1;
    float *A = w.A, *B = w.B, *C = w.C;
    double *rt = w.rt, *pt = w.pt, *rm = w.rm, *rowmax = w.rowmax, *res_ = w.res, *cr = w.cr;
    kcs_fv_detail d = w.d;
    for (int fi = 0; fi < nf; fi++)
        for (int kind = 0; kind < 2; kind++)
            for (int glob = 0; glob < 2; glob++) {
                kcs_format f = fmts[fi];
                uint64_t sd = 777 + 31u * (uint64_t)fi + (uint64_t)kind;
                fill(nt, A, n, n, sd, 0, f, kind ? 6.0 : 0.0);
                fill(nt, B, n, n, sd, 1, f, 0.0);
                gemm(A, B, C, n, n, n, f);
                double gmax = 0;
                for (long i = 0; i < n; i++) {
                    rowmax[i] = 0;
                    for (long l = 0; l < n; l++)
                        rowmax[i] = fmax(rowmax[i], fabs(C[i * n + l]));
                    gmax = fmax(gmax, rowmax[i]);
                }
                int need[3] = {DET_LO, DET_LO, DET_LO}; /* per detector: max over trials */
                kcs_rng r;
                kcs_rng_init(&r, sd, 99, (uint64_t)glob);
                for (long t = 0; t < trials; t++) {
                    long i = (long)(kcs_rng_u64(&r) % (uint64_t)n);
                    long l = (long)(kcs_rng_u64(&r) % (uint64_t)n);
                    double sgn = kcs_rng_u32(&r) & 1 ? -1.0 : 1.0;
                    float saved = C[i * n + l];
                    int first[3] = {DET_HI + 1, DET_HI + 1, DET_HI + 1}, streak = 0;
                    for (int e = DET_LO; e <= DET_HI && streak < 3; e++) {
                        double rho = pow(10.0, e / 4.0);
                        double v = saved + sgn * rho * (glob ? gmax : rowmax[i]);
                        C[i * n + l] = (float)kcs_format_round(f, v, KCS_ROUND_DEFAULT);
                        kcs_fv_params p;
                        params_for(&p, f, k, nt);
                        p.seed = sd;
                        p.stream = (uint64_t)(t * 1000 + (e - DET_LO));
                        kcs_fv_result res;
                        kcs_error err;
                        if (kcs_freivalds_verify(A, B, C, n, n, n, &p, &d, &res, &err)) {
                            fprintf(stderr, "kcs bench freivalds: %s\n", err.msg);
                            return 1;
                        }
                        double atol, rtol, rf;
                        bool okf, okr = true, okp = true;
                        fixed_tol(f, &atol, &rtol);
                        kcs_freivalds_fixed(res_, cr, n, k, atol, rtol, &okf, &rf);
                        for (long q = 0; q < n; q++) {
                            okr = okr && rm[q] <= rt[q];
                            okp = okp && rm[q] <= pt[q];
                        }
                        bool caught[3] = {!okf, !okr, !okp};
                        int all = 1;
                        for (int x = 0; x < 3; x++) {
                            if (!caught[x])
                                first[x] = DET_HI + 1; /* missed: restart */
                            else if (first[x] > DET_HI)
                                first[x] = e;
                            all = all && caught[x];
                        }
                        streak = all ? streak + 1 : 0;
                    }
                    C[i * n + l] = saved;
                    for (int x = 0; x < 3; x++)
                        need[x] = first[x] > need[x] ? first[x] : need[x];
                }
                double rho[3];
                char txt[3][16];
                for (int x = 0; x < 3; x++) {
                    rho[x] = pow(10.0, need[x] / 4.0);
                    if (need[x] > DET_HI)
                        snprintf(txt[x], sizeof txt[x], "> %.0e", pow(10.0, DET_HI / 4.0));
                    else
                        snprintf(txt[x], sizeof txt[x], "%.3g", rho[x]);
                }
                printf("%5s %7s %6s %11s %11s %11s %9.3g %9.3g\n", kcs_format_name(f),
                       kind ? "rows6" : "normal", glob ? "global" : "row", txt[0], txt[1],
                       txt[2], rho[0] / rho[2], rho[0] / rho[1]);
                fflush(stdout);
            }
    ws_free(&w);
    return 0;
}

/* ---- command -------------------------------------------------------------- */

int kcs_bench_freivalds(int argc, char **argv)
{
    const char *sizes_s = "512,1024,2048,4096,8192", *probes_s = "10";
    const char *fa_sizes_s = "256,1024,4096", *det_fmts_s = "fp32,bf16";
    long long threads = 0, greps = 0, vreps = 15, bw_mib = 1024, fa_trials = 1000,
              fa_fresh = 2048, fa_gemms = 20, det_n = 1024, det_trials = 100;
    int fa = 0, det = 0, no_cost = 0;
    const char *backend = NULL;
    long long device = 0;
    const kcs_opt opts[] = {
        {0, "sizes", KCS_OPT_STR, &sizes_s, "LIST", "matrix sizes n (n x n x n) [512..8192]"},
        {'k', "probes", KCS_OPT_STR, &probes_s, "LIST", "probe counts k [10]"},
        {'j', "threads", KCS_OPT_INT, &threads, "N", "threads for the check (0: all CPUs)"},
        {0, "gemm-reps", KCS_OPT_INT, &greps, "N", "sgemm repetitions (0: 5, 3 for n>=4096)"},
        {0, "reps", KCS_OPT_INT, &vreps, "N", "verification repetitions per mode [15]"},
        {0, "bw-mib", KCS_OPT_INT, &bw_mib, "MIB", "buffer for the read-bandwidth sum [1024]"},
        {0, "no-cost", KCS_OPT_FLAG, &no_cost, NULL, "skip the cost sweep"},
        {0, "false-alarms", KCS_OPT_FLAG, &fa, NULL, "run the false-alarm grid"},
        {0, "fa-sizes", KCS_OPT_STR, &fa_sizes_s, "LIST", "false-alarm sizes [256,1024,4096]"},
        {0, "fa-trials", KCS_OPT_INT, &fa_trials, "N", "conforming checks per cell [1000]"},
        {0, "fa-fresh-max", KCS_OPT_INT, &fa_fresh, "N",
         "largest n with a fresh GEMM per trial [2048]"},
        {0, "fa-gemms", KCS_OPT_INT, &fa_gemms, "N", "distinct GEMMs per cell above that [20]"},
        {0, "detection", KCS_OPT_FLAG, &det, NULL, "run the single-corruption detection study"},
        {0, "det-n", KCS_OPT_INT, &det_n, "N", "size for the detection study [1024]"},
        {0, "det-trials", KCS_OPT_INT, &det_trials, "N", "corruptions per row of the table [100]"},
        {0, "det-dtypes", KCS_OPT_STR, &det_fmts_s, "LIST", "dtypes for detection [fp32,bf16]"},
        {0, "backend", KCS_OPT_STR, &backend, "NAME",
         "the device check of a GPU backend (cuda) against its native sgemm instead"},
        {0, "device", KCS_OPT_INT, &device, "I", "device index with --backend [0]"},
        {0},
    };
    const kcs_cmd_doc doc = {
        "bench freivalds", "[options]",
        "Cost of batched Freivalds verification (kcs_freivalds_verify) against OpenBLAS "
        "sgemm,\nmeasured side by side, with the read bandwidth and fp64 rate of this machine "
        "measured\nin the same run; optionally the false-alarm grid and the detection study.",
        "columns: ratio% = max(verify_rig, verify_prob) / sgemm; MB_read = 3 n^2 fp32 (each "
        "matrix\nread once); %bw = achieved / measured read bandwidth; memfl/arifl = bytes / "
        "bandwidth,\nflops / measured fp64 rate; x_floor = time / max(memfl, arifl); %bw "
        "above 100:\nthe matrices fit in the last-level cache. False-alarm grid: conforming "
        "checks that\nfailed, and the largest residual / threshold seen (maxtau)."};
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    long sizes[32], ks[32], fas[32];
    int ns = parse_list(sizes_s, sizes, 32), nk = parse_list(probes_s, ks, 32);
    int nfa = parse_list(fa_sizes_s, fas, 32);
    kcs_format dfm[3];
    int ndf = 0;
    for (const char *q = det_fmts_s; *q && ndf < 3;) {
        char name[16];
        size_t len = strcspn(q, ",");
        snprintf(name, sizeof name, "%.*s", (int)len, q);
        if (kcs_format_parse(name, &dfm[ndf]) != 0) {
            fprintf(stderr, "kcs bench freivalds: unknown dtype '%s'\n", name);
            return 2;
        }
        ndf++;
        q += len + (q[len] == ',');
    }
    if (ns < 1 || nk < 1 || nfa < 1 || vreps < 1 || bw_mib < 1 || fa_trials < 1 ||
        fa_gemms < 1 || det_n < 2 || det_trials < 1) {
        fprintf(stderr, "kcs bench freivalds: bad list or count (see --help)\n");
        return 2;
    }
    for (int i = 0; i < nk; i++)
        if (ks[i] > KCS_FV_MAX_PROBES) {
            fprintf(stderr, "kcs bench freivalds: k must be <= %d\n", KCS_FV_MAX_PROBES);
            return 2;
        }
    int nt = threads > 0 ? (int)threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    nt = nt < 1 ? 1 : nt > 64 ? 64 : nt;
    if (backend)
        return kcs_bench_freivalds_device(backend, (int)device, sizes, ns, ks, nk,
                                          vreps == 15 ? 3 : (long)vreps, nt);
    bf_machine mach = {.nt = nt, .mib = (long)bw_mib, .bw = NAN, .gf_loop = NAN, .gf_dgemm = NAN};
    machine_update(&mach);
    printf("kcs bench freivalds: %d check threads, OpenBLAS %d threads (%s)\n", nt,
           openblas_get_num_threads(), openblas_get_corename());
    machine_print("this run, so far", &mach);
    if (!no_cost && bench_cost(sizes, ns, ks, nk, nt, greps, vreps, &mach))
        return 1;
    if (fa && bench_false_alarms(fas, nfa, fa_trials, fa_fresh, fa_gemms, (int)ks[0], nt))
        return 1;
    if (det && bench_detection(det_n, det_trials, dfm, ndf, (int)ks[0], nt))
        return 1;
    return 0;
}
