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
    p->last_x = 0.0;
    p->total = total;
    p->what = what;
    p->t0 = p->last = now_s();
}

/* done + frac units of total are done (0 <= frac < 1: a unit in course) */
static void show(kcs_progress *p, double x)
{
    if (!p->on)
        return;
    double t = now_s(), total = (double)p->total;
    int whole = x == (double)(int64_t)x;
    if (!p->tty) {
        /* a line per 5 % or per 10 s (with progress since), and the last */
        double step = total / 20.0;
        int due = x >= total || x - p->last_x >= step || (t - p->last >= 10.0 && x > p->last_x);
        if (!due || x == p->last_x)
            return;
        p->last_x = x;
    } else if (t - p->last < 0.2 && x < total) {
        return;
    }
    p->last = t;
    double el = t - p->t0;
    double eta = x > 0 ? el * (total - x) / x : 0.0;
    fprintf(stderr,
            p->tty ? "\r%s %.*f/%lld (%3.0f%%)  %.1fs elapsed, ~%.1fs left   "
                   : "kcs: %s %.*f/%lld (%.0f%%), elapsed %.1f s, ETA %.1f s\n",
            p->what, whole ? 0 : 1, x, (long long)p->total, total > 0 ? 100.0 * x / total : 100.0,
            el, eta);
    fflush(stderr);
}

void kcs_progress_step(kcs_progress *p, int64_t done)
{
    show(p, (double)done);
}

void kcs_progress_part(kcs_progress *p, int64_t done, double frac)
{
    show(p, (double)done + (frac > 0.0 && frac < 1.0 ? frac : 0.0));
}

void kcs_progress_end(kcs_progress *p)
{
    if (p->on && p->tty)
        fprintf(stderr, "\n");
}
