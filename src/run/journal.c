#include "journal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* 3: the rank's state, the run's options and result rows that carry the
 * whole message; 1 and 2 (older kcs) are refused with the way out */
#define JOURNAL_MAGIC "KCSJRNL3"
#define JOURNAL_MAGIC_V1 "KCSJRNL1"
#define JOURNAL_MAGIC_V2 "KCSJRNL2"
#define RECORD_MAGIC 0x4B43535243415346ull /* "KCSRCASF": format 3 */
#define WHY_LEN 256

void kcs_journal_dir(const char *out_path, char *buf, size_t len)
{
    snprintf(buf, len, "%s.journal", out_path);
}

void kcs_journal_file(const char *out_path, int rank, char *buf, size_t len)
{
    snprintf(buf, len, "%s.journal/rank-%d.kj", out_path, rank);
}

static int durable(FILE *f)
{
    return fflush(f) == 0 && fsync(fileno(f)) == 0;
}

int kcs_journal_create(kcs_journal *j, const char *out_path, const kcs_journal_header *h,
                       kcs_error *err)
{
    memset(j, 0, sizeof *j);
    char dir[4096];
    kcs_journal_dir(out_path, dir, sizeof dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create the journal directory: %s", dir,
                        strerror(errno));
    kcs_journal_file(out_path, h->rank, j->path, sizeof j->path);
    j->f = fopen(j->path, "wb");
    if (!j->f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create: %s", j->path, strerror(errno));
    j->h = *h;
    uint64_t sum = XXH3_64bits(h, sizeof *h);
    if (fwrite(JOURNAL_MAGIC, 8, 1, j->f) != 1 || fwrite(h, sizeof *h, 1, j->f) != 1 ||
        fwrite(&sum, sizeof sum, 1, j->f) != 1 || !durable(j->f)) {
        int e = errno;
        fclose(j->f);
        j->f = NULL;
        unlink(j->path); /* no half header left behind: nothing was journaled */
        return kcs_fail(err, KCS_E_IO, "%s: cannot write the journal header: %s", j->path,
                        strerror(e));
    }
    return 0;
}

static int read_header(FILE *f, const char *path, kcs_journal_header *h, kcs_error *err)
{
    char magic[8];
    uint64_t sum;
    if (fread(magic, 8, 1, f) == 1 &&
        (memcmp(magic, JOURNAL_MAGIC_V1, 8) == 0 || memcmp(magic, JOURNAL_MAGIC_V2, 8) == 0))
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: journal format %c, written by an older kcs: finish that run with "
                        "the kcs that started it, or start over with --force (discards it)",
                        path, magic[7]);
    if (memcmp(magic, JOURNAL_MAGIC, 8) != 0 || fread(h, sizeof *h, 1, f) != 1 ||
        fread(&sum, sizeof sum, 1, f) != 1 || sum != XXH3_64bits(h, sizeof *h))
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: not a kcs journal or a damaged one (bad header): the run cannot be "
                        "continued; start over with `kcs run STUDY -o OUT --force` (discards it)",
                        path);
    h->study_path[sizeof h->study_path - 1] = 0;
    h->plugin[sizeof h->plugin - 1] = 0;
    h->backends_env[sizeof h->backends_env - 1] = 0;
    return 0;
}

int kcs_journal_read_header(const char *out_path, int rank, kcs_journal_header *h,
                            kcs_error *err)
{
    char path[4096];
    kcs_journal_file(out_path, rank, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f && errno != ENOENT)
        return kcs_fail(err, KCS_E_IO, "%s: cannot read the journal (%s)", path, strerror(errno));
    if (!f) {
        /* Say what happened: more ranks than the run had; a finished run
         * (its journals go once the dataset is in place); or a run that
         * never started a case (refused, or killed before its first). */
        char dir[4096];
        struct stat st;
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        if (rank > 0 && slash && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: no journal of rank %d: the run had fewer ranks; resume with the "
                            "same -n",
                            path, rank);
        if (stat(out_path, &st) == 0 && S_ISREG(st.st_mode))
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: nothing to resume: the run finished and this dataset is complete "
                            "(its journals are removed once it is in place; no %s)",
                            out_path, path);
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: nothing to resume: no journal and no dataset (the run never started "
                        "a case: it was refused, or stopped before its first; no %s); run it "
                        "again without --resume",
                        out_path, path);
    }
    int rc = read_header(f, path, h, err);
    fclose(f);
    return rc;
}

/* Record layout: magic u64 | case_idx i64 | input_digest u64 | broken u64 |
 * why[256] | recs[max_trials] | samples[n_samples] | xxh3 u64 of everything
 * before. */
#define REC_HEAD (4 * sizeof(uint64_t) + WHY_LEN)
static size_t record_size(const kcs_journal_header *h)
{
    return REC_HEAD + (size_t)h->max_trials * sizeof(kcs_result_rec) +
           (size_t)h->n_samples * sizeof(double) + sizeof(uint64_t);
}

int kcs_journal_append(kcs_journal *j, int64_t case_idx, uint64_t input_digest,
                       const kcs_result_rec *recs, const double *samples, int broken,
                       const char *why, kcs_error *err)
{
    size_t size = record_size(&j->h);
    unsigned char *buf = calloc(1, size);
    if (!buf)
        return kcs_fail(err, KCS_E_NOMEM, "journal: out of memory");
    unsigned char *p = buf;
    uint64_t magic = RECORD_MAGIC;
    memcpy(p, &magic, 8);
    memcpy(p + 8, &case_idx, 8);
    memcpy(p + 16, &input_digest, 8);
    uint64_t b = broken != 0;
    memcpy(p + 24, &b, 8);
    if (why)
        memcpy(p + 32, why, strnlen(why, WHY_LEN - 1));
    p += REC_HEAD;
    memcpy(p, recs, (size_t)j->h.max_trials * sizeof *recs);
    p += (size_t)j->h.max_trials * sizeof *recs;
    memcpy(p, samples, (size_t)j->h.n_samples * sizeof *samples);
    p += (size_t)j->h.n_samples * sizeof *samples;
    uint64_t sum = XXH3_64bits(buf, (size_t)(p - buf));
    memcpy(p, &sum, 8);
    int ok = fwrite(buf, size, 1, j->f) == 1 && durable(j->f);
    free(buf);
    if (!ok)
        return kcs_fail(err, KCS_E_IO, "%s: cannot append case %lld: %s", j->path,
                        (long long)case_idx, strerror(errno));
    return 0;
}

int kcs_journal_resume(kcs_journal *j, const char *out_path, int rank, kcs_journal_header *h,
                       kcs_journal_entry *entries, int64_t n_cases, kcs_error *err)
{
    memset(j, 0, sizeof *j);
    kcs_journal_file(out_path, rank, j->path, sizeof j->path);
    FILE *f = fopen(j->path, "r+b");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: no journal to resume from (%s)", j->path,
                        strerror(errno));
    int rc = read_header(f, j->path, h, err);
    if (rc) {
        fclose(f);
        return rc;
    }
    j->h = *h;
    size_t size = record_size(h);
    unsigned char *buf = malloc(size);
    if (!buf) {
        fclose(f);
        return kcs_fail(err, KCS_E_NOMEM, "journal: out of memory");
    }
    long valid_end = ftell(f);
    while (fread(buf, size, 1, f) == 1) {
        uint64_t magic, sum;
        int64_t ci;
        memcpy(&magic, buf, 8);
        memcpy(&ci, buf + 8, 8);
        memcpy(&sum, buf + size - 8, 8);
        if (magic != RECORD_MAGIC || sum != XXH3_64bits(buf, size - 8) || ci < 0 ||
            ci >= n_cases)
            break; /* torn or foreign tail: everything after is dropped */
        if (entries) {
            kcs_journal_entry *e = &entries[ci];
            if (!e->recs)
                e->recs = malloc((size_t)h->max_trials * sizeof *e->recs);
            if (!e->samples)
                e->samples = malloc((size_t)(h->n_samples ? h->n_samples : 1) * sizeof(double));
            if (!e->recs || !e->samples) {
                free(buf);
                fclose(f);
                return kcs_fail(err, KCS_E_NOMEM, "journal: out of memory");
            }
            e->present = 1;
            memcpy(&e->input_digest, buf + 16, 8);
            uint64_t b;
            memcpy(&b, buf + 24, 8);
            e->broken = b != 0;
            memcpy(e->why, buf + 32, WHY_LEN);
            e->why[WHY_LEN - 1] = '\0';
            memcpy(e->recs, buf + REC_HEAD, (size_t)h->max_trials * sizeof *e->recs);
            memcpy(e->samples, buf + REC_HEAD + (size_t)h->max_trials * sizeof *e->recs,
                   (size_t)h->n_samples * sizeof(double));
        }
        valid_end = ftell(f);
    }
    free(buf);
    if (fflush(f) != 0 || ftruncate(fileno(f), valid_end) != 0 ||
        fseek(f, valid_end, SEEK_SET) != 0) {
        fclose(f);
        return kcs_fail(err, KCS_E_IO, "%s: cannot truncate the torn tail", j->path);
    }
    j->f = f;
    return 0;
}

void kcs_journal_close(kcs_journal *j)
{
    if (j->f)
        fclose(j->f);
    j->f = NULL;
}

void kcs_journal_entries_free(kcs_journal_entry *e, int64_t n)
{
    if (!e)
        return;
    for (int64_t i = 0; i < n; i++) {
        free(e[i].recs);
        free(e[i].samples);
    }
    free(e);
}
