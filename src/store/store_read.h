/* Reading a finished kcs dataset (schema versions 1 and 2, DESIGN §5) from one
 * serial process (kcs reduce), and writing the reducer's /analysis tables.
 * The file is opened with HDF5's default (sec2) driver; no MPI is needed.
 * Every failure is KCS_E_IO (file system, HDF5) or KCS_E_INVAL (the file is
 * not what a kcs dataset must be), with a message that names the file and
 * the object, e.g. "out.h5: /results: not a kcs results table (missing
 * field tau)". Tables are read in row ranges (hyperslabs), so /results is
 * streamed one case at a time and never loaded whole unless asked. */
#ifndef KCS_STORE_READ_H
#define KCS_STORE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "store.h"

/* A field of a fixed-size C record stored as one member of an HDF5
 * compound: used for the schema's records and the reducer's own tables. */
typedef enum kcs_field_kind {
    KCS_FIELD_I32 = 0,
    KCS_FIELD_I64,
    KCS_FIELD_U64,
    KCS_FIELD_F64,
    KCS_FIELD_STR, /* char[size], NUL-terminated fixed-length string */
} kcs_field_kind;

typedef struct kcs_field {
    const char *name;
    kcs_field_kind kind;
    size_t offset; /* offsetof(record, member) */
    size_t size;   /* sizeof the member (the array size for strings) */
} kcs_field;

/* KCS_FIELD(kcs_thing, member, KCS_FIELD_F64) */
/* clang-format off */
#define KCS_FIELD(type, member, kind)                                                  \
    { #member, kind, offsetof(type, member), sizeof(((type *)0)->member) }
/* clang-format on */

/* KCS_FIELD_TABLE(kcs_thing_fields, thing_fields) defines the getter
 * `const kcs_field *kcs_thing_fields(int *n_p)` of the static table
 * thing_fields (*n_p: its length): every record's table has one. */
#define KCS_FIELD_TABLE(getter, table)                                                          \
    const kcs_field *getter(int *n_p)                                                           \
    {                                                                                           \
        *n_p = (int)(sizeof table / sizeof table[0]);                                           \
        return table;                                                                           \
    }

/* The field tables of the schema's records (store_types.c). */
const kcs_field *kcs_store_result_fields(int *n_p);
const kcs_field *kcs_store_case_fields(int *n_p);
const kcs_field *kcs_store_rank_fields(int *n_p);

/* Which file: a reopened one must be the same, unchanged. */
typedef struct kcs_file_id {
    uint64_t dev, ino;
    int64_t size, mtime_ns;
} kcs_file_id;

/* What the root attributes and table shapes say. */
typedef struct kcs_store_info {
    int schema_version;
    char software[32];
    char software_version[32];
    char git_hash[48];
    char created[32]; /* ISO-8601 UTC */
    char study_name[64];
    char plan_hash[32]; /* hex */
    char *command_line; /* owned by the reader */
    int n_ranks;
    int64_t n_cases;
    int max_trials; /* rows per (case, rank) in /results */
    int n_samples;  /* samples per case and rank in /samples */
    int complete;   /* 1: the writer closed the file successfully */
    int sealed;     /* 1: content digests recorded and verified; 0: none recorded (an
                       older kcs): the raw data is unverified */
    kcs_file_id id; /* the file as it was opened */
} kcs_store_info;

typedef struct kcs_store_reader kcs_store_reader;

/* Open path read-only and check it is a kcs dataset this kcs reads: root
 * attribute schema == "kcs", KCS_SCHEMA_VERSION_MIN <= schema_version <=
 * KCS_SCHEMA_VERSION, the
 * tables /cases, /results, /provenance/ranks present, compound, holding
 * every field of this version's records, and shaped [n_cases],
 * [n_cases * n_ranks * max_trials], [n_ranks]. An incomplete file
 * (complete == 0) opens; the caller decides (info->complete). */
int kcs_store_open_read(const char *path, kcs_store_reader **r_p, kcs_error *err);
/* Besides: a complete file whose superblock declares another end than
 * its size is refused, and its content digests are recomputed and compared
 * (store_digest.h; KCS_E_INVAL naming the object that differs). flags
 * KCS_READ_NO_DIGESTS skips the digests: for a file verified before (the
 * run's read-back after rank 0 checked them, the reducer's periodic
 * reopen of a file whose identity it compares). */
enum { KCS_READ_NO_DIGESTS = 1 };
int kcs_store_open_read_flags(const char *path, int flags, kcs_store_reader **r_p,
                              kcs_error *err);
void kcs_store_reader_close(kcs_store_reader *r);
const kcs_store_info *kcs_store_reader_info(const kcs_store_reader *r);
const char *kcs_store_reader_path(const kcs_store_reader *r);

/* Rows [first, first + count) of /cases into out[count]. */
int kcs_store_read_cases(kcs_store_reader *r, int64_t first, int64_t count, kcs_case_rec *out,
                         kcs_error *err);
/* The n_ranks * max_trials rows of case case_idx (the index in /cases, not
 * the case_id) into out, ordered rank-major: out[rank * max_trials + trial]. */
int kcs_store_read_case_results(kcs_store_reader *r, int64_t case_idx, kcs_result_rec *out,
                                kcs_error *err);
/* Rows [first, first + count) of /results into out[count]. */
int kcs_store_read_results(kcs_store_reader *r, int64_t first, int64_t count, kcs_result_rec *out,
                           kcs_error *err);
/* Schema validation (store_validate.c), applied by the two functions
 * above to every row they return: /results status and verdict are texts
 * kcs writes, guard_ok 0 or 1, counts not negative, rank and trial those
 * of the row's position; /cases op, dtype_in, dtype_out and input_dist
 * known names, m, n, k, batch in [0, 2^31) with at most 2^53 multiply-adds,
 * trials within max_trials. KCS_E_INVAL naming file, table, row and field. */
int kcs_store_validate_results(const char *path, const kcs_result_rec *rows, int64_t first,
                               int64_t n, int n_ranks, int max_trials, kcs_error *err);
int kcs_store_validate_cases(const char *path, const kcs_case_rec *rows, int64_t first, int64_t n,
                             int max_trials, kcs_error *err);
int kcs_store_verdict_known(const char *verdict);
/* The samples of case case_id into out[n_ranks * n_samples] (row-major
 * [rank][i]): schema 2's /samples[row, :, :], row the case's row of /cases
 * (row case_id when it holds it, else found by a scan of /cases), or schema
 * 1's (and merged datasets') /samples/<case_id>. *found_p = 0 (and out
 * untouched) when the case has none. */
int kcs_store_read_samples(kcs_store_reader *r, int64_t case_id, double *out, int *found_p,
                           kcs_error *err);
/* /provenance/ranks into out[n_ranks]. */
int kcs_store_read_ranks(kcs_store_reader *r, kcs_rank_rec *out, kcs_error *err);
/* A text dataset (a fixed-length string): "/study" or "/contracts/<id>".
 * *text_p is malloc'd and NUL-terminated; free() it. */
int kcs_store_read_text(kcs_store_reader *r, const char *object, char **text_p, kcs_error *err);
/* The ids under /contracts, in the file's (alphabetical) order. Free with
 * kcs_store_strings_free(ids, n). */
int kcs_store_read_contract_ids(kcs_store_reader *r, char ***ids_p, int *n_p, kcs_error *err);
void kcs_store_strings_free(char **v, int n);
/* A string attribute (fixed-length or variable-length) of object ("/",
 * "/provenance/build", ...). *value_p is malloc'd; free() it. */
int kcs_store_read_attr(kcs_store_reader *r, const char *object, const char *name, char **value_p,
                        kcs_error *err);

#endif
