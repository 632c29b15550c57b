/* Descriptions and units of the dataset's fields (store_describe.c),
 * written as attributes "<field>.description" and "<field>.units" on the
 * tables /results, /cases and /provenance/ranks, and as "description",
 * "units" and "positions" on the /samples group. Internal to the store. */
#ifndef KCS_STORE_DESCRIBE_H
#define KCS_STORE_DESCRIBE_H

#include <hdf5.h>

#include "store_read.h"
#include "study.h"

/* Most held-out case ids kept in one attribute (8 bytes each, inside HDF5's
 * 64 KiB compact attribute limit with room to spare). */
#define KCS_HELD_OUT_ATTR_MAX 4096

typedef struct kcs_field_doc {
    const char *name;
    const char *units;
    const char *description;
} kcs_field_doc;

/* The documentation of table "results", "cases" or "ranks" (NULL, *n_p = 0
 * for another name), and of one of its fields (NULL when undocumented). */
const kcs_field_doc *kcs_store_field_docs(const char *table, int *n_p);
const kcs_field_doc *kcs_store_field_doc(const char *table, const char *field);

/* Write the two attributes of every field f[0..n) on dset. Returns 0, -1
 * (HDF5 error, stack set) or -2 (a field has no documentation: its name in
 * *missing_p when missing_p is not NULL). Collective under parallel HDF5
 * (every rank writes the same values). A field added to a record needs its
 * line in store_describe.c, or kcs refuses to write datasets. */
int kcs_store_describe(hid_t dset, const char *table, const kcs_field *f, int n,
                       const char **missing_p);
/* The /samples dataset's attributes (schema 2). 0 or -1. */
int kcs_store_describe_samples(hid_t samples);

/* /cases attributes naming the held-out cases (the contract's held-out
 * shape classes: signatures test held_out): held_out_count, and
 * held_out_cases (int64 case_ids; a null dataspace when there are none),
 * or held_out_cases_omitted beyond KCS_HELD_OUT_ATTR_MAX. 0 or -1. */
int kcs_store_describe_held_out(hid_t cases, const kcs_plan *plan);

extern const char *const kcs_store_samples_description;
extern const char *const kcs_store_samples_positions;

#endif
