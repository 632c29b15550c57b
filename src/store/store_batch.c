/* Batched writes of /results and /samples (issue #19, item 4).
 *
 * A case's rows used to be one collective H5Dwrite (plus the agreement
 * around it) per case, and each collective costs every rank a round of
 * messages: with more ranks than cores (or short cases) the store's time
 * was its collectives, not its bytes. Now kcs_store_write_case_results
 * copies a case into a buffer of consecutive cases and kcs_store_flush
 * writes the whole batch: one collective H5Dwrite of a strided selection
 * of /results (this rank's max_trials rows of each case) and one of
 * /samples (this rank's row of each case); the ranks agree once per batch.
 * Schema 2's single /samples dataset is part of the same change: schema 1's
 * dataset per case cost ~20 us of HDF5 metadata per case and rank (create
 * and close), more than the bytes of the whole store.
 *
 * The flush schedule depends only on the sequence of case indices, which
 * every rank passes alike (the call is collective), so every rank flushes
 * at the same calls. Durability is not the store's: the runner journals
 * each case (fsync) before handing it over, and a killed run rebuilds the
 * file from the journals. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "store_verify.h"
#include "store_writer.h"

#define BATCH_BYTES_DEFAULT ((long long)16 << 20)

/* A positive integer from the environment, or dflt. */
static long long env_pos(const char *name, long long dflt)
{
    const char *v = getenv(name);
    if (!v || !v[0])
        return dflt;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    return end && *end == '\0' && x > 0 ? x : dflt;
}

int kcs_store_batch_init(kcs_store *st, kcs_error *err)
{
    long long cap = 0;
    if (st->rank == 0) {
        size_t per_case = (size_t)st->max_trials * sizeof(kcs_result_rec) +
                          (size_t)st->n_samples * sizeof(double);
        long long bytes = env_pos("KCS_STORE_BATCH_BYTES", BATCH_BYTES_DEFAULT);
        cap = per_case > 0 ? bytes / (long long)per_case : bytes;
        cap = env_pos("KCS_STORE_BATCH_CASES", cap);
    }
    MPI_Bcast(&cap, 1, MPI_LONG_LONG, 0, st->comm);
    if (cap > st->n_cases)
        cap = st->n_cases;
    if (cap > (1 << 30))
        cap = 1 << 30;
    if (cap < 1)
        cap = 1;
    st->batch_cap = (int)cap;
    st->batch_n = 0;
    st->batch_first = 0;
    st->batch_rows = calloc((size_t)cap * (size_t)st->max_trials + 1, sizeof *st->batch_rows);
    st->batch_samples = malloc(((size_t)cap * (size_t)st->n_samples + 1) * sizeof(double));
    int rc = 0;
    if (!st->batch_rows || !st->batch_samples)
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory for a batch of %lld cases", st->path,
                      cap);
    return kcs_store_agree(st, rc, err);
}

void kcs_store_batch_free(kcs_store *st)
{
    free(st->batch_rows);
    free(st->batch_samples);
    st->batch_rows = NULL;
    st->batch_samples = NULL;
    st->batch_n = 0;
}

/* This rank's max_trials rows of a case into rows[]: the caller's, then
 * "skipped". */
static void fill_rows(kcs_store *st, kcs_result_rec *rows, int64_t case_idx,
                      const kcs_result_rec *recs, int n_trials)
{
    for (int t = 0; t < st->max_trials; t++) {
        kcs_result_rec *r = &rows[t];
        if (t < n_trials) {
            memcpy(r, &recs[t], sizeof *r);
        } else {
            memset(r, 0, sizeof *r);
            KCS_SET_STATUS(r->status, KCS_ST_SKIPPED);
            r->tau = r->eta = r->max_abs = r->max_rel = r->max_ulp = NAN;
            r->mean_ulp = r->backward_err = r->max_scaled = r->effective_acc_bits = NAN;
        }
        r->case_id = st->case_ids[case_idx];
        r->rank = st->rank;
        r->trial = t;
    }
    int nf;
    const kcs_field *f = kcs_store_result_fields(&nf);
    kcs_fields_terminate(f, nf, rows, sizeof *rows, (size_t)st->max_trials);
}

static void note_bad_call(kcs_store *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_bad_call(kcs_store *st, int code, const char *fmt, ...)
{
    if (st->pending)
        return; /* the first one is reported */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->pending_msg, sizeof st->pending_msg, fmt, ap);
    va_end(ap);
    st->pending = code;
}

int kcs_store_write_case_results(kcs_store *st, int64_t case_idx, const kcs_result_rec *recs,
                                 int n_trials, const double *samples, kcs_error *err)
{
    if (case_idx < 0 || case_idx >= st->n_cases) {
        /* the same on every rank (case_idx is): nothing is buffered */
        note_bad_call(st, KCS_E_INTERNAL,
                      "%s: /results: case index %" PRId64 " outside [0, %" PRId64 ")", st->path,
                      case_idx, st->n_cases);
        return kcs_store_flush(st, err);
    }
    int rc = 0;
    if (st->batch_n > 0 && case_idx != st->batch_first + st->batch_n &&
        (rc = kcs_store_flush(st, err)))
        return rc;
    if (st->batch_n == 0)
        st->batch_first = case_idx;
    kcs_result_rec *rows = st->batch_rows + (size_t)st->batch_n * (size_t)st->max_trials;
    double *smp = st->batch_samples + (size_t)st->batch_n * (size_t)st->n_samples;
    st->batch_n++; /* also for a bad call: every rank keeps the same schedule */
    if (n_trials < 0 || n_trials > st->max_trials || (n_trials > 0 && !recs)) {
        note_bad_call(st, KCS_E_INTERNAL,
                      "%s: /results: %d trials for case %" PRId64 " (the plan allows %d)", st->path,
                      n_trials, case_idx, st->max_trials);
        n_trials = 0;
    }
    fill_rows(st, rows, case_idx, recs, n_trials);
    if (st->n_samples > 0)
        memcpy(smp, samples ? samples : st->nan_row, (size_t)st->n_samples * sizeof *smp);
    if (st->digests)
        st->digests[case_idx] = kcs_store_rows_digest(
            rows, st->max_trials, samples ? samples : st->nan_row, st->n_samples);
    if (st->batch_n == st->batch_cap)
        return kcs_store_flush(st, err);
    return 0;
}

/* One collective write of the batch's rows: this rank's max_trials rows of
 * each case, every size * max_trials rows of the table. */
static int write_results(kcs_store *st, kcs_error *err)
{
    if (st->max_trials == 0)
        return 0;
    hsize_t T = (hsize_t)st->max_trials, n = (hsize_t)st->batch_n;
    hsize_t start = ((hsize_t)st->batch_first * (hsize_t)st->size + (hsize_t)st->rank) * T;
    hsize_t stride = (hsize_t)st->size * T, mcount = n * T;
    int rc = 0;
    hid_t fs = H5Dget_space(st->results);
    hid_t ms = H5Screate_simple(1, &mcount, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, &stride, &n, &T) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/results", "cannot select rows");
    else if (H5Dwrite(st->results, st->result_t, ms, fs, st->dxpl, st->batch_rows) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/results", "write failed");
    KCS_H5_CLOSE(ms, fs);
    return rc;
}

/* One collective write of the batch's sample rows: [first .. first + n)
 * x [this rank] x [all samples] of /samples. */
static int write_samples(kcs_store *st, kcs_error *err)
{
    if (st->n_samples == 0)
        return 0;
    hsize_t start[3] = {(hsize_t)st->batch_first, (hsize_t)st->rank, 0};
    hsize_t count[3] = {(hsize_t)st->batch_n, 1, (hsize_t)st->n_samples};
    hsize_t mcount = count[0] * count[2];
    int rc = 0;
    hid_t fs = H5Dget_space(st->samples);
    hid_t ms = H5Screate_simple(1, &mcount, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/samples", "cannot select rows");
    else if (H5Dwrite(st->samples, H5T_NATIVE_DOUBLE, ms, fs, st->dxpl, st->batch_samples) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/samples", "write failed");
    KCS_H5_CLOSE(ms, fs);
    return rc;
}

int kcs_store_flush(kcs_store *st, kcs_error *err)
{
    if (!st)
        return 0;
    /* every rank must hold the same batch (a caller that passed different
     * cases on different ranks would make the collective calls diverge) */
    int64_t v[4] = {st->batch_first, -st->batch_first, st->batch_n, -(int64_t)st->batch_n}, m[4];
    MPI_Allreduce(v, m, 4, MPI_INT64_T, MPI_MIN, st->comm);
    int rc = 0;
    if (st->pending)
        rc = kcs_fail(err, st->pending, "%s", st->pending_msg);
    else if (st->batch_n > 0 && (m[0] != -m[1] || m[2] != -m[3]))
        rc = kcs_fail(err, KCS_E_INTERNAL,
                      "%s: the ranks wrote different cases (batches from case %" PRId64
                      " to %" PRId64 ", %" PRId64 " to %" PRId64 " cases)",
                      st->path, m[0], -m[1], m[2], -m[3]);
    st->pending = 0;
    if ((rc = kcs_store_agree(st, rc, err)) || st->batch_n == 0) {
        st->batch_n = 0;
        return rc;
    }
    rc = kcs_store_agree(st, write_results(st, err), err);
    if (!rc)
        rc = kcs_store_agree(st, write_samples(st, err), err);
    st->batch_n = 0;
    return rc;
}
