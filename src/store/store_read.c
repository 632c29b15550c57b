/* Reading a finished kcs dataset from one serial process (store_read.h).
 * The file is opened read-only with HDF5's default sec2 driver; tables are
 * read in hyperslabs of rows, converted by member name into this version's
 * records (extra members in the file are ignored, missing ones refused at
 * open). The reducer writes /analysis itself (analysis/h5out.c).
 *
 * The file is untrusted input: every size it declares is checked before
 * anything is allocated from it. Open refuses row counts whose products
 * overflow, headers whose per-call buffers (a case's results, the ranks,
 * a case's samples) exceed KCS_READ_MAX_BUFFER, and, in a complete file,
 * tables declaring more rows than their storage holds; texts are capped
 * at KCS_READ_MAX_TEXT. External links, external raw data files and
 * virtual datasets are not followed (kcs never writes them, and they
 * would make the reader open other paths: a FIFO there would hang it). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_digest.h"
#include "store_h5.h"
#include "store_read.h"

#define KCS_READ_MAX_BUFFER ((int64_t)256 << 20) /* bytes, one call's rows */
#define KCS_READ_MAX_TEXT ((size_t)64 << 20)     /* bytes, one text */

struct kcs_store_reader {
    char *path;
    hid_t file;
    hid_t dapl, gapl; /* dataset (also link) and group access: external links refused */
    hid_t results, cases, ranks;
    hid_t result_t, case_t, rank_t;
    hid_t samples; /* schema 2's /samples dataset, opened on first use */
    int64_t n_rows;
    kcs_store_info info;
};

/* A required root string attribute into buf (or a malloc'd copy). */
static int root_str(kcs_store_reader *r, const char *name, char *buf, size_t len, char **dup_p,
                    kcs_error *err)
{
    char *v = NULL;
    htri_t ex = H5Aexists(r->file, name);
    if (ex == 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: /: not a kcs dataset (no root attribute %s)",
                        r->path, name);
    int g = ex < 0 ? -1 : kcs_h5_get_str(r->file, name, &v);
    if (g == -2)
        return kcs_fail(err, KCS_E_INVAL, "%s: /: root attribute %s is not a string", r->path,
                        name);
    if (g < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, "/", "cannot read attribute %s (damaged?)", name);
    if (dup_p) {
        *dup_p = v;
    } else {
        snprintf(buf, len, "%s", v);
        free(v);
    }
    return 0;
}

/* A root integer attribute; optional ones leave *v_p alone when absent. */
static int root_int(kcs_store_reader *r, const char *name, int required, int64_t lo, int64_t hi,
                    int64_t *v_p, kcs_error *err)
{
    htri_t ex = H5Aexists(r->file, name);
    if (ex == 0 && !required)
        return 0;
    if (ex == 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: /: not a kcs dataset (no root attribute %s)",
                        r->path, name);
    int64_t v = 0;
    int g = ex < 0 ? -1 : kcs_h5_get_i64(r->file, name, &v);
    if (g == -2)
        return kcs_fail(err, KCS_E_INVAL, "%s: /: root attribute %s is not an integer", r->path,
                        name);
    if (g < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, "/", "cannot read attribute %s (damaged?)", name);
    if (v < lo || v > hi)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: /: root attribute %s = %" PRId64 " is outside [%" PRId64 ", %" PRId64
                        "]",
                        r->path, name, v, lo, hi);
    *v_p = v;
    return 0;
}

static int check_root(kcs_store_reader *r, kcs_error *err)
{
    char schema[64];
    int rc = root_str(r, "schema", schema, sizeof schema, NULL, err);
    if (rc)
        return rc;
    if (strcmp(schema, "kcs") != 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: /: not a kcs dataset (schema is \"%s\")", r->path,
                        schema);
    int64_t ver = 0;
    if ((rc = root_int(r, "schema_version", 1, INT32_MIN, INT32_MAX, &ver, err)))
        return rc;
    if (ver < KCS_SCHEMA_VERSION_MIN || ver > KCS_SCHEMA_VERSION)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: /: schema_version %" PRId64
                        " is not supported (this kcs reads versions %d to %d)",
                        r->path, ver, KCS_SCHEMA_VERSION_MIN, KCS_SCHEMA_VERSION);
    kcs_store_info *in = &r->info;
    in->schema_version = (int)ver;
    int64_t n_ranks = 0, n_cases = 0, complete = 0, max_trials = -1, n_samples = 0;
    if ((rc = root_str(r, "software", in->software, sizeof in->software, NULL, err)) ||
        (rc = root_str(r, "software_version", in->software_version, sizeof in->software_version,
                       NULL, err)) ||
        (rc = root_str(r, "git_hash", in->git_hash, sizeof in->git_hash, NULL, err)) ||
        (rc = root_str(r, "created", in->created, sizeof in->created, NULL, err)) ||
        (rc = root_str(r, "study_name", in->study_name, sizeof in->study_name, NULL, err)) ||
        (rc = root_str(r, "plan_hash", in->plan_hash, sizeof in->plan_hash, NULL, err)) ||
        (rc = root_str(r, "command_line", NULL, 0, &in->command_line, err)) ||
        (rc = root_int(r, "n_ranks", 1, 1, INT32_MAX, &n_ranks, err)) ||
        (rc = root_int(r, "n_cases", 1, 0, INT64_MAX / 2, &n_cases, err)) ||
        (rc = root_int(r, "complete", 1, 0, 1, &complete, err)) ||
        (rc = root_int(r, "max_trials", 0, 0, INT32_MAX, &max_trials, err)) ||
        (rc = root_int(r, "n_samples", 0, 0, INT32_MAX, &n_samples, err)))
        return rc;
    in->n_ranks = (int)n_ranks;
    in->n_cases = n_cases;
    in->complete = (int)complete;
    in->max_trials = (int)max_trials; /* -1: derived from /results below */
    in->n_samples = (int)n_samples;
    return 0;
}

/* Link access that refuses to traverse external links. */
static herr_t no_external_links(const char *parent_file, const char *parent_group,
                                const char *child_file, const char *child_object,
                                unsigned *acc_flags, hid_t fapl, void *data)
{
    (void)parent_file, (void)parent_group, (void)child_file, (void)child_object;
    (void)acc_flags, (void)fapl, (void)data;
    return -1;
}

/* A dataset whose raw data lies in other files (external storage, a
 * virtual dataset) is refused: kcs never writes one. */
static int check_layout(kcs_store_reader *r, hid_t d, const char *obj, kcs_error *err)
{
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot read the storage layout");
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int ext = H5Pget_external_count(dcpl);
    H5Pclose(dcpl);
    if (lay < 0 || ext < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot read the storage layout");
    if (lay == H5D_VIRTUAL || ext > 0)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: %s: the data is stored in other files (%s); kcs does not follow them",
                        r->path, obj, ext > 0 ? "external storage" : "a virtual dataset");
    return 0;
}

/* A complete file holds every row of its tables: one whose storage holds
 * fewer rows than its dataspace declares is damaged or forged, and would
 * have kcs reduce loop over (and allocate for) rows that are not there. */
static int check_stored(kcs_store_reader *r, hid_t d, const char *obj, int64_t rows, kcs_error *err)
{
    if (rows == 0)
        return 0;
    hid_t dcpl = H5Dget_create_plist(d), t = H5Dget_type(d), sp = -1;
    int64_t held = -1;
    size_t ts = t >= 0 ? H5Tget_size(t) : 0;
    if (dcpl >= 0 && ts > 0) {
        if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
            hsize_t cdim = 0, nch = 0;
            sp = H5Dget_space(d); /* HDF5 1.10 takes no H5S_ALL here */
            if (sp >= 0 && H5Pget_chunk(dcpl, 1, &cdim) == 1 && cdim > 0 &&
                H5Dget_num_chunks(d, sp, &nch) >= 0)
                held = nch > (hsize_t)INT64_MAX / cdim ? INT64_MAX : (int64_t)(nch * cdim);
        } else {
            held = (int64_t)(H5Dget_storage_size(d) / ts);
        }
    }
    int rc = 0;
    if (held < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot read the storage size");
    else if (held < rows)
        rc = kcs_fail(err, KCS_E_INVAL,
                      "%s: %s: %" PRId64 " rows declared but only %" PRId64
                      " stored (damaged or forged table)",
                      r->path, obj, rows, held);
    KCS_H5_CLOSE(sp, t, dcpl);
    return rc;
}

/* Open a 1-D compound table and check its fields; *n_p = its rows. */
static int open_table(kcs_store_reader *r, const char *obj, const char *what, const kcs_field *f,
                      int nf, hid_t *d_p, int64_t *n_p, kcs_error *err)
{
    htri_t ex = H5Lexists(r->file, obj, r->dapl);
    if (ex <= 0) {
        if (ex < 0)
            H5Eclear2(H5E_DEFAULT);
        return kcs_fail(err, KCS_E_INVAL, "%s: %s: missing (not a kcs dataset)", r->path, obj);
    }
    hid_t d = H5Dopen2(r->file, obj, r->dapl);
    if (d < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "not a dataset");
    int rc = check_layout(r, d, obj, err);
    if (!rc)
        rc = kcs_h5_check_fields(d, f, nf, r->path, obj, what, err);
    hid_t sp = rc ? -1 : H5Dget_space(d);
    hsize_t dims[1];
    if (!rc && (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1))
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "not a kcs %s (not 1-D)", what);
    else if (!rc && H5Sget_simple_extent_dims(sp, dims, NULL) < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot read the dataspace");
    else if (!rc && dims[0] > (hsize_t)INT64_MAX)
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: %llu rows is more than kcs reads", r->path, obj,
                      (unsigned long long)dims[0]);
    if (!rc && r->info.complete)
        rc = check_stored(r, d, obj, (int64_t)dims[0], err);
    if (sp >= 0)
        H5Sclose(sp);
    if (rc) {
        H5Dclose(d);
        return rc;
    }
    *d_p = d;
    *n_p = (int64_t)dims[0];
    return 0;
}

/* The rows one call hands back are sized from the header: refuse a header
 * whose buffers would exceed KCS_READ_MAX_BUFFER (n_ranks <= INT32_MAX and
 * max_trials, n_samples <= INT32_MAX, so the products fit in 64 bits). */
static int check_buffers(kcs_store_reader *r, kcs_error *err)
{
    const kcs_store_info *in = &r->info;
    const int64_t cap = KCS_READ_MAX_BUFFER, nr = in->n_ranks;
    const char *obj = NULL;
    int64_t need = 0;
    if (nr * (int64_t)sizeof(kcs_rank_rec) > cap) {
        obj = "/provenance/ranks";
        need = nr * (int64_t)sizeof(kcs_rank_rec);
    } else if (nr * in->max_trials > cap / (int64_t)sizeof(kcs_result_rec)) {
        obj = "/results";
        need = nr * in->max_trials * (int64_t)sizeof(kcs_result_rec);
    } else if (nr * in->n_samples > cap / (int64_t)sizeof(double)) {
        obj = "/samples";
        need = nr * in->n_samples * (int64_t)sizeof(double);
    }
    if (!obj)
        return 0;
    return kcs_fail(err, KCS_E_INVAL,
                    "%s: %s: n_ranks %d, max_trials %d, n_samples %d need %" PRId64
                    " MiB per case, more than kcs reads (%" PRId64 " MiB)",
                    r->path, obj, in->n_ranks, in->max_trials, in->n_samples, need >> 20,
                    cap >> 20);
}

static int open_tables(kcs_store_reader *r, kcs_error *err)
{
    kcs_store_info *in = &r->info;
    int nf, rc;
    int64_t n;
    const kcs_field *f = kcs_store_case_fields(&nf);
    if ((rc = open_table(r, "/cases", "cases table", f, nf, &r->cases, &n, err)))
        return rc;
    if (n != in->n_cases)
        return kcs_fail(err, KCS_E_INVAL, "%s: /cases: %" PRId64 " rows, n_cases says %" PRId64,
                        r->path, n, in->n_cases);
    f = kcs_store_rank_fields(&nf);
    if ((rc = open_table(r, "/provenance/ranks", "ranks table", f, nf, &r->ranks, &n, err)))
        return rc;
    if (n != in->n_ranks)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: /provenance/ranks: %" PRId64 " rows, n_ranks says %d", r->path, n,
                        in->n_ranks);
    f = kcs_store_result_fields(&nf);
    if ((rc = open_table(r, "/results", "results table", f, nf, &r->results, &r->n_rows, err)))
        return rc;
    if (in->n_cases > INT64_MAX / in->n_ranks)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: /results: n_cases %" PRId64 " x n_ranks %d overflows", r->path,
                        in->n_cases, in->n_ranks);
    int64_t per_trial = in->n_cases * in->n_ranks;
    if (per_trial > 0) {
        int64_t mt = r->n_rows / per_trial;
        if (r->n_rows % per_trial != 0 || mt > INT32_MAX)
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: /results: %" PRId64 " rows do not match "
                            "n_cases %" PRId64 " x n_ranks %d x max_trials",
                            r->path, r->n_rows, in->n_cases, in->n_ranks);
        if (in->max_trials >= 0 && mt != in->max_trials)
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: /results: %" PRId64 " rows mean max_trials %" PRId64
                            ", the root attribute says %d",
                            r->path, r->n_rows, mt, in->max_trials);
        in->max_trials = (int)mt;
    } else if (r->n_rows != 0) {
        return kcs_fail(err, KCS_E_INVAL, "%s: /results: %" PRId64 " rows for no cases", r->path,
                        r->n_rows);
    } else if (in->max_trials < 0) {
        in->max_trials = 0;
    }
    return check_buffers(r, err);
}

/* The file as opened: the end its superblock declares, then (flags
 * without KCS_READ_NO_DIGESTS) its content digests (store_digest.h). A
 * file still being written (complete 0) may be larger than its end (the
 * runner reserves space); a smaller one is cut in every case. */
static int check_content(kcs_store_reader *r, int flags, kcs_error *err)
{
    kcs_store_info *in = &r->info;
    struct stat st;
    if (stat(r->path, &st) != 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: %s", r->path, strerror(errno));
    in->id = (kcs_file_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino, (int64_t)st.st_size,
                           (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec};
    haddr_t eoa = 0;
    if (in->complete || (H5Fget_eoa(r->file, &eoa) >= 0 && (uint64_t)st.st_size < (uint64_t)eoa)) {
        int rc = kcs_h5_check_eoa(r->file, r->path, err);
        if (rc)
            return rc;
    }
    H5Eclear2(H5E_DEFAULT);
    if (flags & KCS_READ_NO_DIGESTS)
        return 0;
    return kcs_store_check_digests(r->file, r->path, &in->sealed, err);
}

int kcs_store_open_read(const char *path, kcs_store_reader **r_p, kcs_error *err)
{
    return kcs_store_open_read_flags(path, 0, r_p, err);
}

int kcs_store_open_read_flags(const char *path, int flags, kcs_store_reader **r_p, kcs_error *err)
{
    kcs_h5_quiet();
    if (access(path, R_OK) != 0) /* a missing input is bad input; a failing disk is not */
        return kcs_fail(err, errno == EIO ? KCS_E_IO : KCS_E_INVAL, "%s: %s", path,
                        strerror(errno));
    int rc0 = kcs_h5_input_regular(path, err);
    if (rc0)
        return rc0;
    htri_t is = H5Fis_hdf5(path);
    if (is == 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: not an HDF5 file", path);
    if (is < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, path, NULL, "cannot read the file");
    kcs_store_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    }
    r->file = r->results = r->cases = r->ranks = r->result_t = r->case_t = r->rank_t = -1;
    r->samples = -1;
    r->dapl = r->gapl = -1;
    int rc = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    r->dapl = H5Pcreate(H5P_DATASET_ACCESS);
    r->gapl = H5Pcreate(H5P_GROUP_ACCESS);
    if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0 || r->dapl < 0 || r->gapl < 0 ||
        H5Pset_elink_cb(r->dapl, no_external_links, NULL) < 0 ||
        H5Pset_elink_cb(r->gapl, no_external_links, NULL) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot set up file access");
    else if ((r->file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0 &&
             !(rc = kcs_h5_end_mismatch(path, err)))
        rc =
            kcs_h5_fail(err, KCS_E_INVAL, path, NULL, "cannot open (damaged or truncated HDF5 file?)");
    if (fapl >= 0)
        H5Pclose(fapl);
    if (rc) {
        r->file = -1;
        goto fail;
    }
    if ((rc = check_root(r, err)) || (rc = check_content(r, flags, err)) ||
        (rc = open_tables(r, err)))
        goto fail;
    r->result_t = kcs_h5_result_type();
    r->case_t = kcs_h5_case_type();
    r->rank_t = kcs_h5_rank_type();
    if (r->result_t < 0 || r->case_t < 0 || r->rank_t < 0) {
        rc = kcs_h5_fail(err, KCS_E_INTERNAL, path, NULL, "cannot build the record types");
        goto fail;
    }
    *r_p = r;
    return 0;
fail:
    kcs_store_reader_close(r);
    return rc;
}

void kcs_store_reader_close(kcs_store_reader *r)
{
    if (!r)
        return;
    hid_t d[] = {r->results, r->cases, r->ranks, r->samples};
    for (size_t i = 0; i < 4; i++)
        if (d[i] >= 0)
            H5Dclose(d[i]);
    hid_t t[] = {r->result_t, r->case_t, r->rank_t};
    for (size_t i = 0; i < 3; i++)
        if (t[i] >= 0)
            H5Tclose(t[i]);
    if (r->file >= 0)
        H5Fclose(r->file);
    if (r->dapl >= 0)
        H5Pclose(r->dapl);
    if (r->gapl >= 0)
        H5Pclose(r->gapl);
    H5Eclear2(H5E_DEFAULT);
    free(r->info.command_line);
    free(r->path);
    free(r);
}

const kcs_store_info *kcs_store_reader_info(const kcs_store_reader *r)
{
    return &r->info;
}

const char *kcs_store_reader_path(const kcs_store_reader *r)
{
    return r->path;
}

/* Rows [first, first + count) of a 1-D table of total rows. */
static int read_rows(kcs_store_reader *r, hid_t d, hid_t type, const kcs_field *f, int nf,
                     size_t rec_size, int64_t total, int64_t first, int64_t count, void *out,
                     const char *obj, kcs_error *err)
{
    if (first < 0 || count < 0 || first > total || count > total - first)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: %s: %" PRId64 " rows from row %" PRId64
                        " are outside the table of %" PRId64 " rows",
                        r->path, obj, count, first, total); /* first + count may overflow */
    if (count == 0)
        return 0;
    int rc = 0;
    hsize_t start = (hsize_t)first, n = (hsize_t)count;
    memset(out, 0, rec_size * (size_t)count); /* members an older file lacks read as 0 / "" */
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(1, &n, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL) < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot select rows");
    else if (H5Dread(d, type, ms, fs, H5P_DEFAULT, out) < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot read rows [%" PRId64 ", %" PRId64 ")",
                         first, first + count);
    KCS_H5_CLOSE(ms, fs);
    if (!rc)
        kcs_fields_terminate(f, nf, out, rec_size, (size_t)count);
    return rc;
}

int kcs_store_read_cases(kcs_store_reader *r, int64_t first, int64_t count, kcs_case_rec *out,
                         kcs_error *err)
{
    int nf;
    const kcs_field *f = kcs_store_case_fields(&nf);
    int rc = read_rows(r, r->cases, r->case_t, f, nf, sizeof *out, r->info.n_cases, first, count,
                       out, "/cases", err);
    return rc ? rc
              : kcs_store_validate_cases(r->path, out, first, count, r->info.max_trials, err);
}

int kcs_store_read_results(kcs_store_reader *r, int64_t first, int64_t count, kcs_result_rec *out,
                           kcs_error *err)
{
    int nf;
    const kcs_field *f = kcs_store_result_fields(&nf);
    int rc = read_rows(r, r->results, r->result_t, f, nf, sizeof *out, r->n_rows, first, count,
                       out, "/results", err);
    return rc ? rc
              : kcs_store_validate_results(r->path, out, first, count, r->info.n_ranks,
                                           r->info.max_trials, err);
}

int kcs_store_read_case_results(kcs_store_reader *r, int64_t case_idx, kcs_result_rec *out,
                                kcs_error *err)
{
    if (case_idx < 0 || case_idx >= r->info.n_cases)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: /results: case index %" PRId64 " outside [0, %" PRId64 ")", r->path,
                        case_idx, r->info.n_cases);
    int64_t per_case = (int64_t)r->info.n_ranks * r->info.max_trials;
    return kcs_store_read_results(r, case_idx * per_case, per_case, out, err);
}

int kcs_store_read_ranks(kcs_store_reader *r, kcs_rank_rec *out, kcs_error *err)
{
    int nf;
    const kcs_field *f = kcs_store_rank_fields(&nf);
    return read_rows(r, r->ranks, r->rank_t, f, nf, sizeof *out, r->info.n_ranks, 0,
                     r->info.n_ranks, out, "/provenance/ranks", err);
}

/* The row of /cases that holds case_id: row case_id itself when it does
 * (kcs numbers a plan's cases 0, 1, ...), else found by a scan of /cases;
 * -1 when no row does. */
static int case_row(kcs_store_reader *r, int64_t case_id, int64_t *row_p, kcs_error *err)
{
    kcs_case_rec blk[64];
    int rc;
    *row_p = -1;
    if (case_id >= 0 && case_id < r->info.n_cases) {
        if ((rc = kcs_store_read_cases(r, case_id, 1, blk, err)))
            return rc;
        if (blk[0].case_id == case_id) {
            *row_p = case_id;
            return 0;
        }
    }
    for (int64_t first = 0; first < r->info.n_cases; first += 64) {
        int64_t n = r->info.n_cases - first < 64 ? r->info.n_cases - first : 64;
        if ((rc = kcs_store_read_cases(r, first, n, blk, err)))
            return rc;
        for (int64_t i = 0; i < n; i++)
            if (blk[i].case_id == case_id) {
                *row_p = first + i;
                return 0;
            }
    }
    return 0;
}

/* Schema 2: /samples [n_cases, n_ranks, n_samples], opened and checked once. */
static int open_samples(kcs_store_reader *r, kcs_error *err)
{
    if (r->samples >= 0)
        return 0;
    const char *obj = "/samples";
    hid_t d = H5Dopen2(r->file, obj, r->dapl);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hid_t t = d >= 0 ? H5Dget_type(d) : -1;
    hsize_t dims[3] = {0, 0, 0};
    int rc = 0;
    if (d < 0 || sp < 0 || t < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "not a dataset");
    else if (!(rc = check_layout(r, d, obj, err)) &&
             (H5Tget_class(t) != H5T_FLOAT || H5Tget_size(t) != 8 ||
              H5Sget_simple_extent_ndims(sp) != 3 ||
              H5Sget_simple_extent_dims(sp, dims, NULL) < 0 ||
              dims[0] != (hsize_t)r->info.n_cases || dims[1] != (hsize_t)r->info.n_ranks ||
              dims[2] != (hsize_t)r->info.n_samples))
        rc = kcs_fail(err, KCS_E_INVAL,
                      "%s: %s: not a float64 [%" PRId64 ", %d, %d] samples dataset", r->path, obj,
                      r->info.n_cases, r->info.n_ranks, r->info.n_samples);
    KCS_H5_CLOSE(t, sp);
    if (rc) {
        if (d >= 0)
            H5Dclose(d);
        return rc;
    }
    r->samples = d;
    return 0;
}

/* Schema 2: the samples of case_id, the row of /samples that /cases gives it. */
static int read_samples_row(kcs_store_reader *r, int64_t case_id, double *out, int *found_p,
                            kcs_error *err)
{
    int64_t row;
    int rc;
    if ((rc = open_samples(r, err)))
        return rc;
    if ((rc = case_row(r, case_id, &row, err))) {
        char why[KCS_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", err ? err->msg : "");
        return kcs_fail(err, rc, "%s: /samples: the row of case %" PRId64 ": %.700s", r->path,
                        case_id, why);
    }
    if (row < 0) {
        *found_p = 0;
        return 0;
    }
    if (r->info.n_samples > 0) {
        hsize_t start[3] = {(hsize_t)row, 0, 0};
        hsize_t count[3] = {1, (hsize_t)r->info.n_ranks, (hsize_t)r->info.n_samples};
        hsize_t mcount = count[1] * count[2];
        hid_t fs = H5Dget_space(r->samples);
        hid_t ms = H5Screate_simple(1, &mcount, NULL);
        if (fs < 0 || ms < 0 ||
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(r->samples, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, out) < 0)
            rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, "/samples", "cannot read row %" PRId64, row);
        KCS_H5_CLOSE(ms, fs);
        if (rc)
            return rc;
    }
    *found_p = 1;
    return 0;
}

int kcs_store_read_samples(kcs_store_reader *r, int64_t case_id, double *out, int *found_p,
                           kcs_error *err)
{
    char obj[48];
    snprintf(obj, sizeof obj, "/samples/%" PRId64, case_id);
    htri_t ex = H5Lexists(r->file, "/samples", r->dapl);
    if (ex > 0) {
        /* schema 2 (and any dataset there): one dataset for every case;
         * schema 1 and merged datasets: a group of one dataset per case */
        hid_t o = r->samples >= 0 ? r->samples : H5Oopen(r->file, "/samples", r->dapl);
        if (o < 0)
            return kcs_h5_fail(err, KCS_E_INVAL, r->path, "/samples", "cannot open");
        H5I_type_t kind = H5Iget_type(o);
        if (o != r->samples)
            H5Oclose(o);
        if (kind == H5I_DATASET)
            return read_samples_row(r, case_id, out, found_p, err);
        ex = H5Lexists(r->file, obj, r->dapl);
    }
    if (ex < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot look up");
    if (ex == 0) {
        *found_p = 0;
        return 0;
    }
    int rc = 0;
    hid_t d = H5Dopen2(r->file, obj, r->dapl);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hid_t t = d >= 0 ? H5Dget_type(d) : -1;
    hsize_t dims[2] = {0, 0};
    if (d < 0 || sp < 0 || t < 0) {
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "not a dataset");
        goto out;
    }
    if ((rc = check_layout(r, d, obj, err)))
        goto out;
    if (H5Tget_class(t) != H5T_FLOAT || H5Tget_size(t) != 8 || H5Sget_simple_extent_ndims(sp) != 2 ||
        H5Sget_simple_extent_dims(sp, dims, NULL) < 0 || dims[0] != (hsize_t)r->info.n_ranks ||
        dims[1] != (hsize_t)r->info.n_samples) {
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: not a float64 [%d, %d] samples dataset", r->path,
                      obj, r->info.n_ranks, r->info.n_samples);
        goto out;
    }
    if (dims[1] > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, obj, "cannot read");
        goto out;
    }
    *found_p = 1;
out:
    KCS_H5_CLOSE(t, sp, d);
    return rc;
}

int kcs_store_read_text(kcs_store_reader *r, const char *object, char **text_p, kcs_error *err)
{
    htri_t ex = H5Lexists(r->file, object, r->dapl);
    if (ex <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return kcs_fail(err, KCS_E_INVAL, "%s: %s: missing", r->path, object);
    }
    int rc = 0;
    char *s = NULL;
    hid_t d = H5Dopen2(r->file, object, r->dapl);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hid_t t = d >= 0 ? H5Dget_type(d) : -1;
    hid_t mt = t >= 0 ? H5Tcopy(t) : -1;
    if (mt < 0 || sp < 0) {
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, object, "not a dataset");
        goto out;
    }
    if (H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) {
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: not a text (one string)", r->path, object);
        goto out;
    }
    if ((rc = check_layout(r, d, object, err)))
        goto out;
    if (H5Tis_variable_str(t) > 0) {
        char why[256];
        int g = kcs_h5_read_vlen_str(d, 0, mt, KCS_READ_MAX_TEXT, &s, why, sizeof why);
        if (g == -2) {
            rc = kcs_fail(err, KCS_E_NOMEM, "%s: %s: out of memory", r->path, object);
            goto out;
        }
        if (g) {
            H5Eclear2(H5E_DEFAULT);
            rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: %s", r->path, object, why);
            goto out;
        }
    } else {
        size_t n = H5Tget_size(t);
        if (n == 0 || n > KCS_READ_MAX_TEXT) {
            rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: a text of %zu bytes (kcs reads up to %zu MiB)",
                          r->path, object, n, KCS_READ_MAX_TEXT >> 20);
            goto out;
        }
        s = calloc(n + 1, 1);
        if (s && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) < 0) {
            rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, object, "cannot read");
            goto out;
        }
    }
    if (!s)
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: %s: out of memory", r->path, object);
out:
    KCS_H5_CLOSE(mt, t, sp, d);
    if (rc) {
        free(s);
        return rc;
    }
    *text_p = s;
    return 0;
}

void kcs_store_strings_free(char **v, int n)
{
    if (!v)
        return;
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int kcs_store_read_contract_ids(kcs_store_reader *r, char ***ids_p, int *n_p, kcs_error *err)
{
    htri_t ex = H5Lexists(r->file, "/contracts", r->dapl);
    if (ex <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return kcs_fail(err, KCS_E_INVAL, "%s: /contracts: missing", r->path);
    }
    hid_t g = H5Gopen2(r->file, "/contracts", r->gapl);
    H5G_info_t gi;
    if (g < 0 || H5Gget_info(g, &gi) < 0) {
        if (g >= 0)
            H5Gclose(g);
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, "/contracts", "not a group");
    }
    if (gi.nlinks > 1u << 20) {
        H5Gclose(g);
        return kcs_fail(err, KCS_E_INVAL, "%s: /contracts: %llu entries (kcs reads up to %u)",
                        r->path, (unsigned long long)gi.nlinks, 1u << 20);
    }
    int rc = 0, n = (int)gi.nlinks;
    char **ids = calloc((size_t)n + 1, sizeof *ids);
    if (!ids) {
        H5Gclose(g);
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", r->path);
    }
    for (int i = 0; !rc && i < n; i++) {
        ssize_t len =
            H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, (hsize_t)i, NULL, 0, r->dapl);
        if (len < 0 || !(ids[i] = malloc((size_t)len + 1)) ||
            H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, (hsize_t)i, ids[i],
                               (size_t)len + 1, r->dapl) < 0)
            rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, "/contracts", "cannot list entry %d", i);
    }
    H5Gclose(g);
    if (rc) {
        kcs_store_strings_free(ids, n);
        return rc;
    }
    *ids_p = ids;
    *n_p = n;
    return 0;
}

int kcs_store_read_attr(kcs_store_reader *r, const char *object, const char *name, char **value_p,
                        kcs_error *err)
{
    htri_t ex = strcmp(object, "/") == 0 ? 1 : H5Lexists(r->file, object, r->dapl);
    if (ex <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return kcs_fail(err, KCS_E_INVAL, "%s: %s: missing", r->path, object);
    }
    hid_t o = H5Oopen(r->file, object, r->dapl);
    if (o < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, r->path, object, "cannot open");
    int rc = 0;
    htri_t ax = H5Aexists(o, name);
    int g = ax > 0 ? kcs_h5_get_str(o, name, value_p) : -3;
    if (g == -3)
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: no attribute %s", r->path, object, name);
    else if (g == -2)
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: attribute %s is not a string", r->path, object,
                      name);
    else if (g < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, r->path, object, "cannot read attribute %s", name);
    H5Oclose(o);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}
