/* kcs bench study: the end-to-end cost of a study, kcs_runner_run (runner.h)
 * under MPI_COMM_WORLD into temporary outputs, next to the parts measured
 * in the same run: loading and planning the study (study.h), opening the
 * ranks' backends (placement.h), and the kernel calls alone (the time_ns
 * the runner records per trial in /results). Temporary files are removed,
 * also after a failure. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "cli.h"
#include "journal.h"
#include "placement.h"
#include "runner.h"
#include "stage_time.h"
#include "store_read.h"
#include "study.h"

int kcs_bench_study(int argc, char **argv);

enum { S_LOAD, S_BIND, S_KERNEL, S_E2E, S_COUNT };

static int agree_max(int v)
{
    int m = 0;
    MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* Rank 0: seconds of kernel calls of the slowest rank (sum of time_ns of
 * the rows that ran) and the number of trials run, from the dataset. */
static int kernel_time(const char *path, double *t_p, long long *trials_p, kcs_error *err)
{
    kcs_store_reader *rd = NULL;
    int rc = kcs_store_open_read(path, &rd, err);
    if (rc)
        return rc;
    const kcs_store_info *in = kcs_store_reader_info(rd);
    size_t per_case = (size_t)in->n_ranks * (size_t)in->max_trials;
    kcs_result_rec *rows = calloc(per_case + 1, sizeof *rows);
    double *per_rank = calloc((size_t)in->n_ranks + 1, sizeof *per_rank);
    long long trials = 0;
    if (!rows || !per_rank)
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory reading %s", path);
    for (int64_t ci = 0; !rc && ci < in->n_cases; ci++) {
        rc = kcs_store_read_case_results(rd, ci, rows, err);
        for (size_t i = 0; !rc && i < per_case; i++) {
            if ((kcs_status_of(rows[i].status) == KCS_ST_SKIPPED))
                continue;
            trials++;
            per_rank[i / (size_t)in->max_trials] += 1e-9 * (double)rows[i].time_ns;
        }
    }
    double worst = 0;
    for (int r = 0; !rc && r < in->n_ranks; r++)
        worst = per_rank[r] > worst ? per_rank[r] : worst;
    free(rows);
    free(per_rank);
    kcs_store_reader_close(rd);
    if (!rc) {
        *t_p = worst;
        *trials_p = trials;
    }
    return rc;
}

/* Whatever a run may leave: the output, its .partial, this rank's journal. */
static void cleanup(const char *out, int rank)
{
    char p[4200];
    kcs_journal_file(out, rank, p, sizeof p);
    unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        kcs_journal_dir(out, p, sizeof p);
        rmdir(p);
        snprintf(p, sizeof p, "%s.partial", out);
        unlink(p);
        unlink(out);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* One end-to-end run into out; times and counts on rank 0. Collective. */
static int run_once(const char *study, const char *out, int rank, double *t, int *degraded,
                    long long *trials)
{
    kcs_run_opts o = {.study_path = study, .out_path = out, .command_line = "kcs bench study",
                      .quiet = 1, .fewer_ranks_ok = 1};
    kcs_error err = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = kcs_bench_now();
    int rc = kcs_runner_run(&o, MPI_COMM_WORLD, &err);
    MPI_Barrier(MPI_COMM_WORLD);
    t[S_E2E] = kcs_bench_now() - t0;
    if (rc != KCS_RUN_OK && rc != KCS_RUN_DEGRADED) {
        if (rank == 0)
            fprintf(stderr, "kcs bench study: kcs_runner_run: %s (exit status %d)\n", err.msg, rc);
        return rc == KCS_RUN_BAD_INPUT ? 2 : 1;
    }
    *degraded |= rc == KCS_RUN_DEGRADED;
    int bad = 0;
    if (rank == 0 && (bad = kernel_time(out, &t[S_KERNEL], trials, &err) != 0))
        fprintf(stderr, "kcs bench study: %s\n", err.msg);
    return agree_max(bad);
}

int kcs_bench_study(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "bench study", "[STUDY.yaml] [--reps R] [--dir DIR]",
        "End-to-end cost of a study: kcs_runner_run (what `kcs run` does: plan agreement,\n"
        "backends, every trial with oracle, metrics and verdict, journal, parallel HDF5\n"
        "output) R times into temporary files, under MPI_COMM_WORLD (`mpirun -n N kcs bench\n"
        "study STUDY.yaml` or one process), next to its parts measured in the same run.\n"
        "STUDY.yaml defaults to studies/default.yaml relative to the current directory.",
        "rows: load + plan = kcs_study_load + kcs_plan_build (every rank); open backends =\n"
        "kcs_binding_open + close; kernel calls = the slowest rank's sum of the time_ns the\n"
        "runner records per trial (the first call of each trial); end to end = the\n"
        "runner's call. Medians over R runs, best: the fastest; /e2e = this row's median\n"
        "over end to end. Outputs kcs-bench-study.* in DIR are removed. A study whose\n"
        "placement names a backend not built leaves that rank unavailable (stderr says\n"
        "so) and is timed all the same (status: degraded).\n"
        "where time goes: per rank, the median seconds of each stage of the case loop\n"
        "(stage_time.h: inputs, oracle, kernel, metrics, verdict, store, journal, sync;\n"
        "other = end to end minus their sum) and its share of end to end.\n"
        "--numpy SCRIPT (scripts/bench_study_numpy.py): rank 0 runs the same core work of\n"
        "the study's gemm cases in numpy after each kcs run (inputs, sgemm, fp64 reference,\n"
        "|A||B|, errors, digest; the time it prints, interpreter start-up excluded) and the\n"
        "last row gives kcs end to end / numpy."};
    long long reps = 3;
    const char *dir = NULL, *numpy = NULL, *python = "/usr/bin/python3";
    const kcs_opt opts[] = {
        {0, "reps", KCS_OPT_INT, &reps, "R", "end-to-end runs, median reported (default 3)"},
        {0, "dir", KCS_OPT_STR, &dir, "DIR", "directory of the outputs (default $TMPDIR or /tmp)"},
        {0, "numpy", KCS_OPT_STR, &numpy, "SCRIPT", "also time SCRIPT's numpy version of the gemm cases"},
        {0, "python", KCS_OPT_STR, &python, "PATH", "interpreter for --numpy (default /usr/bin/python3)"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (npos > 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "kcs bench study: at most one STUDY.yaml; --reps in [1, 100]\n");
        return 2;
    }
    const char *study_path = npos ? argv[0] : "studies/default.yaml";
    if (!dir)
        dir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "kcs bench study: --dir %s: not a directory\n", dir);
        return 2;
    }
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long pid = (long long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    double *t = calloc((size_t)(S_COUNT * reps), sizeof *t);
    /* stage seconds [rep][rank][stage] (rank 0), numpy seconds [rep] */
    enum { NSV = 2 * KCS_STAGE_COUNT }; /* wall, then CPU seconds per stage */
    double *stg = calloc((size_t)(reps * size * NSV) + 1, sizeof *stg);
    double *tnp = calloc((size_t)reps + 1, sizeof *tnp);
    char np_args[2048] = "";
    int np_cases = 0, np_other = 0;
    char name[64] = "";
    long long n_cases = 0, trials = 0;
    int degraded = 0;
    rc = agree_max(!t || !stg || !tnp);
    for (int r = 0; r < reps && !rc; r++) {
        double tr[S_COUNT] = {0};
        kcs_study *st = NULL;
        kcs_plan plan = {0};
        kcs_error err = {0};
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = kcs_bench_now();
        int lrc = kcs_study_load(study_path, &st, &err);
        if (!lrc)
            lrc = kcs_plan_build(st, &plan, &err);
        tr[S_LOAD] = kcs_bench_now() - t0;
        if (agree_max(lrc != 0)) {
            if (rank == 0)
                fprintf(stderr, "kcs bench study: %s\n",
                        lrc ? err.msg : "another rank could not load or plan the study");
            kcs_plan_free(&plan);
            kcs_study_free(st);
            rc = 2;
            break;
        }
        snprintf(name, sizeof name, "%s", st->name);
        n_cases = plan.n_cases;
        if (r == 0 && numpy) { /* the gemm cases as M,N,K,TRIALS arguments */
            size_t len = 0;
            for (int64_t ci = 0; ci < plan.n_cases; ci++) {
                const kcs_case *cs = &plan.cases[ci];
                if (cs->op != KCS_OP_GEMM || cs->dtype_in != KCS_FMT_FP32) {
                    np_other++;
                    continue;
                }
                int w = snprintf(np_args + len, sizeof np_args - len, " %lld,%lld,%lld,%d",
                                 (long long)cs->shape.m, (long long)cs->shape.n,
                                 (long long)cs->shape.k, cs->trials);
                if (w < 0 || (size_t)w >= sizeof np_args - len)
                    break;
                len += (size_t)w;
                np_cases++;
            }
        }
        kcs_rank_binding b;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = kcs_bench_now();
        kcs_binding_open(st, NULL, MPI_COMM_WORLD, 0, &b);
        kcs_binding_close(&b);
        MPI_Barrier(MPI_COMM_WORLD);
        tr[S_BIND] = kcs_bench_now() - t0;
        kcs_plan_free(&plan);
        kcs_study_free(st);

        char out[4096];
        snprintf(out, sizeof out, "%s/kcs-bench-study.%lld.%d.h5", dir, pid, r);
        if (agree_max(rank == 0 && access(out, F_OK) == 0)) {
            if (rank == 0)
                fprintf(stderr, "kcs bench study: %s exists; not touching it\n", out);
            rc = 1;
            break;
        }
        kcs_stage_reset();
        rc = run_once(study_path, out, rank, tr, &degraded, &trials);
        cleanup(out, rank);
        MPI_Gather(kcs_stage_seconds, NSV, MPI_DOUBLE, stg + (size_t)r * (size_t)size * NSV, NSV,
                   MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (!rc && numpy && np_cases > 0 && rank == 0) {
            char cmd[4096];
            snprintf(cmd, sizeof cmd, "%s %s%s", python, numpy, np_args);
            FILE *p = popen(cmd, "r");
            double v = -1.0;
            if (!p || fscanf(p, "%lf", &v) != 1)
                v = -1.0;
            if (p && pclose(p) != 0)
                v = -1.0;
            if (v < 0)
                fprintf(stderr, "kcs bench study: --numpy: `%s` failed\n", cmd);
            tnp[r] = v;
        }
        for (int s = 0; s < S_COUNT; s++)
            t[s * reps + r] = tr[s];
    }
    if (!rc && rank == 0) {
        printf("kcs bench study: %s (study %s), %lld cases, %lld trials over %d ranks, median of "
               "%lld runs\n", study_path, name, n_cases, trials, size, reps);
        printf("machine (this run): %d ranks on %ld online CPUs of this host; outputs in %s; "
               "runs %s\n", size, sysconf(_SC_NPROCESSORS_ONLN), dir,
               degraded ? "degraded (some ranks unavailable or failed: see stderr)" : "ok");
        printf("%-40s %10s %10s %10s %10s %7s\n", "stage", "median_s", "best_s", "cases/s",
               "trials/s", "/e2e");
        const char *names[S_COUNT] = {"load + plan (study.h)", "open backends (placement.h)",
                                      "kernel calls (slowest rank, time_ns)",
                                      "end to end (kcs_runner_run)"};
        double med[S_COUNT], best[S_COUNT];
        for (int s = 0; s < S_COUNT; s++)
            med[s] = kcs_bench_median(t + s * reps, (int)reps, &best[s]);
        for (int s = 0; s < S_COUNT; s++) {
            printf("%-40s %10.4g %10.4g", names[s], med[s], best[s]);
            if (s == S_E2E || s == S_KERNEL)
                printf(" %10.4g %10.4g", (double)n_cases / med[s], (double)trials / med[s]);
            else
                printf(" %10s %10s", "-", "-");
            printf(" %7.3g\n", med[s] / med[S_E2E]);
        }
        /* where time goes, per rank */
        printf("\nwhere time goes (per rank: median wall seconds, share of end to end, CPU "
               "seconds of the process)\n");
        printf("%-10s", "stage");
        for (int k = 0; k < size; k++)
            printf("  rank %-3d %7s %8s", k, "share", "cpu_s");
        printf("\n");
        double *v = malloc((size_t)reps * sizeof *v), b2;
        for (int s = 0; v && s <= KCS_STAGE_COUNT; s++) {
            printf("%-10s", s < KCS_STAGE_COUNT ? kcs_stage_name((kcs_stage)s) : "other");
            for (int k = 0; k < size; k++) {
                for (int r = 0; r < reps; r++) {
                    const double *row = stg + ((size_t)r * (size_t)size + (size_t)k) * NSV;
                    double sum = 0;
                    for (int q = 0; q < KCS_STAGE_COUNT; q++)
                        sum += row[q];
                    v[r] = s < KCS_STAGE_COUNT ? row[s] : t[S_E2E * reps + r] - sum;
                }
                double m = kcs_bench_median(v, (int)reps, &b2);
                printf("  %8.4g %7.3f", m, m / med[S_E2E]);
                if (s < KCS_STAGE_COUNT) {
                    for (int r = 0; r < reps; r++)
                        v[r] = stg[((size_t)r * (size_t)size + (size_t)k) * NSV + KCS_STAGE_COUNT +
                                   (size_t)s];
                    printf(" %8.4g", kcs_bench_median(v, (int)reps, &b2));
                } else {
                    printf(" %8s", "-");
                }
            }
            printf("\n");
        }
        free(v);
        if (numpy && np_cases > 0) {
            double bn, mn = kcs_bench_median(tnp, (int)reps, &bn);
            printf("\nnumpy (%s, %d gemm fp32 cases%s): median %.4g s, best %.4g s; "
                   "kcs end to end / numpy = %.3g\n", numpy, np_cases,
                   np_other ? ", other cases not covered" : "", mn, bn, med[S_E2E] / mn);
        }
    }
    free(stg);
    free(tnp);
    free(t);
    if (!inited)
        MPI_Finalize();
    return rc;
}
