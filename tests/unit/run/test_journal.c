/* Per-rank journals (src/run/journal.c): what is appended reads back
 * byte for byte (header, every case's rows, samples and input digest; the
 * last record of a case wins); a torn tail or a record whose bytes no
 * longer match its XXH3 checksum is detected, the valid prefix kept and the
 * file cut back to it, and the journal stays appendable; a bad header or a
 * missing journal is refused. Record sizes and offsets are measured from
 * the file as it grows, not assumed. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "journal.h"
#include "unit_helpers.h"

#define N_CASES 6
#define TRIALS 3
#define SAMPLES 5

static char dir[512];
static char out[1024];

static kcs_journal_header header(void)
{
    kcs_journal_header h;
    memset(&h, 0, sizeof h);
    h.plan_hash = 0x0123456789abcdefull;
    h.n_ranks = 2;
    h.rank = 1;
    h.max_trials = TRIALS;
    h.n_samples = SAMPLES;
    h.n_cases = N_CASES;
    snprintf(h.study_path, sizeof h.study_path, "/an/absolute/study.yaml");
    return h;
}

/* Distinct contents for case ci, version v. */
static void content(int64_t ci, int v, kcs_result_rec recs[TRIALS], double samples[SAMPLES],
                    uint64_t *digest)
{
    memset(recs, 0, TRIALS * sizeof *recs);
    for (int t = 0; t < TRIALS; t++) {
        kcs_result_rec *r = &recs[t];
        r->case_id = ci;
        r->rank = 1;
        r->trial = t;
        snprintf(r->status, sizeof r->status, "ok");
        r->output_digest = 0xfeed0000ull + (uint64_t)(ci * 100 + v * 10 + t);
        r->tau = 0.25 * (double)(ci + 1) + v;
        r->eta = ldexp(1.0, -(int)ci);
        r->max_abs = NAN;
        r->time_ns = 1000 * ci + t;
        snprintf(r->verdict, sizeof r->verdict, v ? "violation" : "within_tolerance");
        snprintf(r->signature, sizeof r->signature, "case-%lld-v%d", (long long)ci, v);
    }
    for (int j = 0; j < SAMPLES; j++)
        samples[j] = j == 2 ? NAN : (double)(ci * 10 + j) + 0.5 * v;
    *digest = 0xd1ce0000ull + (uint64_t)(ci * 2 + v);
}

static long file_size(void)
{
    char path[1200];
    kcs_journal_file(out, 1, path, sizeof path);
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void create(kcs_journal *j)
{
    kcs_journal_header h = header();
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_journal_create(j, out, &h, &err), 0);
}

static void append(kcs_journal *j, int64_t ci, int v)
{
    kcs_result_rec recs[TRIALS];
    double samples[SAMPLES];
    uint64_t d;
    content(ci, v, recs, samples, &d);
    kcs_error err = {0};
    /* version 1 of a case also leaves the rank's backend broken: the state
     * travels with the record (resume restores it) */
    CU_ASSERT_EQUAL(kcs_journal_append(j, ci, d, recs, samples, v == 1, v == 1 ? "segv in gemm" : "",
                                       &err),
                    0);
}

/* Version 0 of each of the n cases, in order. */
static void append_v0(kcs_journal *j, const int64_t *cases, int n)
{
    for (int i = 0; i < n; i++)
        append(j, cases[i], 0);
}

/* Entries equal to content(ci, v). */
static int entry_is(const kcs_journal_entry *e, int64_t ci, int v)
{
    kcs_result_rec recs[TRIALS];
    double samples[SAMPLES];
    uint64_t d;
    content(ci, v, recs, samples, &d);
    return e->present && e->input_digest == d && memcmp(e->recs, recs, sizeof recs) == 0 &&
           memcmp(e->samples, samples, sizeof samples) == 0 && e->broken == (v == 1) &&
           strcmp(e->why, v == 1 ? "segv in gemm" : "") == 0;
}

/* Resume; which cases came back (bit i for case i), -1 on error. */
static int resume(kcs_journal_entry **entries_p, int64_t n_cases)
{
    kcs_journal j;
    kcs_journal_header h;
    kcs_error err = {0};
    kcs_journal_entry *e = calloc((size_t)n_cases, sizeof *e);
    if (!e || kcs_journal_resume(&j, out, 1, &h, e, n_cases, &err) != 0) {
        fprintf(stderr, "\n  resume: %s\n", err.msg);
        kcs_journal_entries_free(e, n_cases);
        return -1;
    }
    kcs_journal_close(&j);
    int mask = 0;
    for (int64_t i = 0; i < n_cases; i++)
        mask |= e[i].present << i;
    *entries_p = e;
    return mask;
}

static void flip_byte(long offset)
{
    char path[1200];
    kcs_journal_file(out, 1, path, sizeof path);
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, offset, SEEK_SET), 0);
    int c = fgetc(f);
    CU_ASSERT_EQUAL(fseek(f, offset, SEEK_SET), 0);
    fputc(c ^ 0x10, f);
    fclose(f);
}

static void truncate_to(long size)
{
    char path[1200];
    kcs_journal_file(out, 1, path, sizeof path);
    CU_ASSERT_EQUAL(truncate(path, size), 0);
}

static void test_round_trip(void)
{
    kcs_journal j;
    create(&j);
    append_v0(&j, (const int64_t[]){0, 2, 4}, 3);
    append(&j, 2, 1); /* case 2 again: the later record wins */
    kcs_journal_close(&j);

    char path[1200], want[1200];
    kcs_journal_file(out, 1, path, sizeof path);
    snprintf(want, sizeof want, "%s.journal/rank-1.kj", out);
    CU_ASSERT_STRING_EQUAL(path, want);

    kcs_journal_header h, ref = header();
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_journal_read_header(out, 1, &h, &err), 0);
    CU_ASSERT(memcmp(&h, &ref, sizeof h) == 0);

    kcs_journal_entry *e = NULL;
    CU_ASSERT_EQUAL_FATAL(resume(&e, N_CASES), (1 << 0) | (1 << 2) | (1 << 4));
    CU_ASSERT(entry_is(&e[0], 0, 0));
    CU_ASSERT(entry_is(&e[2], 2, 1));
    CU_ASSERT(!entry_is(&e[2], 2, 0));
    CU_ASSERT(entry_is(&e[4], 4, 0));
    kcs_journal_entries_free(e, N_CASES);

    /* resumed journals take more records */
    kcs_journal_entry *tmp = calloc(N_CASES, sizeof *tmp);
    CU_ASSERT_EQUAL_FATAL(kcs_journal_resume(&j, out, 1, &h, tmp, N_CASES, &err), 0);
    kcs_journal_entries_free(tmp, N_CASES);
    append(&j, 5, 0);
    kcs_journal_close(&j);
    CU_ASSERT_EQUAL_FATAL(resume(&e, N_CASES), (1 << 0) | (1 << 2) | (1 << 4) | (1 << 5));
    CU_ASSERT(entry_is(&e[5], 5, 0));
    CU_ASSERT(entry_is(&e[2], 2, 1));
    kcs_journal_entries_free(e, N_CASES);

    /* a new journal starts empty */
    create(&j);
    kcs_journal_close(&j);
    CU_ASSERT_EQUAL(resume(&e, N_CASES), 0);
    kcs_journal_entries_free(e, N_CASES);
}

/* Header size H and record size R, measured. */
static void sizes(long *h_p, long *r_p)
{
    kcs_journal j;
    create(&j);
    *h_p = file_size();
    append(&j, 0, 0);
    *r_p = file_size() - *h_p;
    append(&j, 1, 0);
    CU_ASSERT_EQUAL(file_size(), *h_p + 2 * *r_p); /* fixed-size records */
    append(&j, 2, 0);
    kcs_journal_close(&j);
    CU_ASSERT(*h_p > 0 && *r_p > 0);
}

static void test_torn_tail(void)
{
    long H, R;
    kcs_journal_entry *e = NULL;
    /* a kill inside the third record: at several points of it */
    for (int i = 0; i < 5; i++) {
        sizes(&H, &R);
        const long into[5] = {1, 8, R / 2, R - 8, R - 1};
        truncate_to(H + 2 * R + into[i]);
        CU_ASSERT_EQUAL(resume(&e, N_CASES), (1 << 0) | (1 << 1));
        CU_ASSERT(entry_is(&e[0], 0, 0) && entry_is(&e[1], 1, 0));
        kcs_journal_entries_free(e, N_CASES);
        CU_ASSERT_EQUAL(file_size(), H + 2 * R); /* cut back to the valid prefix */
    }
    /* and it goes on from there */
    kcs_journal j;
    kcs_journal_header h;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_journal_resume(&j, out, 1, &h, NULL, N_CASES, &err), 0);
    append(&j, 3, 1);
    kcs_journal_close(&j);
    CU_ASSERT_EQUAL(file_size(), H + 3 * R);
    CU_ASSERT_EQUAL(resume(&e, N_CASES), (1 << 0) | (1 << 1) | (1 << 3));
    CU_ASSERT(entry_is(&e[3], 3, 1));
    kcs_journal_entries_free(e, N_CASES);
}

/* One changed byte anywhere in a record: its checksum fails; it and all
 * that follows are dropped. */
static void test_corrupted_record(void)
{
    long H, R;
    kcs_journal_entry *e = NULL;
    const struct {
        int record;
        char from;  /* the byte changed: 's' record start + delta, 'm' middle, 'e' end + delta */
        long delta;
        int keep;   /* mask of the cases that must come back */
    } hits[] = {
        {1, 'm', 0, 1 << 0},              /* rows of the middle record */
        {1, 's', 0, 1 << 0},              /* its magic */
        {1, 's', 16, 1 << 0},             /* its input digest */
        {2, 'e', -1, (1 << 0) | (1 << 1)}, /* the last record's checksum */
        {0, 'e', -12, 0},                 /* the first record's last sample */
    };
    for (size_t i = 0; i < sizeof hits / sizeof hits[0]; i++) {
        sizes(&H, &R);
        long start = H + hits[i].record * R;
        long off = hits[i].from == 's'   ? start + hits[i].delta
                   : hits[i].from == 'm' ? start + R / 2
                                         : start + R + hits[i].delta;
        flip_byte(off);
        CU_ASSERT_EQUAL(resume(&e, N_CASES), hits[i].keep);
        for (int c = 0; c < 3; c++)
            if (hits[i].keep & (1 << c))
                CU_ASSERT(entry_is(&e[c], c, 0));
        kcs_journal_entries_free(e, N_CASES);
        int kept = __builtin_popcount((unsigned)hits[i].keep);
        CU_ASSERT_EQUAL(file_size(), H + kept * R);
    }
}

/* A record for a case outside the plan resumed is not trusted. */
static void test_foreign_case(void)
{
    kcs_journal j;
    create(&j);
    append_v0(&j, (const int64_t[]){1, 5, 0}, 3);
    kcs_journal_close(&j);
    kcs_journal_entry *e = NULL;
    CU_ASSERT_EQUAL(resume(&e, 3), 1 << 1);
    kcs_journal_entries_free(e, 3);
}

static void test_bad_header_and_missing(void)
{
    kcs_journal j;
    kcs_journal_header h;
    kcs_error err = {0};
    create(&j);
    append(&j, 0, 0);
    kcs_journal_close(&j);
    flip_byte(8 + 40); /* inside the study path of the header */
    CU_ASSERT_EQUAL(kcs_journal_read_header(out, 1, &h, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "not a kcs journal") != NULL);
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(kcs_journal_resume(&j, out, 1, &h, NULL, N_CASES, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NULL(j.f);
    flip_byte(0); /* the file magic */
    flip_byte(8 + 40);
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(kcs_journal_read_header(out, 1, &h, &err), KCS_E_INVAL);
    memset(&err, 0, sizeof err);
    /* no rank 7: a missing journal is bad input (nothing to resume), not an I/O failure */
    CU_ASSERT_EQUAL(kcs_journal_read_header(out, 7, &h, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "rank-7.kj") != NULL);
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(kcs_journal_resume(&j, out, 7, &h, NULL, N_CASES, &err), KCS_E_IO);
}

static const ut_test tests[] = {
    {"write, read back, append after resume", test_round_trip},
    {"torn tail dropped, prefix kept", test_torn_tail},
    {"corrupted record: checksum mismatch detected", test_corrupted_record},
    {"record of a case outside the plan", test_foreign_case},
    {"bad header, missing journal", test_bad_header_and_missing},
};

int main(void)
{
    ut_tmpdir(dir, sizeof dir, "journal");
    if (!dir[0])
        return 1;
    snprintf(out, sizeof out, "%s/out.h5", dir);
    int rc = ut_run("journal", tests);
    ut_rmdir(dir);
    return rc;
}
