/* Progress of long work on stderr: rank 0 only, only when stderr is a
 * terminal (batch logs stay clean). */
#ifndef KCS_PROGRESS_H
#define KCS_PROGRESS_H

#include <stdint.h>

typedef struct kcs_progress {
    int on;
    int64_t total;
    const char *what;
    double t0, last;
} kcs_progress;

void kcs_progress_start(kcs_progress *p, int enabled, int64_t total, const char *what);
void kcs_progress_step(kcs_progress *p, int64_t done);
void kcs_progress_end(kcs_progress *p);

#endif
