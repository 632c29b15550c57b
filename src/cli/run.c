#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci_report.h"
#include "cli.h"
#include "runner.h"

static const kcs_cmd_doc doc = {
    "run", "STUDY.yaml -o OUT.h5 [options]  |  --resume OUT.h5",
    "Run every case of a study on every MPI rank (each rank with its placement's\n"
    "backend and implementation) and write one HDF5 dataset. Launch under mpirun/srun.",
    "The dataset is written to OUT.h5.partial, read back and checked, and renamed to\n"
    "OUT.h5 only when complete; an existing OUT.h5 is never replaced without --force.\n"
    "One job per output: OUT.h5.journal/lock names the job holding it. Each rank\n"
    "journals every finished case durably in OUT.h5.journal/; after a kill or\n"
    "preemption (SIGTERM stops after the current trial), `kcs run --resume OUT.h5`\n"
    "(same number of ranks) rebuilds the dataset from the journals, with the same\n"
    "--plugin and --case-timeout, and runs only the missing cases.\n\n"
    "exit status: 0 all ranks ran every case; 3 dataset complete but some ranks were\n"
    "unavailable or failed cases (see /provenance/ranks and /results status); 2 bad\n"
    "input (study, contract, flags, existing output, another job on the output);\n"
    "1 I/O, resource (disk full), internal or MPI failure (journals kept when they\n"
    "hold anything: resume); 4 interrupted by SIGTERM/SIGINT (journals kept: resume);\n"
    "with --fail-on, 5 some trial is a violation or under-specified (violation), 6 some\n"
    "trial errored (crashed, timed out, failed) or a rank was unavailable (error); 5\n"
    "before 6 before 3.\n\n"
    "--serve (one rank, for kcs.check in Python): after MPI_Init, read one request\n"
    "per line on stdin, STUDY<TAB>OUT<TAB>DIR<TAB>ERRFILE[<TAB>KEY=VALUE...]: run\n"
    "STUDY into OUT (as `kcs run STUDY -o OUT -q` in DIR, in the environment the\n"
    "runner started with, KEY=VALUE set and KEY unset,\n"
    "stderr into ERRFILE) and answer its exit status on a line of stdout; ends at\n"
    "end of input or after an interrupted run. Saves a process and MPI start per run."
    "--json prints a summary per contract x rank on stdout (rank 0) instead of the\n"
    "summary line; --junit FILE writes it as JUnit XML, one test case per contract x\n"
    "implementation (failure: violations; error: errors)."};

extern char **environ;

/* The environment as it was (snap: "KEY=VALUE" strings): every variable
 * not in it unset, every one in it set to its value. */
static void restore_env(char **snap)
{
    for (;;) { /* unset what is there (one at a time: unsetenv moves environ) */
        int gone = 0;
        for (char **e = environ; e && *e; e++) {
            const char *eq = strchr(*e, '=');
            if (!eq)
                continue;
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
            int keep = 0;
            for (char **p = snap; *p && !keep; p++)
                keep = strcmp(*p, *e) == 0;
            if (!keep && (size_t)(eq - *e) < sizeof key) {
                unsetenv(key);
                gone = 1;
                break;
            }
        }
        if (!gone)
            break;
    }
    for (char **p = snap; *p; p++) {
        const char *eq = strchr(*p, '=');
        char key[256];
        if (!eq || (size_t)(eq - *p) >= sizeof key)
            continue;
        snprintf(key, sizeof key, "%.*s", (int)(eq - *p), *p);
        const char *now = getenv(key);
        if (!now || strcmp(now, eq + 1) != 0)
            setenv(key, eq + 1, 1);
    }
}

/* --serve: the runs of one-rank studies, one per request line (doc).
 * Nothing of a run outlives it but the process: every run builds its plan,
 * binding, backend and store afresh; the variables a request sets are
 * unset before the next. */
static int serve(const char *readback_exe)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1) {
        fprintf(stderr, "kcs run --serve: one rank only (%d ranks)\n", size);
        return 2;
    }
    /* answers on a private copy of stdout; the runs' own stdout is gone */
    int ans_fd = dup(1), null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    FILE *ans = ans_fd >= 0 ? fdopen(ans_fd, "w") : NULL;
    if (!ans || null_fd < 0 || dup2(null_fd, 1) < 0) {
        fprintf(stderr, "kcs run --serve: cannot set up its answer channel\n");
        return 1;
    }
    close(null_fd);
    fcntl(ans_fd, F_SETFD, FD_CLOEXEC);
    int err_saved = dup(2);
    if (err_saved >= 0)
        fcntl(err_saved, F_SETFD, FD_CLOEXEC);
    /* every request starts from the environment the runner started with
     * (after MPI_Init), then sets KEY=VALUE and unsets KEY fields */
    size_t n_env = 0;
    while (environ[n_env])
        n_env++;
    char **snap = calloc(n_env + 1, sizeof *snap);
    for (size_t i = 0; snap && i < n_env; i++)
        snap[i] = strdup(environ[i]);
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, stdin) > 0) {
        line[strcspn(line, "\n")] = 0;
        char *field[4 + 256], *save = NULL;
        int nf = 0;
        for (char *t = strtok_r(line, "\t", &save); t && nf < 4 + 256;
             t = strtok_r(NULL, "\t", &save))
            field[nf++] = t;
        if (nf < 4 || !snap) {
            fprintf(ans, "2 bad request: STUDY, OUT, DIR and ERRFILE separated by tabs\n");
            fflush(ans);
            continue;
        }
        restore_env(snap);
        for (int i = 4; i < nf; i++) {
            char *eq = strchr(field[i], '=');
            if (eq == field[i])
                continue;
            if (!eq) {
                unsetenv(field[i]);
                continue;
            }
            *eq = 0;
            setenv(field[i], eq + 1, 1);
        }
        int efd = open(field[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (efd < 0 || chdir(field[2]) != 0) {
            fprintf(ans, "2 cannot open %s or enter %s\n", field[3], field[2]);
            fflush(ans);
            if (efd >= 0)
                close(efd);
            continue;
        }
        fflush(stderr);
        dup2(efd, 2);
        close(efd);
        char cmdline[2048];
        snprintf(cmdline, sizeof cmdline, "kcs run %s -o %s -q (serve)", field[0], field[1]);
        kcs_run_opts o = {.study_path = field[0], .out_path = field[1], .command_line = cmdline,
                          .quiet = 1, .readback_exe = readback_exe};
        kcs_error err = {0};
        rc = kcs_runner_run(&o, MPI_COMM_WORLD, &err);
        if (rc != KCS_RUN_OK && rc != KCS_RUN_DEGRADED)
            fprintf(stderr, "kcs run: %s\n", err.msg);
        fflush(stderr);
        if (err_saved >= 0)
            dup2(err_saved, 2);
        fprintf(ans, "%d\n", rc);
        fflush(ans);
        if (rc == KCS_RUN_INTERRUPTED)
            break;
    }
    for (size_t i = 0; snap && i < n_env; i++)
        free(snap[i]);
    free(snap);
    free(line);
    fclose(ans);
    return rc == KCS_RUN_INTERRUPTED ? rc : 0;
}

int kcs_cmd_run(int argc, char **argv)
{
    const char *out = NULL, *plugin = NULL;
    const char *resume = NULL, *junit = NULL, *fail_on_s = NULL;
    long long timeout = 0;
    int force = 0, verbose = 0, quiet = 0, subset = 0, json = 0, serving = 0;
    /* SIGTERM/SIGINT stop the run between two trials (exit 4) from the
     * start: the handler goes in before MPI_Init (half a second) and again
     * after it, should the MPI library have replaced it. */
    kcs_runner_handle_signals();
    unsigned fail_on = 0;
    const kcs_opt opts[] = {
        {'o', "output", KCS_OPT_STR, &out, "FILE", "HDF5 dataset to write (required)"},
        {0, "plugin", KCS_OPT_STR, &plugin, "LIB.so", "run a user kernel library on every rank"},
        {0, "force", KCS_OPT_FLAG, &force, NULL, "replace an existing output file (and journal)"},
        {0, "resume", KCS_OPT_STR, &resume, "OUT.h5", "continue an interrupted run from its journal"},
        {0, "case-timeout", KCS_OPT_INT, &timeout, "SECONDS",
         "time limit of one kernel call (default: the study's `timeout`, 600)"},
        {'v', "verbose", KCS_OPT_FLAG, &verbose, NULL, "per-rank log lines on stderr"},
        {'q', "quiet", KCS_OPT_FLAG, &quiet, NULL, "no progress or summary"},
        {0, "subset", KCS_OPT_FLAG, &subset, NULL,
         "fewer ranks than placement entries: run only the first ones (else refused)"},
        {0, "json", KCS_OPT_FLAG, &json, NULL, "print a JSON summary of the dataset on stdout"},
        {0, "junit", KCS_OPT_STR, &junit, "FILE", "write a JUnit XML report"},
        {0, "serve", KCS_OPT_FLAG, &serving, NULL,
         "one rank: run the studies named on stdin, one per line (see below)"},
        {0, "fail-on", KCS_OPT_STR, &fail_on_s, "WHAT",
         "violation, error or violation,error: exit 5 / 6 when the dataset has them"},
        {0},
    };
    char cmdline[2048]; /* for provenance, recorded before argv is reordered */
    int npos = 0, rc = 0;
    if (kcs_cli_parse_recorded(&doc, opts, argc, argv, &npos, &rc, cmdline, sizeof cmdline))
        return rc;
    if (resume && out && strcmp(resume, out) != 0) {
        fprintf(stderr, "kcs run: --resume %s and -o %s name different outputs\n", resume, out);
        return 2;
    }
    if (fail_on_s && kcs_ci_parse_fail_on(fail_on_s, &fail_on)) {
        fprintf(stderr, "kcs run: --fail-on %s: expected violation, error or violation,error\n",
                fail_on_s);
        return 2;
    }
    if (serving && (npos || out || resume || plugin || json || junit || fail_on_s)) {
        fprintf(stderr, "kcs run: --serve takes its studies on stdin, without STUDY, -o, "
                        "--resume, --plugin, --json, --junit or --fail-on\n");
        return 2;
    }
    if (serving) {
        MPI_Init(NULL, NULL);
        kcs_runner_handle_signals();
        char self[PATH_MAX];
        ssize_t n_self = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n_self > 0)
            self[n_self] = '\0';
        rc = serve(n_self > 0 ? self : NULL);
        MPI_Finalize();
        return rc;
    }
    if (resume)
        out = resume;
    if (npos > 1 || (!resume && npos != 1) || !out) {
        fprintf(stderr, "kcs run: need one STUDY file and -o OUT.h5, or --resume OUT.h5 "
                        "(see kcs run --help)\n");
        return 2;
    }
    MPI_Init(NULL, NULL);
    kcs_runner_handle_signals();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kcs_run_opts o = {
        .study_path = npos == 1 ? argv[0] : NULL,
        .resume = resume != NULL,
        .case_timeout = (double)timeout,
        .out_path = out,
        .plugin = plugin,
        .command_line = cmdline,
        .force = force,
        .verbose = verbose,
        .quiet = quiet,
        .fewer_ranks_ok = subset,
    };
    /* the read-back runs in this executable's `_readback` (store_readback.h) */
    char self[PATH_MAX];
    ssize_t n_self = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n_self > 0) {
        self[n_self] = '\0';
        o.readback_exe = self;
    }
    kcs_error err = {0};
    rc = kcs_runner_run(&o, MPI_COMM_WORLD, &err);
    if (rank == 0) {
        if (rc == KCS_RUN_INTERRUPTED) {
            fprintf(stderr, "kcs run: %s\n", err.msg);
        } else if (rc == KCS_RUN_OK || rc == KCS_RUN_DEGRADED) {
            if (!quiet && !json)
                printf("kcs run: %d ranks, dataset %s%s\n", size, out,
                       rc == KCS_RUN_DEGRADED ? " (some ranks unavailable or failed cases: exit 3)"
                                              : "");
        } else {
            fprintf(stderr, "kcs run: %s\n", err.msg);
        }
    }
    if ((rc == KCS_RUN_OK || rc == KCS_RUN_DEGRADED) && (json || junit || fail_on)) {
        /* Rank 0 reads the finished dataset back; every rank exits alike. */
        if (rank == 0) {
            kcs_ci ci = {0};
            int crc = kcs_ci_add_dataset(&ci, out, &err);
            if (!crc && json)
                kcs_ci_json(&ci, stdout, cmdline, NULL);
            if (!crc && junit)
                crc = kcs_ci_junit(&ci, junit, "kcs run", &err);
            if (crc) {
                fprintf(stderr, "kcs run: %s\n", err.msg);
                rc = KCS_RUN_FAILED;
            } else if (kcs_ci_status(&ci, fail_on)) {
                rc = kcs_ci_status(&ci, fail_on);
            }
            fflush(stdout);
            kcs_ci_free(&ci);
        }
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return rc;
}
