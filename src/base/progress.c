#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void kcs_progress_start(kcs_progress *p, int enabled, int64_t total, const char *what)
{
    p->on = enabled;
    p->tty = isatty(STDERR_FILENO);
    p->last_done = 0;
    p->total = total;
    p->what = what;
    p->t0 = p->last = now_s();
}

void kcs_progress_step(kcs_progress *p, int64_t done)
{
    if (!p->on)
        return;
    double t = now_s();
    if (!p->tty) {
        /* a line per 5 % or per 10 s (with progress since), and the last */
        int64_t step = p->total / 20 > 0 ? p->total / 20 : 1;
        int due = done >= p->total || done - p->last_done >= step ||
                  (t - p->last >= 10.0 && done > p->last_done);
        if (!due || done == p->last_done)
            return;
        p->last = t;
        p->last_done = done;
        double el = t - p->t0;
        double eta = done > 0 ? el * (double)(p->total - done) / (double)done : 0.0;
        fprintf(stderr, "kcs: %s %lld/%lld (%.0f%%), elapsed %.1f s, ETA %.1f s\n", p->what,
                (long long)done, (long long)p->total,
                p->total ? 100.0 * (double)done / (double)p->total : 100.0, el, eta);
        fflush(stderr);
        return;
    }
    if (t - p->last < 0.2 && done < p->total)
        return;
    p->last = t;
    double el = t - p->t0;
    double eta = done > 0 ? el * (double)(p->total - done) / (double)done : 0.0;
    fprintf(stderr, "\r%s %lld/%lld (%3.0f%%)  %.1fs elapsed, ~%.1fs left   ", p->what,
            (long long)done, (long long)p->total,
            p->total ? 100.0 * (double)done / (double)p->total : 100.0, el, eta);
    fflush(stderr);
}

void kcs_progress_end(kcs_progress *p)
{
    if (p->on && p->tty)
        fprintf(stderr, "\n");
}
