/* HDF5 helpers shared by the store's writer (store.c), reader
 * (store_read.c) and types (store_types.c). Internal to the store: the
 * rest of kcs never includes hdf5.h. */
#ifndef KCS_STORE_H5_H
#define KCS_STORE_H5_H

#include <hdf5.h>
#include <stdint.h>

#include "error.h"
#include "store_read.h"

/* Turn off HDF5's automatic error printing (errors become kcs_error). */
void kcs_h5_quiet(void);
/* 0, or KCS_E_INVAL when path exists but is not a regular file: a dataset
 * to read is never opened from a FIFO (HDF5 would block on it), a device
 * or a directory. */
int kcs_h5_input_regular(const char *path, kcs_error *err);

/* Fail with "<file>: <object>: <message>[ (<innermost HDF5 error>)]" and
 * clear the HDF5 error stack. object may be NULL. */
int kcs_h5_fail(kcs_error *err, int code, const char *file, const char *object, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

/* Close each id that is >= 0: datasets, dataspaces, datatypes, property
 * lists, attributes, groups (not files: H5Fclose those). */
void kcs_h5_close_ids(const hid_t *ids, int n);
#define KCS_H5_CLOSE(...)                                                                          \
    kcs_h5_close_ids((const hid_t[]){__VA_ARGS__},                                                 \
                     (int)(sizeof((hid_t[]){__VA_ARGS__}) / sizeof(hid_t)))

/* A compound type with the record's memory layout (also used in the file,
 * so writes need no conversion and stay collective). H5Tclose it. */
hid_t kcs_h5_compound(const kcs_field *f, int n, size_t rec_size);
/* A fixed-length C string type of size bytes (NULLTERM or NULLPAD). */
hid_t kcs_h5_str_type(size_t size, H5T_str_t pad);

/* Check that the compound type of dataset dset has every field of f with a
 * compatible class; on failure "<file>: <object>: not a kcs <what> (missing
 * field <name>)". */
int kcs_h5_check_fields(hid_t dset, const kcs_field *f, int n, const char *file, const char *object,
                        const char *what, kcs_error *err);
/* NUL-terminate every string field of rows[n_rows]. */
void kcs_fields_terminate(const kcs_field *f, int n, void *rows, size_t rec_size, size_t n_rows);

/* Attributes: return 0 or a negative value (HDF5 error stack set). String
 * attributes are variable-length UTF-8 (read back as str by h5py). */
int kcs_h5_put_str(hid_t loc, const char *name, const char *value);
/* The identity every kcs file carries at its root, written in one place:
 * schema "kcs", schema_version, software, software_version, git_hash,
 * created (UTC, ISO 8601: pass the same text on every rank of a parallel
 * file), command_line and, when content is not NULL, content (what the
 * file holds besides a study's results: "calibration", "detection",
 * "merged"). path names the file in errors. */
int kcs_h5_put_identity(hid_t file, const char *path, const char *created, const char *content,
                        const char *command_line, kcs_error *err);
/* Now as kcs writes `created`: UTC, "%Y-%m-%dT%H:%M:%SZ". */
void kcs_h5_now_utc(char buf[32]);
int kcs_h5_put_i32(hid_t loc, const char *name, int32_t value);
int kcs_h5_put_i64(hid_t loc, const char *name, int64_t value);
int kcs_h5_put_f64(hid_t loc, const char *name, double value);
/* Read a string attribute, fixed or variable length, into a malloc'd
 * string. Returns 0, -1 (HDF5 error) or -2 (not a string attribute). */
int kcs_h5_get_str(hid_t loc, const char *name, char **value_p);
/* A variable-length string attribute (is_attr) or scalar dataset read with
 * memory type mt into a malloc'd *out of at most cap bytes, isolated from
 * a damaged file (store_vlen.c). 0; -1 cannot read; -2 out of memory;
 * -3 HDF5 crashed on it; -4 longer than cap. why says which. */
int kcs_h5_read_vlen_str(hid_t obj, int is_attr, hid_t mt, size_t cap, char **out, char *why,
                         size_t why_len);
/* This process is itself the isolation (`kcs _readback`: a fresh process
 * under an address-space limit whose crash or stall its parent reports as
 * a damaged file): variable-length strings are read in it directly, not in
 * a child per string. Returns the address-space limit it set (bytes), or 0
 * when it could not set one (then the reads stay forked). extra: bytes the
 * caller will allocate beyond the usual headroom. */
unsigned long long kcs_h5_vlen_contain(unsigned long long extra);
/* Read an integer attribute as int64. Returns 0, -1 or -2 (not integer). */
int kcs_h5_get_i64(hid_t loc, const char *name, int64_t *value_p);

/* Content digests and the declared end (store_digest.c, store_digest.h). */
/* The canonical digest of object obj ("/results", ...) of file, or of the
 * root's attributes other than digest_* (obj "/" with root_attrs != 0).
 * 0, or -1 with why filled (the object cannot be read: a damaged file). */
int kcs_h5_digest(hid_t file, const char *obj, int root_attrs, uint64_t *out, char *why,
                  size_t why_len);

/* Recompute the digests of an open file and compare. 0 when every one
 * matches (*sealed_p = 1) or the file carries none (*sealed_p = 0: written
 * before digests existed); KCS_E_INVAL naming the object otherwise. */
int kcs_store_check_digests(hid_t file, const char *path, int *sealed_p, kcs_error *err);

/* Before HDF5 opens a file (or when it could not): KCS_E_INVAL naming
 * both when the end its superblock declares, read from the bytes, differs
 * from its size; 0 when they agree or no superblock is found. */
int kcs_h5_end_mismatch(const char *path, kcs_error *err);
/* KCS_E_INVAL when the end of address the superblock declares differs
 * from the file's size (a damaged superblock, or a file cut or grown). */
int kcs_h5_check_eoa(hid_t file, const char *path, kcs_error *err);

#endif
