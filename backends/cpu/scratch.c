/* Scratch buffers kept between the CPU backend's calls: see cpu.h. */
#include <pthread.h>
#include <stdlib.h>

#include "cpu.h"

/* Every call runs on a fresh worker thread (src/run/callguard.c), so the
 * pool is process-wide: a buffer is taken out under the lock and handed
 * back after the call; a concurrent call (a worker the guard abandoned)
 * finds the slot empty and allocates its own. */
enum { SLOTS = KCS_SCRATCH_SLOTS };
#define KEEP_MAX ((size_t)256 << 20)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t cap;
} slot[SLOTS];

kcs_cpu_scratch kcs_cpu_scratch_take(int which, size_t bytes)
{
    kcs_cpu_scratch s = {NULL, 0};
    if (which >= 0 && which < SLOTS) {
        pthread_mutex_lock(&mu);
        s.p = slot[which].p;
        s.cap = slot[which].cap;
        slot[which].p = NULL;
        slot[which].cap = 0;
        pthread_mutex_unlock(&mu);
    }
    if (s.p && s.cap >= bytes)
        return s;
    free(s.p);
    s.p = malloc(bytes ? bytes : 1);
    s.cap = s.p ? bytes : 0;
    return s;
}

void kcs_cpu_scratch_give(int which, kcs_cpu_scratch s)
{
    if (!s.p)
        return;
    if (which >= 0 && which < SLOTS && s.cap <= KEEP_MAX) {
        pthread_mutex_lock(&mu);
        int empty = !slot[which].p;
        if (empty) {
            slot[which].p = s.p;
            slot[which].cap = s.cap;
        }
        pthread_mutex_unlock(&mu);
        if (empty)
            return;
    }
    free(s.p);
}
