/* Three-state calibration (DESIGN §3) and grading (DESIGN §4): a contract
 * measured on one implementation through the contract's OWN measurement
 * protocol (its shapes, held-out shapes, inputs, trials, guards and
 * protocol; src/run/protocol.c), summarised as one outcome.
 *
 * Calibration: for every contract three built-in implementations, the
 * variants "calib:<ID>:baseline|bad|good" (CPU kernels in
 * backends/cpu/calib*.c; on other backends the wrappers of
 * src/calibrate/calib_wrap.c around the backend's native kernels). A contract is
 * sound when baseline and bad FAIL, good PASSes, and the bad state's
 * matched signatures include the contract's own named signature(s) for
 * that failure (the catalogue's `expected`). */
#ifndef KCS_CALIBRATE_H
#define KCS_CALIBRATE_H

#include <stdint.h>
#include <stdio.h>

#include "contract.h"
#include "placement.h"
#include "semantics.h"
#include "store_read.h"

enum { KCS_CALIB_N_STATES = 3 };

/* A narrow-output state of a contract (calibration.yaml `narrow:`): a CPU
 * calibration kernel measured with a bf16 / fp16 output instead of the
 * contract's default dtype_out, expected to PASS (a good state) or to FAIL
 * with its own signature(s). */
enum { KCS_CALIB_MAX_NARROW = 8 };
typedef struct kcs_calib_narrow {
    char state[16];       /* the row's state name, e.g. good-bf16-out */
    char kernel[16];      /* the CPU kernel: good | bad | narrow-sum | blocks256 */
    kcs_format dtype_in, dtype_out;
    int pass;             /* 1: expected PASS; 0: expected FAIL with `expected` */
    char expected[64];    /* comma-separated; "" for a good state */
    char *what;           /* what the kernel does (malloc'd) */
} kcs_calib_narrow;

/* What the calibration kernels of one contract are. */
typedef struct kcs_calib_entry {
    const char *id;
    uint32_t ops;         /* bit (1u << kcs_op) per op the kernels implement */
    kcs_format dtype_in;  /* input format they are measured with */
    const char *expected; /* the bad state's own signature(s), comma-separated, all required */
    const char *bad_cpu;  /* what the CPU bad kernel does */
    const char *bad_wrap; /* what the wrapper bad does around a backend's native kernels */
    const char *family;   /* optional: what other contracts call the same mechanism
                             (comma-separated; "" when none): the confusion matrix
                             counts them as its own */
    int n_narrow;         /* narrow-output states (optional key narrow) */
    kcs_calib_narrow narrow[KCS_CALIB_MAX_NARROW];
} kcs_calib_entry;

/* The catalogue is data: contracts/<ID>/calibration.yaml of every contract
 * folder (keys ops, dtype_in, expected, bad_cpu, bad_wrap; contracts/
 * README.md). kcs_calib_catalogue and kcs_calib_find load it once from
 * kcs_calib_contracts_dir() unless kcs_calib_catalogue_load was called (a
 * broken file is then reported on stderr and the catalogue is empty). */
const kcs_calib_entry *kcs_calib_catalogue(int *n_p);
const kcs_calib_entry *kcs_calib_find(const char *id);
/* Load the catalogue from every contract folder of dir (each must hold a
 * calibration.yaml), replacing the one loaded before. */
int kcs_calib_catalogue_load(const char *dir, kcs_error *err);
/* Read one calibration.yaml for contract id strictly (unknown or missing
 * keys, unknown op or format names: errors at file:line:col: field). The
 * strings of *e are malloc'd: kcs_calib_entry_free. */
int kcs_calib_entry_load(const char *path, const char *id, kcs_calib_entry *e, kcs_error *err);
void kcs_calib_entry_free(kcs_calib_entry *e);
/* "baseline", "bad", "good" for 0, 1, 2. */
const char *kcs_calib_state_name(int state);

/* The ops a contract is measured on for an implementation offering the
 * ops in `offered`: scope ∩ offered, where gemm and batched_gemm count as
 * one family (batched_gemm when offered and some measurement or held-out
 * shape has a batch, else gemm). 0: nothing to measure. */
uint32_t kcs_calib_ops(const kcs_contract *c, uint32_t offered);
/* The input format a contract is measured with: the catalogue's when the
 * precondition allows it, else fp32 when allowed, else the first allowed. */
kcs_format kcs_calib_dtype(const kcs_contract *c);

typedef struct kcs_calib_run {
    uint64_t seed;    /* study seed of the generated inputs */
    double timeout_s; /* per kernel call (<= 0: none) */
    int verbose;
} kcs_calib_run;

/* One contract on one implementation. verdict: PASS (every trial within
 * tolerance), FAIL (some trial a violation or under-specified), ERROR (a
 * call failed), N/A (the implementation does not offer the op),
 * NOT-CLAIMED (the contract binds only kernels that declare a property,
 * precondition.declares, and this one does not: every trial that ran is
 * not_claimed; neither a pass nor a failure). */
typedef struct kcs_calib_outcome {
    char verdict[16];
    char ops[48];          /* ops measured, comma-separated */
    char signatures[192];  /* matched signature names over all trials */
    char primary[96];      /* the first (primary) signature of each failed trial, over all trials */
    int32_t trials, failed, errors;
    int32_t deaths;        /* of the errors: calls that crashed or timed out */
    int32_t unclaimed;     /* trials judged not_claimed */
    double max_tau;        /* over trials that ran */
    char detail[KCS_ERRMSG_MAX + 32]; /* first error message, if any, in full; else the
                                         first failed trial's message (a guard breach) */
    char failed_dtypes[48]; /* the input formats with a failed trial, comma-separated */
    char semantics[160];    /* the attrs judged under (kcs_calib_semantics), "" when none */
    /* every signature matched by some failed trial: how many failed trials
     * matched it at all, and how many had it first (primary) */
    int n_sig;
    char sig_name[KCS_MAX_SIGNATURES + 1][48];
    int32_t sig_any[KCS_MAX_SIGNATURES + 1], sig_first[KCS_MAX_SIGNATURES + 1];
} kcs_calib_outcome;

/* kcs_declared_semantics (semantics.h), under calibrate's name. */
#define kcs_calib_semantics kcs_declared_semantics

/* Measure contract c on binding b (its placement's variant is what runs)
 * for the ops in `ops`, every case of the contract's plan, every trial.
 * Returns an error of the run itself (out of memory, bad plan); kernel
 * failures are outcomes. */
int kcs_calib_measure(const kcs_contract *c, uint32_t ops, kcs_rank_binding *b,
                      const kcs_calib_run *run, kcs_calib_outcome *out, kcs_error *err);

/* As kcs_calib_measure, at the given shapes (n_shapes 0: the contract's
 * own, held-out ones included) and, with all_dtypes, once for every input
 * format the precondition admits (formats the implementation reports as
 * unsupported are skipped and listed in detail; ERROR only for failed
 * calls). */
typedef struct kcs_calib_scope {
    const kcs_shape *shapes;
    int n_shapes;
    int all_dtypes;
    int set_formats;           /* 1: measure with dtype_in and dtype_out below (narrow states) */
    kcs_format dtype_in, dtype_out;
} kcs_calib_scope;
int kcs_calib_measure_scoped(const kcs_contract *c, uint32_t ops, kcs_rank_binding *b,
                             const kcs_calib_run *run, const kcs_calib_scope *sc,
                             kcs_calib_outcome *out, kcs_error *err);

/* Whether a comma-separated list names `name`. */
int kcs_calib_has_sig(const char *list, const char *name);

/* One row of a calibration or cross table (/calibration, /calibration_cross). */
typedef struct kcs_calib_row {
    char backend[16];
    char contract[16];        /* the contract measured */
    char state[16];           /* baseline | bad | good */
    char implementation[40];  /* the variant: calib:<ID>:<state> */
    int32_t wrapper;          /* 1: a wrapper around the backend's native kernels */
    char ops[48];
    char verdict[16];
    char signatures[192];
    char primary[96];         /* primary signatures: the first match of each failed trial */
    char expected[64];        /* own signature(s) where the implementation is the contract's */
    int32_t trials, failed, errors;
    double max_tau;
    int32_t sound;            /* 1 sound, 0 unsound, -1 not measured (this contract) */
    char detail[KCS_ERRMSG_MAX + 32];
    /* kcs grade's JSON only (not in the HDF5 tables): */
    char failed_dtypes[48];   /* input formats with a failed trial */
    char semantics[160];      /* the attrs judged under (kcs_calib_semantics) */
    /* the cross matrix's confusion counts (kcs_calib_outcome.sig_*) */
    int n_sig;
    char sig_name[KCS_MAX_SIGNATURES + 1][48];
    int32_t sig_any[KCS_MAX_SIGNATURES + 1], sig_first[KCS_MAX_SIGNATURES + 1];
} kcs_calib_row;

/* The signature confusion matrix of a cross table (calib_confusion.c):
 * every bad implementation (row) against every signature (column), each
 * cell the failed trials whose primary signature (the first match) it is,
 * over every contract that measured the implementation. top: the column
 * with the most; own: the implementation's own signature(s). */
typedef struct kcs_confusion {
    int n_impl, n_sig;
    char (*impl)[40];
    char (*own)[192];
    char (*sig)[48];
    int32_t *count;   /* n_impl x n_sig */
    int32_t *failed;  /* failed trials per implementation */
    int *top;         /* column of the row's maximum (-1: none failed) */
    int *top_is_own;  /* the maximum is an own signature and no other ties it */
} kcs_confusion;
int kcs_calib_confusion(const kcs_calib_row *rows, int nr, kcs_contract *const *cs, int n,
                        kcs_confusion *m, kcs_error *err);
void kcs_confusion_free(kcs_confusion *m);
/* Print it as markdown (contracts/README.md holds one), with each
 * signature's specificity (1 - the share of other implementations' failed
 * trials it is primary for) and each row's sensitivity, with
 * Clopper-Pearson 95% intervals. Returns the rows whose top is not own. */
int kcs_confusion_print(FILE *f, const kcs_confusion *m, uint64_t seed);

const kcs_field *kcs_calib_row_fields(int *n_p);

/* Open backend `backend` device `device` (path: a plugin library, else
 * NULL) as a binding whose placement variant the caller sets: the CPU
 * backend runs its own calib kernels and the plugin backend the library;
 * any other backend (or the CPU with wrap != 0) runs behind the wrappers
 * of calib_wrap.c (*wrapped_p = 1). Close with kcs_binding_close. */
int kcs_calib_bind(const char *backend, int device, const char *path, int wrap,
                   kcs_rank_binding *b, int *wrapped_p, kcs_error *err);

/* The three states of each contract: rows[3 * i + state]. *unsound_p
 * counts contracts that are not sound (ERROR included); contracts
 * without calibration kernels or whose ops the backend lacks are N/A
 * (sound = -1) and not counted. */
int kcs_calib_states(kcs_contract *const *cs, int n, kcs_rank_binding *b, int wrapped,
                     const kcs_calib_run *run, kcs_calib_row *rows, int *unsound_p,
                     kcs_error *err);

/* The narrow-output states of the contracts' catalogue entries, in
 * contract order: *rows_p malloc'd (free it), *n_p rows. A row is sound
 * when a good state PASSes, or a bad one FAILs naming its own
 * signature(s); *unsound_p counts the rows that are not. With wrapped
 * (a backend other than the CPU's own kernels) every row is N/A: the
 * kernels are the CPU backend's. */
int kcs_calib_narrow_states(kcs_contract *const *cs, int n, kcs_rank_binding *b, int wrapped,
                            const kcs_calib_run *run, kcs_calib_row **rows_p, int *n_p,
                            int *unsound_p, kcs_error *err);

/* The cross matrix: every bad implementation of the catalogue (of the
 * contracts in cs) against every contract in cs whose scope holds one of
 * its ops. *rows_p is malloc'd (free it); *n_rows_p its length;
 * *misses_p counts bad implementations not flagged by their own contract
 * with their own signature. */
int kcs_calib_cross(kcs_contract *const *cs, int n, kcs_rank_binding *b, int wrapped,
                    const kcs_calib_run *run, kcs_calib_row **rows_p, int *n_rows_p,
                    int *misses_p, kcs_error *err);

/* Bad kernels beyond the calibration catalogue that the cross matrix also
 * runs on the CPU backend (variants "defect:<name>" of backends/cpu/
 * defect.c, gemm and reduce_sum): mechanisms no contract is written for
 * but every contract that flags them must name (zeros, a scaled output, one
 * corrupted element, narrow accumulators). */
typedef struct kcs_calib_defect {
    const char *variant;
    const char *what;
    const char *expected; /* its own signature: what the cross matrix's top must be */
} kcs_calib_defect;
const kcs_calib_defect *kcs_calib_defects(int *n_p);

/* Contracts: the directory kcs uses when none is given ($KCS_CONTRACTS,
 * the installed share/kcs/contracts next to the executable, or the source
 * tree's contracts/). */
const char *kcs_calib_contracts_dir(char *buf, size_t len);
/* The contract folders of dir (C-*, each holding <ID>/<ID>.yaml), in the
 * order PRC, ORD, CMP, EXC, then by name; *ids_p and its strings malloc'd. */
int kcs_calib_list_contracts(const char *dir, char ***ids_p, int *n_p, kcs_error *err);
/* Load the named contracts (ids like C-PRC-01, looked up as DIR/ID/ID.yaml,
 * or paths to YAML files or contract folders); with n_names == 0 every
 * contract folder of dir, in that order. *cs_p is malloc'd; free with
 * kcs_calib_contracts_free. */
int kcs_calib_load(const char *dir, char *const *names, int n_names, kcs_contract ***cs_p,
                   int *n_p, kcs_error *err);
void kcs_calib_contracts_free(kcs_contract **cs, int n);

/* Write rows (and the cross table, n_cross may be 0) as the compound
 * datasets /calibration and /calibration_cross of a NEW HDF5 file (an
 * existing path is refused: KCS_E_EXISTS). */
int kcs_store_calibration_write(const char *path, const kcs_calib_row *rows, int n_rows,
                                const kcs_calib_row *cross, int n_cross, const char *command_line,
                                kcs_error *err);

#endif
