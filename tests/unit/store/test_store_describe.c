/* The dataset's self-description (src/store_describe.c): every field of
 * every table has a description and units, no description names a field
 * that does not exist, and the attributes written on a table read back. */
#define _POSIX_C_SOURCE 200809L

#include <CUnit/Basic.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "store_describe.h"
#include "store_h5.h"
#include "store_read.h"
#include "unit_helpers.h"

static const char *tables[] = {"results", "cases", "ranks"};

static const kcs_field *fields_of(const char *table, int *n_p)
{
    if (!strcmp(table, "results"))
        return kcs_store_result_fields(n_p);
    if (!strcmp(table, "cases"))
        return kcs_store_case_fields(n_p);
    return kcs_store_rank_fields(n_p);
}

static void test_every_field_documented(void)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        int nf = 0, nd = 0;
        const kcs_field *f = fields_of(tables[t], &nf);
        const kcs_field_doc *d = kcs_store_field_docs(tables[t], &nd);
        CU_ASSERT_TRUE_FATAL(nf > 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        for (int i = 0; i < nf; i++) {
            const kcs_field_doc *fd = kcs_store_field_doc(tables[t], f[i].name);
            if (!fd)
                fprintf(stderr, "%s.%s has no description\n", tables[t], f[i].name);
            CU_ASSERT_PTR_NOT_NULL_FATAL(fd);
            CU_ASSERT_TRUE(strlen(fd->description) > 8);
            CU_ASSERT_TRUE(strlen(fd->units) > 0);
        }
        /* and nothing documented that the record lacks */
        for (int j = 0; j < nd; j++) {
            int found = 0;
            for (int i = 0; i < nf; i++)
                found |= !strcmp(f[i].name, d[j].name);
            if (!found)
                fprintf(stderr, "%s: description of a missing field %s\n", tables[t], d[j].name);
            CU_ASSERT_TRUE(found);
        }
        CU_ASSERT_EQUAL(nd, nf);
    }
    int n = 7;
    CU_ASSERT_PTR_NULL(kcs_store_field_docs("nope", &n));
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(kcs_store_field_doc("results", "no_such_field"));
}

/* A new HDF5 file TMPDIR/kcs_test_TAG.PID.h5 (its path into path). */
static hid_t scratch_file(const char *tag, char *path, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(path, len, "%s/kcs_test_%s.%d.h5", base && base[0] ? base : "/tmp", tag,
             (int)getpid());
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_TRUE_FATAL(file >= 0);
    return file;
}

static void test_attributes_read_back(void)
{
    char path[256];
    hid_t file = scratch_file("describe", path, sizeof path);
    hid_t t = kcs_h5_result_type();
    hsize_t one = 1;
    hid_t sp = H5Screate_simple(1, &one, NULL);
    hid_t d = H5Dcreate2(file, "results", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_TRUE_FATAL(d >= 0);
    int nf;
    const kcs_field *f = kcs_store_result_fields(&nf);
    CU_ASSERT_EQUAL(kcs_store_describe(d, "results", f, nf, NULL), 0);
    /* a field the table does not document is refused, by name */
    kcs_field bogus = {"bogus", KCS_FIELD_F64, 0, 8};
    const char *missing = NULL;
    CU_ASSERT_EQUAL(kcs_store_describe(d, "results", &bogus, 1, &missing), -2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(missing);
    CU_ASSERT_STRING_EQUAL(missing, "bogus");
    for (int i = 0; i < nf; i++) {
        char name[96], *v = NULL;
        snprintf(name, sizeof name, "%s.description", f[i].name);
        CU_ASSERT_EQUAL_FATAL(kcs_h5_get_str(d, name, &v), 0);
        CU_ASSERT_STRING_EQUAL(v, kcs_store_field_doc("results", f[i].name)->description);
        free(v);
        v = NULL;
        snprintf(name, sizeof name, "%s.units", f[i].name);
        CU_ASSERT_EQUAL_FATAL(kcs_h5_get_str(d, name, &v), 0);
        CU_ASSERT_STRING_EQUAL(v, kcs_store_field_doc("results", f[i].name)->units);
        free(v);
    }
    hid_t g = H5Gcreate2(file, "samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_EQUAL(kcs_store_describe_samples(g), 0);
    char *pos = NULL;
    CU_ASSERT_EQUAL_FATAL(kcs_h5_get_str(g, "positions", &pos), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(pos, "floor(j * N / n_samples)"));
    free(pos);
    H5Gclose(g);
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(file);
    remove(path);
}

static void test_held_out_cases(void)
{
    char path[256];
    hid_t file = scratch_file("held_out", path, sizeof path);
    hid_t g1 = H5Gcreate2(file, "some", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g0 = H5Gcreate2(file, "none", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t gx = H5Gcreate2(file, "many", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    enum { N = KCS_HELD_OUT_ATTR_MAX + 2 };
    static kcs_case cs[N];
    for (int i = 0; i < N; i++)
        cs[i] = (kcs_case){.id = i, .held_out = (i % 3 == 1)};
    kcs_plan some = {.cases = cs, .n_cases = 7};
    CU_ASSERT_EQUAL(kcs_store_describe_held_out(g1, &some), 0);
    int64_t count = -1;
    CU_ASSERT_EQUAL(kcs_h5_get_i64(g1, "held_out_count", &count), 0);
    CU_ASSERT_EQUAL(count, 2);
    hid_t a = H5Aopen(g1, "held_out_cases", H5P_DEFAULT);
    CU_ASSERT_TRUE_FATAL(a >= 0);
    hid_t sp = H5Aget_space(a);
    CU_ASSERT_EQUAL(H5Sget_simple_extent_npoints(sp), 2);
    int64_t ids[2] = {0, 0};
    CU_ASSERT_TRUE(H5Aread(a, H5T_NATIVE_INT64, ids) >= 0);
    CU_ASSERT_EQUAL(ids[0], 1);
    CU_ASSERT_EQUAL(ids[1], 4);
    H5Sclose(sp);
    H5Aclose(a);
    /* no held-out case: a count of 0 and an empty (null) attribute */
    for (int i = 0; i < 3; i++)
        cs[i].held_out = 0;
    kcs_plan none = {.cases = cs, .n_cases = 3};
    CU_ASSERT_EQUAL(kcs_store_describe_held_out(g0, &none), 0);
    CU_ASSERT_EQUAL(kcs_h5_get_i64(g0, "held_out_count", &count), 0);
    CU_ASSERT_EQUAL(count, 0);
    a = H5Aopen(g0, "held_out_cases", H5P_DEFAULT);
    CU_ASSERT_TRUE_FATAL(a >= 0);
    sp = H5Aget_space(a);
    CU_ASSERT_EQUAL(H5Sget_simple_extent_type(sp), H5S_NULL);
    H5Sclose(sp);
    H5Aclose(a);
    /* more than an attribute holds: counted, listed nowhere, said so */
    for (int i = 0; i < N; i++)
        cs[i].held_out = 1;
    kcs_plan many = {.cases = cs, .n_cases = N};
    CU_ASSERT_EQUAL(kcs_store_describe_held_out(gx, &many), 0);
    CU_ASSERT_EQUAL(kcs_h5_get_i64(gx, "held_out_count", &count), 0);
    CU_ASSERT_EQUAL(count, N);
    CU_ASSERT_TRUE(H5Aexists(gx, "held_out_cases") == 0);
    CU_ASSERT_TRUE(H5Aexists(gx, "held_out_cases_omitted") > 0);
    H5Gclose(g1);
    H5Gclose(g0);
    H5Gclose(gx);
    H5Fclose(file);
    remove(path);
}

static const ut_test tests[] = {
    {"every field documented", test_every_field_documented},
    {"attributes read back", test_attributes_read_back},
    {"held-out cases", test_held_out_cases},
};

int main(void)
{
    kcs_h5_quiet();
    return ut_run("store_describe", tests);
}
