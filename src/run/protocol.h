/* A contract's measurement protocol, executed for one trial of one case on
 * one implementation: inputs, reference, guarded kernel call(s), metrics,
 * protocol extras (repetitions, batch invariance, stale-result replay) and
 * the verdict. Shared by `kcs run` (per rank) and `kcs calibrate`. */
#ifndef KCS_PROTOCOL_H
#define KCS_PROTOCOL_H

#include <mpi.h>

#include "inputs.h"
#include "placement.h"
#include "store.h"
#include "study.h"

#define KCS_REPLAY_MAX 64

/* What a case remembers across its trials (stale-result replay). */
typedef struct kcs_case_memory {
    int n;
    uint64_t input_digest[KCS_REPLAY_MAX];
    uint64_t output_digest[KCS_REPLAY_MAX];
} kcs_case_memory;

/* One trial's generated inputs, kept for the next call of the same
 * (contract, case, trial, seed): a calibration sweep runs every kernel of
 * its catalogue on each trial's inputs in turn. Each call gets a fresh copy
 * (a kernel that writes into its inputs changes nothing for the next).
 * With them the trial's reference (the oracle's ref, absref, scale and
 * outcome), which depends on the contract, the case and the inputs only,
 * not on the kernel: computed by the first kernel's call, copied for the
 * others (not with a shared oracle, whose ranks compute it together). */
typedef struct kcs_inputs_cache {
    const kcs_contract *c;
    const kcs_case *cs;
    int64_t case_id;
    int trial;
    uint64_t study_seed;
    int valid;
    kcs_inputs in;
    int ref_valid; /* the fields below hold this trial's reference */
    int ref_rc;    /* the oracle's return: 0, or KCS_E_RAISED */
    size_t ref_len;
    double *ref, *absref, scale;
} kcs_inputs_cache;
void kcs_inputs_cache_free(kcs_inputs_cache *k);

typedef struct kcs_trial_io {
    uint64_t study_seed;
    double timeout_s;
    int rank;
    int verbose;
    kcs_case_memory *memory;  /* reset per case by the caller */
    uint64_t *input_digest;   /* accumulated over trials */
    double *samples;          /* trial 0's sampled outputs, or NULL */
    int n_samples;
    /* share_oracle: the fp64 GEMM reference is split over comm's ranks
     * (oracle_shared.h); then every rank of comm must run every trial in
     * the same order (the runner does). 0: computed locally. */
    int share_oracle;
    MPI_Comm comm;
    /* verdict_only: the caller keeps the verdict and the output digest,
     * not the record's diagnostic columns; then, when no tolerance clause
     * reads them, the mechanism diagnostics (effective_acc_bits,
     * input_bits, p_bits) are computed only where they are needed:
     * KCS_IO_SIGNATURE (three-state calibration): for a trial that fails,
     * whose signature they choose; KCS_IO_PASS_FAIL (a calibration sweep,
     * which counts failed trials): never, and a failed trial's signature
     * is not chosen (its verdict may read under_specified for violation:
     * both are failures). 0: always computed. */
    enum { KCS_IO_FULL, KCS_IO_SIGNATURE, KCS_IO_PASS_FAIL } verdict_only;
    kcs_inputs_cache *inputs_cache; /* NULL: inputs generated for every call */
} kcs_trial_io;

/* Run trial `trial` of case cs under contract c on binding b and fill rec.
 * Kernel failures are recorded in rec (status), not returned; the return
 * value is an error of the run itself (out of memory). */
int kcs_protocol_trial(const kcs_contract *c, const kcs_case *cs, int trial,
                       kcs_rank_binding *b, const kcs_trial_io *io, kcs_result_rec *rec,
                       kcs_error *err);

/* A result row for a trial that did not run. */
void kcs_protocol_blank(kcs_result_rec *r, const kcs_case *cs, int rank, int trial,
                        kcs_status status, const char *verdict);

#endif
