/* Machine-readable results of a finished dataset for CI: a summary per
 * contract × rank (implementation), printed as JSON (`kcs run --json`,
 * `kcs reduce --json`) or written as JUnit XML (`--junit FILE`, one test
 * case per contract × implementation), and the exit status that
 * `--fail-on violation|error` asks for. Reads datasets with store_read.h
 * (serial). */
#ifndef KCS_CI_REPORT_H
#define KCS_CI_REPORT_H

#include <stdio.h>

#include "error.h"

/* Exit statuses added by --fail-on (documented in README and --help). */
enum {
    KCS_EXIT_VIOLATION = 5, /* --fail-on violation: some trial is a violation or under-specified */
    KCS_EXIT_KERNEL_ERROR = 6, /* --fail-on error: some trial errored or a rank was unavailable */
};
#define KCS_FAIL_ON_VIOLATION 1u
#define KCS_FAIL_ON_ERROR 2u

typedef struct kcs_ci_row {
    int dataset;             /* index of the dataset it came from */
    char contract[32];
    int rank;                /* -1: not a rank (kcs grade) */
    char implementation[256];
    int trials, within, violations, under, errors, unavailable;
    int not_claimed;         /* trials not judged: the kernel does not declare what the
                                contract binds (precondition.declares) */
    double max_tau;
    char signatures[256];    /* distinct signatures of violating trials */
    char message[KCS_ERRMSG_MAX]; /* the first error's reason, whole */
} kcs_ci_row;

typedef struct kcs_ci {
    kcs_ci_row *rows;
    int n, cap;
    int n_datasets;
    char datasets[8][1024]; /* the first eight paths, for the report */
} kcs_ci;

/* "violation", "error" or "violation,error" -> mask; -1 if malformed. */
int kcs_ci_parse_fail_on(const char *s, unsigned *mask_p);
/* Add every (contract, rank) of a dataset. */
int kcs_ci_add_dataset(kcs_ci *ci, const char *path, kcs_error *err);
/* extra: more members of the object ("\"key\": value, ..."), or NULL. */
void kcs_ci_json(const kcs_ci *ci, FILE *f, const char *command, const char *extra);
int kcs_ci_junit(const kcs_ci *ci, const char *path, const char *suite, kcs_error *err);
/* 0, KCS_EXIT_VIOLATION or KCS_EXIT_KERNEL_ERROR (violation first). */
int kcs_ci_status(const kcs_ci *ci, unsigned fail_on);
void kcs_ci_free(kcs_ci *ci);

#endif
