/* Raw-data integrity (issue 43): the canonical content digest
 * (src/store/store_digest.c) and the schema validation of rows
 * (src/store/store_validate.c). The digest must not depend on layout,
 * filters or creation order, and must change with any value, name or
 * type width; validation must refuse each value no writer produces,
 * naming row and field. */
#include <CUnit/CUnit.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "store_h5.h"
#include "store_read.h"
#include "unit_helpers.h"
#include "verdict.h"

/* A small group /g: attribute "a" (a string), dataset "x" (int32 [6]) and
 * dataset "y" (float64 [2, 3]), created in the order given by swap, with
 * x chunked and compressed when packed; x_type its integer type; bump adds
 * 1 to y[1][2]. */
static uint64_t digest_of(int packed, int swap, hid_t x_type, int bump, const char *attr)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/kcs-test-digest-%d.h5", (int)getpid());
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int32_t x[6] = {1, -2, 3, 40000, 5, 6};
    double y[2][3] = {{0.5, 1.5, -2.0}, {1e300, 0.0, 3.25}};
    y[1][2] += bump;
    hsize_t nx = 6, ny[2] = {2, 3}, chunk = 2;
    for (int step = 0; step < 2; step++) {
        if ((step == 0) != (swap == 0)) {
            hid_t sp = H5Screate_simple(1, &nx, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
            if (packed) {
                H5Pset_chunk(dcpl, 1, &chunk);
                H5Pset_deflate(dcpl, 5);
                H5Pset_fletcher32(dcpl);
            }
            hid_t d = H5Dcreate2(g, "x", x_type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
            H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
            H5Dclose(d);
            H5Pclose(dcpl);
            H5Sclose(sp);
        } else {
            hid_t sp = H5Screate_simple(2, ny, NULL);
            hid_t d = H5Dcreate2(g, "y", H5T_IEEE_F64BE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, y);
            H5Dclose(d);
            H5Sclose(sp);
        }
    }
    kcs_h5_put_str(g, "a", attr);
    uint64_t dg = 0;
    char why[256];
    CU_ASSERT_EQUAL(kcs_h5_digest(f, "/g", 0, &dg, why, sizeof why), 0);
    H5Gclose(g);
    H5Fclose(f);
    remove(path);
    return dg;
}

static void test_digest_canonical(void)
{
    uint64_t base = digest_of(0, 0, H5T_STD_I32LE, 0, "x");
    /* layout, filters, byte order of a value and creation order do not count */
    CU_ASSERT_EQUAL(digest_of(1, 0, H5T_STD_I32LE, 0, "x"), base);
    CU_ASSERT_EQUAL(digest_of(0, 1, H5T_STD_I32LE, 0, "x"), base);
    CU_ASSERT_EQUAL(digest_of(0, 0, H5T_STD_I32BE, 0, "x"), base);
    /* a value, an attribute, a width or a sign does */
    CU_ASSERT_NOT_EQUAL(digest_of(0, 0, H5T_STD_I32LE, 1, "x"), base);
    CU_ASSERT_NOT_EQUAL(digest_of(0, 0, H5T_STD_I32LE, 0, "y"), base);
    CU_ASSERT_NOT_EQUAL(digest_of(0, 0, H5T_STD_I64LE, 0, "x"), base);
    CU_ASSERT_NOT_EQUAL(digest_of(0, 0, H5T_STD_U32LE, 0, "x"), base);
}

static void good_rows(kcs_result_rec *r, int n, int n_ranks, int T)
{
    memset(r, 0, sizeof *r * (size_t)n);
    for (int i = 0; i < n; i++) {
        r[i].rank = i / T % n_ranks;
        r[i].trial = i % T;
        r[i].guard_ok = 1;
        snprintf(r[i].status, sizeof r[i].status, "%s", i == 3 ? "skipped" : "ok");
        snprintf(r[i].verdict, sizeof r[i].verdict, "%s", i == 3 ? "" : "within_tolerance");
    }
}

static void refused(int rc, const kcs_error *e, const char *want)
{
    CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
    if (!strstr(e->msg, want))
        fprintf(stderr, "\n  message \"%s\" lacks \"%s\"\n", e->msg, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, want));
}

static void test_results_rows(void)
{
    enum { NR = 2, T = 2, N = 8 };
    kcs_result_rec r[N];
    kcs_error e = {0};
    good_rows(r, N, NR, T);
    CU_ASSERT_EQUAL(kcs_store_validate_results("d.h5", r, 0, N, NR, T, &e), 0);
    snprintf(r[5].status, sizeof r[5].status, "bogus");
    refused(kcs_store_validate_results("d.h5", r, 0, N, NR, T, &e), &e,
            "d.h5: /results: row 5: field status: \"bogus\"");
    /* rows handed out from row 16 on: the row number is the table's */
    refused(kcs_store_validate_results("d.h5", r, 16, N, NR, T, &e), &e, "row 21: field status");
    good_rows(r, N, NR, T);
    snprintf(r[2].verdict, sizeof r[2].verdict, "pass");
    refused(kcs_store_validate_results("d.h5", r, 0, N, NR, T, &e), &e, "row 2: field verdict");
    good_rows(r, N, NR, T);
    r[1].guard_ok = 7;
    refused(kcs_store_validate_results("d.h5", r, 0, N, NR, T, &e), &e, "row 1: field guard_ok");
    good_rows(r, N, NR, T);
    r[6].rank = 0; /* row 6 is (case 1, rank 1, trial 0) */
    refused(kcs_store_validate_results("d.h5", r, 0, N, NR, T, &e), &e, "row 6: field rank");
    good_rows(r, N, NR, T);
    r[0].nan_count = -1;
    refused(kcs_store_validate_results("d.h5", r, 0, N, NR, T, &e), &e, "row 0: field nan_count");
}

static void test_verdict_names(void)
{
    /* the store's list is the judge's: every verdict kcs writes reads */
    for (int v = 0; v <= KCS_VERDICT_NOT_CLAIMED; v++)
        CU_ASSERT_TRUE(kcs_store_verdict_known(kcs_verdict_name((kcs_verdict_kind)v)));
    CU_ASSERT_FALSE(kcs_store_verdict_known("within tolerance"));
}

static kcs_case_rec good_case(void)
{
    kcs_case_rec c;
    memset(&c, 0, sizeof c);
    snprintf(c.op, sizeof c.op, "gemm");
    snprintf(c.dtype_in, sizeof c.dtype_in, "bf16");
    snprintf(c.dtype_out, sizeof c.dtype_out, "fp32");
    snprintf(c.input_dist, sizeof c.input_dist, "normal");
    c.m = 64, c.n = 64, c.k = 8192, c.trials = 2;
    return c;
}

static void test_cases_rows(void)
{
    kcs_case_rec c = good_case();
    kcs_error e = {0};
    CU_ASSERT_EQUAL(kcs_store_validate_cases("d.h5", &c, 0, 1, 2, &e), 0);
    c.m = 1000000000000;
    refused(kcs_store_validate_cases("d.h5", &c, 4, 1, 2, &e), &e,
            "d.h5: /cases: row 4: field m: 1000000000000 is outside");
    c = good_case();
    c.m = c.n = c.k = 1 << 20; /* each in range, 2^60 multiply-adds together */
    refused(kcs_store_validate_cases("d.h5", &c, 0, 1, 2, &e), &e, "multiply-adds");
    c = good_case();
    c.trials = 3;
    refused(kcs_store_validate_cases("d.h5", &c, 0, 1, 2, &e), &e, "field trials: 3");
    c = good_case();
    snprintf(c.dtype_in, sizeof c.dtype_in, "fp7");
    refused(kcs_store_validate_cases("d.h5", &c, 0, 1, 2, &e), &e, "field dtype_in");
    c = good_case();
    snprintf(c.op, sizeof c.op, "gemmm");
    refused(kcs_store_validate_cases("d.h5", &c, 0, 1, 2, &e), &e, "field op");
    c = good_case();
    snprintf(c.input_dist, sizeof c.input_dist, "cauchy");
    refused(kcs_store_validate_cases("d.h5", &c, 0, 1, 2, &e), &e, "field input_dist");
}

static const ut_test tests[] = {
    {"digest: canonical form", test_digest_canonical},
    {"results rows", test_results_rows},
    {"verdict names", test_verdict_names},
    {"cases rows", test_cases_rows},
};

int main(void)
{
    kcs_h5_quiet();
    return ut_run("store_validate", tests);
}
