/* Progress of long work on stderr (callers enable it on rank 0 only). On a
 * terminal one line redrawn in place; otherwise (batch logs under srun /
 * mpirun) a plain line whenever 5 % more is done or 10 s have passed since
 * the last line, whichever comes first, and one at the end: done/total,
 * elapsed, ETA. */
#ifndef KCS_PROGRESS_H
#define KCS_PROGRESS_H

#include <stdint.h>

typedef struct kcs_progress {
    int on;
    int tty;
    int64_t total;
    double last_x; /* batch mode: done at the last line */
    const char *what;
    double t0, last;
} kcs_progress;

void kcs_progress_start(kcs_progress *p, int enabled, int64_t total, const char *what);
void kcs_progress_step(kcs_progress *p, int64_t done);
/* Within unit done + 1: frac of it is done (long units, such as a sweep
 * point of many kernels, still show progress every few seconds). */
void kcs_progress_part(kcs_progress *p, int64_t done, double frac);
void kcs_progress_end(kcs_progress *p);

#endif
