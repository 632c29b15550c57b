/* The read-back of a run's dataset in a process of its own.
 *
 * The file read back may be damaged (writes lost below MPI-IO on a full
 * disk), and HDF5 1.10 can loop for ever on a damaged global heap
 * (measured: H5HG_read spinning in H5C_protect on a dataset whose OMPIO
 * writes failed silently). Under MPI a rank must not fork and go on running
 * HDF5 in the copy (registered memory of some interconnects), so each rank
 * starts `kcs _readback` (fork, then exec at once), sends it what to check
 * and waits while it reports progress: a child that makes no progress for
 * the stall limit is killed and the read-back fails, naming the file. */
#ifndef KCS_STORE_READBACK_H
#define KCS_STORE_READBACK_H

#include <stdint.h>

#include "error.h"

/* What one rank checks: the file, and its own rows of every case. */
typedef struct kcs_readback_spec {
    const char *path;
    int mode; /* KCS_READBACK_FILE (rank 0, first) or KCS_READBACK_ROWS, or
                 KCS_READBACK_BOTH (a one-rank run: FILE then ROWS) */
    int rank, n_ranks, max_trials, n_samples;
    int64_t n_cases;
    char plan_hash[32];
    const int64_t *case_ids;  /* [n_cases], plan order */
    const uint64_t *digests;  /* [n_cases], kcs_store_record_digests */
} kcs_readback_spec;

/* BOTH: a one-rank run needs no agreement between the two steps, so one
 * `kcs _readback` process does both (one process start, exec and HDF5
 * start-up fewer per run: kcs.check's serve loop runs many small runs). */
enum { KCS_READBACK_FILE = 1, KCS_READBACK_ROWS = 2, KCS_READBACK_BOTH = 3 };

/* Called after each step of a check (the file opened, one case read). */
typedef void (*kcs_readback_tick)(void *ctx);

/* The checks themselves, in this process (store_verify.c). FILE: fsync,
 * reopen, end of allocation against the size, trim the reservation. ROWS:
 * reopen read-only, the root attributes and table shapes, then each case's
 * rows and samples of this rank against its digest. BOTH: FILE, then ROWS
 * when FILE passed. */
int kcs_store_check(const kcs_readback_spec *sp, kcs_readback_tick tick, void *ctx,
                    kcs_error *err);

/* Run kcs_store_check in `exe _readback`, killing it after stall_s seconds
 * without progress. Returns its code and message, or KCS_E_IO when it
 * stalled, died or could not start (the message says which). */
int kcs_readback_spawn(const char *exe, const kcs_readback_spec *sp, double stall_s,
                       kcs_error *err);

/* The stall limit: KCS_READBACK_STALL_S when set (> 0), else 60 s. */
double kcs_readback_stall_s(void);

/* Body of `kcs _readback`: the spec on fd in, progress and the result on
 * fd out. Returns the process's exit status. */
int kcs_readback_child_main(int in, int out);

#endif
