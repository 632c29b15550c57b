/* The parallel writer's state, shared by store.c (lifecycle, rows,
 * agreement between ranks) and store_layout.c (the objects of schema
 * version 1). Internal to the store. */
#ifndef KCS_STORE_WRITER_H
#define KCS_STORE_WRITER_H

#include "store.h"
#include "store_h5.h"

struct kcs_store {
    char *path;
    MPI_Comm comm; /* our duplicate */
    int rank, size;
    hid_t file, dxpl;
    hid_t results, cases, ranks, samples; /* datasets; samples is a group */
    hid_t result_t, case_t, rank_t;
    int64_t n_cases;
    int64_t *case_ids; /* plan order */
    int max_trials, n_samples;
    kcs_result_rec *rows; /* max_trials rows of this rank */
    double *nan_row;      /* n_samples NaN */
    uint64_t *digests;    /* NULL, or where each case's written rows' digest goes (store_verify.h) */
};
/* Collective: create the root attributes, groups and datasets of the
 * schema in the file just created. s: rank 0's created timestamp, command
 * line, backends and MPI library version (identical on every rank). */
int kcs_store_create_layout(kcs_store *st, const kcs_store_meta *m, char *const *s, kcs_error *err);
/* Collective: write buf to the whole of dset from one rank (writer != 0);
 * the other ranks select nothing. */
int kcs_store_write_whole(kcs_store *st, hid_t dset, hid_t type, int writer, const void *buf,
                          const char *obj, kcs_error *err);

#endif
