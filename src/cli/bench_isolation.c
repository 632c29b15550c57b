/* kcs bench isolation: what running a plugin in a worker process
 * (include/kcs_worker.h) costs per call, against the same library
 * dlopen()ed into kcs, for small and medium fp32 GEMMs. Each size is timed
 * three ways in the same run, medians over repetitions (path by path, each
 * after three warm-up calls):
 *   sgemm        cblas_sgemm on float arrays in this process (the kernel)
 *   in-process   the plugin backend's run() with the library in kcs
 *                (encode to fp32, guard fill/check, call, decode)
 *   isolated     the same run() through the worker: the same work plus the
 *                shared-region copy and two messages over the socket pair
 * and, because kcs calls every kernel through kcs_callguard_run, both
 * plugin paths once more through it (in-process: a guard thread per call;
 * isolated: called directly, the process is the guard), and the isolated
 * path with the worker's box off (KCS_WORKER_BOX=off, docs/isolation.md):
 * the box's per-call cost. Then the cost of starting a worker (open and
 * close of the backend: the box's keeper, namespaces, Landlock, cgroup),
 * box on against box off, alternating. The default library is the build
 * tree's libkcs_blas_plugin.so (OpenBLAS sgemm). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "grow.h"
#include "callguard.h"
#include "cli.h"
#include "format.h"
#include "rng.h"

int kcs_bench_isolation(int argc, char **argv);

#ifndef KCS_HAVE_PLUGIN
int kcs_bench_isolation(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kcs bench isolation: the plugin backend is not built here\n");
    return 2;
}
#else
extern const kcs_backend_ops kcs_backend_plugin;
extern const kcs_backend_ops kcs_backend_plugin_inprocess;

static const kcs_cmd_doc doc = {
    "bench isolation", "[--plugin LIB] [--sizes N,N,...] [--reps R]",
    "Per-call cost of running a plugin in its worker process against the same library\n"
    "loaded into kcs, for N x N x N fp32 GEMMs; cblas_sgemm alone as the kernel's floor.",
    "Columns: median microseconds per call of sgemm, in-process run(), isolated run(),\n"
    "the ratio isolated/in-process, the same two paths through kcs_callguard_run\n"
    "(what kcs grade and kcs run execute), the isolated path with the worker's box off\n"
    "(KCS_WORKER_BOX=off) and box/off; then the median time to start and stop a worker,\n"
    "box on and off. Default library: the build's tests/plugin/libkcs_blas_plugin.so\n"
    "(or $KCS_BENCH_PLUGIN)."};

#define MAX_SIZES 16

static void fill(double *x, float *f, size_t n, uint64_t stream)
{
    kcs_rng r;
    kcs_rng_init(&r, 77, stream, (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        x[i] = kcs_format_round(KCS_FMT_FP32, kcs_rng_normal(&r), KCS_ROUND_DEFAULT);
        f[i] = (float)x[i];
    }
}

typedef struct path {
    const kcs_backend_ops *ops;
    kcs_backend_ctx *ctx;
    int guarded;
} path;

static int time_path(const path *p, kcs_call *c, double *t_p, kcs_error *err)
{
    double t0 = kcs_bench_now();
    int rc = p->guarded ? kcs_callguard_run(p->ops, p->ctx, c, 60.0, err)
                        : p->ops->run(p->ctx, c, err);
    *t_p = kcs_bench_now() - t0;
    return rc;
}

int kcs_bench_isolation(int argc, char **argv)
{
    const char *lib = NULL, *sizes_s = "32,64,128,256,512";
    long long reps = 101;
    const kcs_opt opts[] = {
        {0, "plugin", KCS_OPT_STR, &lib, "LIB", "plugin library with an fp32 gemm"},
        {0, "sizes", KCS_OPT_STR, &sizes_s, "N,N,...", "GEMM sizes (default 32,64,128,256,512)"},
        {0, "reps", KCS_OPT_INT, &reps, "R", "repetitions per size and path (default 101)"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (!lib)
        lib = getenv("KCS_BENCH_PLUGIN");
#ifdef KCS_BENCH_PLUGIN_PATH
    if (!lib)
        lib = KCS_BENCH_PLUGIN_PATH;
#endif
    if (!lib || reps < 3 || reps > 100000) {
        fprintf(stderr, "kcs bench isolation: need --plugin LIB and --reps >= 3\n");
        return 2;
    }
    int sizes[MAX_SIZES], ns = 0;
    for (const char *p = sizes_s; *p && ns < MAX_SIZES;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 4096) {
            fprintf(stderr, "kcs bench isolation: --sizes %s: not a list of 1..4096\n", sizes_s);
            return 2;
        }
        sizes[ns++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    kcs_backend_config cfg = {0};
    cfg.path = lib;
    kcs_error err = {0};
    enum { NP = 5 }; /* plugin paths; column 0 is sgemm */
    path paths[NP] = {{&kcs_backend_plugin_inprocess, NULL, 0}, {&kcs_backend_plugin, NULL, 0},
                      {&kcs_backend_plugin_inprocess, NULL, 1}, {&kcs_backend_plugin, NULL, 1},
                      {&kcs_backend_plugin, NULL, 0}};
    char *box_env = getenv("KCS_WORKER_BOX") ? strdup(getenv("KCS_WORKER_BOX")) : NULL;
    int open_rc = kcs_backend_plugin_inprocess.open(0, &cfg, &paths[0].ctx, &err) ||
                  kcs_backend_plugin.open(0, &cfg, &paths[1].ctx, &err);
    if (!open_rc) { /* the same library in a worker with its box off (never restarted here) */
        setenv("KCS_WORKER_BOX", "off", 1);
        open_rc = kcs_backend_plugin.open(0, &cfg, &paths[4].ctx, &err);
    }
    if (box_env)
        setenv("KCS_WORKER_BOX", box_env, 1);
    else
        unsetenv("KCS_WORKER_BOX");
    if (open_rc) {
        fprintf(stderr, "kcs bench isolation: %s\n", err.msg);
        if (paths[0].ctx)
            kcs_backend_plugin_inprocess.close(paths[0].ctx);
        if (paths[1].ctx)
            kcs_backend_plugin.close(paths[1].ctx);
        free(box_env);
        return 2;
    }
    paths[2].ctx = paths[0].ctx;
    paths[3].ctx = paths[1].ctx;
    printf("kcs bench isolation: %s, medians of %lld calls per path (microseconds)\n", lib, reps);
    printf("median (best) per call; iso/in: isolated over in-process, medians (bests)\n");
    printf("%5s %9s %20s %20s %15s %20s %20s %15s %20s %15s\n", "N", "sgemm", "in-process",
           "isolated", "iso/in", "guarded in-process", "guarded isolated", "iso/in",
           "isolated, box off", "box/off");
    int status = 0;
    for (int si = 0; si < ns && !status; si++) {
        int N = sizes[si];
        size_t nn = (size_t)N * (size_t)N;
        double *A = malloc(nn * sizeof *A), *B = malloc(nn * sizeof *B), *D = malloc(nn * sizeof *D);
        float *fa = malloc(nn * sizeof *fa), *fb = malloc(nn * sizeof *fb), *fd = malloc(nn * sizeof *fd);
        double *t = malloc((size_t)reps * (NP + 1) * sizeof *t);
        if (!A || !B || !D || !fa || !fb || !fd || !t) {
            fprintf(stderr, "kcs bench isolation: out of memory\n");
            status = 1;
        } else {
            fill(A, fa, nn, 1);
            fill(B, fb, nn, 2);
            kcs_call c = {0};
            c.op = KCS_OP_GEMM;
            c.variant = "native";
            c.dtype_in = c.dtype_out = KCS_FMT_FP32;
            c.acc.fmt = KCS_FMT_FP32;
            c.m = c.n = c.k = N;
            c.in[0] = A;
            c.in[1] = B;
            c.out = D;
            c.out_len = nn;
            double dummy; /* warm-up calls: pages, the worker's region, caches */
            /* Path by path, in blocks: alternating calls would make the
             * worker's and kcs's BLAS thread pools (which spin after a
             * call) compete for the cores, a cost neither path has alone. */
            for (long long r = 0; r < reps; r++) {
                double t0 = kcs_bench_now();
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, fa, N, fb,
                            N, 0.0f, fd, N);
                t[r] = kcs_bench_now() - t0;
            }
            for (int p = 0; p < NP && !status; p++) {
                for (int w = 0; w < 3 && !status; w++)
                    status = time_path(&paths[p], &c, &dummy, &err) ? 1 : 0;
                for (long long r = 0; r < reps && !status; r++)
                    status = time_path(&paths[p], &c, &t[(size_t)(p + 1) * (size_t)reps + (size_t)r],
                                       &err) ? 1 : 0;
            }
            if (status) {
                fprintf(stderr, "kcs bench isolation: N = %d: %s\n", N, err.msg);
            } else {
                double med[NP + 1], best[NP + 1];
                for (int p = 0; p < NP + 1; p++) {
                    med[p] = kcs_bench_median(t + (size_t)p * (size_t)reps, (int)reps, &best[p]);
                    med[p] *= 1e6;
                    best[p] *= 1e6;
                }
                printf("%5d %9.1f %9.1f (%8.1f) %9.1f (%8.1f) %6.3f (%6.3f) %9.1f (%8.1f) "
                       "%9.1f (%8.1f) %6.3f (%6.3f) %9.1f (%8.1f) %6.3f (%6.3f)\n", N, med[0],
                       med[1], best[1], med[2], best[2], med[2] / med[1], best[2] / best[1],
                       med[3], best[3], med[4], best[4], med[4] / med[3], best[4] / best[3],
                       med[5], best[5], med[2] / med[5], best[2] / best[5]);
                fflush(stdout);
            }
        }
        KCS_FREE(A, B, D, fa, fb, fd, t);
    }
    kcs_backend_plugin_inprocess.close(paths[0].ctx);
    kcs_backend_plugin.close(paths[1].ctx);
    kcs_backend_plugin.close(paths[4].ctx);
    /* Starting a worker: open (start, HELLO) and close (stop, reap), box on
     * and off alternating. */
    enum { STARTS = 21 };
    double ton[STARTS], toff[STARTS];
    for (int r = 0; r < STARTS && !status; r++) {
        for (int off = 0; off < 2 && !status; off++) {
            if (off)
                setenv("KCS_WORKER_BOX", "off", 1);
            kcs_backend_ctx *ctx = NULL;
            double t0 = kcs_bench_now();
            status = kcs_backend_plugin.open(0, &cfg, &ctx, &err) ? 1 : 0;
            if (ctx)
                kcs_backend_plugin.close(ctx);
            (off ? toff : ton)[r] = kcs_bench_now() - t0;
            if (box_env)
                setenv("KCS_WORKER_BOX", box_env, 1);
            else
                unsetenv("KCS_WORKER_BOX");
        }
    }
    if (status) {
        fprintf(stderr, "kcs bench isolation: starting a worker: %s\n", err.msg);
    } else {
        double bon, boff, mon = kcs_bench_median(ton, STARTS, &bon),
                          moff = kcs_bench_median(toff, STARTS, &boff);
        printf("worker start+stop, median (best) of %d, ms: box %.2f (%.2f), box off %.2f "
               "(%.2f), box/off %.2f\n", STARTS, mon * 1e3, bon * 1e3, moff * 1e3, boff * 1e3,
               mon / moff);
    }
    free(box_env);
    return status;
}
#endif
