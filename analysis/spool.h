/* Spools: the rows of an /analysis table collected while cases stream by,
 * parked in an anonymous temporary file (not memory), then written out as
 * the HDF5 table /analysis/<name> and the CSV file DIR/<name>.csv. */
#ifndef KCS_SPOOL_H
#define KCS_SPOOL_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "h5out.h"
#include "store_read.h"

typedef struct kcs_spool {
    const char *name;
    const kcs_field *fields;
    int nf;
    size_t rec;
    FILE *f;
    int64_t n;
} kcs_spool;

int kcs_spool_open(kcs_spool *s, const char *name, const kcs_field *f, int nf, size_t rec,
                   kcs_error *err);
int kcs_spool_put(kcs_spool *s, const void *rows, int64_t n, kcs_error *err);
/* Rows [first, first + n) back into buf (for the report). */
int kcs_spool_get(kcs_spool *s, int64_t first, int64_t n, void *buf, kcs_error *err);
/* Write /analysis/<name> into o (when o) and dir/<name>.csv (when dir). */
int kcs_spool_flush(kcs_spool *s, kcs_h5out *o, const char *dir, kcs_error *err);
void kcs_spool_close(kcs_spool *s);

/* CSV of records described by fields (header row with the field names). */
void kcs_csv_header(FILE *f, const kcs_field *fields, int nf);
void kcs_csv_row(FILE *f, const kcs_field *fields, int nf, const void *rec);
/* A whole in-memory table as /analysis/<name> and dir/<name>.csv. */
int kcs_table_write(kcs_h5out *o, const char *dir, const char *name, const kcs_field *f, int nf,
                    size_t rec, const void *rows, int64_t n, kcs_error *err);

#endif
