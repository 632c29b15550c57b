/* Placement: which backend, device and implementation this rank runs.
 * Explicit study entries are taken cyclically by rank; `auto` gives the
 * node-local rank i the i-th vendor-native GPU device found (cuda, hip,
 * level_zero), and only where there is none the i-th of the others (OpenCL
 * first, the CPU last). A rank whose device fails to open stays in the study with status
 * "unavailable". */
#ifndef KCS_PLACEMENT_H
#define KCS_PLACEMENT_H

#include <mpi.h>

#include "backend.h"
#include "store.h"
#include "study.h"

typedef struct kcs_rank_binding {
    kcs_placement pl;
    const kcs_backend_ops *ops;
    kcs_backend_ctx *ctx; /* NULL: unavailable */
    kcs_device_info info;
    char status[16];
    char why[KCS_ERRMSG_MAX];
    int broken; /* a call hung or crashed: the backend is not used again */
} kcs_rank_binding;

/* Collective (auto placement splits the communicator). Never fails: an
 * unavailable device is a status, recorded in b. */
void kcs_binding_open(const kcs_study *s, const char *plugin, MPI_Comm comm, int verbose,
                      kcs_rank_binding *b);
void kcs_binding_apply(const kcs_rank_binding *b, kcs_call *call);
/* What the kernel b runs for call declares (declares.h mask): the
 * backend's report (its ops table's declares slot) and the placement's
 * `declares`. */
uint32_t kcs_binding_declares(const kcs_rank_binding *b, const kcs_call *call);
void kcs_binding_record(const kcs_rank_binding *b, int rank, kcs_rank_rec *r);
void kcs_binding_close(kcs_rank_binding *b);
/* The choice of `placement: auto` for node-local rank `local`, given the
 * backends available (names) and how many devices each found: sets p and
 * returns the number of candidate devices (0: the CPU as a fallback). */
int kcs_placement_auto_pick(const char *const *backends, const int *counts, int nb, int local,
                            kcs_placement *p);

/* The backends this node can open and their device counts (plugin left
 * out), at most 16: what `placement: auto` chooses from. Returns how many. */
int kcs_placement_devices(const char *names[16], int counts[16]);

#endif
