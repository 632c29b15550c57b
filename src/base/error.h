/* kcs_error: one error type for the whole tool.
 * Functions return 0 or a negative KCS_E_* code and fill a kcs_error whose
 * message names the file:line:col (or the field) where input is at fault. */
#ifndef KCS_ERROR_H
#define KCS_ERROR_H

#include <stddef.h>

enum {
    KCS_OK = 0,
    KCS_E_INVAL = -1,       /* bad user input: study, contract, flags */
    KCS_E_NOMEM = -2,
    KCS_E_IO = -3,          /* file system, HDF5 */
    KCS_E_UNSUPPORTED = -4, /* op/variant not offered by a backend */
    KCS_E_NODEV = -5,       /* backend compiled in, no device/driver now */
    KCS_E_MPI = -6,
    KCS_E_EXISTS = -7,      /* refusing to overwrite */
    KCS_E_INTERNAL = -8,
    KCS_E_RAISED = -9,      /* a kernel raised an error on purpose (e.g. OOB) */
    KCS_E_DEVICE = -10,     /* device runtime failed during a call */
    KCS_E_TIMEOUT = -11,    /* a kernel call exceeded its time limit */
    KCS_E_CRASHED = -12,    /* a kernel call died of a signal (SIGSEGV, ...) */
    KCS_E_INTERRUPTED = -13, /* SIGTERM/SIGINT asked the run to stop */
    KCS_E_OVERRUN = -14,    /* the kernel answered but wrote outside its output (the
                               values are in call->out; the protocol judges them with
                               guard_ok = 0) */
};

#define KCS_ERRMSG_MAX 1024

typedef struct kcs_error {
    int code;
    char msg[KCS_ERRMSG_MAX];
} kcs_error;

/* Record an error (printf-style) and return code. Later calls overwrite. */
int kcs_fail(kcs_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix the existing message with "context: ". Returns err->code. */
int kcs_error_prefix(kcs_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *kcs_strerror(int code);
/* Exit status for a code: 2 for bad input (study, contract, flags, an output
 * that exists), 1 for I/O, resource, MPI and internal failures. */
int kcs_exit_status(int code);

#endif
