/* The parallel writer's state, shared by store.c (lifecycle, rows,
 * agreement between ranks) and store_layout.c (the objects of schema
 * version 2). Internal to the store. */
#ifndef KCS_STORE_WRITER_H
#define KCS_STORE_WRITER_H

#include "store.h"
#include "store_h5.h"

struct kcs_store {
    char *path;
    MPI_Comm comm; /* our duplicate */
    int rank, size;
    hid_t file, dxpl;
    hid_t results, cases, ranks, samples; /* datasets */
    hid_t result_t, case_t, rank_t;
    int64_t n_cases;
    int64_t *case_ids; /* plan order */
    int max_trials, n_samples;
    kcs_result_rec *rows; /* max_trials rows of this rank */
    double *nan_row;      /* n_samples NaN */
    uint64_t *digests;    /* NULL, or where each case's written rows' digest goes (store_verify.h) */
    /* Cases buffered for one collective write (store_batch.c). */
    int batch_cap;              /* cases per write: rank 0's bound, the same on every rank */
    int64_t batch_first;        /* plan index of the first buffered case */
    int batch_n;                /* cases buffered: batch_first, batch_first + 1, ... */
    kcs_result_rec *batch_rows; /* batch_cap * max_trials rows of this rank */
    double *batch_samples;      /* batch_cap * n_samples values of this rank */
    int pending;                /* a bad call since the last flush: its code ... */
    char pending_msg[KCS_ERRMSG_MAX]; /* ... and message, reported by the flush */
};
/* The first failing rank's code and message on every rank (one
 * MPI_Allreduce, and a broadcast on failure). */
int kcs_store_agree(kcs_store *st, int rc, kcs_error *err);
/* The same before a store exists (store_agree.c). */
int kcs_store_agree_comm(MPI_Comm comm, int rc, kcs_error *err);
/* Collective, from kcs_store_create: the batch bound (rank 0's
 * KCS_STORE_BATCH_CASES / KCS_STORE_BATCH_BYTES) and its buffers. */
int kcs_store_batch_init(kcs_store *st, kcs_error *err);
void kcs_store_batch_free(kcs_store *st);
/* Collective: create the root attributes, groups and datasets of the
 * schema in the file just created. s: rank 0's created timestamp, command
 * line, backends and MPI library version (identical on every rank). */
int kcs_store_create_layout(kcs_store *st, const kcs_store_meta *m, char *const *s, kcs_error *err);
/* Collective: write buf to the whole of dset from one rank (writer != 0);
 * the other ranks select nothing. */
int kcs_store_write_whole(kcs_store *st, hid_t dset, hid_t type, int writer, const void *buf,
                          const char *obj, kcs_error *err);

#endif
