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
        "so) and is timed all the same (status: degraded)."};
    long long reps = 3;
    const char *dir = NULL;
    const kcs_opt opts[] = {
        {0, "reps", KCS_OPT_INT, &reps, "R", "end-to-end runs, median reported (default 3)"},
        {0, "dir", KCS_OPT_STR, &dir, "DIR", "directory of the outputs (default $TMPDIR or /tmp)"},
        {0},
    };
    int npos = 0;
    int rc = kcs_cli_parse(&doc, opts, argc, argv, &npos);
    if (rc)
        return rc == 1 ? 0 : 2;
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
    char name[64] = "";
    long long n_cases = 0, trials = 0;
    int degraded = 0;
    rc = agree_max(!t);
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
        rc = run_once(study_path, out, rank, tr, &degraded, &trials);
        cleanup(out, rank);
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
    }
    free(t);
    if (!inited)
        MPI_Finalize();
    return rc;
}
