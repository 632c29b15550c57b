/* Unit tests of the contract loader (src/contract.c, contract_print.c):
 * every malformed contract in tests/contracts_bad/ must fail with the
 * diagnostics of its .expect file (one substring per line); the real
 * contracts/C-PRC-01.yaml must load with the values written in it. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract.h"
#include "verdict.h"

#ifndef KCS_TEST_SOURCE_DIR
#define KCS_TEST_SOURCE_DIR "."
#endif

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[len] = '\0';
    fclose(f);
    return buf;
}

static int sym(const char *name)
{
    const kcs_expr_symtab *t = kcs_verdict_symtab();
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->syms[i].name, name))
            return i;
    CU_FAIL("symbol missing from kcs_verdict_symtab");
    return 0;
}

static void test_bad_contracts(void)
{
    const char *dir = KCS_TEST_SOURCE_DIR "/tests/contracts_bad";
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *de;
    int checked = 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
            continue;
        char path[1024], expect_path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(expect_path, sizeof expect_path, "%s/%.*s.expect", dir, (int)(len - 5),
                 de->d_name);
        char *expect = slurp(expect_path);
        CU_ASSERT_PTR_NOT_NULL(expect);
        if (!expect) {
            fprintf(stderr, "\nmissing %s\n", expect_path);
            continue;
        }
        kcs_contract *c = NULL;
        kcs_error err = {0};
        int rc = kcs_contract_load(path, &c, &err);
        CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
        CU_ASSERT_PTR_NULL(c);
        if (rc == 0)
            kcs_contract_free(c);
        /* every non-empty line of the .expect file, with the directory
         * prefix the loader puts in front of the file name */
        int lines = 0;
        for (char *line = strtok(expect, "\n"); line; line = strtok(NULL, "\n")) {
            if (!*line)
                continue;
            lines++;
            char want[600];
            if (!strncmp(line, de->d_name, len))
                snprintf(want, sizeof want, "%s/%s", dir, line);
            else
                snprintf(want, sizeof want, "%s", line);
            if (!strstr(err.msg, want)) {
                fprintf(stderr, "\n%s:\n  wanted: %s\n  got:    %s\n", de->d_name, want, err.msg);
                CU_FAIL("diagnostic not found");
            }
        }
        CU_ASSERT(lines > 0);
        free(expect);
        checked++;
    }
    closedir(d);
    CU_ASSERT(checked >= 12);
}

static void test_prc01(void)
{
    const char *path = KCS_TEST_SOURCE_DIR "/contracts/C-PRC-01.yaml";
    kcs_contract *c = NULL;
    kcs_error err = {0};
    int rc = kcs_contract_load(path, &c, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(c->id, "C-PRC-01");
    CU_ASSERT_STRING_EQUAL(c->family, "PRC");
    CU_ASSERT_STRING_EQUAL(c->primitive, "path_dependence");
    CU_ASSERT_STRING_EQUAL(c->path, path);
    char *text = slurp(path);
    CU_ASSERT_STRING_EQUAL(c->text, text);
    free(text);
    CU_ASSERT_EQUAL(c->ops, (1u << KCS_OP_GEMM) | (1u << KCS_OP_BATCHED_GEMM) |
                                (1u << KCS_OP_ATTENTION));
    CU_ASSERT_EQUAL(c->dtype_in,
                    (1u << KCS_FMT_BF16) | (1u << KCS_FMT_FP16) | (1u << KCS_FMT_FP32));
    CU_ASSERT_EQUAL(c->dtype_acc.bits, 0);
    CU_ASSERT_EQUAL(c->dtype_acc.fmt, KCS_FMT_FP32);
    CU_ASSERT_EQUAL(c->dtype_out, KCS_FMT_FP32);
    CU_ASSERT_EQUAL(c->k_min, 1);
    CU_ASSERT_EQUAL(c->k_max, 1048576);
    CU_ASSERT_EQUAL(c->m_min, 1);
    CU_ASSERT_EQUAL(c->m_max, INT64_MAX);
    CU_ASSERT_EQUAL(c->tol_structure, KCS_TOL_BACKWARD_ERROR);
    CU_ASSERT(strstr(c->derivation, "Thm 3.5") != NULL);
    CU_ASSERT_EQUAL(c->oracle, KCS_ORACLE_FP64);
    CU_ASSERT_EQUAL_FATAL(c->n_shapes, 3);
    CU_ASSERT(c->shapes[0].m == 64 && c->shapes[0].n == 64 && c->shapes[0].k == 256 &&
              c->shapes[0].batch == 0);
    CU_ASSERT(c->shapes[2].m == 32 && c->shapes[2].n == 32 && c->shapes[2].k == 4096);
    CU_ASSERT_EQUAL_FATAL(c->n_dists, 2);
    CU_ASSERT_EQUAL(c->dists[0], KCS_DIST_NORMAL);
    CU_ASSERT_EQUAL(c->dists[1], KCS_DIST_UNIFORM_PM1);
    CU_ASSERT_EQUAL(c->trials, 2);
    CU_ASSERT(c->guard_poison && c->guard_fresh_inputs && c->guard_revalidate);
    CU_ASSERT_EQUAL_FATAL(c->n_sigs, 3);
    CU_ASSERT_STRING_EQUAL(c->sigs[0].name, "accumulator-narrower-than-declared");
    CU_ASSERT_STRING_EQUAL(c->sigs[1].name, "unwritten-outputs");

    /* eta = 2 k u(fp32) = 2 * 4096 * 2^-24 = 2^-11 at k = 4096 */
    const kcs_expr_symtab *tab = kcs_verdict_symtab();
    double *v = calloc((size_t)tab->n, sizeof *v);
    v[sym("k")] = 4096;
    v[sym("dtype_acc")] = KCS_FMT_FP32;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->eta, v), 2.0 * 4096 * ldexp(1.0, -24));
    CU_ASSERT_EQUAL(kcs_expr_eval(c->eta, v), ldexp(1.0, -11));
    /* the narrow-accumulator clause: fp32 has p = 24, so it fires below 20 bits */
    v[sym("tau")] = 3;
    v[sym("effective_acc_bits")] = 11;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[0].when, v), 1.0);
    v[sym("effective_acc_bits")] = 20;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[0].when, v), 0.0);
    v[sym("effective_acc_bits")] = 11;
    v[sym("tau")] = 0.5;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[0].when, v), 0.0);
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[1].when, v), 0.0);
    v[sym("sentinel_count")] = 1;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[1].when, v), 1.0);
    free(v);
    kcs_contract_free(c);
}

/* print(load(print(c))) == print(c), and the reloaded contract agrees. */
static void test_print_roundtrip(void)
{
    kcs_contract *c = NULL, *c2 = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_contract_load(KCS_TEST_SOURCE_DIR "/contracts/C-PRC-01.yaml", &c,
                                            &err), 0);
    char *buf1 = NULL, *buf2 = NULL, *js = NULL;
    size_t len1 = 0, len2 = 0, lenj = 0;
    FILE *f = open_memstream(&buf1, &len1);
    CU_ASSERT_EQUAL(kcs_contract_print(c, f, false), 0);
    fclose(f);
    int rc = kcs_contract_load_string("printed.yaml", buf1, &c2, &err);
    if (rc)
        fprintf(stderr, "\n%s\n---\n%s\n", err.msg, buf1);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    f = open_memstream(&buf2, &len2);
    CU_ASSERT_EQUAL(kcs_contract_print(c2, f, false), 0);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf1, buf2);
    CU_ASSERT_STRING_EQUAL(c2->path, "printed.yaml");
    CU_ASSERT_EQUAL(c2->ops, c->ops);
    CU_ASSERT_EQUAL(c2->dtype_in, c->dtype_in);
    CU_ASSERT_EQUAL(c2->k_max, c->k_max);
    CU_ASSERT_EQUAL(c2->n_shapes, c->n_shapes);
    CU_ASSERT_STRING_EQUAL(c2->derivation, c->derivation);
    CU_ASSERT_STRING_EQUAL(c2->sigs[2].explain, c->sigs[2].explain);
    CU_ASSERT(strstr(buf1, "id: C-PRC-01\n") != NULL);
    CU_ASSERT(strstr(buf1, "  eta: \"2 * k * u(dtype_acc)\"\n") != NULL);

    f = open_memstream(&js, &lenj);
    CU_ASSERT_EQUAL(kcs_contract_print(c, f, true), 0);
    fclose(f);
    CU_ASSERT(lenj > 2 && js[0] == '{' && !strcmp(js + lenj - 2, "}\n"));
    CU_ASSERT(strstr(js, "\"ops\": [\"gemm\", \"batched_gemm\", \"attention\"]") != NULL);
    CU_ASSERT(strstr(js, "\"shapes\": [[64, 64, 256], [64, 64, 1024], [32, 32, 4096]]") != NULL);
    free(buf1);
    free(buf2);
    free(js);
    kcs_contract_free(c);
    kcs_contract_free(c2);
}

/* A valid contract text with line `line` (1-based) replaced by repl. */
static char *variant(int line, const char *repl)
{
    static const char *const base[] = {
        "id: C-ORD-02",
        "title: t",
        "family: ORD",
        "primitive: path_dependence",
        "scope: { ops: [reduce_sum, dot] }",
        "precondition: { dtype_in: fp32, dtype_acc: 'bits:14', dtype_out: fp32 }",
        "postcondition: bitwise equal across runs",
        "tolerance: { structure: invariant, eta: 0, quantity: distinct_digests - 1,",
        "             derivation: exact equality }",
        "oracle: { kind: 'model:nvidia-h100' }",
        "measurement:",
        "  shapes: [[4, 1, 1000, 2]]",
        "  inputs: cancellation",
        "  trials: 3",
        "  guards: { poison: none, fresh_inputs: false, revalidate: true }",
        "signature:",
        "  - { name: nondeterministic, when: max_abs > 0, explain: runs differ }",
    };
    char *s = calloc(1, 4096);
    for (int i = 0; i < (int)(sizeof base / sizeof base[0]); i++) {
        strcat(s, i + 1 == line ? repl : base[i]);
        strcat(s, "\n");
    }
    return s;
}

static void test_inline(void)
{
    kcs_contract *c = NULL;
    kcs_error err = {0};
    char *t = variant(0, "");
    int rc = kcs_contract_load_string("v.yaml", t, &c, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    free(t);
    CU_ASSERT_EQUAL(c->dtype_in, 1u << KCS_FMT_FP32); /* a scalar is a list of one */
    CU_ASSERT_EQUAL(c->dtype_acc.bits, 14);
    CU_ASSERT_EQUAL(c->tol_structure, KCS_TOL_INVARIANT); /* eta 0 allowed for invariant */
    CU_ASSERT_EQUAL(c->oracle, KCS_ORACLE_MODEL);
    CU_ASSERT_STRING_EQUAL(c->oracle_profile, "nvidia-h100");
    CU_ASSERT_EQUAL(c->shapes[0].batch, 2);
    CU_ASSERT_EQUAL(c->n_dists, 1);
    CU_ASSERT_EQUAL(c->dists[0], KCS_DIST_CANCELLATION);
    CU_ASSERT_FALSE(c->guard_poison);
    CU_ASSERT_FALSE(c->guard_fresh_inputs);
    CU_ASSERT_EQUAL(c->value_dists, (1u << KCS_DIST_COUNT) - 1); /* default: any */
    CU_ASSERT(c->values_finite);
    /* the normal form of this flow-style variant reads back identically */
    char *p1 = NULL, *p2 = NULL;
    size_t l1 = 0, l2 = 0;
    FILE *f = open_memstream(&p1, &l1);
    kcs_contract_print(c, f, false);
    fclose(f);
    kcs_contract *c2 = NULL;
    rc = kcs_contract_load_string("v2.yaml", p1, &c2, &err);
    if (rc)
        fprintf(stderr, "\n%s\n---\n%s\n", err.msg, p1);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    f = open_memstream(&p2, &l2);
    kcs_contract_print(c2, f, false);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(p1, p2);
    CU_ASSERT(strstr(p1, "oracle: {kind: model:nvidia-h100}\n") != NULL);
    CU_ASSERT(strstr(p1, "  dtype_acc: bits:14\n") != NULL);
    CU_ASSERT(strstr(p1, "  values: {dist: any, finite: true}\n") != NULL);
    CU_ASSERT_STRING_EQUAL(c2->oracle_profile, "nvidia-h100");
    CU_ASSERT_EQUAL(c2->dtype_acc.bits, 14);
    free(p1);
    free(p2);
    kcs_contract_free(c2);
    kcs_contract_free(c);

    static const struct { int line; const char *repl; const char *want;
    } bad[] = {
        /* derivation phrases match case-insensitively across line breaks */
        {8,
         "tolerance: { structure: invariant, eta: 0, derivation: \"eta Measured  FROM\\n"
         "the Candidate\" }",
         "v.yaml:8:57: tolerance.derivation: eta must come from first "
         "principles"},
        {8, "tolerance: { structure: invariant, eta: 0, derivation: \"  \" }",
         "tolerance.derivation: must not be empty"},
        /* eta may be a bare YAML number; negative is rejected */
        {8, "tolerance: { structure: ulp, eta: -1, derivation: d }",
         "v.yaml:8:35: tolerance.eta: is -1 for shape [4, 1, 1000]"},
        {8, "tolerance: { structure: ulp, eta: 1 / (k - 1000), derivation: d }",
         "tolerance.eta: is inf for shape"},
        {10, "oracle: { kind: 'model:' }", "v.yaml:10:18: oracle.kind: bad profile name"},
        {10, "oracle: { kind: exact, extra: 1 }", "v.yaml:10:24: oracle.extra: unknown key"},
        {12, "  shapes: [64, 64, 256]",
         "v.yaml:12:12: measurement.shapes: expected a list of "
         "shapes"},
        {12, "  shapes: [[70000, 70000, 1]]", "more than 2^31 elements"},
        {13, "  inputs: [normal, gaussian]",
         "v.yaml:13:20: measurement.inputs[1]: unknown "
         "distribution 'gaussian'"},
        {14, "  trials: 1.5", "measurement.trials: expected an integer, got '1.5'"},
        {15, "  guards: { poison: sentinel, fresh_inputs: yes, revalidate: true }",
         "v.yaml:15:45: measurement.guards.fresh_inputs: expected a boolean"},
        {17, "  - { name: a, when: \"max_abs >\", explain: e }",
         "v.yaml:17:32: signature[0].when: expected a number, a name or '(', got end of "
         "expression (column 10"},
        {17, "  - just text", "v.yaml:17:5: signature[0]: expected a mapping"},
        {17, "  []", "v.yaml:16:1: signature: must not be empty"},
        {5, "scope: { ops: [gemm, gemm] }", "v.yaml:5:22: scope.ops[1]: 'gemm' is listed twice"},
        {6,
         "precondition: { dtype_in: fp32, dtype_acc: fp32, dtype_out: fp32, shape: { k: [9, 2] } }",
         "precondition.shape.k: min 9 is larger than max 2"},
        {4, "primitive: nondeterminism", "v.yaml:4:12: primitive: unknown value 'nondeterminism'"},
        {2, "title: [a]", "v.yaml:2:9: title: expected a string, got a sequence"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = variant(bad[i].line, bad[i].repl);
        c = NULL;
        rc = kcs_contract_load_string("v.yaml", t, &c, &err);
        CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
        CU_ASSERT_PTR_NULL(c);
        if (rc == 0)
            kcs_contract_free(c);
        if (rc == 0 || !strstr(err.msg, bad[i].want)) {
            fprintf(stderr, "\ncase %zu: wanted '%s'\n  got '%s'\n", i, bad[i].want,
                    rc ? err.msg : "(loaded)");
            CU_FAIL("diagnostic");
        }
        free(t);
    }
}

static void test_names_and_io(void)
{
    for (int d = 0; d < KCS_DIST_COUNT; d++) {
        kcs_dist back;
        CU_ASSERT_EQUAL(kcs_dist_parse(kcs_dist_name((kcs_dist)d), &back), 0);
        CU_ASSERT_EQUAL((int)back, d);
    }
    kcs_dist dd = KCS_DIST_NORMAL;
    CU_ASSERT_EQUAL(kcs_dist_parse("gaussian", &dd), KCS_E_INVAL);
    CU_ASSERT_STRING_EQUAL(kcs_dist_name(KCS_DIST_UNIFORM_PM1), "uniform_pm1");
    CU_ASSERT_STRING_EQUAL(kcs_tol_structure_name(KCS_TOL_POINTWISE_ABSOLUTE),
                           "pointwise_absolute");
    CU_ASSERT_STRING_EQUAL(kcs_tol_structure_name(KCS_TOL_COMPOSITE), "composite");
    kcs_contract *c = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_contract_load("/nonexistent/C-X.yaml", &c, &err), KCS_E_IO);
    CU_ASSERT_PTR_NULL(c);
    kcs_contract_free(NULL);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("contract", NULL, NULL);
    CU_add_test(s, "malformed contracts", test_bad_contracts);
    CU_add_test(s, "C-PRC-01", test_prc01);
    CU_add_test(s, "print round trip", test_print_roundtrip);
    CU_add_test(s, "inline variants", test_inline);
    CU_add_test(s, "names and I/O", test_names_and_io);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    return f != 0;
}
