#include "callguard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct guard_job {
    const kcs_backend_ops *ops;
    kcs_backend_ctx *ctx;
    kcs_call call; /* a copy: an abandoned worker must not read a dead stack */
    char msg[512];
    kcs_error err;
    int rc;
    int done;
    int abandoned;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} guard_job;

static _Thread_local sigjmp_buf *guard_jmp;

static void on_fatal(int sig)
{
    if (guard_jmp)
        siglongjmp(*guard_jmp, sig);
    /* Not a guarded thread: the default action (core dump, exit). */
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static void job_release(guard_job *j)
{
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

static void *worker(void *arg)
{
    guard_job *j = arg;
    sigjmp_buf env;
    int rc, sig = sigsetjmp(env, 1);
    if (sig == 0) {
        guard_jmp = &env;
        rc = j->ops->run(j->ctx, &j->call, &j->err);
    } else {
        rc = kcs_fail(&j->err, KCS_E_CRASHED, "%s: the kernel call died of signal %d (%s)",
                      j->ops->name, sig, strsignal(sig));
    }
    guard_jmp = NULL;
    pthread_mutex_lock(&j->mu);
    j->rc = rc;
    j->done = 1;
    int abandoned = j->abandoned;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    if (abandoned)
        job_release(j); /* the caller gave up long ago; nobody else owns it */
    return NULL;
}

int kcs_callguard_run(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, const kcs_call *call,
                      double timeout_s, kcs_error *err)
{
    if (ops->isolated) {
        /* The kernel runs in another process: the backend enforces the
         * limit (it kills the worker) and a crash there cannot reach us. */
        kcs_call c = *call;
        c.time_limit_s = timeout_s > 0 ? timeout_s : 0.0;
        return ops->run(ctx, &c, err);
    }
    guard_job *j = calloc(1, sizeof *j);
    if (!j)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory guarding a kernel call");
    j->ops = ops;
    j->ctx = ctx;
    j->call = *call;
    j->call.msg = call->msg ? j->msg : NULL;
    j->call.msg_len = call->msg ? sizeof j->msg : 0;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);

    struct sigaction sa, old[N_FATAL];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    for (size_t i = 0; i < N_FATAL; i++)
        sigaction(fatal_signals[i], &sa, &old[i]);

    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, (size_t)64 << 20); /* recursive kernels */
    int rc = pthread_create(&t, &attr, worker, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        for (size_t i = 0; i < N_FATAL; i++)
            sigaction(fatal_signals[i], &old[i], NULL);
        job_release(j);
        return kcs_fail(err, KCS_E_INTERNAL, "cannot start a kernel thread: %s", strerror(rc));
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    if (timeout_s > 0) {
        double whole = (double)(time_t)timeout_s;
        deadline.tv_sec += (time_t)timeout_s;
        deadline.tv_nsec += (long)((timeout_s - whole) * 1e9);
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&j->mu);
    int timed_out = 0;
    while (!j->done && !timed_out) {
        if (timeout_s > 0)
            timed_out = pthread_cond_timedwait(&j->cv, &j->mu, &deadline) == ETIMEDOUT;
        else
            pthread_cond_wait(&j->cv, &j->mu);
    }
    if (!j->done) {
        j->abandoned = 1; /* the worker frees the job if it ever returns */
        pthread_mutex_unlock(&j->mu);
        /* The crash guard stays installed: the abandoned worker may still
         * fault, and must unwind rather than take the rank down. */
        return kcs_fail(err, KCS_E_TIMEOUT, "%s: the kernel call exceeded its %.3g s limit",
                        ops->name, timeout_s);
    }
    pthread_mutex_unlock(&j->mu);
    for (size_t i = 0; i < N_FATAL; i++)
        sigaction(fatal_signals[i], &old[i], NULL);
    rc = j->rc;
    if (rc && err)
        *err = j->err;
    if (call->msg && call->msg_len)
        snprintf(call->msg, call->msg_len, "%s", j->msg);
    job_release(j);
    return rc;
}
