/* The MPI runner: plan agreement, placement, the case loop, progress, and
 * the HDF5 output written to a temporary name and renamed when complete. */
#ifndef KCS_RUNNER_H
#define KCS_RUNNER_H

#include "agree.h"
#include <mpi.h>

#include "error.h"

typedef struct kcs_run_opts {
    const char *study_path;
    const char *out_path;
    const char *plugin;       /* --plugin lib.so: every rank runs that plugin */
    const char *command_line;
    int force;                /* replace an existing output file */
    int resume;               /* continue from OUT.h5.journal (study_path may be NULL) */
    double case_timeout;      /* > 0: overrides the study's per-call time limit */
    int verbose;
    int quiet;
    int fewer_ranks_ok;       /* fewer ranks than placement entries is no problem (benchmarks) */
    const char *readback_exe; /* kcs executable: read the dataset back in `kcs _readback`
                                 (store_readback.h); NULL: in this process */
} kcs_run_opts;

/* Exit statuses of `kcs run` (documented in README and --help). */
enum {
    KCS_RUN_OK = 0,          /* every rank ran every case */
    KCS_RUN_FAILED = 1,      /* internal, I/O or MPI failure: no output file */
    KCS_RUN_BAD_INPUT = 2,   /* bad study/contract/flags, output exists: no output file */
    KCS_RUN_DEGRADED = 3,    /* dataset complete, but some ranks were unavailable or errored */
    KCS_RUN_INTERRUPTED = 4, /* stopped by SIGTERM/SIGINT: journals kept, resume with --resume */
};

/* Install SIGTERM/SIGINT handlers that ask the runner to stop after the
 * current case (a scheduler's preemption), keeping the journals. */
void kcs_runner_handle_signals(void);

/* Collective over comm. Returns one of the exit statuses above; err holds
 * the message (the same on every rank). */
int kcs_runner_run(const kcs_run_opts *o, MPI_Comm comm, kcs_error *err);


#endif
