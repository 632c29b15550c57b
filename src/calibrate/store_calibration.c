/* The calibration file of `kcs calibrate -o`: a new serial HDF5 file with
 * the root attributes of every kcs file (schema, software, version, git
 * hash, created, content = "calibration", command_line) and the compound
 * datasets /calibration (three states per contract) and, with --cross,
 * /calibration_cross (every bad implementation under every contract in
 * scope), rows of kcs_calib_row (calibrate.h). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "calibrate.h"
#include "store.h"
#include "store_h5.h"

static int write_table(hid_t file, const char *path, const char *name, const kcs_calib_row *rows,
                       int n, kcs_error *err)
{
    int nf;
    const kcs_field *f = kcs_calib_row_fields(&nf);
    hid_t t = kcs_h5_compound(f, nf, sizeof *rows);
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL), d = -1;
    int rc = 0;
    if (t < 0 || sp < 0)
        rc = kcs_h5_fail(err, KCS_E_INTERNAL, path, name, "cannot build the record type");
    else if ((d = H5Dcreate2(file, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, name, "cannot create");
    else if (n > 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, name, "write failed");
    if (d >= 0 && H5Dclose(d) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, path, name, "cannot close");
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

static int write_root(hid_t file, const char *path, const char *command_line, kcs_error *err)
{
    char created[32];
    kcs_h5_now_utc(created);
    return kcs_h5_put_identity(file, path, created, "calibration", command_line, err);
}

int kcs_store_calibration_write(const char *path, const kcs_calib_row *rows, int n_rows,
                                const kcs_calib_row *cross, int n_cross, const char *command_line,
                                kcs_error *err)
{
    kcs_h5_quiet();
    if (access(path, F_OK) == 0)
        return kcs_fail(err, KCS_E_EXISTS, "%s: exists; refusing to overwrite", path);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file = -1;
    int rc = 0;
    if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot set up file access");
    else if ((file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, tmp, NULL, "cannot create");
    if (fapl >= 0)
        H5Pclose(fapl);
    if (!rc)
        rc = write_root(file, path, command_line, err);
    if (!rc)
        rc = write_table(file, path, "/calibration", rows, n_rows, err);
    if (!rc && cross && n_cross > 0)
        rc = write_table(file, path, "/calibration_cross", cross, n_cross, err);
    if (file >= 0 && H5Fclose(file) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, tmp, NULL, "closing the file failed");
    /* link() never replaces: a file that appeared meanwhile is kept */
    if (!rc && link(tmp, path) != 0)
        rc = errno == EEXIST
                 ? kcs_fail(err, KCS_E_EXISTS, "%s: appeared while writing; refusing to "
                                               "overwrite", path)
                 : kcs_fail(err, KCS_E_IO, "%s: cannot put %s in place: %s", path, tmp,
                            strerror(errno));
    if (file >= 0)
        remove(tmp);
    return rc;
}
