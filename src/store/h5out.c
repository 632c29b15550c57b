/* Serial HDF5 writing for the reducer and kcs detect (h5out.h). */
#define _POSIX_C_SOURCE 200809L

#include "h5out.h"

#include <fcntl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outlock.h"
#include "store_h5.h"

struct kcs_h5out {
    char *path;
    hid_t file;
};

struct kcs_h5table {
    kcs_h5out *o;
    char obj[256];
    hid_t d, type;
    size_t rec_size;
    int64_t n;
};

static int fapl_sec2(hid_t *fapl_p)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        return -1;
    }
    *fapl_p = fapl;
    return 0;
}

static int new_out(const char *path, kcs_h5out **o_p, kcs_error *err)
{
    kcs_h5out *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(path))) {
        free(o);
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    }
    o->file = -1;
    *o_p = o;
    return 0;
}

int kcs_h5out_identity(kcs_h5out *o, const char *created, const char *content,
                       const char *command_line, kcs_error *err)
{
    return kcs_h5_put_identity(o->file, o->path, created, content, command_line, err);
}

int kcs_h5out_create(const char *path, kcs_h5out **o_p, kcs_error *err)
{
    kcs_h5_quiet();
    kcs_h5out *o = NULL;
    int rc = new_out(path, &o, err);
    if (rc)
        return rc;
    hid_t fapl;
    if (fapl_sec2(&fapl) < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot set up file access");
        goto fail;
    }
    o->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (o->file < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot create");
        goto fail;
    }
    *o_p = o;
    return 0;
fail:
    free(o->path);
    free(o);
    return rc;
}

int kcs_h5out_close(kcs_h5out *o, kcs_error *err)
{
    if (!o)
        return 0;
    int rc = 0;
    if (o->file >= 0 && H5Fclose(o->file) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, o->path, NULL, "cannot close (disk full?)");
    free(o->path);
    free(o);
    return rc;
}

void kcs_h5out_abort(kcs_h5out *o)
{
    kcs_error ignore = {0};
    kcs_h5out_close(o, &ignore);
    H5Eclear2(H5E_DEFAULT);
}

int kcs_h5out_group(kcs_h5out *o, const char *path, kcs_error *err)
{
    htri_t ex = H5Lexists(o->file, path, H5P_DEFAULT);
    if (ex > 0)
        return 0;
    hid_t g = H5Gcreate2(o->file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return kcs_h5_fail(err, KCS_E_IO, o->path, path, "cannot create the group");
    H5Gclose(g);
    return 0;
}

/* kind: 0 string, 1 i64, 2 f64, 3 i32 */
static int put_attr(kcs_h5out *o, const char *object, const char *name, int kind, const char *s,
                    int64_t i, double f, kcs_error *err)
{
    hid_t loc = H5Oopen(o->file, object, H5P_DEFAULT);
    if (loc < 0)
        return kcs_h5_fail(err, KCS_E_IO, o->path, object, "cannot open");
    if (H5Aexists(loc, name) > 0)
        H5Adelete(loc, name);
    int r = kind == 0   ? kcs_h5_put_str(loc, name, s ? s : "")
            : kind == 1 ? kcs_h5_put_i64(loc, name, i)
            : kind == 3 ? kcs_h5_put_i32(loc, name, (int32_t)i)
                        : kcs_h5_put_f64(loc, name, f);
    H5Oclose(loc);
    if (r < 0)
        return kcs_h5_fail(err, KCS_E_IO, o->path, object, "cannot write attribute %s", name);
    return 0;
}

int kcs_h5out_attr_str(kcs_h5out *o, const char *object, const char *name, const char *value,
                       kcs_error *err)
{
    return put_attr(o, object, name, 0, value, 0, 0.0, err);
}

int kcs_h5out_attr_i64(kcs_h5out *o, const char *object, const char *name, int64_t value,
                       kcs_error *err)
{
    return put_attr(o, object, name, 1, NULL, value, 0.0, err);
}

int kcs_h5out_attr_i32(kcs_h5out *o, const char *object, const char *name, int32_t value,
                       kcs_error *err)
{
    return put_attr(o, object, name, 3, NULL, value, 0.0, err);
}

int kcs_h5out_attr_f64(kcs_h5out *o, const char *object, const char *name, double value,
                       kcs_error *err)
{
    return put_attr(o, object, name, 2, NULL, 0, value, err);
}

int kcs_h5out_text(kcs_h5out *o, const char *path, const char *text, kcs_error *err)
{
    const char *t = text && text[0] ? text : " ";
    int rc = 0;
    hid_t type = kcs_h5_str_type(strlen(t), H5T_STR_NULLPAD);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = -1;
    if (type < 0 || sp < 0 ||
        (d = H5Dcreate2(o->file, path, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, o->path, path, "cannot write the text");
    KCS_H5_CLOSE(d, sp, type);
    return rc;
}

int kcs_h5out_matrix(kcs_h5out *o, const char *path, int64_t rows, int64_t cols,
                     const double *data, kcs_error *err)
{
    hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
    int rc = 0;
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = sp < 0 ? -1
                     : H5Dcreate2(o->file, path, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT);
    if (d < 0 || (rows * cols > 0 &&
                  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
        rc = kcs_h5_fail(err, KCS_E_IO, o->path, path, "cannot write");
    KCS_H5_CLOSE(d, sp);
    return rc;
}

int kcs_h5out_copy(kcs_h5out *o, const char *src_path, const char *src_obj, const char *dst_path,
                   kcs_error *err)
{
    hid_t fapl;
    if (fapl_sec2(&fapl) < 0)
        return kcs_h5_fail(err, KCS_E_IO, src_path, NULL, "cannot set up file access");
    hid_t src = H5Fopen(src_path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (src < 0)
        return kcs_h5_fail(err, KCS_E_IO, src_path, NULL, "cannot open");
    int rc = 0;
    htri_t ex = H5Lexists(src, src_obj, H5P_DEFAULT);
    if (ex <= 0)
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: missing", src_path, src_obj);
    else if (H5Ocopy(src, src_obj, o->file, dst_path, H5P_DEFAULT, H5P_DEFAULT) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, o->path, dst_path, "cannot copy %s:%s", src_path, src_obj);
    H5Fclose(src);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

int kcs_h5table_open(kcs_h5out *o, const char *path, const kcs_field *f, int nf, size_t rec_size,
                     kcs_h5table **t_p, kcs_error *err)
{
    kcs_h5table *t = calloc(1, sizeof *t);
    if (!t)
        return kcs_fail(err, KCS_E_NOMEM, "%s: %s: out of memory", o->path, path);
    t->o = o;
    snprintf(t->obj, sizeof t->obj, "%s", path);
    t->rec_size = rec_size;
    t->d = -1;
    t->type = kcs_h5_compound(f, nf, rec_size);
    hsize_t zero = 0, unl = H5S_UNLIMITED;
    hsize_t chunk = (hsize_t)(64 * 1024 / rec_size) + 1;
    hid_t sp = H5Screate_simple(1, &zero, &unl);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int rc = 0;
    if (t->type < 0 || sp < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0 ||
        (t->d = H5Dcreate2(o->file, path, t->type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, o->path, path, "cannot create the table");
    KCS_H5_CLOSE(dcpl, sp);
    if (rc) {
        if (t->type >= 0)
            H5Tclose(t->type);
        free(t);
        return rc;
    }
    *t_p = t;
    return 0;
}

int kcs_h5table_append(kcs_h5table *t, const void *rows, int64_t n, kcs_error *err)
{
    if (n <= 0)
        return 0;
    hsize_t size = (hsize_t)(t->n + n), start = (hsize_t)t->n, count = (hsize_t)n;
    int rc = 0;
    hid_t fs = -1, ms = -1;
    if (H5Dset_extent(t->d, &size) < 0 || (fs = H5Dget_space(t->d)) < 0 ||
        (ms = H5Screate_simple(1, &count, NULL)) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
        H5Dwrite(t->d, t->type, ms, fs, H5P_DEFAULT, rows) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, t->o->path, t->obj, "cannot append %lld rows",
                         (long long)n);
    KCS_H5_CLOSE(ms, fs);
    if (!rc)
        t->n += n;
    return rc;
}

int kcs_h5table_close(kcs_h5table *t, kcs_error *err)
{
    if (!t)
        return 0;
    int rc = 0;
    if (t->d >= 0 && H5Dclose(t->d) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, t->o->path, t->obj, "cannot close");
    if (t->type >= 0)
        H5Tclose(t->type);
    free(t);
    return rc;
}

static hid_t open_ro(const char *path, kcs_error *err)
{
    kcs_h5_quiet();
    if (kcs_h5_input_regular(path, err))
        return -1;
    if (H5Fis_hdf5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        kcs_fail(err, KCS_E_INVAL, /* a missing or foreign input: bad input */
                 "%s: not an HDF5 file (or missing)", path);
        return -1;
    }
    hid_t fapl;
    if (fapl_sec2(&fapl) < 0) {
        kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot set up file access");
        return -1;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f < 0 && !kcs_h5_end_mismatch(path, err))
        kcs_h5_fail(err, KCS_E_INVAL, path, NULL, "cannot open (damaged or truncated HDF5 file?)");
    return f;
}

/* Close a file open_ro opened; hand buf to *out_p (a pointer to buf's
 * pointer type) when rc is 0, else free it. Returns rc. */
static int close_ro(hid_t file, int rc, void *buf, void *out_p)
{
    H5Fclose(file);
    H5Eclear2(H5E_DEFAULT);
    if (rc)
        free(buf);
    else
        memcpy(out_p, &buf, sizeof buf);
    return rc;
}

int kcs_h5in_root_str(const char *path, const char *name, char **value_p, kcs_error *err)
{
    hid_t f = open_ro(path, err);
    if (f < 0)
        return err->code;
    char *v = NULL;
    int rc = 0;
    if (H5Aexists(f, name) > 0 && kcs_h5_get_str(f, name, &v) < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, path, "/", "attribute %s is not a string", name);
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    if (rc)
        return rc;
    *value_p = v;
    return 0;
}

int kcs_h5in_table(const char *path, const char *obj, const kcs_field *f, int nf, size_t rec_size,
                   int optional, void **rows_p, int64_t *n_p, kcs_error *err)
{
    hid_t file = open_ro(path, err);
    if (file < 0)
        return err->code;
    int rc = 0;
    void *rows = NULL;
    hsize_t n = 0;
    hid_t d = -1, t = -1, sp = -1;
    if (H5Lexists(file, obj, H5P_DEFAULT) <= 0) {
        if (!optional)
            rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: missing", path, obj);
        goto out;
    }
    if ((d = H5Dopen2(file, obj, H5P_DEFAULT)) < 0) {
        rc = kcs_h5_fail(err, KCS_E_INVAL, path, obj, "not a dataset");
        goto out;
    }
    if ((rc = kcs_h5_check_fields(d, f, nf, path, obj, "table", err)))
        goto out;
    sp = H5Dget_space(d);
    if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
        H5Sget_simple_extent_dims(sp, &n, NULL) < 0) {
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: not a 1-D table", path, obj);
        goto out;
    }
    rows = calloc(n ? n : 1, rec_size);
    t = kcs_h5_compound(f, nf, rec_size);
    if (!rows || t < 0) {
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: %s: out of memory", path, obj);
        goto out;
    }
    if (n > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) {
        rc = kcs_h5_fail(err, KCS_E_INVAL, path, obj, "cannot read");
        goto out;
    }
    kcs_fields_terminate(f, nf, rows, rec_size, (size_t)n);
out:
    KCS_H5_CLOSE(t, sp, d);
    rc = close_ro(file, rc, rows, rows_p);
    if (!rc)
        *n_p = (int64_t)n;
    return rc;
}

int kcs_h5in_text(const char *path, const char *obj, char **text_p, kcs_error *err)
{
    hid_t file = open_ro(path, err);
    if (file < 0)
        return err->code;
    int rc = 0;
    char *s = NULL;
    hid_t d = -1, t = -1;
    if (H5Lexists(file, obj, H5P_DEFAULT) <= 0 || (d = H5Dopen2(file, obj, H5P_DEFAULT)) < 0 ||
        (t = H5Dget_type(d)) < 0 || H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) > 0) {
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: missing or not a fixed-length text", path, obj);
        goto out;
    }
    size_t n = H5Tget_size(t);
    s = calloc(n + 1, 1);
    if (!s)
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: %s: out of memory", path, obj);
    else if (H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) < 0)
        rc = kcs_h5_fail(err, KCS_E_INVAL, path, obj, "cannot read");
out:
    KCS_H5_CLOSE(t, d);
    return close_ro(file, rc, s, text_p);
}
