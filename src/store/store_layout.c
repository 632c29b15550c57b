/* The objects of schema version 2 (DESIGN §5), created collectively by
 * every rank in the same order: root attributes, /provenance/build,
 * /provenance/ranks, /study, /contracts/<id>, /cases, /results (chunked by
 * whole cases) and /samples. Texts are scalar fixed-length
 * strings of exactly their length (NULLPAD), since parallel HDF5 cannot
 * write variable-length data into datasets. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "build_info.h"
#include "store_describe.h"
#include "store_writer.h"

static int attr_str(kcs_store *st, hid_t loc, const char *obj, const char *name, const char *v,
                    kcs_error *err)
{
    if (kcs_h5_put_str(loc, name, v) < 0)
        return kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot write attribute %s", name);
    return 0;
}

static int attr_int(kcs_store *st, hid_t loc, const char *obj, const char *name, int64_t v,
                    int wide, kcs_error *err)
{
    int r = wide ? kcs_h5_put_i64(loc, name, v) : kcs_h5_put_i32(loc, name, (int32_t)v);
    if (r < 0)
        return kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot write attribute %s", name);
    return 0;
}

/* The description and units of every field of a table (store_describe.c). */
static int describe(kcs_store *st, hid_t dset, const char *table, const char *obj, kcs_error *err)
{
    int n = 0;
    const kcs_field *f = !strcmp(table, "results") ? kcs_store_result_fields(&n)
                         : !strcmp(table, "cases") ? kcs_store_case_fields(&n)
                                                   : kcs_store_rank_fields(&n);
    const char *missing = "";
    int r = kcs_store_describe(dset, table, f, n, &missing);
    if (r == -2)
        return kcs_fail(err, KCS_E_INTERNAL,
                        "%s: %s: field %s has no description (src/store_describe.c)", st->path,
                        obj, missing);
    if (r < 0)
        return kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot write the field descriptions");
    return 0;
}

/* Write buf to the whole of dset from one rank (writer != 0); the others
 * select nothing. Collective. */
int kcs_store_write_whole(kcs_store *st, hid_t dset, hid_t type, int writer, const void *buf,
                          const char *obj, kcs_error *err)
{
    int rc = 0;
    static const char dummy = 0;
    hid_t fs = H5Dget_space(dset);
    hid_t ms = fs >= 0 ? H5Scopy(fs) : -1;
    if (fs < 0 || ms < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot get the dataspace");
        goto out;
    }
    if (H5Sget_simple_extent_npoints(fs) == 0)
        goto out; /* an empty table: nothing to write on any rank */
    if (!writer && (H5Sselect_none(fs) < 0 || H5Sselect_none(ms) < 0)) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot select");
        goto out;
    }
    if (H5Dwrite(dset, type, ms, fs, st->dxpl, writer ? buf : &dummy) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, obj, "write failed");
out:
    KCS_H5_CLOSE(ms, fs);
    return rc;
}

/* A text as a scalar fixed-length string dataset of exactly its length
 * (NULLPAD: no terminator stored), written by rank 0. */
static int write_text(kcs_store *st, hid_t loc, const char *name, const char *obj, const char *text,
                      const char *src, kcs_error *err)
{
    int rc = 0;
    const char *t = text ? text : "";
    hid_t type = kcs_h5_str_type(strlen(t), H5T_STR_NULLPAD);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = -1;
    if (type < 0 || sp < 0 ||
        (d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot create the text dataset");
        goto out;
    }
    if (kcs_h5_put_str(d, "path", src ? src : "") < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot write attribute path");
    else
        rc = kcs_store_write_whole(st, d, type, st->rank == 0, t[0] ? t : "\0", obj, err);
out:
    if (d >= 0 && H5Dclose(d) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, obj, "cannot close");
    KCS_H5_CLOSE(sp, type);
    return rc;
}

/* A 1-D table [n] of compound type; /results is chunked, each chunk with
 * HDF5's Fletcher32 checksum (verified by HDF5 on every read). */
static hid_t make_table(kcs_store *st, const char *name, hid_t type, hsize_t n, hsize_t chunk)
{
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = -1;
    /* no fill: every row is written (and the runner's reservation reads as
     * zeros); parallel HDF5 would otherwise write the whole table at creation */
    if (sp >= 0 && dcpl >= 0 && H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
        (chunk == 0 || n == 0 ||
         (H5Pset_chunk(dcpl, 1, &chunk) >= 0 && H5Pset_fletcher32(dcpl) >= 0)))
        d = H5Dcreate2(st->file, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    hid_t es = H5Eget_current_stack(); /* keep the failure's stack past the closes */
    KCS_H5_CLOSE(dcpl, sp);
    if (es >= 0)
        H5Eset_current_stack(es);
    return d;
}

/* /samples [n_cases, n_ranks, n_samples] float64, contiguous, no fill
 * (every case's rows are written): one object for all cases, where schema
 * 1 had a dataset per case and creating them was most of the store's time. */
static hid_t make_samples(kcs_store *st)
{
    hsize_t dims[3] = {(hsize_t)st->n_cases, (hsize_t)st->size, (hsize_t)st->n_samples};
    hid_t sp = H5Screate_simple(3, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = -1;
    if (sp >= 0 && dcpl >= 0 && H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0)
        d = H5Dcreate2(st->file, "samples", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl,
                       H5P_DEFAULT);
    hid_t es = H5Eget_current_stack();
    KCS_H5_CLOSE(dcpl, sp);
    if (es >= 0)
        H5Eset_current_stack(es);
    return d;
}

/* Chunks of whole cases (a case's rows are one collective write and one
 * read of the reducer), about 256 KiB, at most the table. */
static hsize_t results_chunk(hsize_t per_case, hsize_t total)
{
    const hsize_t target = 256 * 1024 / sizeof(kcs_result_rec);
    hsize_t c = per_case;
    if (c == 0)
        return 0;
    if (c < target)
        c *= target / c;
    if (c > (hsize_t)1 << 20)
        c = (hsize_t)1 << 20;
    return c < total ? c : total;
}

int kcs_store_create_layout(kcs_store *st, const kcs_store_meta *m, char *const *s, kcs_error *err)
{
    const kcs_study *study = m->study;
    char hash[32], h5v[32];
    snprintf(hash, sizeof hash, "%016" PRIx64, m->plan->hash);
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    snprintf(h5v, sizeof h5v, "%u.%u.%u", maj, min, rel);
    hid_t f = st->file;
    int rc = 0;
    if ((rc = kcs_h5_put_identity(f, st->path, s[0], NULL, s[1], err)) ||
        (rc = attr_str(st, f, "/", "study_name", study->name, err)) ||
        (rc = attr_str(st, f, "/", "plan_hash", hash, err)) ||
        (rc = attr_int(st, f, "/", "n_ranks", st->size, 0, err)) ||
        (rc = attr_int(st, f, "/", "n_cases", st->n_cases, 1, err)) ||
        (rc = attr_int(st, f, "/", "max_trials", st->max_trials, 0, err)) ||
        (rc = attr_int(st, f, "/", "n_samples", st->n_samples, 0, err)) ||
        (rc = attr_int(st, f, "/", "complete", 0, 0, err)))
        return rc;

    hid_t prov = H5Gcreate2(f, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t build = prov >= 0 ? H5Gcreate2(prov, "build", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (build < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/provenance/build", "cannot create");
        goto out_groups;
    }
    const char *b = "/provenance/build";
    if ((rc = attr_str(st, build, b, "compiler", KCS_COMPILER, err)) ||
        (rc = attr_str(st, build, b, "flags", KCS_C_FLAGS, err)) ||
        (rc = attr_str(st, build, b, "hdf5", KCS_HDF5_VERSION, err)) ||
        (rc = attr_str(st, build, b, "hdf5_runtime", h5v, err)) ||
        (rc = attr_str(st, build, b, "mpi", KCS_MPI_VERSION, err)) ||
        (rc = attr_str(st, build, b, "mpi_runtime", s[3], err)) ||
        (rc = attr_str(st, build, b, "blas", KCS_BLAS, err)) ||
        (rc = attr_str(st, build, b, "backends", s[2], err)))
        goto out_groups;
    if ((st->ranks = make_table(st, "/provenance/ranks", st->rank_t, (hsize_t)st->size, 0)) < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/provenance/ranks", "cannot create");
        goto out_groups;
    }
    if ((rc = describe(st, st->ranks, "ranks", "/provenance/ranks", err)))
        goto out_groups;
    if (m->order && (rc = write_text(st, prov, "order", "/provenance/order", m->order,
                                     "kcs probe --order (record_order: true)", err)))
        goto out_groups;
    if ((rc = write_text(st, f, "study", "/study", study->text, study->path, err)))
        goto out_groups;
    hid_t cg = H5Gcreate2(f, "contracts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (cg < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/contracts", "cannot create");
        goto out_groups;
    }
    for (int i = 0; i < study->n_contracts && !rc; i++) {
        char obj[64];
        snprintf(obj, sizeof obj, "/contracts/%s", study->contracts[i]->id);
        rc = write_text(st, cg, study->contracts[i]->id, obj, study->contracts[i]->text,
                        study->contracts[i]->path, err);
    }
    H5Gclose(cg);
    if (rc)
        goto out_groups;
    hsize_t per_case = (hsize_t)st->size * (hsize_t)st->max_trials;
    hsize_t total = (hsize_t)st->n_cases * per_case;
    if ((st->cases = make_table(st, "/cases", st->case_t, (hsize_t)st->n_cases, 0)) < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/cases", "cannot create");
        goto out_groups;
    }
    if ((rc = describe(st, st->cases, "cases", "/cases", err)))
        goto out_groups;
    if (kcs_store_describe_held_out(st->cases, m->plan) < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/cases", "cannot write the held-out cases");
        goto out_groups;
    }
    st->results = make_table(st, "/results", st->result_t, total, results_chunk(per_case, total));
    if (st->results < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/results", "cannot create");
        goto out_groups;
    }
    if ((rc = describe(st, st->results, "results", "/results", err)))
        goto out_groups;
    st->samples = make_samples(st);
    if (st->samples < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/samples", "cannot create");
    else if (kcs_store_describe_samples(st->samples) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/samples", "cannot write its description");
out_groups:
    KCS_H5_CLOSE(build, prov);
    return rc;
}
