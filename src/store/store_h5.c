/* HDF5 error translation and attribute helpers of the store (store_h5.h). */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "build_info.h"
#include "store.h"
#include "store_h5.h"

void kcs_h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

int kcs_h5_input_regular(const char *path, kcs_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0; /* a missing file: the caller's own message */
    return kcs_fail(err, KCS_E_INVAL,
                    "%s: not a regular file (a FIFO, device or directory is not a dataset)",
                    path);
}

/* Any other id: drop the reference kcs holds. */
static herr_t dec_ref(hid_t id)
{
    return H5Idec_ref(id) < 0 ? -1 : 0;
}

void kcs_h5_close_ids(const hid_t *ids, int n)
{
    static const struct {
        H5I_type_t type;
        herr_t (*close)(hid_t);
    } closers[] = {{H5I_DATASET, H5Dclose},   {H5I_DATASPACE, H5Sclose}, {H5I_DATATYPE, H5Tclose},
                   {H5I_GENPROP_LST, H5Pclose}, {H5I_ATTR, H5Aclose},     {H5I_GROUP, H5Gclose}};
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0)
            continue;
        H5I_type_t type = H5Iget_type(ids[i]);
        herr_t (*close)(hid_t) = dec_ref;
        for (size_t c = 0; c < sizeof closers / sizeof *closers; c++)
            if (closers[c].type == type)
                close = closers[c].close;
        close(ids[i]);
    }
}

/* Walking the stack downward, the last entry is the innermost (the one
 * that says what went wrong, e.g. "truncated file: eof = ..."). */
static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    char *out = data;
    if (e->desc && e->desc[0]) {
        snprintf(out, 256, "%s", e->desc);
    } else {
        char msg[256];
        if (H5Eget_msg(e->min_num, NULL, msg, sizeof msg) > 0)
            snprintf(out, 256, "%s", msg);
    }
    return 0;
}

int kcs_h5_fail(kcs_error *err, int code, const char *file, const char *object, const char *fmt,
                ...)
{
    char what[512], h5[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, innermost, h5);
    H5Eclear2(H5E_DEFAULT);
    char obj[300] = "";
    if (object && object[0])
        snprintf(obj, sizeof obj, "%s: ", object);
    if (h5[0])
        return kcs_fail(err, code, "%s: %s%s (HDF5: %s)", file, obj, what, h5);
    return kcs_fail(err, code, "%s: %s%s", file, obj, what);
}

/* Create attribute name on loc (replacing one of that name) and write. */
static int put(hid_t loc, const char *name, hid_t type, const void *buf)
{
    htri_t ex = H5Aexists(loc, name);
    if (ex < 0 || (ex > 0 && H5Adelete(loc, name) < 0))
        return -1;
    hid_t sp = H5Screate(H5S_SCALAR);
    if (sp < 0)
        return -1;
    int rc = -1;
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        if (H5Awrite(a, type, buf) >= 0)
            rc = 0;
        if (H5Aclose(a) < 0)
            rc = -1;
    }
    H5Sclose(sp);
    return rc;
}

int kcs_h5_put_str(hid_t loc, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    int rc = -1;
    const char *v = value ? value : "";
    if (H5Tset_size(t, H5T_VARIABLE) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
        rc = put(loc, name, t, &v);
    H5Tclose(t);
    return rc;
}

int kcs_h5_put_i32(hid_t loc, const char *name, int32_t value)
{
    return put(loc, name, H5T_NATIVE_INT32, &value);
}

int kcs_h5_put_i64(hid_t loc, const char *name, int64_t value)
{
    return put(loc, name, H5T_NATIVE_INT64, &value);
}

int kcs_h5_put_f64(hid_t loc, const char *name, double value)
{
    return put(loc, name, H5T_NATIVE_DOUBLE, &value);
}

/* Open attribute name and check it holds exactly one value of class cls. */
static int open_scalar(hid_t loc, const char *name, H5T_class_t cls, hid_t *a_p, hid_t *t_p)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t t = H5Aget_type(a);
    hid_t sp = H5Aget_space(a);
    int rc = -1;
    if (t >= 0 && sp >= 0) {
        hssize_t np = H5Sget_simple_extent_npoints(sp);
        rc = (H5Tget_class(t) == cls && np == 1) ? 0 : -2;
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (rc < 0) {
        if (t >= 0)
            H5Tclose(t);
        H5Aclose(a);
        return rc;
    }
    *a_p = a;
    *t_p = t;
    return 0;
}

int kcs_h5_get_str(hid_t loc, const char *name, char **value_p)
{
    hid_t a, t;
    int rc = open_scalar(loc, name, H5T_STRING, &a, &t);
    if (rc < 0)
        return rc;
    char *s = NULL;
    rc = -1;
    hid_t mt = H5Tcopy(t);
    if (mt < 0)
        goto out;
    if (H5Tis_variable_str(t) > 0) {
        char why[256];
        if (kcs_h5_read_vlen_str(a, 1, mt, (size_t)64 << 20, &s, why, sizeof why) != 0)
            goto out_mt;
    } else {
        size_t n = H5Tget_size(t);
        if (n > ((size_t)64 << 20))
            goto out_mt; /* texts are capped at 64 MiB, like the reader's */
        s = calloc(n + 1, 1);
        if (!s || H5Aread(a, mt, s) < 0) {
            free(s);
            s = NULL;
            goto out_mt;
        }
        if (H5Tget_strpad(t) == H5T_STR_SPACEPAD)
            while (n > 0 && s[n - 1] == ' ')
                s[--n] = '\0';
    }
    if (s) {
        *value_p = s;
        rc = 0;
    }
out_mt:
    H5Tclose(mt);
out:
    H5Tclose(t);
    H5Aclose(a);
    return rc;
}

int kcs_h5_get_i64(hid_t loc, const char *name, int64_t *value_p)
{
    hid_t a, t;
    int rc = open_scalar(loc, name, H5T_INTEGER, &a, &t);
    if (rc < 0)
        return rc;
    int64_t v;
    rc = H5Aread(a, H5T_NATIVE_INT64, &v) < 0 ? -1 : 0;
    H5Tclose(t);
    H5Aclose(a);
    if (rc == 0)
        *value_p = v;
    return rc;
}

int kcs_h5_put_identity(hid_t file, const char *path, const char *created, const char *content,
                        const char *command_line, kcs_error *err)
{
    const char *names[] = {"schema",  "software",     "software_version", "git_hash",
                           "created", "command_line", "content"};
    const char *values[] = {"kcs",   "kcs",   KCS_VERSION, KCS_GIT_HASH,
                            created, command_line ? command_line : "", content};
    size_t n = sizeof names / sizeof names[0] - (content ? 0 : 1);
    for (size_t i = 0; i < n; i++)
        if (kcs_h5_put_str(file, names[i], values[i]) < 0)
            return kcs_h5_fail(err, KCS_E_IO, path, "/", "cannot write attribute %s", names[i]);
    if (kcs_h5_put_i32(file, "schema_version", KCS_SCHEMA_VERSION) < 0)
        return kcs_h5_fail(err, KCS_E_IO, path, "/", "cannot write attribute schema_version");
    return 0;
}

void kcs_h5_now_utc(char buf[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
