/* The reducer's /analysis group (store_read.h): compound tables described
 * by kcs_field lists, written from one serial process with the sec2
 * driver. Replacing /analysis unlinks the old group; HDF5 does not shrink
 * the file (h5repack reclaims the space). */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "store_h5.h"
#include "store_read.h"

struct kcs_store_analysis {
    char *path;
    hid_t file;
    hid_t group; /* /analysis */
};

static int usable_name(const char *name)
{
    return name && name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static int write_root(kcs_store_analysis *a, kcs_error *err)
{
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *names[] = {"schema",   "software", "software_version",
                           "git_hash", "created",  "content"};
    const char *values[] = {"kcs", "kcs", KCS_VERSION, KCS_GIT_HASH, created, "analysis"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (kcs_h5_put_str(a->file, names[i], values[i]) < 0)
            return kcs_h5_fail(err, KCS_E_IO, a->path, "/", "cannot write attribute %s", names[i]);
    if (kcs_h5_put_i32(a->file, "schema_version", KCS_SCHEMA_VERSION) < 0)
        return kcs_h5_fail(err, KCS_E_IO, a->path, "/", "cannot write attribute schema_version");
    return 0;
}

static int check_schema(kcs_store_analysis *a, kcs_error *err)
{
    char *schema = NULL;
    htri_t ex = H5Aexists(a->file, "schema");
    if (ex <= 0 || kcs_h5_get_str(a->file, "schema", &schema) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return kcs_fail(err, KCS_E_INVAL, "%s: /: not a kcs dataset (no root attribute schema)",
                        a->path);
    }
    int ok = strcmp(schema, "kcs") == 0;
    free(schema);
    if (!ok)
        return kcs_fail(err, KCS_E_INVAL, "%s: /: not a kcs dataset (schema is not \"kcs\")",
                        a->path);
    return 0;
}

int kcs_store_analysis_open(const char *path, int create, kcs_store_analysis **a_p, kcs_error *err)
{
    kcs_h5_quiet();
    if (create && access(path, F_OK) == 0)
        return kcs_fail(err, KCS_E_EXISTS, "%s: exists; refusing to overwrite", path);
    if (!create && H5Fis_hdf5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return kcs_fail(err, KCS_E_INVAL, /* a missing or foreign input: bad input */
                        "%s: not an HDF5 file (or missing)", path);
    }
    kcs_store_analysis *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    }
    a->file = a->group = -1;
    int rc = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot set up file access");
    else if ((a->file = create ? H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, fapl)
                               : H5Fopen(path, H5F_ACC_RDWR, fapl)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL,
                         create ? "cannot create" : "cannot open for writing");
    if (fapl >= 0)
        H5Pclose(fapl);
    if (!rc)
        rc = create ? write_root(a, err) : check_schema(a, err);
    if (!rc) {
        htri_t ex = H5Lexists(a->file, "/analysis", H5P_DEFAULT);
        if (ex < 0 || (ex > 0 && H5Ldelete(a->file, "/analysis", H5P_DEFAULT) < 0))
            rc = kcs_h5_fail(err, KCS_E_IO, path, "/analysis", "cannot remove the old group");
    }
    if (!rc &&
        (a->group = H5Gcreate2(a->file, "/analysis", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, "/analysis", "cannot create");
    if (rc) {
        if (a->file >= 0)
            H5Fclose(a->file);
        if (create && a->file >= 0)
            remove(path);
        free(a->path);
        free(a);
        return rc;
    }
    *a_p = a;
    return 0;
}

int kcs_store_analysis_write_table(kcs_store_analysis *a, const char *name, const kcs_field *fields,
                                   int n_fields, size_t rec_size, const void *rows, int64_t n_rows,
                                   kcs_error *err)
{
    char obj[300];
    snprintf(obj, sizeof obj, "/analysis/%s", name ? name : "");
    if (!usable_name(name) || n_rows < 0 || (n_rows > 0 && !rows) || n_fields <= 0)
        return kcs_fail(err, KCS_E_INTERNAL, "%s: %s: invalid table", a->path, obj);
    for (int i = 0; i < n_fields; i++)
        if (fields[i].offset + fields[i].size > rec_size)
            return kcs_fail(err, KCS_E_INTERNAL, "%s: %s: field %s lies outside the record",
                            a->path, obj, fields[i].name);
    int rc = 0;
    hid_t t = kcs_h5_compound(fields, n_fields, rec_size);
    hsize_t n = (hsize_t)n_rows;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = -1;
    if (t < 0 || sp < 0) {
        rc = kcs_h5_fail(err, KCS_E_INTERNAL, a->path, obj, "cannot build the record type");
        goto out;
    }
    htri_t ex = H5Lexists(a->group, name, H5P_DEFAULT);
    if (ex < 0 || (ex > 0 && H5Ldelete(a->group, name, H5P_DEFAULT) < 0)) {
        rc = kcs_h5_fail(err, KCS_E_IO, a->path, obj, "cannot replace");
        goto out;
    }
    d = H5Dcreate2(a->group, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, a->path, obj, "cannot create");
    else if (n_rows > 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, a->path, obj, "write failed");
out:
    if (d >= 0 && H5Dclose(d) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, a->path, obj, "cannot close");
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

/* kind: 0 string, 1 double, 2 int64 */
static int set_attr(kcs_store_analysis *a, const char *object, const char *name, int kind,
                    const char *s, double f, int64_t i, kcs_error *err)
{
    char obj[300];
    int whole = !object || !object[0];
    snprintf(obj, sizeof obj, whole ? "/analysis" : "/analysis/%s", whole ? "" : object);
    if (!name || !name[0] || (!whole && !usable_name(object)))
        return kcs_fail(err, KCS_E_INTERNAL, "%s: %s: invalid attribute", a->path, obj);
    hid_t o = whole ? a->group : H5Oopen(a->group, object, H5P_DEFAULT);
    if (o < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, a->path, obj, "missing");
    int r = kind == 0   ? kcs_h5_put_str(o, name, s)
            : kind == 1 ? kcs_h5_put_f64(o, name, f)
                        : kcs_h5_put_i64(o, name, i);
    int rc =
        r < 0 ? kcs_h5_fail(err, KCS_E_IO, a->path, obj, "cannot write attribute %s", name) : 0;
    if (!whole)
        H5Oclose(o);
    return rc;
}

int kcs_store_analysis_set_str(kcs_store_analysis *a, const char *object, const char *name,
                               const char *value, kcs_error *err)
{
    return set_attr(a, object, name, 0, value, 0, 0, err);
}

int kcs_store_analysis_set_f64(kcs_store_analysis *a, const char *object, const char *name,
                               double value, kcs_error *err)
{
    return set_attr(a, object, name, 1, NULL, value, 0, err);
}

int kcs_store_analysis_set_i64(kcs_store_analysis *a, const char *object, const char *name,
                               int64_t value, kcs_error *err)
{
    return set_attr(a, object, name, 2, NULL, 0, value, err);
}

int kcs_store_analysis_close(kcs_store_analysis *a, kcs_error *err)
{
    if (!a)
        return 0;
    int rc = 0;
    if (a->group >= 0 && H5Gclose(a->group) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, a->path, "/analysis", "cannot close");
    if (a->file >= 0 && H5Fclose(a->file) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, a->path, NULL, "closing the file failed");
    free(a->path);
    free(a);
    return rc;
}
