/* kcs bench hdf5: write throughput of the parallel HDF5 store writer that
 * `kcs run` uses (store.h: create, /provenance/ranks, write_case_results
 * per case, buffered into batches of collective writes, /cases, close),
 * under MPI, next to the same
 * payload written with plain pwrite() (and pwrite()+fsync) by every rank
 * into one file in the same directory: the file system's floor, measured in
 * the same run. The study and plan are built in memory (as the store tests
 * do); every temporary file is removed, also after a failure. */
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "grow.h"
#include "cli.h"
#include "contract.h"
#include "rng.h"
#include "store.h"
#include "study.h"

int kcs_bench_hdf5(int argc, char **argv);

typedef struct bh_ctx {
    int rank, size;
    long long cases, trials, samples;
    char path[4096];
    kcs_store_meta meta;
    kcs_result_rec *recs;
    kcs_case_rec *case_recs; /* rank 0 */
    double *smp;
    double payload; /* bytes handed to the writer, all ranks */
    double file_bytes;
} bh_ctx;

/* 1 on every rank if any rank failed. */
static int any_failed(int failed)
{
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

static const char *fs_name(const char *dir)
{
    static const struct { unsigned long magic; const char *name; } fs[] = {
        {0x01021994ul, "tmpfs"}, {0xEF53ul, "ext2/3/4"}, {0x58465342ul, "xfs"},
        {0x9123683Eul, "btrfs"}, {0x794c7630ul, "overlayfs"}, {0x6969ul, "nfs"},
        {0x0BD00BD0ul, "lustre"}, {0x47504653ul, "gpfs"}};
    struct statfs s;
    if (statfs(dir, &s) != 0)
        return "unknown";
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if ((unsigned long)s.f_type == fs[i].magic)
            return fs[i].name;
    return "other";
}

/* The store's sequence, as the runner makes it. Collective; 0 or -1. */
static int write_store(bh_ctx *c, double *t_p)
{
    kcs_error err = {0};
    kcs_store *st = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = kcs_bench_now();
    int rc = kcs_store_create(c->path, MPI_COMM_WORLD, &c->meta, &st, &err);
    if (rc)
        goto fail; /* create removes what it made */
    kcs_rank_rec rr;
    memset(&rr, 0, sizeof rr);
    snprintf(rr.backend, sizeof rr.backend, "cpu");
    KCS_SET_STATUS(rr.status, KCS_ST_OK);
    if ((rc = kcs_store_write_ranks(st, &rr, &err)))
        goto abort;
    for (long long ci = 0; ci < c->cases; ci++)
        if ((rc = kcs_store_write_case_results(st, ci, c->recs, (int)c->trials, c->smp, &err)))
            goto abort;
    if ((rc = kcs_store_write_cases(st, c->case_recs, &err)))
        goto abort;
    rc = kcs_store_close(st, &err);
    MPI_Barrier(MPI_COMM_WORLD);
    *t_p = kcs_bench_now() - t0;
    struct stat sb;
    if (c->rank == 0 && stat(c->path, &sb) == 0)
        c->file_bytes = (double)sb.st_size;
    if (rc)
        goto fail;
    return 0;
abort:
    kcs_store_abort(st);
fail:
    if (c->rank == 0)
        fprintf(stderr, "kcs bench hdf5: %s\n", err.msg);
    return -1;
}

/* The floor: rank r pwrite()s its share (its rows and samples; rank 0 also
 * the /cases and /provenance/ranks tables) at its own offset of one file,
 * in large pieces; fsync when asked. Collective; 0 or -1. */
static int write_plain(bh_ctx *c, int sync, double *t_p)
{
    size_t rec_b = (size_t)c->trials * sizeof(kcs_result_rec) + (size_t)c->samples * 8;
    size_t mine = (size_t)c->cases * rec_b;
    size_t extra = (size_t)c->cases * sizeof(kcs_case_rec) + (size_t)c->size * sizeof(kcs_rank_rec);
    off_t off = (off_t)mine * c->rank;
    if (c->rank == 0)
        mine += extra;
    size_t piece = mine < ((size_t)16 << 20) ? mine : (size_t)16 << 20;
    char *buf = malloc(piece + 1);
    int failed = !buf;
    for (size_t i = 0; buf && i < piece; i++)
        buf[i] = (char)(i * 131u);
    if (c->rank == 0 && !failed) {
        int fd = open(c->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        failed = fd < 0 || close(fd) != 0;
    }
    int fd = -1;
    failed = any_failed(failed);
    if (!failed) {
        fd = open(c->path, O_WRONLY);
        failed = fd < 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = kcs_bench_now();
    for (size_t done = 0; !failed && done < mine;) {
        size_t n = mine - done < piece ? mine - done : piece;
        ssize_t w = pwrite(fd, buf, n, off + (off_t)done);
        failed = w <= 0;
        done += w > 0 ? (size_t)w : 0;
    }
    if (!failed && sync)
        failed = fsync(fd) != 0;
    if (fd >= 0 && close(fd) != 0)
        failed = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    *t_p = kcs_bench_now() - t0;
    free(buf);
    if (any_failed(failed)) {
        if (c->rank == 0)
            fprintf(stderr, "kcs bench hdf5: %s: plain write failed\n", c->path);
        return -1;
    }
    return 0;
}

/* Rank 0: the path must not exist yet (so whatever is there later is ours). */
static int fresh_path(const bh_ctx *c)
{
    int taken = c->rank == 0 && access(c->path, F_OK) == 0;
    if (taken)
        fprintf(stderr, "kcs bench hdf5: %s exists; not touching it\n", c->path);
    return any_failed(taken);
}

static void remove_file(const bh_ctx *c)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0)
        unlink(c->path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Study, plan and rows, in memory; 0 or -1 (out of memory, this rank). */
static int build(bh_ctx *c, kcs_study *study, kcs_contract *con, kcs_plan *plan)
{
    static char study_text[] = "name: bench-hdf5\ncontracts: [BENCH-01]\n";
    static char con_text[] = "id: BENCH-01\ntitle: kcs bench hdf5\n";
    snprintf(con->id, sizeof con->id, "BENCH-01");
    con->text = con_text;
    con->path = "bench.yaml";
    snprintf(study->name, sizeof study->name, "bench-hdf5");
    study->text = study_text;
    study->path = "bench-hdf5.yaml";
    study->contracts[0] = con;
    study->n_contracts = 1;
    study->n_samples = (int)c->samples;
    plan->cases = calloc((size_t)c->cases, sizeof *plan->cases);
    plan->n_cases = c->cases;
    plan->max_trials = (int)c->trials;
    plan->hash = 0x6b63732d62656e63ull;
    c->recs = calloc((size_t)c->trials, sizeof *c->recs);
    c->smp = malloc(((size_t)c->samples + 1) * sizeof *c->smp);
    c->case_recs = calloc((size_t)c->cases, sizeof *c->case_recs);
    if (!plan->cases || !c->recs || !c->smp || !c->case_recs)
        return -1;
    for (long long i = 0; i < c->cases; i++) {
        plan->cases[i].id = i;
        plan->cases[i].trials = (int)c->trials;
        c->case_recs[i].case_id = i;
        c->case_recs[i].trials = (int32_t)c->trials;
        snprintf(c->case_recs[i].contract, sizeof c->case_recs[i].contract, "BENCH-01");
        snprintf(c->case_recs[i].op, sizeof c->case_recs[i].op, "gemm");
    }
    for (long long t = 0; t < c->trials; t++) {
        kcs_result_rec *r = &c->recs[t];
        KCS_SET_STATUS(r->status, KCS_ST_OK);
        snprintf(r->verdict, sizeof r->verdict, "within_tolerance");
        r->output_digest = KCS_GOLDEN64 * (uint64_t)(t + 1);
        r->tau = r->max_ulp = 0.5 + (double)t;
        r->eta = r->max_abs = r->max_rel = r->backward_err = r->max_scaled = 1e-7 * (double)(t + 1);
        r->effective_acc_bits = 23.5;
        r->guard_ok = 1;
        r->time_ns = 1000 + t;
    }
    for (long long i = 0; i < c->samples; i++)
        c->smp[i] = 0.001 * (double)i;
    c->meta = (kcs_store_meta){.command_line = "kcs bench hdf5", .study = study, .plan = plan,
                               .n_ranks = c->size, .n_samples = (int)c->samples,
                               .backends = "cpu"};
    c->payload = (double)c->cases * ((double)c->size * ((double)c->trials * sizeof *c->recs +
                                                        (double)c->samples * 8.0) +
                                     sizeof *c->case_recs) +
                 (double)c->size * sizeof(kcs_rank_rec);
    return 0;
}

int kcs_bench_hdf5(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "bench hdf5", "[--cases N] [--trials T] [--samples S] [--reps R] [--dir DIR]",
        "Write throughput of the parallel HDF5 store writer of `kcs run` (create, ranks,\n"
        "every case handed over and written in batches, one collective /results and one\n"
        "/samples write per batch, /cases, close) with N cases x ranks x T rows, next to\n"
        "the same payload written with plain pwrite() and with\n"
        "pwrite()+fsync into the same directory, measured in the same run. Run it as\n"
        "`mpirun -n R kcs bench hdf5` or as one process; rank 0 prints.",
        "Times: create to close (the store does not fsync), medians over R repetitions,\n"
        "best: the fastest. payload: the bytes handed to the writer (result records,\n"
        "samples, cases and ranks rows, as C structs). x_store = store time / this row's\n"
        "time. Temporary files kcs-bench-hdf5.* in DIR are removed."};
    long long cases = 2000, trials = 4, samples = 64, reps = 3;
    const char *dir = NULL;
    const kcs_opt opts[] = {
        {0, "cases", KCS_OPT_INT, &cases, "N", "cases (default 2000)"},
        {0, "trials", KCS_OPT_INT, &trials, "T", "result rows per case and rank (default 4)"},
        {0, "samples", KCS_OPT_INT, &samples, "S", "samples per case and rank (default 64)"},
        {0, "reps", KCS_OPT_INT, &reps, "R", "repetitions, median reported (default 3)"},
        {0, "dir", KCS_OPT_STR, &dir, "DIR", "directory of the files (default $TMPDIR or /tmp)"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (npos != 0 || cases < 1 || cases > 100000000 || trials < 1 || trials > 10000 ||
        samples > 100000 || reps < 1 || reps > 100) {
        fprintf(stderr, "kcs bench hdf5: --cases in [1, 1e8], --trials in [1, 10000], "
                        "--samples in [0, 100000], --reps in [1, 100], no positional "
                        "arguments\n");
        return 2;
    }
    if (!dir)
        dir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "kcs bench hdf5: --dir %s: not a directory\n", dir);
        return 2;
    }
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        MPI_Init(NULL, NULL);
    bh_ctx c = {.cases = cases, .trials = trials, .samples = samples};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    long long pid = (long long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    static kcs_study study;
    static kcs_contract con;
    kcs_plan plan = {0};
    double *t = calloc(3 * (size_t)reps, sizeof *t);
    rc = any_failed(build(&c, &study, &con, &plan) != 0 || !t);
    if (rc && c.rank == 0)
        fprintf(stderr, "kcs bench hdf5: out of memory for %lld cases\n", cases);
    for (int r = 0; r < reps && !rc; r++) {
        snprintf(c.path, sizeof c.path, "%s/kcs-bench-hdf5.%lld.%d.h5", dir, pid, r);
        if ((rc = fresh_path(&c)))
            break;
        rc = write_store(&c, &t[r]);
        remove_file(&c);
        for (int s = 0; s < 2 && !rc; s++) {
            snprintf(c.path, sizeof c.path, "%s/kcs-bench-hdf5.%lld.%d.raw", dir, pid, r);
            if ((rc = fresh_path(&c)))
                break;
            rc = write_plain(&c, s, &t[(1 + s) * reps + r]);
            remove_file(&c);
        }
    }
    if (!rc && c.rank == 0) {
        unsigned maj = 0, min = 0, rel = 0;
        H5get_libversion(&maj, &min, &rel);
        char mpiv[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(mpiv, &len);
        mpiv[strcspn(mpiv, "\n,")] = '\0';
        double rows = (double)cases * (double)c.size * (double)trials;
        printf("kcs bench hdf5: %d ranks, %lld cases x %d ranks x %lld trials = %.0f rows "
               "(+ %lld samples per case and rank), median of %lld runs\n",
               c.size, cases, c.size, trials, rows, samples, reps);
        printf("machine (this run): dir %s (%s), HDF5 %u.%u.%u, %s; payload %.2f MB, HDF5 file "
               "%.2f MB\n", dir, fs_name(dir), maj, min, rel, mpiv, c.payload / 1e6,
               c.file_bytes / 1e6);
        printf("%-28s %10s %10s %12s %9s %8s\n", "writer", "median_s", "best_s", "rows/s", "MB/s",
               "x_store");
        const char *names[3] = {"kcs store (parallel HDF5)", "pwrite (floor)",
                                "pwrite+fsync (floor)"};
        double med[3], best[3];
        for (int w = 0; w < 3; w++) {
            med[w] = kcs_bench_median(t + w * reps, (int)reps, &best[w]);
            printf("%-28s %10.4g %10.4g %12.4g %9.4g %8.4g\n", names[w], med[w], best[w],
                   rows / med[w], c.payload / med[w] / 1e6, med[0] / med[w]);
        }
    }
    KCS_FREE(plan.cases, c.recs, c.smp, c.case_recs, t);
    if (!inited)
        MPI_Finalize();
    return rc ? 1 : 0;
}
