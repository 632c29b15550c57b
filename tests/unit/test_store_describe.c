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

static void test_attributes_read_back(void)
{
    char path[256];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/kcs_test_describe.%d.h5", base && base[0] ? base : "/tmp",
             (int)getpid());
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CU_ASSERT_TRUE_FATAL(file >= 0);
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

int main(void)
{
    kcs_h5_quiet();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("store_describe", NULL, NULL);
    CU_add_test(s, "every field documented", test_every_field_documented);
    CU_add_test(s, "attributes read back", test_attributes_read_back);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails != 0;
}
