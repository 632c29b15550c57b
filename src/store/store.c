/* The parallel HDF5 writer of the kcs dataset (schema version 2, DESIGN §5).
 * Every rank creates every object in the same order (metadata operations
 * are collective: H5Pset_all_coll_metadata_ops, H5Pset_coll_metadata_write)
 * and every data transfer is collective (H5FD_MPIO_COLLECTIVE); a table
 * written by one rank is written with the other ranks selecting nothing.
 * After each step the ranks agree on the outcome (one MPI_Allreduce), so a
 * failure on one rank fails the call on every rank with that rank's message
 * and nobody is left waiting in a collective call. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "grow.h"
#include "store_verify.h"
#include "store_writer.h"

/* Rank 0's string, on every rank (malloc'd; NULL if out of memory, after
 * taking part in every broadcast all the same). */
static char *bcast_str(MPI_Comm comm, int rank, const char *s)
{
    const char *src = s ? s : "";
    long long len = rank == 0 ? (long long)strlen(src) : 0;
    MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, comm);
    char *out = malloc((size_t)len + 1);
    char chunk[4096];
    for (long long off = 0; off < len; off += (long long)sizeof chunk) {
        long long n = len - off < (long long)sizeof chunk ? len - off : (long long)sizeof chunk;
        if (rank == 0)
            memcpy(chunk, src + off, (size_t)n);
        MPI_Bcast(chunk, (int)n, MPI_CHAR, 0, comm);
        if (out)
            memcpy(out + off, chunk, (size_t)n);
    }
    if (out)
        out[len] = '\0';
    return out;
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

/* Local checks of meta; no communication. */
static int check_meta(const char *path, const kcs_store_meta *m, int size, kcs_error *err)
{
    if (!path || !path[0] || !m || !m->study || !m->plan)
        return kcs_fail(err, KCS_E_INTERNAL, "store: missing path, study or plan");
    if (m->n_ranks != size)
        return kcs_fail(err, KCS_E_INTERNAL, "%s: n_ranks %d differs from the communicator size %d",
                        path, m->n_ranks, size);
    if (m->n_samples < 0 || m->plan->n_cases < 0 || m->plan->max_trials < 0 ||
        (m->plan->n_cases > 0 && !m->plan->cases))
        return kcs_fail(err, KCS_E_INTERNAL, "%s: invalid plan sizes", path);
    for (int i = 0; i < m->study->n_contracts; i++) {
        const kcs_contract *c = m->study->contracts[i];
        if (!c || !c->id[0] || strchr(c->id, '/') || !strcmp(c->id, ".") || !strcmp(c->id, ".."))
            return kcs_fail(err, KCS_E_INVAL, "%s: contract %d has no usable id", path, i);
    }
    return 0;
}

/* Every rank must describe the same study; a difference would make the
 * collective object creation diverge. */
static int check_same(MPI_Comm comm, const char *path, const kcs_store_meta *m, kcs_error *err)
{
    uint64_t h = fnv(1469598103934665603ull, m->study->name);
    int64_t text_len = 0;
    for (int i = 0; i < m->study->n_contracts; i++) {
        h = fnv(h, m->study->contracts[i]->id);
        text_len +=
            (int64_t)strlen(m->study->contracts[i]->text ? m->study->contracts[i]->text : "");
    }
    enum { N = 10 };
    int64_t v[N] = {m->n_ranks,
                    m->n_samples,
                    m->plan->n_cases,
                    m->plan->max_trials,
                    (int64_t)(m->plan->hash >> 32),
                    (int64_t)(m->plan->hash & 0xffffffffu),
                    (int64_t)strlen(m->study->text ? m->study->text : ""),
                    m->study->n_contracts,
                    text_len,
                    (int64_t)(h >> 33)};
    int64_t both[2 * N], red[2 * N];
    for (int i = 0; i < N; i++) {
        both[i] = v[i];
        both[N + i] = -v[i];
    }
    MPI_Allreduce(both, red, 2 * N, MPI_INT64_T, MPI_MIN, comm);
    for (int i = 0; i < N; i++)
        if (red[i] != -red[N + i])
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: the ranks disagree on the study or plan (item %d); "
                            "every rank must load the same study",
                            path, i);
    return 0;
}

/* Close every handle; -1 if HDF5 reported a failure (the file close is
 * the one that flushes). Collective. */
static int close_all(kcs_store *st)
{
    int bad = 0;
    hid_t *objs[] = {&st->samples, &st->results, &st->cases, &st->ranks};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
        if (*objs[i] >= 0 && H5Oclose(*objs[i]) < 0)
            bad = -1;
        *objs[i] = -1;
    }
    hid_t *types[] = {&st->result_t, &st->case_t, &st->rank_t};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (*types[i] >= 0)
            H5Tclose(*types[i]);
        *types[i] = -1;
    }
    if (st->dxpl >= 0)
        H5Pclose(st->dxpl);
    st->dxpl = -1;
    if (st->file >= 0 && H5Fclose(st->file) < 0)
        bad = -1;
    st->file = -1;
    return bad;
}

static void free_store(kcs_store *st)
{
    if (st->comm != MPI_COMM_NULL)
        MPI_Comm_free(&st->comm);
    KCS_FREE(st->path, st->case_ids, st->rows, st->nan_row);
    kcs_store_batch_free(st);
    free(st);
}

static int open_file(kcs_store *st, kcs_error *err)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int rc = 0;
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, st->comm, MPI_INFO_NULL) < 0 ||
        H5Pset_all_coll_metadata_ops(fapl, 1) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, NULL, "cannot set up parallel HDF5 access");
    else if ((st->file = H5Fcreate(st->path, H5F_ACC_EXCL, H5P_DEFAULT, fapl)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, NULL, "cannot create the HDF5 file");
    if (fapl >= 0)
        H5Pclose(fapl);
    if (rc)
        return rc;
    st->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (st->dxpl < 0 || H5Pset_dxpl_mpio(st->dxpl, H5FD_MPIO_COLLECTIVE) < 0)
        return kcs_h5_fail(err, KCS_E_IO, st->path, NULL, "cannot set collective transfers");
    st->result_t = kcs_h5_result_type();
    st->case_t = kcs_h5_case_type();
    st->rank_t = kcs_h5_rank_type();
    if (st->result_t < 0 || st->case_t < 0 || st->rank_t < 0)
        return kcs_h5_fail(err, KCS_E_INTERNAL, st->path, NULL, "cannot build the record types");
    return 0;
}

static int alloc_store(const char *path, MPI_Comm comm, const kcs_store_meta *m, kcs_store **st_p,
                       kcs_error *err)
{
    kcs_store *st = calloc(1, sizeof *st);
    if (!st)
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    *st_p = st; /* freed by the caller, also on failure */
    st->comm = MPI_COMM_NULL;
    st->file = st->dxpl = st->results = st->cases = st->ranks = st->samples = -1;
    st->result_t = st->case_t = st->rank_t = -1;
    MPI_Comm_rank(comm, &st->rank);
    MPI_Comm_size(comm, &st->size);
    st->n_cases = m->plan->n_cases;
    st->max_trials = m->plan->max_trials;
    st->n_samples = m->n_samples;
    st->path = strdup(path);
    st->case_ids = malloc(sizeof *st->case_ids * (size_t)(st->n_cases + 1));
    st->rows = calloc((size_t)st->max_trials + 1, sizeof *st->rows);
    st->nan_row = malloc(sizeof *st->nan_row * ((size_t)st->n_samples + 1));
    if (!st->path || !st->case_ids || !st->rows || !st->nan_row)
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    for (int64_t i = 0; i < st->n_cases; i++)
        st->case_ids[i] = m->plan->cases[i].id;
    for (int i = 0; i < st->n_samples; i++)
        st->nan_row[i] = NAN;
    return 0;
}

int kcs_store_create(const char *path, MPI_Comm comm, const kcs_store_meta *meta, kcs_store **st_p,
                     kcs_error *err)
{
    kcs_h5_quiet();
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    kcs_store *st = NULL;
    char *s[4] = {NULL, NULL, NULL, NULL};
    int rc = check_meta(path, meta, size, err);
    if (!rc)
        rc = alloc_store(path, comm, meta, &st, err);
    if (!rc && rank == 0 && access(path, F_OK) == 0)
        rc = kcs_fail(err, KCS_E_EXISTS, "%s: exists; refusing to overwrite", path);
    if ((rc = kcs_store_agree_comm(comm, rc, err)) || (rc = check_same(comm, path, meta, err)))
        goto out_free;

    /* strings that must be identical on all ranks: rank 0's */
    char created[32] = "", mpiv[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    if (rank == 0) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
        int len = 0;
        MPI_Get_library_version(mpiv, &len);
        mpiv[strcspn(mpiv, "\n,")] = '\0';
    }
    s[0] = bcast_str(comm, rank, created);
    s[1] = bcast_str(comm, rank, meta->command_line);
    s[2] = bcast_str(comm, rank, meta->backends);
    s[3] = bcast_str(comm, rank, mpiv);
    rc = (!s[0] || !s[1] || !s[2] || !s[3]) ? kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path)
                                            : 0;
    MPI_Comm_dup(comm, &st->comm);
    if ((rc = kcs_store_agree_comm(comm, rc, err)))
        goto out_free;

    rc = kcs_store_agree(st, open_file(st, err), err);
    int created_file = st->file >= 0;
    if (!rc)
        rc = kcs_store_agree(st, kcs_store_create_layout(st, meta, s, err), err);
    if (!rc)
        rc = kcs_store_batch_init(st, err);
    if (rc) {
        close_all(st);
        MPI_Barrier(st->comm);
        if (created_file && rank == 0)
            remove(path);
        goto out_free;
    }
    for (int i = 0; i < 4; i++)
        free(s[i]);
    *st_p = st;
    return 0;
out_free:
    for (int i = 0; i < 4; i++)
        free(s[i]);
    if (st)
        free_store(st);
    return rc;
}

int kcs_store_write_ranks(kcs_store *st, const kcs_rank_rec *mine, kcs_error *err)
{
    kcs_rank_rec rec, *all = NULL;
    memset(&rec, 0, sizeof rec);
    int rc = 0;
    if (!mine)
        rc = kcs_fail(err, KCS_E_INTERNAL, "%s: /provenance/ranks: no record", st->path);
    else
        memcpy(&rec, mine, sizeof rec);
    rec.rank = st->rank;
    if (st->rank == 0 && !(all = calloc((size_t)st->size, sizeof *all)))
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", st->path);
    if ((rc = kcs_store_agree(st, rc, err)))
        goto out;
    MPI_Gather(&rec, (int)sizeof rec, MPI_BYTE, all, (int)sizeof rec, MPI_BYTE, 0, st->comm);
    if (all) {
        int nf;
        const kcs_field *f = kcs_store_rank_fields(&nf);
        kcs_fields_terminate(f, nf, all, sizeof *all, (size_t)st->size);
    }
    rc = kcs_store_agree(st,
                  kcs_store_write_whole(st, st->ranks, st->rank_t, st->rank == 0, all,
                                        "/provenance/ranks", err),
                  err);
out:
    free(all);
    return rc;
}

int kcs_store_write_cases(kcs_store *st, const kcs_case_rec *recs, kcs_error *err)
{
    int rc = 0;
    if (st->rank == 0) {
        if (!recs && st->n_cases > 0)
            rc = kcs_fail(err, KCS_E_INTERNAL, "%s: /cases: no records", st->path);
        for (int64_t i = 0; !rc && i < st->n_cases; i++)
            if (recs[i].case_id != st->case_ids[i])
                rc = kcs_fail(err, KCS_E_INTERNAL,
                              "%s: /cases: row %" PRId64 " has case_id %" PRId64
                              ", the plan says %" PRId64,
                              st->path, i, recs[i].case_id, st->case_ids[i]);
    }
    if ((rc = kcs_store_agree(st, rc, err)))
        return rc;
    return kcs_store_agree(
        st, kcs_store_write_whole(st, st->cases, st->case_t, st->rank == 0, recs, "/cases", err),
        err);
}

int kcs_store_close(kcs_store *st, kcs_error *err)
{
    if (!st)
        return 0;
    int rc = kcs_store_flush(st, err); /* the last batch */
    if (rc) {
        kcs_store_abort(st);
        return rc;
    }
    hid_t a = H5Aopen(st->file, "complete", H5P_DEFAULT);
    int32_t one = 1;
    if (a < 0 || H5Awrite(a, H5T_NATIVE_INT32, &one) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/", "cannot set attribute complete");
    if (a >= 0 && H5Aclose(a) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, "/", "cannot set attribute complete");
    rc = kcs_store_agree(st, rc, err);
    if (close_all(st) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, st->path, NULL, "closing the file failed");
    rc = kcs_store_agree(st, rc, err);
    free_store(st);
    return rc;
}

void kcs_store_abort(kcs_store *st)
{
    if (!st)
        return;
    close_all(st);
    H5Eclear2(H5E_DEFAULT);
    free_store(st);
}
