#include <mpi.h>
#include <stdio.h>
#include <string.h>

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
    "hold anything: resume); 4 interrupted by SIGTERM/SIGINT (journals kept: resume)."};

int kcs_cmd_run(int argc, char **argv)
{
    const char *out = NULL, *plugin = NULL;
    const char *resume = NULL;
    long long timeout = 0;
    int force = 0, verbose = 0, quiet = 0;
    const kcs_opt opts[] = {
        {'o', "output", KCS_OPT_STR, &out, "FILE", "HDF5 dataset to write (required)"},
        {0, "plugin", KCS_OPT_STR, &plugin, "LIB.so", "run a user kernel library on every rank"},
        {0, "force", KCS_OPT_FLAG, &force, NULL, "replace an existing output file (and journal)"},
        {0, "resume", KCS_OPT_STR, &resume, "OUT.h5", "continue an interrupted run from its journal"},
        {0, "case-timeout", KCS_OPT_INT, &timeout, "SECONDS",
         "time limit of one kernel call (default: the study's `timeout`, 600)"},
        {'v', "verbose", KCS_OPT_FLAG, &verbose, NULL, "per-rank log lines on stderr"},
        {'q', "quiet", KCS_OPT_FLAG, &quiet, NULL, "no progress or summary"},
        {0},
    };
    /* Build the command line for provenance before argv is reordered. */
    char cmdline[2048] = "kcs";
    size_t used = 3;
    for (int i = 0; i < argc && used < sizeof cmdline; i++)
        used += (size_t)snprintf(cmdline + used, sizeof cmdline - used, " %s", argv[i]);
    int npos = 0;
    int rc = kcs_cli_parse(&doc, opts, argc, argv, &npos);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (resume && out && strcmp(resume, out) != 0) {
        fprintf(stderr, "kcs run: --resume %s and -o %s name different outputs\n", resume, out);
        return 2;
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
    };
    kcs_error err = {0};
    rc = kcs_runner_run(&o, MPI_COMM_WORLD, &err);
    if (rank == 0) {
        if (rc == KCS_RUN_INTERRUPTED) {
            fprintf(stderr, "kcs run: %s\n", err.msg);
        } else if (rc == KCS_RUN_OK || rc == KCS_RUN_DEGRADED) {
            if (!quiet)
                printf("kcs run: %d ranks, dataset %s%s\n", size, out,
                       rc == KCS_RUN_DEGRADED ? " (some ranks unavailable or failed cases: exit 3)"
                                              : "");
        } else {
            fprintf(stderr, "kcs run: %s\n", err.msg);
        }
    }
    MPI_Finalize();
    return rc;
}
