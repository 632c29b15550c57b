/* The summation trees of /provenance/order (record_order: true,
 * src/run/probe_order_record.c) of every dataset of a view, with the
 * view's rank numbers (internal to the reducer): the report's "Summation
 * orders" section (report_order.c) and the names of the orders in the
 * C-ORD violations and the ordering signatures (kcs_order_book_name). */
#ifndef KCS_ORDER_BOOK_H
#define KCS_ORDER_BOOK_H

#include <stddef.h>

#include "view.h"

typedef struct kcs_order_rec {
    int rank;          /* in the view */
    int src;           /* the dataset */
    char impl[96];     /* "cpu own pairwise", "cpu nvidia-h100" */
    char op[24], dtype[16];
    long k, m, n;      /* the probed shape */
    char key[96];      /* "op dtype k K (MxN)" */
    int ntrees;
    char **trees;      /* canonical texts */
    char **outputs;    /* the outputs of each, "0-15,32" */
    char *joined;      /* the trees, " | "-joined (equal: the same order) */
    int call_varies;   /* the order changed with the call's seed */
    int nother;
    char **other;      /* the trees at the other call seed */
    char **other_outputs;
    char *error;       /* the probe failed: why (no trees) */
    char *other_error; /* call_varies, the second probe failed: why */
} kcs_order_rec;

typedef struct kcs_order_book {
    int n;
    kcs_order_rec *r;
    int sources_with;  /* datasets with /provenance/order */
    int sources;
    char *unreadable;  /* a dataset whose /provenance/order could not be read: why */
} kcs_order_book;

/* Read every source of v; a source without /provenance/order adds
 * nothing. 0, or KCS_E_NOMEM. */
int kcs_order_book_load(const kcs_view *v, kcs_order_book *b, kcs_error *err);
void kcs_order_book_free(kcs_order_book *b);

/* The probe of (rank, op, dtype, k), or NULL. */
const kcs_order_rec *kcs_order_book_find(const kcs_order_book *b, int rank, const char *op,
                                         const char *dtype, long k);

/* A sentence naming the orders rank used for (op, dtype, k) and, where
 * they differ, those of the other ranks (at most 3 named): "rank 1 summed
 * in blocked:16 = splitk:4; rank 0 in pairwise", with the outputs of each
 * tree when a rank used several, "…, and in X on another call: its order
 * changes between calls", or why it cannot: "order not recorded; run with
 * record_order: true". allreduce: the contributions are the leaves.
 * malloc'd (NULL: out of memory). */
char *kcs_order_book_name(const kcs_order_book *b, int rank, const char *op, const char *dtype,
                          long k);

/* The ranks' orders for one line of the ordering signatures: every probe
 * of rank, "gemm fp32 k 256: NAME; …" (NULL when it has none). */
char *kcs_order_book_rank(const kcs_order_book *b, int rank);

#endif
