/* The store's serial HDF5 writer (the reducer's /analysis, calibration and
 * detection files) and the few reads the store's reader does not offer.
 * Streaming: tables grow by appended rows (chunked, unlimited), so no
 * table is ever held whole in memory. Every HDF5 write of kcs goes through
 * the store: its parallel writer (store.h) or this one; HDF5 stays behind
 * kcs_error. */
#ifndef KCS_H5OUT_H
#define KCS_H5OUT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "store_read.h"

typedef struct kcs_h5out kcs_h5out;
typedef struct kcs_h5table kcs_h5table;

/* A new file at path (replacing one), holding nothing yet. */
int kcs_h5out_create(const char *path, kcs_h5out **o_p, kcs_error *err);
/* The root identity every kcs file carries (kcs_h5_put_identity). */
int kcs_h5out_identity(kcs_h5out *o, const char *created, const char *content,
                       const char *command_line, kcs_error *err);
int kcs_h5out_close(kcs_h5out *o, kcs_error *err);
void kcs_h5out_abort(kcs_h5out *o); /* close, ignoring errors; NULL is a no-op */

/* Create group path (absolute; parents must exist). */
int kcs_h5out_group(kcs_h5out *o, const char *path, kcs_error *err);
/* Attributes of object ("/" or an absolute path); strings are
 * variable-length like the store's. */
int kcs_h5out_attr_str(kcs_h5out *o, const char *object, const char *name, const char *value,
                       kcs_error *err);
int kcs_h5out_attr_i64(kcs_h5out *o, const char *object, const char *name, int64_t value,
                       kcs_error *err);
int kcs_h5out_attr_i32(kcs_h5out *o, const char *object, const char *name, int32_t value,
                       kcs_error *err);
int kcs_h5out_attr_f64(kcs_h5out *o, const char *object, const char *name, double value,
                       kcs_error *err);
/* A text as a scalar fixed-length string dataset (like /study). */
int kcs_h5out_text(kcs_h5out *o, const char *path, const char *text, kcs_error *err);
/* A float64 [rows, cols] dataset. */
int kcs_h5out_matrix(kcs_h5out *o, const char *path, int64_t rows, int64_t cols,
                     const double *data, kcs_error *err);
/* Copy object src_obj of the HDF5 file src_path to dst_path (H5Ocopy). */
int kcs_h5out_copy(kcs_h5out *o, const char *src_path, const char *src_obj, const char *dst_path,
                   kcs_error *err);

/* A 1-D compound table of records described by fields, appended to. */
int kcs_h5table_open(kcs_h5out *o, const char *path, const kcs_field *f, int nf, size_t rec_size,
                     kcs_h5table **t_p, kcs_error *err);
int kcs_h5table_append(kcs_h5table *t, const void *rows, int64_t n, kcs_error *err);
int kcs_h5table_close(kcs_h5table *t, kcs_error *err);

/* Reads. A string attribute of "/" of the HDF5 file at path: *value_p
 * malloc'd, or NULL when the file has no such attribute (rc 0). */
int kcs_h5in_root_str(const char *path, const char *name, char **value_p, kcs_error *err);
/* A whole 1-D compound table into malloc'd rows (converted by member name;
 * members of f the file lacks are zeroed). *rows_p = NULL, *n_p = 0 when
 * the table is missing and optional != 0. */
int kcs_h5in_table(const char *path, const char *obj, const kcs_field *f, int nf, size_t rec_size,
                   int optional, void **rows_p, int64_t *n_p, kcs_error *err);
/* A text dataset (like kcs_store_read_text) of any HDF5 file. */
int kcs_h5in_text(const char *path, const char *obj, char **text_p, kcs_error *err);

#endif
