/* Space reservation and read-back verification of a run's dataset
 * (store_verify.h). */
#define _GNU_SOURCE

#include "store_verify.h"
#include "store_digest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "agree.h"
#include "store_readback.h"
#include "store_h5.h"
#include "store_read.h"
#include "store_writer.h"

uint64_t kcs_store_rows_digest(const kcs_result_rec *rows, int n_rows, const double *samples,
                               int n_samples)
{
    int nf;
    const kcs_field *f = kcs_store_result_fields(&nf);
    XXH3_state_t state, *st = &state;
    XXH3_INITSTATE(st);
    XXH3_64bits_reset(st);
    for (int r = 0; r < n_rows; r++) {
        const char *base = (const char *)&rows[r];
        for (int i = 0; i < nf; i++) {
            const char *p = base + f[i].offset;
            if (f[i].kind == KCS_FIELD_STR) {
                size_t n = strnlen(p, f[i].size);
                XXH3_64bits_update(st, p, n);
                XXH3_64bits_update(st, "", 1);
            } else {
                XXH3_64bits_update(st, p, f[i].size);
            }
        }
    }
    if (samples && n_samples > 0)
        XXH3_64bits_update(st, samples, (size_t)n_samples * sizeof *samples);
    return XXH3_64bits_digest(st);
}

void kcs_store_record_digests(kcs_store *st, uint64_t *digests)
{
    if (st)
        st->digests = digests;
}

int64_t kcs_store_size_estimate(const kcs_store_meta *m)
{
    const int64_t rec = (int64_t)sizeof(kcs_result_rec);
    int64_t cases = m->plan->n_cases, ranks = m->n_ranks, T = m->plan->max_trials;
    /* /results: whole chunks (store_layout.c: whole cases, about 256 KiB,
     * at most the table), allocated early: the last one past the end too */
    int64_t per_case = ranks * T, total = cases * per_case, chunk = per_case;
    int64_t target = (256 << 10) / rec;
    if (chunk > 0 && chunk < target)
        chunk *= target / chunk;
    if (chunk > ((int64_t)1 << 20))
        chunk = (int64_t)1 << 20;
    if (chunk > total)
        chunk = total;
    int64_t bytes = chunk > 0 ? (total + chunk - 1) / chunk * chunk * rec : 0;
    bytes += cases * ranks * (int64_t)m->n_samples * 8; /* /samples */
    bytes += cases * (int64_t)sizeof(kcs_case_rec) + ranks * (int64_t)sizeof(kcs_rank_rec);
    bytes += cases * 2048; /* a dataset's object header, link and name per case */
    int64_t text = (int64_t)strlen(m->study->text ? m->study->text : "");
    for (int i = 0; i < m->study->n_contracts; i++)
        text += (int64_t)strlen(m->study->contracts[i]->text ? m->study->contracts[i]->text : "") +
                1024;
    text += (int64_t)strlen(m->command_line ? m->command_line : "");
    text += (int64_t)strlen(m->order ? m->order : ""); /* /provenance/order */
    bytes += 2 * text + (64 << 10); /* superblock, groups, attributes, B-trees */
    return bytes + bytes / 8;
}

int kcs_store_reserve(const char *path, int64_t bytes, kcs_error *err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot open to reserve space: %s", path,
                        strerror(errno));
    int rc = 0;
    if (fallocate(fd, 0, 0, (off_t)bytes) != 0) {
        if (errno == ENOSPC || errno == EDQUOT)
            rc = kcs_fail(err, KCS_E_IO,
                          "%s: not enough space for the dataset (%" PRId64 " bytes reserved "
                          "before writing): %s",
                          path, bytes, strerror(errno));
        else if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot reserve %" PRId64 " bytes: %s", path, bytes,
                          strerror(errno));
        /* else: no fallocate on this file system; the read-back still checks */
    }
    close(fd);
    return rc;
}

/* Rank 0: fsync, end of allocation against the size, trim the reservation. */
static int check_file(const char *path, kcs_error *err)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot reopen the closed dataset: %s", path,
                        strerror(errno));
    int rc = 0;
    struct stat sb;
    hid_t fapl = -1, f = -1;
    haddr_t eoa = 0;
    if (fsync(fd) != 0) {
        rc = kcs_fail(err, KCS_E_IO, "%s: fsync failed: %s", path, strerror(errno));
        goto out;
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0
#if H5_VERSION_GE(1, 10, 7)
        || H5Pset_file_locking(fapl, 0, 1) < 0
#endif
    ) {
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot set up file access");
        goto out;
    }
    if ((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL,
                         "the dataset written does not open (damaged superblock or metadata)");
        goto out;
    }
    if (H5Fget_eoa(f, &eoa) < 0) {
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot read the end of allocation");
        goto out;
    }
    if (fstat(fd, &sb) != 0) {
        rc = kcs_fail(err, KCS_E_IO, "%s: %s", path, strerror(errno));
        goto out;
    }
    if ((uint64_t)sb.st_size < (uint64_t)eoa) {
        rc = kcs_fail(err, KCS_E_IO,
                      "%s: truncated: %lld bytes on disk, HDF5 allocated %llu (writes were lost)",
                      path, (long long)sb.st_size, (unsigned long long)eoa);
        goto out;
    }
    if ((uint64_t)sb.st_size > (uint64_t)eoa &&
        (ftruncate(fd, (off_t)eoa) != 0 || fsync(fd) != 0))
        rc = kcs_fail(err, KCS_E_IO, "%s: cannot trim the reserved space: %s", path,
                      strerror(errno));
    if (f >= 0 && H5Fclose(f) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot close");
    f = -1;
    /* the raw groups' digests and checksums: written once, verified by
     * every reader (rank 0's read-back of the rows recomputes them) */
    if (!rc && (rc = kcs_store_seal(path, err))) {
        char why[KCS_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        rc = kcs_fail(err, KCS_E_IO, "the dataset written does not read back: %.900s", why);
    }
out:
    if (f >= 0 && H5Fclose(f) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot close");
    if (fapl >= 0)
        H5Pclose(fapl);
    H5Eclear2(H5E_DEFAULT);
    close(fd);
    return rc;
}

/* Every rank: its own rows and samples of every case. */
static int check_rows(const kcs_readback_spec *sp, kcs_readback_tick tick, void *ctx,
                      kcs_error *err)
{
    const char *path = sp->path;
    kcs_store_reader *r = NULL;
    int rc = kcs_store_open_read_flags(path, sp->rank == 0 ? 0 : KCS_READ_NO_DIGESTS, &r, err);
    if (rc) {
        char why[KCS_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        return kcs_fail(err, KCS_E_IO, "the dataset written does not read back: %.900s", why);
    }
    tick(ctx);
    const kcs_store_info *in = kcs_store_reader_info(r);
    if (!in->complete || in->n_ranks != sp->n_ranks || in->n_cases != sp->n_cases ||
        in->max_trials != sp->max_trials || in->n_samples != sp->n_samples ||
        strcmp(in->plan_hash, sp->plan_hash) != 0) {
        rc = kcs_fail(err, KCS_E_IO,
                      "%s: read back as complete=%d, %d ranks, %" PRId64 " cases, %d trials, %d "
                      "samples, plan %s; written: %d ranks, %" PRId64 " cases, %d trials, %d "
                      "samples, plan %s",
                      path, in->complete, in->n_ranks, in->n_cases, in->max_trials, in->n_samples,
                      in->plan_hash, sp->n_ranks, sp->n_cases, sp->max_trials, sp->n_samples,
                      sp->plan_hash);
        goto out;
    }
    int T = sp->max_trials, ns = sp->n_samples, rank = sp->rank;
    kcs_result_rec *rows = calloc((size_t)T + 1, sizeof *rows);
    double *samples = malloc(((size_t)sp->n_ranks * (size_t)ns + 1) * sizeof *samples);
    if (!rows || !samples) {
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory verifying", path);
        goto out_free;
    }
    for (int64_t ci = 0; ci < sp->n_cases && !rc; ci++) {
        int64_t row0 = (ci * sp->n_ranks + rank) * T;
        int found = 1;
        if (T > 0 && (rc = kcs_store_read_results(r, row0, T, rows, err)))
            break;
        if (ns > 0 && (rc = kcs_store_read_samples(r, sp->case_ids[ci], samples, &found, err)))
            break;
        if (!found) {
            rc = kcs_fail(err, KCS_E_IO, "%s: /samples/%" PRId64 " is missing", path,
                          sp->case_ids[ci]);
            break;
        }
        uint64_t d = kcs_store_rows_digest(rows, T, samples + (size_t)rank * (size_t)ns, ns);
        if (d != sp->digests[ci])
            rc = kcs_fail(err, KCS_E_IO,
                          "%s: case %" PRId64 " (rank %d) reads back different from what was "
                          "written and journaled (digest %016" PRIx64 " vs %016" PRIx64 ")",
                          path, sp->case_ids[ci], rank, d, sp->digests[ci]);
        tick(ctx);
    }
    if (rc && err->code != KCS_E_NOMEM)
        err->code = rc = KCS_E_IO;
out_free:
    free(rows);
    free(samples);
out:
    kcs_store_reader_close(r);
    return rc;
}

static void no_tick(void *ctx)
{
    (void)ctx;
}

int kcs_store_check(const kcs_readback_spec *sp, kcs_readback_tick tick, void *ctx,
                    kcs_error *err)
{
    if (!tick)
        tick = no_tick;
    if (sp->mode == KCS_READBACK_FILE)
        return check_file(sp->path, err);
    if (sp->mode == KCS_READBACK_BOTH) {
        int rc = check_file(sp->path, err);
        if (rc)
            return rc;
        tick(ctx);
    }
    return check_rows(sp, tick, ctx, err);
}

/* One step of the read-back: in a process of its own when exe is given. */
static int check_step(const kcs_readback_spec *sp, const char *exe, kcs_error *err)
{
    if (exe)
        return kcs_readback_spawn(exe, sp, kcs_readback_stall_s(), err);
    return kcs_store_check(sp, NULL, NULL, err);
}

int kcs_store_verify(const char *path, MPI_Comm comm, const kcs_store_meta *m,
                     const uint64_t *digests, const char *exe, kcs_error *err)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    kcs_h5_quiet();
    int64_t n = m->plan->n_cases;
    int64_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
    int rc = ids ? 0 : kcs_fail(err, KCS_E_NOMEM, "%s: out of memory verifying", path);
    for (int64_t ci = 0; ids && ci < n; ci++)
        ids[ci] = m->plan->cases[ci].id;
    kcs_readback_spec sp = {.path = path, .mode = KCS_READBACK_FILE, .rank = rank,
                            .n_ranks = m->n_ranks, .max_trials = m->plan->max_trials,
                            .n_samples = m->n_samples, .n_cases = n, .case_ids = ids,
                            .digests = digests};
    snprintf(sp.plan_hash, sizeof sp.plan_hash, "%016" PRIx64, m->plan->hash);
    if (!rc && size == 1) { /* the same two steps, in one read-back process */
        sp.mode = KCS_READBACK_BOTH;
        rc = check_step(&sp, exe, err);
        free(ids);
        return rc;
    }
    if (!rc && rank == 0)
        rc = check_step(&sp, exe, err);
    if (!(rc = kcs_agree(comm, rc, err))) {
        sp.mode = KCS_READBACK_ROWS;
        rc = check_step(&sp, exe, err);
        rc = kcs_agree(comm, rc, err);
    }
    free(ids);
    return rc;
}
