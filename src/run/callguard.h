/* One backend call under a time limit and a crash guard: a hung or
 * crashing kernel becomes a status (timeout / crashed), not the end of the
 * study. The call runs on a worker thread; the caller waits up to the
 * limit. A timed-out worker cannot be stopped safely: it is left running
 * and the caller must leak (never free) the call's buffers. A fatal signal
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL) raised on the worker thread unwinds to
 * the guard; the backend's state is then suspect and should not be used
 * again. */
#ifndef KCS_CALLGUARD_H
#define KCS_CALLGUARD_H

#include "backend.h"

/* A backend whose ops->isolated is set runs its kernels in another process:
 * its run() is called directly on this thread with call->time_limit_s set,
 * and it enforces the limit itself.
 * timeout_s <= 0: no limit (the call still runs under the crash guard).
 * Returns the backend's rc, KCS_E_TIMEOUT or KCS_E_CRASHED. */
int kcs_callguard_run(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, const kcs_call *call,
                      double timeout_s, kcs_error *err);

#endif
