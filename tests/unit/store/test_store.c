/* The store's serial parts: the compound types of the records, the reader
 * (on files written here with serial HDF5 in the schema's layout, valid
 * and damaged), and the /analysis writer. The parallel writer is tested by
 * tests/integration/store_mpi_test.c. */
#define _POSIX_C_SOURCE 200809L

#include <CUnit/Basic.h>
#include <dirent.h>
#include <hdf5.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "store_h5.h"
#include "store_read.h"
#include "unit_helpers.h"

static char dir[256];

static const char *tmp(const char *name)
{
    return ut_path(dir, name);
}

/* --- the record types ---------------------------------------------------- */

typedef struct expect {
    const char *name;
    size_t offset, size;
    H5T_class_t cls;
} expect;

/* clang-format off */
#define E(T, m, c) {#m, offsetof(T, m), sizeof(((T *)0)->m), c}
/* clang-format on */

static void check_type(hid_t t, size_t size, const expect *e, int n)
{
    CU_ASSERT_FATAL(t >= 0);
    CU_ASSERT_EQUAL(H5Tget_class(t), H5T_COMPOUND);
    CU_ASSERT_EQUAL(H5Tget_size(t), size);
    CU_ASSERT_EQUAL(H5Tget_nmembers(t), n);
    for (int i = 0; i < n; i++) {
        int idx = H5Tget_member_index(t, e[i].name);
        CU_ASSERT_TRUE_FATAL(idx >= 0);
        CU_ASSERT_EQUAL(H5Tget_member_offset(t, (unsigned)idx), e[i].offset);
        CU_ASSERT_EQUAL(H5Tget_member_class(t, (unsigned)idx), e[i].cls);
        hid_t mt = H5Tget_member_type(t, (unsigned)idx);
        CU_ASSERT_EQUAL(H5Tget_size(mt), e[i].size);
        if (e[i].cls == H5T_STRING) {
            CU_ASSERT_EQUAL(H5Tget_strpad(mt), H5T_STR_NULLTERM);
            CU_ASSERT_TRUE(H5Tis_variable_str(mt) == 0);
        }
        H5Tclose(mt);
    }
    H5Tclose(t);
}

static void test_result_type(void)
{
    const H5T_class_t I = H5T_INTEGER, F = H5T_FLOAT, S = H5T_STRING;
    const expect e[] = {
        E(kcs_result_rec, case_id, I),       E(kcs_result_rec, rank, I),
        E(kcs_result_rec, trial, I),         E(kcs_result_rec, status, S),
        E(kcs_result_rec, output_digest, I), E(kcs_result_rec, tau, F),
        E(kcs_result_rec, eta, F),           E(kcs_result_rec, max_abs, F),
        E(kcs_result_rec, max_rel, F),       E(kcs_result_rec, max_ulp, F),
        E(kcs_result_rec, mean_ulp, F),      E(kcs_result_rec, backward_err, F),
        E(kcs_result_rec, max_scaled, F),    E(kcs_result_rec, effective_acc_bits, F),
        E(kcs_result_rec, nan_count, I),     E(kcs_result_rec, inf_count, I),
        E(kcs_result_rec, guard_ok, I),      E(kcs_result_rec, time_ns, I),
        E(kcs_result_rec, verdict, S),       E(kcs_result_rec, signature, S),
        E(kcs_result_rec, message, S),
    };
    check_type(kcs_h5_result_type(), sizeof(kcs_result_rec), e, (int)(sizeof e / sizeof e[0]));
    /* digests are unsigned, counts signed */
    hid_t t = kcs_h5_result_type();
    hid_t d = H5Tget_member_type(t, (unsigned)H5Tget_member_index(t, "output_digest"));
    hid_t c = H5Tget_member_type(t, (unsigned)H5Tget_member_index(t, "nan_count"));
    CU_ASSERT_EQUAL(H5Tget_sign(d), H5T_SGN_NONE);
    CU_ASSERT_EQUAL(H5Tget_sign(c), H5T_SGN_2);
    H5Tclose(d);
    H5Tclose(c);
    H5Tclose(t);
}

static void test_case_and_rank_types(void)
{
    const H5T_class_t I = H5T_INTEGER, S = H5T_STRING;
    const expect ec[] = {
        E(kcs_case_rec, case_id, I),   E(kcs_case_rec, contract, S),
        E(kcs_case_rec, op, S),        E(kcs_case_rec, variant, S),
        E(kcs_case_rec, dtype_in, S),  E(kcs_case_rec, dtype_acc, S),
        E(kcs_case_rec, dtype_out, S), E(kcs_case_rec, m, I),
        E(kcs_case_rec, n, I),         E(kcs_case_rec, k, I),
        E(kcs_case_rec, batch, I),     E(kcs_case_rec, input_dist, S),
        E(kcs_case_rec, seed, I),      E(kcs_case_rec, input_digest, I),
        E(kcs_case_rec, trials, I),
    };
    check_type(kcs_h5_case_type(), sizeof(kcs_case_rec), ec, (int)(sizeof ec / sizeof ec[0]));
    const expect er[] = {
        E(kcs_rank_rec, rank, I),   E(kcs_rank_rec, host, S),    E(kcs_rank_rec, backend, S),
        E(kcs_rank_rec, device, I), E(kcs_rank_rec, vendor, S),  E(kcs_rank_rec, model, S),
        E(kcs_rank_rec, arch, S),   E(kcs_rank_rec, driver, S),  E(kcs_rank_rec, runtime, S),
        E(kcs_rank_rec, uuid, S),   E(kcs_rank_rec, profile, S), E(kcs_rank_rec, variant, S),
        E(kcs_rank_rec, status, S), E(kcs_rank_rec, blas, S),   E(kcs_rank_rec, blas_threads, I),
        E(kcs_rank_rec, why, S),
    };
    check_type(kcs_h5_rank_type(), sizeof(kcs_rank_rec), er, (int)(sizeof er / sizeof er[0]));
}

/* --- a kcs file written serially in the schema's layout ------------------ */

typedef struct fake {
    const char *schema; /* NULL: no schema attribute */
    int version;
    const char *drop; /* a /results field left out */
    int tau_string;   /* tau stored as a string */
    int extra_rows;   /* /results rows beyond n_cases*n_ranks*max_trials */
    int no_cases;     /* no /cases dataset */
    int samples;      /* 0: none; 1: schema 1's /samples/<case_id>; 2: schema 2's
                       * /samples [n_cases, n_ranks, F_SAMPLES]; 3: that one misshapen */
} fake;

enum { F_RANKS = 2, F_CASES = 2, F_TRIALS = 3, F_SAMPLES = 3 };

/* The fake's sample j of rank r in case row c. */
static double f_sample(int c, int r, int j)
{
    return 100.0 * c + 10.0 * r + j + 0.25;
}

static double f_tau(int c, int r, int t)
{
    return c * 100 + r * 10 + t + 0.5;
}

static hid_t table(hid_t f, const char *name, const kcs_field *fl, int n, size_t size, hsize_t rows,
                   const void *data)
{
    hid_t t = kcs_h5_compound(fl, n, size);
    hid_t sp = H5Screate_simple(1, &rows, NULL);
    hid_t d = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d >= 0 && rows > 0)
        H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Sclose(sp);
    H5Tclose(t);
    return d;
}

static void make_fake(const char *path, const fake *o)
{
    remove(path);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    if (o->schema)
        kcs_h5_put_str(f, "schema", o->schema);
    kcs_h5_put_i32(f, "schema_version", o->version);
    const char *s[] = {"software",     "software_version", "git_hash", "created",
                       "command_line", "study_name",       "plan_hash"};
    const char *v[] = {"kcs",  "0.1.0",           "abc", "2025-01-01T00:00:00Z", "kcs run x.yaml",
                       "fake", "00000000000000ff"};
    for (int i = 0; i < 7; i++)
        kcs_h5_put_str(f, s[i], v[i]);
    kcs_h5_put_i32(f, "n_ranks", F_RANKS);
    kcs_h5_put_i64(f, "n_cases", F_CASES);
    kcs_h5_put_i32(f, "complete", 1);
    kcs_h5_put_i32(f, "n_samples", o->samples ? F_SAMPLES : 0);
    if (o->samples) {
        double v[F_CASES][F_RANKS][F_SAMPLES];
        for (int c = 0; c < F_CASES; c++)
            for (int r = 0; r < F_RANKS; r++)
                for (int j = 0; j < F_SAMPLES; j++)
                    v[c][r][j] = f_sample(c, r, j);
        if (o->samples == 1) {
            hid_t g = H5Gcreate2(f, "samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            hsize_t dims[2] = {F_RANKS, F_SAMPLES};
            hid_t sp = H5Screate_simple(2, dims, NULL);
            for (int c = 0; c < F_CASES; c++) {
                char name[16];
                snprintf(name, sizeof name, "%d", 10 + c);
                hid_t d = H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                     H5P_DEFAULT);
                H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v[c]);
                H5Dclose(d);
            }
            H5Sclose(sp);
            H5Gclose(g);
        } else {
            hsize_t dims[3] = {F_CASES, F_RANKS, o->samples == 3 ? F_SAMPLES - 1 : F_SAMPLES};
            hid_t sp = H5Screate_simple(3, dims, NULL);
            hid_t d = H5Dcreate2(f, "samples", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                 H5P_DEFAULT);
            if (o->samples == 2)
                H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
            H5Dclose(d);
            H5Sclose(sp);
        }
    }

    int nf;
    const kcs_field *fl = kcs_store_rank_fields(&nf);
    kcs_rank_rec ranks[F_RANKS] = {{.rank = 0, .host = "a"}, {.rank = 1, .host = "b"}};
    hid_t g = H5Gcreate2(f, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(table(g, "ranks", fl, nf, sizeof(kcs_rank_rec), F_RANKS, ranks));
    H5Gclose(g);
    if (!o->no_cases) {
        /* rows as a writer makes them: the reader validates every field */
        kcs_case_rec cases[F_CASES] = {
            {.case_id = 10, .op = "gemm", .dtype_in = "fp32", .dtype_out = "fp32",
             .input_dist = "normal"},
            {.case_id = 11, .op = "dot", .dtype_in = "fp32", .dtype_out = "fp32",
             .input_dist = "normal"}};
        fl = kcs_store_case_fields(&nf);
        H5Dclose(table(f, "cases", fl, nf, sizeof(kcs_case_rec), F_CASES, cases));
    }
    /* /results, possibly with one field dropped or retyped */
    const kcs_field *rf = kcs_store_result_fields(&nf);
    kcs_field mod[32];
    int nm = 0;
    for (int i = 0; i < nf; i++) {
        if (o->drop && !strcmp(rf[i].name, o->drop))
            continue;
        mod[nm] = rf[i];
        if (o->tau_string && !strcmp(rf[i].name, "tau"))
            mod[nm].kind = KCS_FIELD_STR;
        nm++;
    }
    int n_rows = F_CASES * F_RANKS * F_TRIALS + o->extra_rows;
    kcs_result_rec *rows = calloc((size_t)n_rows, sizeof *rows);
    for (int c = 0; c < F_CASES; c++)
        for (int r = 0; r < F_RANKS; r++)
            for (int t = 0; t < F_TRIALS; t++) {
                kcs_result_rec *x = &rows[(c * F_RANKS + r) * F_TRIALS + t];
                x->case_id = 10 + c;
                x->rank = r;
                x->trial = t;
                x->tau = f_tau(c, r, t);
                snprintf(x->status, sizeof x->status, "ok");
            }
    H5Dclose(table(f, "results", mod, nm, sizeof(kcs_result_rec), (hsize_t)n_rows, rows));
    free(rows);
    hid_t tt = kcs_h5_str_type(9, H5T_STR_NULLPAD);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(f, "study", tt, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, tt, H5S_ALL, H5S_ALL, H5P_DEFAULT, "name: x\n");
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(tt);
    CU_ASSERT_FATAL(H5Fclose(f) >= 0);
}

static const fake valid = {.schema = "kcs", .version = KCS_SCHEMA_VERSION};

/* open must fail with code and a message holding path and each of the words */
static void expect_fail(const char *path, int code, const char *w1, const char *w2)
{
    kcs_error err = {0};
    kcs_store_reader *r = NULL;
    int rc = kcs_store_open_read(path, &r, &err);
    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, w1));
    if (w2)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, w2));
    if (rc == 0)
        kcs_store_reader_close(r);
}

static void test_read_valid(void)
{
    const char *p = tmp("valid.h5");
    make_fake(p, &valid);
    kcs_error err = {0};
    kcs_store_reader *r = NULL;
    CU_ASSERT_EQUAL_FATAL(kcs_store_open_read(p, &r, &err), 0);
    const kcs_store_info *in = kcs_store_reader_info(r);
    CU_ASSERT_EQUAL(in->n_ranks, F_RANKS);
    CU_ASSERT_EQUAL(in->n_cases, F_CASES);
    CU_ASSERT_EQUAL(in->max_trials, F_TRIALS); /* derived from the /results rows */
    CU_ASSERT_EQUAL(in->complete, 1);
    CU_ASSERT_STRING_EQUAL(in->command_line, "kcs run x.yaml");
    CU_ASSERT_STRING_EQUAL(in->plan_hash, "00000000000000ff");
    kcs_result_rec rows[F_RANKS * F_TRIALS];
    CU_ASSERT_EQUAL_FATAL(kcs_store_read_case_results(r, 1, rows, &err), 0);
    for (int rk = 0; rk < F_RANKS; rk++)
        for (int t = 0; t < F_TRIALS; t++) {
            const kcs_result_rec *x = &rows[rk * F_TRIALS + t];
            CU_ASSERT_EQUAL(x->case_id, 11);
            CU_ASSERT_EQUAL(x->rank, rk);
            CU_ASSERT_EQUAL(x->trial, t);
            CU_ASSERT_EQUAL(x->tau, f_tau(1, rk, t));
            CU_ASSERT_STRING_EQUAL(x->status, "ok");
        }
    CU_ASSERT_EQUAL(kcs_store_read_case_results(r, F_CASES, rows, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/results"));
    kcs_case_rec cases[1];
    CU_ASSERT_EQUAL(kcs_store_read_cases(r, 1, 1, cases, &err), 0);
    CU_ASSERT_EQUAL(cases[0].case_id, 11);
    CU_ASSERT_STRING_EQUAL(cases[0].op, "dot");
    CU_ASSERT_EQUAL(kcs_store_read_cases(r, 1, 2, cases, &err), KCS_E_INVAL);
    char *text = NULL;
    CU_ASSERT_EQUAL(kcs_store_read_text(r, "/study", &text, &err), 0);
    CU_ASSERT_STRING_EQUAL(text, "name: x\n");
    free(text);
    CU_ASSERT_EQUAL(kcs_store_read_text(r, "/contracts/C-X-01", &text, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/contracts/C-X-01"));
    double smp[4];
    int found = -1;
    CU_ASSERT_EQUAL(kcs_store_read_samples(r, 10, smp, &found, &err), 0);
    CU_ASSERT_EQUAL(found, 0);
    kcs_store_reader_close(r);
}

/* Samples of both schemas: schema 1's dataset per case, schema 2's one
 * dataset whose row is the case's row of /cases (case ids 10 and 11 here,
 * so the reader finds the row by its scan of /cases). */
static void test_read_samples(void)
{
    for (int form = 1; form <= 3; form++) {
        const char *p = tmp("samples.h5");
        fake o = valid;
        o.version = form == 1 ? 1 : KCS_SCHEMA_VERSION;
        o.samples = form;
        make_fake(p, &o);
        kcs_error err = {0};
        kcs_store_reader *r = NULL;
        CU_ASSERT_EQUAL_FATAL(kcs_store_open_read(p, &r, &err), 0);
        CU_ASSERT_EQUAL(kcs_store_reader_info(r)->schema_version, o.version);
        double smp[F_RANKS * F_SAMPLES];
        int found = -1;
        for (int c = 0; c < F_CASES; c++) {
            int rc = kcs_store_read_samples(r, 10 + c, smp, &found, &err);
            if (form == 3) { /* [2, 2, 2] where n_samples says 3 */
                CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
                CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a float64 [2, 2, 3] samples dataset"));
                continue;
            }
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_EQUAL(found, 1);
            for (int rk = 0; rk < F_RANKS; rk++)
                for (int j = 0; j < F_SAMPLES; j++)
                    CU_ASSERT_EQUAL(smp[rk * F_SAMPLES + j], f_sample(c, rk, j));
        }
        if (form != 3) { /* a case the file does not hold */
            found = -1;
            CU_ASSERT_EQUAL(kcs_store_read_samples(r, 12, smp, &found, &err), 0);
            CU_ASSERT_EQUAL(found, 0);
        }
        kcs_store_reader_close(r);
    }
}

static void test_read_errors(void)
{
    expect_fail(tmp("does-not-exist.h5"), KCS_E_INVAL, "No such file", NULL);

    const char *p = tmp("text.h5");
    FILE *fp = fopen(p, "w");
    fputs("this is not an HDF5 file\n", fp);
    fclose(fp);
    expect_fail(p, KCS_E_INVAL, "not an HDF5 file", NULL);

    /* a valid file cut in half */
    p = tmp("truncated.h5");
    make_fake(p, &valid);
    fp = fopen(p, "rb");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    CU_ASSERT_EQUAL_FATAL(truncate(p, size / 2), 0);
    expect_fail(p, KCS_E_INVAL, "cannot open", "truncated file"); /* HDF5's own diagnosis */

    p = tmp("noschema.h5");
    fake o = valid;
    o.schema = NULL;
    make_fake(p, &o);
    expect_fail(p, KCS_E_INVAL, "not a kcs dataset", "no root attribute schema");

    p = tmp("otherschema.h5");
    o = valid;
    o.schema = "nexus";
    make_fake(p, &o);
    expect_fail(p, KCS_E_INVAL, "schema is \"nexus\"", NULL);

    p = tmp("version2.h5");
    o = valid;
    o.version = KCS_SCHEMA_VERSION + 1;
    make_fake(p, &o);
    char want[64];
    snprintf(want, sizeof want, "schema_version %d is not supported", KCS_SCHEMA_VERSION + 1);
    expect_fail(p, KCS_E_INVAL, want, NULL);
}

static void test_read_bad_tables(void)
{
    const char *p = tmp("notau.h5");
    fake o = valid;
    o.drop = "tau";
    make_fake(p, &o);
    char want[600];
    snprintf(want, sizeof want, "%s: /results: not a kcs results table (missing field tau)", p);
    kcs_error err = {0};
    kcs_store_reader *r = NULL;
    CU_ASSERT_EQUAL(kcs_store_open_read(p, &r, &err), KCS_E_INVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, want);

    p = tmp("taustring.h5");
    o = valid;
    o.tau_string = 1;
    make_fake(p, &o);
    expect_fail(p, KCS_E_INVAL, "/results: not a kcs results table (field tau is string", NULL);

    p = tmp("extrarows.h5");
    o = valid;
    o.extra_rows = 1;
    make_fake(p, &o);
    expect_fail(p, KCS_E_INVAL, "/results", "do not match");

    p = tmp("nocases.h5");
    o = valid;
    o.no_cases = 1;
    make_fake(p, &o);
    expect_fail(p, KCS_E_INVAL, "/cases: missing", NULL);
}

/* The test's own directory: plain files only. */
static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            remove(tmp(e->d_name));
    if (d)
        closedir(d);
    rmdir(path);
}

static const ut_test tests[] = {
    {"result type", test_result_type},
    {"case and rank types", test_case_and_rank_types},
    {"read a valid file", test_read_valid},
    {"reader errors", test_read_errors},
    {"samples of schema 1 and 2", test_read_samples},
    {"reader refuses bad tables", test_read_bad_tables},
};

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/kcs_test_store.", base && base[0] ? base : "/tmp");
    size_t n = strlen(dir);
    if (n + 7 > sizeof dir) {
        fprintf(stderr, "TMPDIR too long\n");
        return 1;
    }
    memset(dir + n, 'X', 6); /* the mkdtemp template */
    dir[n + 6] = '\0';
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    kcs_h5_quiet();
    unsigned f = (unsigned)ut_run("store", tests);
    if (f == 0)
        remove_dir(dir);
    else
        fprintf(stderr, "test files kept in %s\n", dir);
    return f != 0;
}
