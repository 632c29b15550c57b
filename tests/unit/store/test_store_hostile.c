/* The reader of kcs reduce (store_read.c) on hand-made hostile datasets:
 * each test starts from a valid file (checked to open), changes one thing
 * with the HDF5 API and expects a clean KCS_E_INVAL or KCS_E_IO whose
 * message names the file and the object at fault. The randomised version
 * of these is tests/fuzz/fuzz_h5read.c. */
#define _POSIX_C_SOURCE 200809L

#include <CUnit/Basic.h>
#include <hdf5.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"
#include "store_h5.h"
#include "store_read.h"
#include "unit_helpers.h"

enum { N_RANKS = 2, N_CASES = 2, N_TRIALS = 3, N_SAMPLES = 2 };

static char dir[256];

static const char *tmp(const char *name)
{
    return ut_path(dir, name);
}

static int64_t case_id(int c)
{
    return 10 + c;
}

/* A table of rows (written when data != NULL); chunked when chunk > 0. */
static void table(hid_t f, const char *obj, hid_t type, hsize_t rows, hsize_t chunk,
                  const void *data)
{
    H5Ldelete(f, obj, H5P_DEFAULT); /* replacing: a missing one is fine */
    H5Eclear2(H5E_DEFAULT);
    hid_t sp = H5Screate_simple(1, &rows, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (chunk)
        CU_ASSERT(H5Pset_chunk(dcpl, 1, &chunk) >= 0);
    hid_t d = H5Dcreate2(f, obj, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    if (data && rows > 0)
        CU_ASSERT(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
}

static void text(hid_t f, const char *obj, size_t size, const char *value)
{
    hid_t t = kcs_h5_str_type(size, H5T_STR_NULLPAD);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(f, obj, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    if (value)
        CU_ASSERT(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, value) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
}

/* A valid dataset in the writer's layout (complete). */
static void base_file(const char *path)
{
    remove(path);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    const char *s[] = {"schema",  "software",   "software_version", "git_hash",
                       "created", "study_name", "plan_hash",        "command_line"};
    const char *v[] = {"kcs",
                       "kcs",
                       "0.1.0",
                       "abc",
                       "2025-01-01T00:00:00Z",
                       "hostile",
                       "00000000000000ff",
                       "kcs run hostile.yaml"};
    for (int i = 0; i < 8; i++)
        CU_ASSERT(kcs_h5_put_str(f, s[i], v[i]) == 0);
    kcs_h5_put_i32(f, "schema_version", KCS_SCHEMA_VERSION);
    kcs_h5_put_i32(f, "n_ranks", N_RANKS);
    kcs_h5_put_i64(f, "n_cases", N_CASES);
    kcs_h5_put_i32(f, "max_trials", N_TRIALS);
    kcs_h5_put_i32(f, "n_samples", N_SAMPLES);
    kcs_h5_put_i32(f, "complete", 1);

    hid_t g = H5Gcreate2(f, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(g);
    kcs_rank_rec ranks[N_RANKS] = {{.rank = 0, .host = "a"}, {.rank = 1, .host = "b"}};
    hid_t t = kcs_h5_rank_type();
    table(f, "/provenance/ranks", t, N_RANKS, 0, ranks);
    H5Tclose(t);

    kcs_case_rec cases[N_CASES];
    memset(cases, 0, sizeof cases);
    for (int c = 0; c < N_CASES; c++) {
        cases[c].case_id = case_id(c);
        cases[c].trials = N_TRIALS;
    }
    t = kcs_h5_case_type();
    table(f, "/cases", t, N_CASES, 0, cases);
    H5Tclose(t);

    kcs_result_rec res[N_CASES * N_RANKS * N_TRIALS];
    memset(res, 0, sizeof res);
    for (int i = 0; i < N_CASES * N_RANKS * N_TRIALS; i++) {
        res[i].case_id = case_id(i / (N_RANKS * N_TRIALS));
        res[i].rank = i / N_TRIALS % N_RANKS;
        res[i].trial = i % N_TRIALS;
        strcpy(res[i].status, "ok");
    }
    t = kcs_h5_result_type();
    table(f, "/results", t, N_CASES * N_RANKS * N_TRIALS, 0, res);
    H5Tclose(t);

    text(f, "/study", 8, "name: x\n");
    g = H5Gcreate2(f, "contracts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(g);
    text(f, "/contracts/C-ORD-01", 4, "id: ");
    g = H5Gcreate2(f, "samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(g);
    for (int c = 0; c < N_CASES; c++) {
        hsize_t dims[2] = {N_RANKS, N_SAMPLES};
        double x[N_RANKS * N_SAMPLES] = {0};
        char obj[64];
        snprintf(obj, sizeof obj, "/samples/%" PRId64, case_id(c));
        hid_t sp = H5Screate_simple(2, dims, NULL);
        hid_t d = H5Dcreate2(f, obj, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CU_ASSERT(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
    }
    CU_ASSERT_FATAL(H5Fclose(f) >= 0);
}

/* The valid file at name, open for a change. */
/* Empty /cases and /results tables in f. */
static void empty_case_tables(hid_t f)
{
    hid_t t = kcs_h5_case_type();
    table(f, "/cases", t, 0, 0, NULL);
    H5Tclose(t);
    t = kcs_h5_result_type();
    table(f, "/results", t, 0, 0, NULL);
    H5Tclose(t);
}

static hid_t edit(const char *name, const char **path_p)
{
    const char *p = tmp(name);
    base_file(p);
    *path_p = p;
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    return f;
}

static void has(const char *msg, const char *word)
{
    if (!strstr(msg, word))
        fprintf(stderr, "\n  message \"%s\" lacks \"%s\"\n", msg, word);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, word));
}

/* Open must fail with code, naming the file, the object and words. */
static void refused(const char *path, int code, const char *obj, const char *words)
{
    kcs_error err = {0};
    kcs_store_reader *r = NULL;
    int rc = kcs_store_open_read(path, &r, &err);
    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_PTR_NULL(r);
    has(err.msg, path);
    has(err.msg, obj);
    if (words)
        has(err.msg, words);
    if (rc == 0)
        kcs_store_reader_close(r);
}

static kcs_store_reader *opened(const char *path)
{
    kcs_error err = {0};
    kcs_store_reader *r = NULL;
    int rc = kcs_store_open_read(path, &r, &err);
    if (rc)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return r;
}

static void test_base_opens(void)
{
    const char *p = tmp("base.h5");
    base_file(p);
    kcs_store_reader *r = opened(p);
    const kcs_store_info *in = kcs_store_reader_info(r);
    CU_ASSERT_EQUAL(in->n_ranks, N_RANKS);
    CU_ASSERT_EQUAL(in->n_cases, N_CASES);
    CU_ASSERT_EQUAL(in->max_trials, N_TRIALS);
    kcs_result_rec res[N_RANKS * N_TRIALS];
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_store_read_case_results(r, N_CASES - 1, res, &err), 0);
    CU_ASSERT_EQUAL(res[N_RANKS * N_TRIALS - 1].case_id, case_id(N_CASES - 1));
    CU_ASSERT_EQUAL(res[N_RANKS * N_TRIALS - 1].rank, N_RANKS - 1);
    kcs_store_reader_close(r);
}

static void test_root_attributes(void)
{
    const char *p;
    hid_t f = edit("ranks_neg.h5", &p);
    kcs_h5_put_i32(f, "n_ranks", -1);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/: root attribute n_ranks = -1", "outside");

    f = edit("ranks_str.h5", &p);
    kcs_h5_put_str(f, "n_ranks", "2");
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/: root attribute n_ranks", "is not an integer");

    f = edit("version_float.h5", &p);
    kcs_h5_put_f64(f, "schema_version", KCS_SCHEMA_VERSION);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/: root attribute schema_version", "is not an integer");

    f = edit("cases_mismatch.h5", &p);
    kcs_h5_put_i64(f, "n_cases", N_CASES + 1);
    H5Fclose(f);
    char want[128];
    snprintf(want, sizeof want, "/cases: %d rows, n_cases says %d", N_CASES, N_CASES + 1);
    refused(p, KCS_E_INVAL, want, NULL);
}

static void test_wrong_member_type(void)
{
    const char *p;
    hid_t f = edit("tau_int.h5", &p);
    int nf;
    const kcs_field *rf = kcs_store_result_fields(&nf);
    kcs_field mod[32];
    for (int i = 0; i < nf; i++) {
        mod[i] = rf[i];
        if (!strcmp(rf[i].name, "tau"))
            mod[i].kind = KCS_FIELD_I64; /* same size as the double */
    }
    hid_t t = kcs_h5_compound(mod, nf, sizeof(kcs_result_rec));
    CU_ASSERT_FATAL(t >= 0);
    table(f, "/results", t, N_CASES * N_RANKS * N_TRIALS, 0, NULL);
    H5Tclose(t);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/results: not a kcs results table", "field tau is integer");

    f = edit("results_int.h5", &p); /* not a compound at all */
    table(f, "/results", H5T_NATIVE_INT64, N_CASES * N_RANKS * N_TRIALS, 0, NULL);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/results", "not a compound");
}

/* 2^40 rows declared, none stored: a complete file is refused at open
 * (kcs reduce would loop over, and allocate for, 2^40 cases); in an
 * incomplete one, 2^40 /results rows mean more trials than an int holds. */
static void test_huge_dims(void)
{
    const hsize_t huge = (hsize_t)1 << 40;
    const char *p;
    hid_t f = edit("cases_huge.h5", &p);
    kcs_h5_put_i64(f, "n_cases", (int64_t)huge);
    kcs_h5_put_i32(f, "max_trials", 0); /* no /results rows: they agree with any n_cases */
    hid_t t = kcs_h5_result_type();
    table(f, "/results", t, 0, 0, NULL);
    H5Tclose(t);
    t = kcs_h5_case_type();
    table(f, "/cases", t, huge, 1024, NULL);
    H5Tclose(t);
    H5Fclose(f);
    char want[160];
    snprintf(want, sizeof want, "/cases: %" PRIu64 " rows declared but only 0 stored",
             (uint64_t)huge);
    refused(p, KCS_E_INVAL, want, NULL);

    f = edit("results_huge.h5", &p);
    kcs_h5_put_i32(f, "complete", 0);
    H5Adelete(f, "max_trials");
    t = kcs_h5_result_type();
    table(f, "/results", t, huge, 1024, NULL); /* huge / (cases x ranks) > INT32_MAX trials */
    H5Tclose(t);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/results", "do not match");
}

/* n_cases x n_ranks beyond int64 (an incomplete file: nothing stored). */
static void test_row_overflow(void)
{
    const hsize_t cases = (hsize_t)1 << 40, ranks = INT32_MAX;
    const char *p;
    hid_t f = edit("overflow.h5", &p);
    kcs_h5_put_i32(f, "complete", 0);
    kcs_h5_put_i64(f, "n_cases", (int64_t)cases);
    kcs_h5_put_i32(f, "n_ranks", (int32_t)ranks);
    hid_t t = kcs_h5_case_type();
    table(f, "/cases", t, cases, 1024, NULL);
    H5Tclose(t);
    t = kcs_h5_rank_type();
    table(f, "/provenance/ranks", t, ranks, 1024, NULL);
    H5Tclose(t);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/results", "overflows");
}

/* A header asking the caller for buffers beyond the reader's cap. */
static void test_buffer_caps(void)
{
    const char *p;
    hid_t f = edit("trials_huge.h5", &p);
    const hsize_t trials = (hsize_t)1 << 28;
    kcs_h5_put_i32(f, "complete", 0);
    kcs_h5_put_i32(f, "max_trials", (int32_t)trials);
    hid_t t = kcs_h5_result_type();
    table(f, "/results", t, (hsize_t)N_CASES * N_RANKS * trials, 4096, NULL);
    H5Tclose(t);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/results", "more than kcs reads");

    f = edit("ranks_huge.h5", &p); /* 2^20 rank records of ~600 bytes */
    const hsize_t ranks = (hsize_t)1 << 20;
    kcs_h5_put_i32(f, "complete", 0);
    kcs_h5_put_i32(f, "n_ranks", (int32_t)ranks);
    kcs_h5_put_i64(f, "n_cases", 0); /* so that no /results rows are due */
    t = kcs_h5_rank_type();
    table(f, "/provenance/ranks", t, ranks, 4096, NULL);
    H5Tclose(t);
    empty_case_tables(f);
    H5Fclose(f);
    CU_ASSERT_FATAL(ranks * sizeof(kcs_rank_rec) > ((hsize_t)256 << 20)); /* the cap */
    refused(p, KCS_E_INVAL, "/provenance/ranks", "more than kcs reads");

    f = edit("samples_huge.h5", &p);
    kcs_h5_put_i32(f, "n_samples", 1 << 28); /* N_RANKS x 2^28 doubles = 4 GiB */
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/samples", "more than kcs reads");
}

static void test_zero_length(void)
{
    /* no cases: valid, and asking for a case fails cleanly */
    const char *p;
    hid_t f = edit("no_cases.h5", &p);
    kcs_h5_put_i64(f, "n_cases", 0);
    empty_case_tables(f);
    H5Fclose(f);
    kcs_store_reader *r = opened(p);
    CU_ASSERT_EQUAL(kcs_store_reader_info(r)->n_cases, 0);
    kcs_result_rec res[N_RANKS * N_TRIALS];
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_store_read_case_results(r, 0, res, &err), KCS_E_INVAL);
    has(err.msg, p);
    has(err.msg, "/results: case index 0");
    kcs_store_reader_close(r);

    f = edit("no_ranks.h5", &p);
    hid_t t = kcs_h5_rank_type();
    table(f, "/provenance/ranks", t, 0, 0, NULL);
    H5Tclose(t);
    H5Fclose(f);
    char want[128];
    snprintf(want, sizeof want, "/provenance/ranks: 0 rows, n_ranks says %d", N_RANKS);
    refused(p, KCS_E_INVAL, want, NULL);

    f = edit("empty_study.h5", &p);
    H5Ldelete(f, "/study", H5P_DEFAULT);
    hsize_t zero = 0;
    hid_t st = kcs_h5_str_type(8, H5T_STR_NULLPAD), sp = H5Screate_simple(1, &zero, NULL);
    H5Dclose(H5Dcreate2(f, "/study", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(sp);
    H5Tclose(st);
    H5Fclose(f);
    r = opened(p);
    char *s = NULL;
    CU_ASSERT_EQUAL(kcs_store_read_text(r, "/study", &s, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NULL(s);
    has(err.msg, p);
    has(err.msg, "/study: not a text");
    kcs_store_reader_close(r);
}

static void test_truncated(void)
{
    const char *src = tmp("whole.h5");
    base_file(src);
    struct stat st;
    CU_ASSERT_FATAL(stat(src, &st) == 0);
    long size = (long)st.st_size;
    FILE *in = fopen(src, "rb");
    char *all = malloc((size_t)size);
    CU_ASSERT_FATAL(in && all && fread(all, 1, (size_t)size, in) == (size_t)size);
    fclose(in);
    /* inside the 8-byte signature, inside the superblock, and beyond it */
    const long cuts[] = {0, 4, 40, 1024, size / 3, size / 2, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "cut_%ld.h5", cuts[i]);
        const char *p = tmp(name);
        FILE *out = fopen(p, "wb");
        CU_ASSERT_FATAL(out && fwrite(all, 1, (size_t)cuts[i], out) == (size_t)cuts[i]);
        fclose(out);
        kcs_error err = {0};
        kcs_store_reader *r = NULL;
        int rc = kcs_store_open_read(p, &r, &err);
        CU_ASSERT(rc == KCS_E_INVAL || rc == KCS_E_IO);
        CU_ASSERT_PTR_NULL(r);
        has(err.msg, p);
        if (cuts[i] < 8)
            has(err.msg, "not an HDF5 file");
        else if (cuts[i] >= 1024)
            has(err.msg, "truncated");
    }
    free(all);
}

/* Objects whose data lives elsewhere are not followed. */
static void test_elsewhere(void)
{
    const char *other = tmp("other.h5");
    base_file(other);
    const char *p;
    hid_t f = edit("elink.h5", &p);
    H5Ldelete(f, "/results", H5P_DEFAULT);
    CU_ASSERT(H5Lcreate_external(other, "/results", f, "/results", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/results", "not a dataset");

    f = edit("efl.h5", &p);
    H5Ldelete(f, "/cases", H5P_DEFAULT);
    hsize_t n = N_CASES;
    hid_t t = kcs_h5_case_type(), sp = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CU_ASSERT(H5Pset_external(dcpl, other, 0, H5F_UNLIMITED) >= 0);
    H5Dclose(H5Dcreate2(f, "/cases", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
    refused(p, KCS_E_INVAL, "/cases", "stored in other files");
}

/* Read-time checks: a text declared huge, samples of the wrong shape. */
static void test_read_time(void)
{
    const char *p;
    hid_t f = edit("study_huge.h5", &p);
    H5Ldelete(f, "/study", H5P_DEFAULT);
    text(f, "/study", (size_t)1 << 31, NULL); /* declared, never written */
    char obj[64];
    snprintf(obj, sizeof obj, "/samples/%" PRId64, case_id(0));
    H5Ldelete(f, obj, H5P_DEFAULT);
    hsize_t dims[2] = {N_SAMPLES + 1, N_RANKS};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    H5Dclose(H5Dcreate2(f, obj, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(sp);
    H5Fclose(f);
    kcs_store_reader *r = opened(p);
    kcs_error err = {0};
    char *s = NULL;
    CU_ASSERT_EQUAL(kcs_store_read_text(r, "/study", &s, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NULL(s);
    has(err.msg, p);
    has(err.msg, "/study: a text of 2147483648 bytes");
    double smp[N_RANKS * N_SAMPLES];
    int found = -1;
    CU_ASSERT_EQUAL(kcs_store_read_samples(r, case_id(0), smp, &found, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(found, -1);
    has(err.msg, p);
    has(err.msg, obj);
    kcs_store_reader_close(r);
}

static const ut_test tests[] = {
    {"the base file opens", test_base_opens},
    {"root attributes out of range or of the wrong class", test_root_attributes},
    {"results with a wrong member type", test_wrong_member_type},
    {"2^40 rows declared", test_huge_dims},
    {"n_cases x n_ranks overflow", test_row_overflow},
    {"buffers beyond the cap", test_buffer_caps},
    {"zero-length datasets", test_zero_length},
    {"truncated at several offsets", test_truncated},
    {"data stored in other files", test_elsewhere},
    {"huge text, misshapen samples", test_read_time},
};

int main(void)
{
    kcs_h5_quiet();
    snprintf(dir, sizeof dir, "/tmp/kcs_test_store_hostile.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    unsigned fails = (unsigned)ut_run("store_hostile", tests);
    if (fails == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    } else {
        fprintf(stderr, "test files kept in %s\n", dir);
    }
    return fails != 0;
}
