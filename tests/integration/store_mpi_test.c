/* The parallel HDF5 writer end to end: 4 ranks (any number works) create a
 * store, write ranks, cases, results and samples collectively for 3 cases
 * x 2 trials, close; rank 0 reopens the file with the serial reader and
 * checks every row against the values each rank derived from (case, rank,
 * trial). Also: a failure on one rank fails the call on every rank with
 * that rank's message; an existing path is refused on every rank; an
 * aborted store is readable and says complete = 0.
 *
 *   mpirun -np 4 store_mpi_test [dir] [--keep]
 * Returns non-zero on any mismatch. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"
#include "store.h"
#include "store_read.h"

#define N_CASES 3
#define MAX_TRIALS 2
#define N_SAMPLES 5

static int my_rank;

static const int64_t case_ids[N_CASES] = {100, 101, 107};
static const int case_trials[N_CASES] = {2, 2, 1}; /* case 2 leaves a slot "skipped" */

/* The values of row (case c, rank r, trial t), derived, never stored. */
static double tau_of(int c, int r, int t)
{
    return c * 100.0 + r * 10.0 + t + 0.25;
}
static uint64_t digest_of(int c, int r, int t)
{
    return 0x9e3779b97f4a7c15ull * (uint64_t)(1 + c * 64 + r * 8 + t);
}
static double sample_of(int c, int r, int i)
{
    return c + r / 8.0 + i / 1024.0;
}
/* rank 2 sends no samples for case 1 (a NaN row) */
static int has_samples(int c, int r)
{
    return !(c == 1 && r == 2);
}

static void make_result(int c, int r, int t, kcs_result_rec *x)
{
    memset(x, 0, sizeof *x);
    x->case_id = -1; /* the store sets case_id, rank and trial */
    x->rank = -1;
    x->trial = -1;
    snprintf(x->status, sizeof x->status, "%s", (c + r + t) % 3 ? "ok" : "error");
    x->output_digest = digest_of(c, r, t);
    x->tau = tau_of(c, r, t);
    x->eta = 1.0 / (1 + c);
    x->max_abs = x->tau * 2;
    x->max_rel = x->tau * 3;
    x->max_ulp = x->tau * 4;
    x->mean_ulp = x->tau * 5;
    x->backward_err = x->tau * 6;
    x->max_scaled = x->tau * 7;
    x->effective_acc_bits = 24 - t;
    x->nan_count = c * 1000 + r;
    x->inf_count = r * 1000 + t;
    x->guard_ok = (r + t) % 2;
    x->time_ns = (int64_t)1000000007 * (c + 1) + r * 13 + t;
    snprintf(x->verdict, sizeof x->verdict, "%s", t ? "violation" : "within_tolerance");
    snprintf(x->signature, sizeof x->signature, "sig-c%d-r%d-t%d", c, r, t);
}

static void make_case(int c, kcs_case_rec *x)
{
    memset(x, 0, sizeof *x);
    x->case_id = case_ids[c];
    snprintf(x->contract, sizeof x->contract, "%s", c ? "C-ORD-02" : "C-PRC-01");
    snprintf(x->op, sizeof x->op, "%s", c == 2 ? "softmax" : "gemm");
    snprintf(x->variant, sizeof x->variant, "own");
    snprintf(x->dtype_in, sizeof x->dtype_in, "bf16");
    snprintf(x->dtype_acc, sizeof x->dtype_acc, "fp32");
    snprintf(x->dtype_out, sizeof x->dtype_out, "fp32");
    x->m = 16 << c;
    x->n = 8 + c;
    x->k = 1024 * (c + 1);
    x->batch = c + 1;
    snprintf(x->input_dist, sizeof x->input_dist, "normal");
    x->seed = 0xabcdef00ull + (uint64_t)c;
    x->input_digest = digest_of(c, 99, 0);
    x->trials = case_trials[c];
}

static void make_rank(int r, kcs_rank_rec *x)
{
    memset(x, 0, sizeof *x);
    x->rank = -5; /* the store sets it */
    snprintf(x->host, sizeof x->host, "host-%d", r / 2);
    snprintf(x->backend, sizeof x->backend, "%s", r % 2 ? "opencl" : "cpu");
    x->device = r % 2;
    snprintf(x->model, sizeof x->model, "model of rank %d", r);
    snprintf(x->profile, sizeof x->profile, "%s", r == 3 ? "nvidia-h100" : "");
    snprintf(x->status, sizeof x->status, "ok");
}

/* longer than the writer's 4 KiB broadcast chunks */
static char command_line[10000];

static void make_command_line(void)
{
    size_t n = (size_t)snprintf(command_line, sizeof command_line, "kcs run itest.yaml");
    for (int i = 0; n + 16 < sizeof command_line; i++)
        n += (size_t)snprintf(command_line + n, sizeof command_line - n, " --opt%d", i);
}

static const char study_text[] = "name: itest\nseed: 7\ncontracts: [C-PRC-01, C-ORD-02]\n";
static const char c1_text[] = "id: C-PRC-01\ntitle: Accumulator precision is preserved\n";
static const char c2_text[] = "id: C-ORD-02\ntitle: run-to-run determinism\n";

static void check_results(kcs_store_reader *rd, int n_ranks)
{
    int per_case = n_ranks * MAX_TRIALS;
    kcs_result_rec *rows = calloc((size_t)per_case * N_CASES, sizeof *rows);
    kcs_result_rec *all = calloc((size_t)per_case * N_CASES, sizeof *all);
    double *smp = malloc(sizeof *smp * (size_t)n_ranks * N_SAMPLES);
    kcs_error err = {0};
    for (int c = 0; c < N_CASES; c++) {
        kcs_result_rec *got = rows + (size_t)c * per_case;
        int rc = kcs_store_read_case_results(rd, c, got, &err);
        CHECK(rc == 0, "read case %d: %s", c, err.msg);
        for (int r = 0; r < n_ranks; r++)
            for (int t = 0; t < MAX_TRIALS; t++) {
                const kcs_result_rec *g = &got[r * MAX_TRIALS + t];
                CHECK(g->case_id == case_ids[c] && g->rank == r && g->trial == t,
                      "row c%d r%d t%d has case_id %" PRId64 " rank %d trial %d", c, r, t,
                      g->case_id, g->rank, g->trial);
                if (t >= case_trials[c]) {
                    CHECK(!strcmp(g->status, "skipped") && isnan(g->tau) && !g->verdict[0],
                          "c%d r%d t%d: status %s tau %g", c, r, t, g->status, g->tau);
                    continue;
                }
                kcs_result_rec w;
                make_result(c, r, t, &w);
                CHECK(!strcmp(g->status, w.status) && !strcmp(g->verdict, w.verdict) &&
                          !strcmp(g->signature, w.signature),
                      "c%d r%d t%d strings: %s %s %s", c, r, t, g->status, g->verdict,
                      g->signature);
                CHECK(g->output_digest == w.output_digest && g->tau == w.tau && g->eta == w.eta &&
                          g->max_abs == w.max_abs && g->max_rel == w.max_rel &&
                          g->max_ulp == w.max_ulp && g->mean_ulp == w.mean_ulp &&
                          g->backward_err == w.backward_err && g->max_scaled == w.max_scaled &&
                          g->effective_acc_bits == w.effective_acc_bits,
                      "c%d r%d t%d numbers (tau %g, want %g)", c, r, t, g->tau, w.tau);
                CHECK(g->nan_count == w.nan_count && g->inf_count == w.inf_count &&
                          g->guard_ok == w.guard_ok && g->time_ns == w.time_ns,
                      "c%d r%d t%d counters", c, r, t);
            }
        int found = -1;
        rc = kcs_store_read_samples(rd, case_ids[c], smp, &found, &err);
        CHECK(rc == 0 && found == 1, "samples of case %" PRId64 ": %s", case_ids[c], err.msg);
        for (int r = 0; rc == 0 && r < n_ranks; r++)
            for (int i = 0; i < N_SAMPLES; i++) {
                double v = smp[r * N_SAMPLES + i];
                if (has_samples(c, r))
                    CHECK(v == sample_of(c, r, i), "sample c%d r%d i%d = %g", c, r, i, v);
                else
                    CHECK(isnan(v), "sample c%d r%d i%d = %g, want NaN", c, r, i, v);
            }
    }
    /* the whole table in one read equals the per-case reads */
    int rc = kcs_store_read_results(rd, 0, (int64_t)per_case * N_CASES, all, &err);
    CHECK(rc == 0 && !memcmp(all, rows, sizeof *all * (size_t)per_case * N_CASES),
          "whole-table read differs: %s", err.msg);
    int found = -1;
    rc = kcs_store_read_samples(rd, 102, smp, &found, &err);
    CHECK(rc == 0 && found == 0, "samples of a case id not in the plan: found %d", found);
    rc = kcs_store_read_results(rd, (int64_t)per_case * N_CASES - 1, 2, all, &err);
    CHECK(rc == KCS_E_INVAL && strstr(err.msg, "/results"), "read past the end: %s", err.msg);
    free(rows);
    free(all);
    free(smp);
}

static void check_file(const char *path, int n_ranks, uint64_t plan_hash)
{
    kcs_error err = {0};
    kcs_store_reader *rd = NULL;
    int rc = kcs_store_open_read(path, &rd, &err);
    CHECK(rc == 0, "open %s: %s", path, err.msg);
    if (rc)
        return;
    const kcs_store_info *in = kcs_store_reader_info(rd);
    char hash[32];
    snprintf(hash, sizeof hash, "%016" PRIx64, plan_hash);
    CHECK(in->schema_version == KCS_SCHEMA_VERSION && in->n_ranks == n_ranks &&
              in->n_cases == N_CASES && in->max_trials == MAX_TRIALS &&
              in->n_samples == N_SAMPLES && in->complete == 1,
          "info: v%d ranks %d cases %" PRId64 " trials %d samples %d complete %d",
          in->schema_version, in->n_ranks, in->n_cases, in->max_trials, in->n_samples,
          in->complete);
    CHECK(!strcmp(in->study_name, "itest") && !strcmp(in->plan_hash, hash) &&
              !strcmp(in->command_line, command_line) && !strcmp(in->software, "kcs") &&
              strlen(in->created) == 20 && in->created[19] == 'Z',
          "info strings: %s %s (command line of %zu chars) %s", in->study_name, in->plan_hash,
          strlen(in->command_line), in->created);

    kcs_case_rec cases[N_CASES];
    rc = kcs_store_read_cases(rd, 0, 2, cases, &err);
    rc = rc ? rc : kcs_store_read_cases(rd, 2, 1, cases + 2, &err);
    CHECK(rc == 0, "read cases: %s", err.msg);
    for (int c = 0; rc == 0 && c < N_CASES; c++) {
        kcs_case_rec w;
        make_case(c, &w);
        CHECK(!memcmp(&w, &cases[c], sizeof w), "case row %d differs (case_id %" PRId64 ")", c,
              cases[c].case_id);
    }
    kcs_rank_rec *ranks = calloc((size_t)n_ranks, sizeof *ranks);
    rc = kcs_store_read_ranks(rd, ranks, &err);
    CHECK(rc == 0, "read ranks: %s", err.msg);
    for (int r = 0; rc == 0 && r < n_ranks; r++) {
        kcs_rank_rec w;
        make_rank(r, &w);
        w.rank = r;
        CHECK(!memcmp(&w, &ranks[r], sizeof w), "rank row %d differs (rank %d host %s)", r,
              ranks[r].rank, ranks[r].host);
    }
    free(ranks);
    check_results(rd, n_ranks);

    char *text = NULL;
    rc = kcs_store_read_text(rd, "/study", &text, &err);
    CHECK(rc == 0 && !strcmp(text, study_text), "/study text: %s", rc ? err.msg : text);
    free(text);
    rc = kcs_store_read_text(rd, "/contracts/C-ORD-02", &text, &err);
    CHECK(rc == 0 && !strcmp(text, c2_text), "contract text: %s", rc ? err.msg : text);
    free(text);
    char **ids = NULL;
    int n_ids = 0;
    rc = kcs_store_read_contract_ids(rd, &ids, &n_ids, &err);
    CHECK(rc == 0 && n_ids == 2 && !strcmp(ids[0], "C-ORD-02") && !strcmp(ids[1], "C-PRC-01"),
          "contract ids (%d): %s", n_ids, err.msg);
    kcs_store_strings_free(ids, n_ids);
    char *v = NULL;
    rc = kcs_store_read_attr(rd, "/provenance/build", "backends", &v, &err);
    CHECK(rc == 0 && !strcmp(v, "cpu,opencl"), "backends attribute: %s", rc ? err.msg : v);
    free(v);
    rc = kcs_store_read_attr(rd, "/contracts/C-PRC-01", "path", &v, &err);
    CHECK(rc == 0 && !strcmp(v, "contracts/C-PRC-01.yaml"), "contract path: %s", rc ? err.msg : v);
    free(v);
    kcs_store_reader_close(rd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    check_rank = my_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = argc > 1 && strcmp(argv[1], "--keep") ? argv[1] : ".";
    int keep = argc > 1 && !strcmp(argv[argc - 1], "--keep");
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    make_command_line();
    char path[512], path2[512];
    snprintf(path, sizeof path, "%s/store_mpi_test.%d.h5", dir, pid);
    snprintf(path2, sizeof path2, "%s/store_mpi_test.%d.aborted.h5", dir, pid);

    kcs_contract c1 = {0}, c2 = {0};
    snprintf(c1.id, sizeof c1.id, "C-PRC-01");
    c1.text = (char *)c1_text;
    c1.path = "contracts/C-PRC-01.yaml";
    snprintf(c2.id, sizeof c2.id, "C-ORD-02");
    c2.text = (char *)c2_text;
    c2.path = "contracts/C-ORD-02.yaml";
    static kcs_study study; /* large: keep it off the stack */
    snprintf(study.name, sizeof study.name, "itest");
    study.text = (char *)study_text;
    study.path = "itest.yaml";
    study.contracts[0] = &c1;
    study.contracts[1] = &c2;
    study.n_contracts = 2;
    study.n_samples = N_SAMPLES;
    kcs_case plan_cases[N_CASES];
    memset(plan_cases, 0, sizeof plan_cases);
    for (int c = 0; c < N_CASES; c++) {
        plan_cases[c].id = case_ids[c];
        plan_cases[c].trials = case_trials[c];
    }
    kcs_plan plan = {.cases = plan_cases,
                     .n_cases = N_CASES,
                     .max_trials = MAX_TRIALS,
                     .hash = 0xfedcba9876543210ull};
    kcs_store_meta meta = {.command_line = command_line,
                           .study = &study,
                           .plan = &plan,
                           .n_ranks = size,
                           .n_samples = N_SAMPLES,
                           .backends = "cpu,opencl"};

    kcs_error err = {0};
    kcs_store *st = NULL;
    int rc = kcs_store_create(path, MPI_COMM_WORLD, &meta, &st, &err);
    CHECK(rc == 0, "create: %s", err.msg);
    if (rc)
        goto out;
    kcs_rank_rec me;
    make_rank(my_rank, &me);
    rc = kcs_store_write_ranks(st, &me, &err);
    CHECK(rc == 0, "write ranks: %s", err.msg);
    kcs_case_rec cases[N_CASES];
    for (int c = 0; c < N_CASES; c++)
        make_case(c, &cases[c]);
    rc = kcs_store_write_cases(st, my_rank == 0 ? cases : NULL, &err);
    CHECK(rc == 0, "write cases: %s", err.msg);

    /* a bad call on the last rank fails everywhere, with its message */
    kcs_result_rec recs[MAX_TRIALS];
    rc = kcs_store_write_case_results(st, 0, recs, my_rank == size - 1 ? MAX_TRIALS + 5 : 0, NULL,
                                      &err);
    if (rc == 0) /* buffered: the flush that follows reports it */
        rc = kcs_store_flush(st, &err);
    char want[32];
    snprintf(want, sizeof want, "rank %d: ", size - 1);
    CHECK(rc == KCS_E_INTERNAL && (size == 1 || strstr(err.msg, want)) && strstr(err.msg, path),
          "a failure on one rank: rc %d, %s", rc, err.msg);

    for (int c = 0; c < N_CASES; c++) {
        for (int t = 0; t < case_trials[c]; t++)
            make_result(c, my_rank, t, &recs[t]);
        double smp[N_SAMPLES];
        for (int i = 0; i < N_SAMPLES; i++)
            smp[i] = sample_of(c, my_rank, i);
        rc = kcs_store_write_case_results(st, c, recs, case_trials[c],
                                          has_samples(c, my_rank) ? smp : NULL, &err);
        CHECK(rc == 0, "write case %d: %s", c, err.msg);
    }
    rc = kcs_store_close(st, &err);
    CHECK(rc == 0, "close: %s", err.msg);

    /* the path exists now: refused on every rank */
    st = NULL;
    rc = kcs_store_create(path, MPI_COMM_WORLD, &meta, &st, &err);
    CHECK(rc == KCS_E_EXISTS && st == NULL, "create over an existing file: rc %d", rc);

    /* abort leaves complete = 0 */
    rc = kcs_store_create(path2, MPI_COMM_WORLD, &meta, &st, &err);
    CHECK(rc == 0, "create 2: %s", err.msg);
    if (rc == 0) {
        kcs_store_write_ranks(st, &me, &err);
        kcs_store_abort(st);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (my_rank == 0) {
        check_file(path, size, plan.hash);
        kcs_store_reader *rd = NULL;
        rc = kcs_store_open_read(path2, &rd, &err);
        CHECK(rc == 0 && kcs_store_reader_info(rd)->complete == 0, "aborted file: %s", err.msg);
        kcs_store_reader_close(rd);
        if (!keep) {
            remove(path);
            remove(path2);
        } else {
            printf("kept %s and %s\n", path, path2);
        }
    }
out:
    return check_finish("store_mpi_test");
}
