#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int kcs_fail(kcs_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int kcs_error_prefix(kcs_error *err, const char *fmt, ...)
{
    if (!err)
        return KCS_E_INTERNAL;
    char pre[KCS_ERRMSG_MAX], old[KCS_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", pre, old);
    return err->code;
}

const char *kcs_strerror(int code)
{
    switch (code) {
    case KCS_OK: return "ok";
    case KCS_E_INVAL: return "invalid input";
    case KCS_E_NOMEM: return "out of memory";
    case KCS_E_IO: return "I/O error";
    case KCS_E_UNSUPPORTED: return "unsupported";
    case KCS_E_NODEV: return "no device";
    case KCS_E_MPI: return "MPI error";
    case KCS_E_EXISTS: return "exists";
    case KCS_E_INTERNAL: return "internal error";
    case KCS_E_RAISED: return "raised";
    case KCS_E_DEVICE: return "device error";
    case KCS_E_TIMEOUT: return "timeout";
    case KCS_E_CRASHED: return "crashed";
    case KCS_E_INTERRUPTED: return "interrupted";
    case KCS_E_OVERRUN: return "wrote outside its output";
    default: return "unknown error";
    }
}

int kcs_exit_status(int code)
{
    switch (code) {
    case KCS_OK: return 0;
    case KCS_E_INVAL:
    case KCS_E_EXISTS: return 2;
    default: return 1;
    }
}
