/* Unit tests of the contract loader (src/lang/contract.c, contract_print.c):
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
#include "declares.h"
#include "verdict.h"
#include "unit_helpers.h"

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
    CU_ASSERT(checked >= 48);
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
    char *text = slurp(KCS_TEST_SOURCE_DIR "/contracts/C-PRC-01/C-PRC-01.yaml"); /* the folder's */
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
    /* clause 0 normwise (gamma_k(2u)), clause 1 exact on exact-sum inputs */
    CU_ASSERT_EQUAL(c->tol_structure, KCS_TOL_COMPOSITE);
    CU_ASSERT_EQUAL_FATAL(c->n_clauses, 2);
    CU_ASSERT_EQUAL(c->clauses[0].structure, KCS_TOL_BACKWARD_ERROR);
    CU_ASSERT_EQUAL(c->clauses[1].structure, KCS_TOL_INVARIANT);
    CU_ASSERT_STRING_EQUAL(c->clauses[1].quantity_text, "exact_inputs * max_abs");
    CU_ASSERT(strstr(c->derivation, "Thm 3.5") != NULL);
    CU_ASSERT_EQUAL(c->oracle, KCS_ORACLE_FP64);
    CU_ASSERT_EQUAL_FATAL(c->n_shapes, 4);
    CU_ASSERT(c->shapes[0].m == 64 && c->shapes[0].n == 64 && c->shapes[0].k == 256 &&
              c->shapes[0].batch == 0);
    CU_ASSERT(c->shapes[2].m == 32 && c->shapes[2].n == 32 && c->shapes[2].k == 4096);
    CU_ASSERT(c->shapes[3].m == 8 && c->shapes[3].n == 8 && c->shapes[3].k == 65536);
    CU_ASSERT_EQUAL_FATAL(c->n_dists, 3);
    CU_ASSERT_EQUAL(c->dists[0], KCS_DIST_NORMAL);
    CU_ASSERT_EQUAL(c->dists[1], KCS_DIST_UNIFORM_PM1);
    CU_ASSERT_EQUAL(c->dists[2], KCS_DIST_EXACT);
    CU_ASSERT_EQUAL(c->trials, 2);
    CU_ASSERT(c->guard_poison && c->guard_fresh_inputs && c->guard_revalidate);
    /* the mechanism signatures first (a write outside the output; zero,
     * constant, unrelated, localized, scaled, offset output; the output
     * rounded once; P or the inputs rounded or truncated), then the
     * accumulator's */
    CU_ASSERT_EQUAL_FATAL(c->n_sigs, 20);
    int iacc = -1, iunw = -1, irep = -1;
    for (int i = 0; i < c->n_sigs; i++) {
        iacc = strcmp(c->sigs[i].name, "accumulator-narrower-than-declared") == 0 ? i : iacc;
        iunw = strcmp(c->sigs[i].name, "unwritten-outputs") == 0 ? i : iunw;
        irep = strcmp(c->sigs[i].name, "stale-result-replay") == 0 ? i : irep;
    }
    CU_ASSERT_FATAL(iacc >= 0 && iunw >= 0 && irep >= 0);
    CU_ASSERT_STRING_EQUAL(c->sigs[0].name, "write-past-output");
    CU_ASSERT_STRING_EQUAL(c->sigs[1].name, "zero-output");

    /* eta = gamma_k(2u) = 2 k u / (1 - 2 k u) = 2^-11 / (1 - 2^-11) at k = 4096 */
    const kcs_expr_symtab *tab = kcs_verdict_symtab();
    double *v = calloc((size_t)tab->n, sizeof *v);
    v[sym("k")] = 4096;
    v[sym("dtype_acc")] = KCS_FMT_FP32;
    CU_ASSERT_DOUBLE_EQUAL(kcs_expr_eval(c->eta, v), ldexp(1.0, -11) / (1 - ldexp(1.0, -11)),
                           1e-18);
    /* the narrow-accumulator clause: fp32 has p = 24, so it fires below 20 bits */
    v[sym("tau")] = 3;
    v[sym("effective_acc_bits")] = 11;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[iacc].when, v), 1.0);
    v[sym("effective_acc_bits")] = 20;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[iacc].when, v), 0.0);
    v[sym("replayed")] = 1; /* a replayed result is not an accumulator */
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[iacc].when, v), 0.0);
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[irep].when, v), 1.0);
    v[sym("replayed")] = 0;
    v[sym("effective_acc_bits")] = 11;
    v[sym("tau")] = 0.5;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[iacc].when, v), 0.0);
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[iunw].when, v), 0.0);
    v[sym("sentinel_count")] = 1;
    CU_ASSERT_EQUAL(kcs_expr_eval(c->sigs[iunw].when, v), 1.0);
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
    char *buf1 = ut_contract_reprint(c, "printed.yaml", &c2);
    CU_ASSERT_STRING_EQUAL(c2->path, "printed.yaml");
    CU_ASSERT_EQUAL(c2->ops, c->ops);
    CU_ASSERT_EQUAL(c2->dtype_in, c->dtype_in);
    CU_ASSERT_EQUAL(c2->k_max, c->k_max);
    CU_ASSERT_EQUAL(c2->n_shapes, c->n_shapes);
    CU_ASSERT_STRING_EQUAL(c2->derivation, c->derivation);
    CU_ASSERT_STRING_EQUAL(c2->sigs[2].explain, c->sigs[2].explain);
    CU_ASSERT(strstr(buf1, "id: C-PRC-01\n") != NULL);
    /* clause 0: gamma_k(2u), plus the output rounding where dtype_out is
     * narrower than the accumulator (the folded YAML scalar, one line) */
    CU_ASSERT(strstr(buf1, "eta: \"2 * k * u(dtype_acc) / (1 - 2 * k * u(dtype_acc)) + "
                           "min(1, max(0, bits(dtype_acc) - bits(dtype_out))) * u(dtype_out) * "
                           "(1 + 2 * k * u(dtype_acc) / (1 - 2 * k * u(dtype_acc)))\"") != NULL);
    /* precondition.dtype_out: the list, its first the default */
    CU_ASSERT(strstr(buf1, "dtype_out: [fp32, bf16, fp16]\n") != NULL);
    CU_ASSERT_EQUAL(c2->dtype_out, KCS_FMT_FP32);
    CU_ASSERT_EQUAL(c2->dtype_out_set, c->dtype_out_set);
    CU_ASSERT_EQUAL(c->dtype_out_set,
                    (1u << KCS_FMT_FP32) | (1u << KCS_FMT_BF16) | (1u << KCS_FMT_FP16));

    char *js = ut_contract_print(c, true);
    size_t lenj = strlen(js);
    CU_ASSERT(lenj > 2 && js[0] == '{' && !strcmp(js + lenj - 2, "}\n"));
    CU_ASSERT(strstr(js, "\"ops\": [\"gemm\", \"batched_gemm\", \"attention\"]") != NULL);
    CU_ASSERT(strstr(js, "\"shapes\": [[64, 64, 256], [64, 64, 1024], [32, 32, 4096], "
                         "[8, 8, 65536]]") != NULL);
    free(buf1);
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
        "tolerance: { structure: invariant, eta: 0, quantity: distinct_digests - 1, "
        "derivation: exact equality }",
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
    /* one invariant clause; c->eta mirrors it; measurement defaults */
    CU_ASSERT_EQUAL(c->n_clauses, 1);
    CU_ASSERT_EQUAL(c->clauses[0].structure, KCS_TOL_INVARIANT);
    CU_ASSERT_PTR_EQUAL(c->eta, c->clauses[0].eta);
    CU_ASSERT_PTR_EQUAL(c->eta_text, c->clauses[0].eta_text);
    CU_ASSERT_STRING_EQUAL(c->clauses[0].quantity_text, "distinct_digests - 1");
    CU_ASSERT_EQUAL(c->protocol, KCS_PROTO_ORACLE);
    CU_ASSERT_EQUAL(c->repetitions, 1);
    CU_ASSERT_EQUAL(c->n_held_out, 0);
    CU_ASSERT_STRING_EQUAL(c->attrs, "");
    CU_ASSERT(c->special_nan == 0 && c->special_inf == 0 && c->special_subnormal == 0 &&
              c->special_oob == 0);
    CU_ASSERT_EQUAL(c->seed, 0);
    /* the normal form of this flow-style variant reads back identically */
    kcs_contract *c2 = NULL;
    char *p1 = ut_contract_reprint(c, "v2.yaml", &c2);
    CU_ASSERT(strstr(p1, "oracle: {kind: model:nvidia-h100}\n") != NULL);
    CU_ASSERT(strstr(p1, "  dtype_acc: bits:14\n") != NULL);
    CU_ASSERT(strstr(p1, "  values: {dist: any, finite: true}\n") != NULL);
    CU_ASSERT(strstr(p1, "  quantity: \"distinct_digests - 1\"\n") != NULL);
    CU_ASSERT(strstr(p1, "  protocol: oracle\n") != NULL);
    CU_ASSERT(strstr(p1, "  seed: 0\n") != NULL);
    CU_ASSERT(strstr(p1, "repetitions") == NULL); /* defaults left out of YAML */
    CU_ASSERT(strstr(p1, "special") == NULL);
    CU_ASSERT_STRING_EQUAL(c2->oracle_profile, "nvidia-h100");
    CU_ASSERT_EQUAL(c2->dtype_acc.bits, 14);
    free(p1);
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
        {9, "oracle: { kind: 'model:' }", "v.yaml:9:18: oracle.kind: bad profile name"},
        {9, "oracle: { kind: exact, extra: 1 }", "v.yaml:9:24: oracle.extra: unknown key"},
        /* oracle.magnitude: a known name, fp64, attention only */
        {9, "oracle: { kind: fp64, magnitude: rms }",
         "v.yaml:9:34: oracle.magnitude: unknown magnitude 'rms' (expected first_order | "
         "random_walk)"},
        {9, "oracle: { kind: fp64, magnitude: random_walk }",
         "v.yaml:9:34: oracle.magnitude: random_walk is defined for attention only"},
        {9, "oracle: { kind: exact, magnitude: random_walk }",
         "v.yaml:9:35: oracle.magnitude: random_walk needs oracle.kind fp64, not 'exact'"},
        {11, "  shapes: [64, 64, 256]",
         "v.yaml:11:12: measurement.shapes: expected a list of "
         "shapes"},
        {11, "  shapes: [[70000, 70000, 1]]", "more than 2^31 elements"},
        {12, "  inputs: [normal, gaussian]",
         "v.yaml:12:20: measurement.inputs[1]: unknown "
         "distribution 'gaussian'"},
        {13, "  trials: 1.5", "measurement.trials: expected an integer, got '1.5'"},
        {14, "  guards: { poison: sentinel, fresh_inputs: yes, revalidate: true }",
         "v.yaml:14:45: measurement.guards.fresh_inputs: expected a boolean"},
        {16, "  - { name: a, when: \"max_abs >\", explain: e }",
         "v.yaml:16:32: signature[0].when: expected a number, a name or '(', got end of "
         "expression (column 10"},
        {16, "  - just text", "v.yaml:16:5: signature[0]: expected a mapping"},
        {16, "  []", "v.yaml:15:1: signature: must not be empty"},
        {5, "scope: { ops: [gemm, gemm] }", "v.yaml:5:22: scope.ops[1]: 'gemm' is listed twice"},
        {6, "precondition: { dtype_in: fp32, dtype_acc: fp32, dtype_out: fp32, declares: [fast] }",
         "precondition.declares[0]: unknown declaration 'fast' (expected batch_invariant | nan_mask | round_to_nearest | nan=mask | nan=propagate | oob=raise | oob=clamp | oob=zero | oob=undefined)"},
        {6, "precondition: { dtype_in: fp32, dtype_acc: fp32, dtype_out: fp32, "
            "declares: [batch_invariant, batch_invariant] }",
         "precondition.declares[1]: 'batch_invariant' is listed twice"},
        {6,
         "precondition: { dtype_in: fp32, dtype_acc: fp32, dtype_out: fp32, shape: { k: [9, 2] } }",
         "precondition.shape.k: min 9 is larger than max 2"},
        {4, "primitive: nondeterminism", "v.yaml:4:12: primitive: unknown value 'nondeterminism'"},
        {2, "title: [a]", "v.yaml:2:9: title: expected a string, got a sequence"},
        /* tolerance clauses */
        {8, "tolerance: { structure: invariant, eta: 0, derivation: d }",
         "v.yaml:8:14: tolerance.quantity: missing required key"},
        {8, "tolerance: { structure: invariant, eta: 0, quantity: \"max_abs >\", derivation: d }",
         "v.yaml:8:64: tolerance.quantity: expected a number, a name or '(', got end of"},
        {8, "tolerance: { structure: invariant, eta: 0, quantity: fp32, derivation: d }",
         "tolerance.quantity: must be a number, got a format"},
        {8, "tolerance: { structure: invariant, eta: 0, quantity: 2 * k, derivation: d }",
         "tolerance.quantity: uses no measured quantity (\"2 * k\")"},
        {8, "tolerance: { structure: invariant, eta: max_ulp, quantity: max_ulp, derivation: d }",
         "v.yaml:8:41: tolerance.eta: 'max_ulp' is measured"},
        {8, "tolerance: { structure: invariant, eta: 0, quantity: max_ulp + tau, derivation: d }",
         "v.yaml:8:64: tolerance.quantity: 'tau' is computed from the quantity"},
        {8, "tolerance: { structure: ulp, eta: 4, quantity: max_ulp, derivation: d }",
         "tolerance.quantity: only invariant clauses take a quantity"},
        {8, "tolerance: { structure: composite, derivation: d }",
         "tolerance.all: missing required key"},
        {8, "tolerance: { structure: composite, all: { structure: ulp }, derivation: d }",
         "v.yaml:8:43: tolerance.all: expected a list of clauses"},
        {8, "tolerance: { structure: composite, all: [{ structure: ulp }], derivation: d }",
         "tolerance.all[0].eta: missing required key"},
        {8, "tolerance: { structure: composite, all: [{ structure: ulp, eta: 1, when: 2 }], "
            "derivation: d }",
         "tolerance.all[0].when: unknown key (allowed: structure, eta, quantity)"},
        {8, "tolerance: { structure: composite, all: [{ structure: ulp, eta: 0 }], derivation: d }",
         "v.yaml:8:65: tolerance.all[0].eta: is 0 for shape [4, 1, 1000] with dtype_in fp32; "
         "it must be finite and positive"},
        {8, "tolerance: { structure: composite, all: [{ structure: invariant, eta: -1, "
            "quantity: raised }], derivation: d }",
         "tolerance.all[0].eta: is -1 for shape [4, 1, 1000] with dtype_in fp32; it must be "
         "finite and non-negative"},
        /* measurement keys */
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  protocol: repeat\n  repetitions: 1",
         "v.yaml:16:16: measurement.repetitions: is 1; protocol repeat compares runs"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  protocol: batch_invariance\n  held_out: [[1, 8, 1000]]",
         "v.yaml:16:15: measurement.held_out[0]: m is 1; protocol batch_invariance compares "
         "op(x[:1]) with op(x)[:1] and needs m >= 2"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  held_out: [[4, 1, 1000, 2]]",
         "v.yaml:15:15: measurement.held_out[0]: is also benchmarked as measurement.shapes[0]"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  held_out: [[4, 1, 999], [4, 1, 999]]",
         "measurement.held_out[1]: repeats measurement.held_out[0]"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  attrs: \"oob=raise;oob=clamp\"",
         "measurement.attrs: 'oob=raise;oob=clamp' is not of the form"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  attrs: \"nan=quiet\"",
         "measurement.attrs: nan=quiet: unknown value (expected propagate | mask | raise)"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  special: { nan: .nan }",
         "measurement.special.nan: nan is not a fraction in [0, 1]"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  special: [0.5]",
         "measurement.special: expected a mapping, got a list"},
        {14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
             "  seed: 1.5",
         "measurement.seed: expected an integer, got '1.5'"},
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

/* special.pinf / ninf: loaded, printed in the normal form (YAML and
 * JSON), read back identically; refused beside values.finite: true. */
static void test_special_signed_inf(void)
{
    kcs_error err = {0};
    kcs_contract *c = NULL, *c2 = NULL;
    char *t = variant(14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
                          "  special: { pinf: 0.125, ninf: 0.25, inf: 0.0625 }");
    /* values.finite: false on line 6 */
    const char *from = "dtype_out: fp32 }", *to = "dtype_out: fp32, values: { finite: false } }";
    char *at = strstr(t, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    char *t2 = calloc(1, strlen(t) + strlen(to) + 1);
    memcpy(t2, t, (size_t)(at - t));
    strcat(strcat(t2, to), at + strlen(from));
    free(t);
    t = t2;
    int rc = kcs_contract_load_string("v.yaml", t, &c, &err);
    if (rc)
        fprintf(stderr, "\n%s\n---\n%s\n", err.msg, t);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT(c->special_pinf == 0.125 && c->special_ninf == 0.25 && c->special_inf == 0.0625);
    CU_ASSERT(kcs_contract_injects_nonfinite(c));
    char *p1 = ut_contract_reprint(c, "v2.yaml", &c2);
    CU_ASSERT(strstr(p1, "  special: {inf: 0.0625, pinf: 0.125, ninf: 0.25}\n") != NULL);
    CU_ASSERT(c2->special_pinf == c->special_pinf && c2->special_ninf == c->special_ninf);
    char *js = ut_contract_print(c, true);
    CU_ASSERT(strstr(js, "\"pinf\": 0.125, \"ninf\": 0.25") != NULL);
    free(p1), free(js), free(t);
    kcs_contract_free(c);
    kcs_contract_free(c2);

    /* the default precondition (finite: true) refuses ninf, naming it */
    c = NULL;
    char *t3 = variant(14, "  guards: { poison: none, fresh_inputs: false, revalidate: true }\n"
                           "  special: { ninf: 0.5, subnormal: 0.25 }");
    rc = kcs_contract_load_string("v.yaml", t3, &c, &err);
    CU_ASSERT_EQUAL(rc, KCS_E_INVAL);
    CU_ASSERT(rc && strstr(err.msg, "v.yaml:15:20: measurement.special.ninf: injects non-finite "
                                    "inputs, but precondition.values.finite is true"));
    if (!rc)
        kcs_contract_free(c);
    free(t3);
}

static const char *const contract_ids[] = {
    "C-PRC-01", "C-PRC-02", "C-PRC-03", "C-PRC-04", "C-ORD-01", "C-ORD-02",
    "C-ORD-03", "C-ORD-04", "C-CMP-01", "C-CMP-02", "C-CMP-03", "C-EXC-01", "C-EXC-02",
    "C-PRC-05", "C-PRC-06", "C-PRC-07",
};
#define N_CONTRACTS ((int)(sizeof contract_ids / sizeof contract_ids[0]))

/* Values of every symbol (NaN: unbound) with a case bound. */
static double *bind_case(const kcs_shape *s, kcs_format in, const kcs_contract *c)
{
    const kcs_expr_symtab *tab = kcs_verdict_symtab();
    double *v = calloc((size_t)tab->n, sizeof *v);
    for (int i = 0; i < tab->n; i++) {
        kcs_format f;
        v[i] = kcs_format_parse(tab->syms[i].name, &f) ? NAN : (double)f;
    }
    v[sym("m")] = (double)s->m;
    v[sym("n")] = (double)s->n;
    v[sym("k")] = (double)s->k;
    v[sym("batch")] = (double)(s->batch ? s->batch : 1);
    v[sym("dtype_in")] = in;
    v[sym("dtype_acc")] = c->dtype_acc.fmt;
    v[sym("dtype_out")] = c->dtype_out;
    return v;
}

/* The twelve contracts: each loads, names itself after its file, has a
 * derivation that cites sources (not the project's REFERENCES.md), an eta
 * that is finite (and positive unless the clause is an exact invariant)
 * on every measured case, and a normal form that is a fixed point. */
static void test_all_contracts(void)
{
    for (int i = 0; i < N_CONTRACTS; i++) {
        kcs_contract *c = ut_contract_load_id(contract_ids[i]);
        CU_ASSERT_PTR_NOT_NULL(c);
        if (!c)
            continue;
        CU_ASSERT_STRING_EQUAL(c->id, contract_ids[i]);
        CU_ASSERT(!strncmp(c->family, contract_ids[i] + 2, 3));
        CU_ASSERT(c->n_clauses >= 1 && c->n_clauses <= KCS_MAX_CLAUSES);
        CU_ASSERT_PTR_EQUAL(c->eta, c->clauses[0].eta);
        CU_ASSERT(strlen(c->derivation) > 400);
        CU_ASSERT(strstr(c->derivation, "REFERENCES") == NULL);
        CU_ASSERT(c->n_sigs >= 2);
        CU_ASSERT(c->trials >= 2);
        CU_ASSERT(c->guard_poison && c->guard_fresh_inputs && c->guard_revalidate);
        for (int s = 0; s < c->n_shapes + c->n_held_out; s++) {
            const kcs_shape *sh = s < c->n_shapes ? &c->shapes[s] : &c->held_out[s - c->n_shapes];
            /* small enough for the whole suite to run in seconds; long
             * reductions (the exact-sum clauses at the precondition's long
             * end) only with small m and n */
            CU_ASSERT(sh->k <= 1048576);
            int64_t b = sh->batch ? sh->batch : 1;
            CU_ASSERT(sh->m * sh->k * b <= 2097152 && sh->k * sh->n * b <= 2097152 &&
                      sh->m * sh->n * b <= 262144);
            for (int f = 0; f < KCS_FMT_COUNT; f++) {
                if (!(c->dtype_in & (1u << f)))
                    continue;
                double *v = bind_case(sh, (kcs_format)f, c);
                for (int j = 0; j < c->n_clauses; j++) {
                    double eta = kcs_expr_eval(c->clauses[j].eta, v);
                    CU_ASSERT(isfinite(eta));
                    bool inv = c->clauses[j].structure == KCS_TOL_INVARIANT;
                    CU_ASSERT(inv ? eta >= 0.0 : eta > 0.0);
                }
                free(v);
            }
        }
        char *y1 = ut_contract_print(c, false), *js = ut_contract_print(c, true);
        kcs_contract *c2 = NULL;
        kcs_error err = {0};
        int rc = kcs_contract_load_string("printed.yaml", y1, &c2, &err);
        if (rc)
            fprintf(stderr, "\n%s\n---\n%s\n", err.msg, y1);
        CU_ASSERT_EQUAL(rc, 0);
        if (!rc) {
            char *y2 = ut_contract_print(c2, false);
            CU_ASSERT_STRING_EQUAL(y1, y2);
            CU_ASSERT_EQUAL(c2->protocol, c->protocol);
            CU_ASSERT_EQUAL(c2->repetitions, c->repetitions);
            CU_ASSERT_EQUAL(c2->n_held_out, c->n_held_out);
            CU_ASSERT_EQUAL(c2->n_clauses, c->n_clauses);
            CU_ASSERT_STRING_EQUAL(c2->attrs, c->attrs);
            CU_ASSERT(c2->special_nan == c->special_nan && c2->special_oob == c->special_oob);
            free(y2);
            kcs_contract_free(c2);
        }
        CU_ASSERT(js[0] == '{' && strstr(js, "\"protocol\": ") && strstr(js, "\"special\": {"));
        free(y1);
        free(js);
        kcs_contract_free(c);
    }
}

/* Evaluate e with the named symbols set (NaN elsewhere but formats). */
static double eval_with(const kcs_expr *e, const kcs_contract *c, const kcs_shape *s,
                        const char *const *names, const double *vals, int n)
{
    double *v = bind_case(s, KCS_FMT_FP32, c);
    for (int i = 0; i < n; i++)
        v[sym(names[i])] = vals[i];
    double r = kcs_expr_eval(e, v);
    free(v);
    return r;
}

static const kcs_signature *sig(const kcs_contract *c, const char *name)
{
    for (int i = 0; i < c->n_sigs; i++)
        if (!strcmp(c->sigs[i].name, name))
            return &c->sigs[i];
    fprintf(stderr, "\n%s: no signature %s\n", c->id, name);
    CU_FAIL("signature missing");
    return NULL;
}

/* The values written in the contract files, and etas derived by hand
 * from the formulas stated in their derivations. */
static void test_contract_values(void)
{
    const double u32 = ldexp(1.0, -24);
    kcs_contract *c;

    /* PRC-02: composite {pointwise_relative, invariant mismatch_nonfinite} */
    c = ut_contract_load_id("C-PRC-02");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->tol_structure, KCS_TOL_COMPOSITE);
    CU_ASSERT_EQUAL_FATAL(c->n_clauses, 2);
    CU_ASSERT_EQUAL(c->clauses[0].structure, KCS_TOL_POINTWISE_RELATIVE);
    CU_ASSERT_PTR_NULL(c->clauses[0].quantity);
    CU_ASSERT_EQUAL(c->clauses[1].structure, KCS_TOL_INVARIANT);
    kcs_shape s256 = {16, 1, 256, 0};
    /* (2k + 128) u + u(fp32 out) at k = 256: 641 * 2^-24 */
    CU_ASSERT_EQUAL(eval_with(c->clauses[0].eta, c, &s256, NULL, NULL, 0), 641 * u32);
    CU_ASSERT_EQUAL(eval_with(c->clauses[1].eta, c, &s256, NULL, NULL, 0), 0.0);
    {
        const char *nm[] = {"mismatch_nonfinite"};
        double v3[] = {3};
        CU_ASSERT_EQUAL(eval_with(c->clauses[1].quantity, c, &s256, nm, v3, 1), 3.0);
    }
    CU_ASSERT(c->value_dists & (1u << KCS_DIST_LARGE));
    CU_ASSERT_EQUAL(c->dists[1], KCS_DIST_LARGE);
    CU_ASSERT_EQUAL(c->dists[2], KCS_DIST_OFFSET);
    {
        /* softmax without max-subtraction: NaN outputs, NaN row sums;
         * E[x^2] - E[x]^2 layernorm: NaN rows (negative variance), no row
         * sums (0), or, clamped, finite rows off by one scale per row on
         * inputs that cancel (offset: 24 bits); narrow sums: finite, off
         * bound, on inputs that do not cancel or not as one scale per row */
        const char *nm[] = {"tau", "mismatch_nonfinite", "rowsum_err", "nan_count",
                            "cancel_bits", "row_scale_fit"};
        double sm[] = {INFINITY, 100, NAN, 100, 0, 0}, ln[] = {INFINITY, 256, 0, 256, 24, 0},
               cl[] = {40, 0, 0, 0, 24, 0.999}, nw[] = {40, 0, 0, 0, 0.5, 0.999},
               ns[] = {40, 0, 0, 0, 24, 0.3}, ok[] = {0.5, 0, 1e-7, 0, 24, 0.999};
        const kcs_signature *o = sig(c, "overflow-not-stabilised");
        const kcs_signature *vc = sig(c, "variance-cancellation");
        const kcs_signature *nb = sig(c, "normalisation-beyond-bound");
        const kcs_signature *all3[] = {o, vc, nb};
        const double *rows[] = {sm, ln, cl, nw, ns, ok};
        const double want[6][3] = {{1, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 0}};
        for (int r = 0; r < 6; r++)
            for (int j = 0; j < 3; j++)
                CU_ASSERT_EQUAL(eval_with(all3[j]->when, c, &s256, nm, rows[r], 6), want[r][j]);
        /* the cancellation is named first: it comes before the general one */
        int i_vc = -1, i_nb = -1;
        for (int j = 0; j < c->n_sigs; j++) {
            if (&c->sigs[j] == vc)
                i_vc = j;
            if (&c->sigs[j] == nb)
                i_nb = j;
        }
        CU_ASSERT(i_vc >= 0 && i_vc < i_nb);
    }
    /* the composite prints as an `all:` list and reads back */
    char *y = ut_contract_print(c, false), *js = ut_contract_print(c, true);
    CU_ASSERT(strstr(y, "  structure: composite\n  all:\n    - {structure: pointwise_relative, "
                        "eta: \"(2 * k + 128) * u(dtype_acc) + u(dtype_out)\"}\n    - "
                        "{structure: invariant, eta: \"0\", quantity: \"mismatch_nonfinite\"}\n"
                        "  derivation: ") != NULL);
    CU_ASSERT(strstr(js, "\"all\": [{\"structure\": \"pointwise_relative\", \"eta\": ") != NULL);
    CU_ASSERT(strstr(js, "{\"structure\": \"invariant\", \"eta\": \"0\", \"quantity\": "
                         "\"mismatch_nonfinite\"}]") != NULL);
    free(y);
    free(js);
    kcs_contract_free(c);

    /* PRC-03: tf32-sized errors name the 11-bit coercion, at k = 1 */
    c = ut_contract_load_id("C-PRC-03");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    {
        kcs_shape s1 = {64, 64, 1, 0};
        /* gamma_1(2u): sound for accumulation rounding toward zero */
        CU_ASSERT_DOUBLE_EQUAL(eval_with(c->eta, c, &s1, NULL, NULL, 0), 2 * u32 / (1 - 2 * u32),
                               u32 * 1e-15);
        /* input_bits: a reference from the rounded inputs explains the output */
        const char *nm[] = {"tau", "input_bits", "exact_inputs", "replayed", "sentinel_count",
                            "input_rz"};
        double tf[] = {4000, 11, 0, 0, 0, 0}, bf[] = {60000, 8, 0, 0, 0, 0};
        const kcs_signature *a = sig(c, "input-rounded-to-11-bits");
        const kcs_signature *b = sig(c, "input-rounded-to-bf16");
        CU_ASSERT_EQUAL(eval_with(a->when, c, &s1, nm, tf, 6), 1.0);
        CU_ASSERT_EQUAL(eval_with(b->when, c, &s1, nm, tf, 6), 0.0);
        CU_ASSERT_EQUAL(eval_with(a->when, c, &s1, nm, bf, 6), 0.0);
        CU_ASSERT_EQUAL(eval_with(b->when, c, &s1, nm, bf, 6), 1.0);
        /* truncated inputs (input_rz 1) are named as such, not as rounded */
        double tz[] = {4000, 11, 0, 0, 0, 1};
        CU_ASSERT_EQUAL(eval_with(a->when, c, &s1, nm, tz, 6), 0.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "input-truncated-to-11-bits")->when, c, &s1, nm, tz, 6),
                        1.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "input-truncated-to-11-bits")->when, c, &s1, nm, tf, 6),
                        0.0);
        /* on exact-sum inputs the exact clause's own signature names it */
        double ex[] = {INFINITY, 0, 1, 0, 0};
        const kcs_signature *e = sig(c, "inexact-on-exact-inputs");
        const char *nm4[] = {"tau", "max_scaled", "exact_inputs", "replayed", "sentinel_count",
                             "mismatch_nonfinite"};
        double ex4[] = {INFINITY, ldexp(1.0, -20), 1, 0, 0, 0};
        CU_ASSERT_EQUAL(eval_with(a->when, c, &s1, nm, ex, 5), 0.0);
        CU_ASSERT_EQUAL(eval_with(e->when, c, &s1, nm4, ex4, 6), 1.0);
    }
    kcs_contract_free(c);

    /* PRC-04: declares subnormal=preserve, measures subnormal inputs */
    c = ut_contract_load_id("C-PRC-04");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->attrs, "subnormal=preserve");
    CU_ASSERT_EQUAL(c->dists[0], KCS_DIST_SUBNORMAL);
    CU_ASSERT_EQUAL(c->ops, 1u << KCS_OP_REDUCE_SUM);
    {
        /* a zeroed sum has relative error exactly 1 */
        const char *nm[] = {"tau", "max_rel", "nan_count", "inf_count", "out_bits",
                            "input_bits", "const_output", "offset_share", "scale_fit"};
        double zeroed[] = {1e5, 1, 0, 0, 0, 0, 0, 0, 1}, lost[] = {40, 0.3, 0, 0, 0, 0, 0, 0.1, 0.2};
        const kcs_signature *fl = sig(c, "subnormals-flushed");
        const kcs_signature *tl = sig(c, "subnormal-terms-lost");
        CU_ASSERT_EQUAL(eval_with(fl->when, c, &c->shapes[0], nm, zeroed, 9), 1.0);
        CU_ASSERT_EQUAL(eval_with(tl->when, c, &c->shapes[0], nm, zeroed, 9), 0.0);
        CU_ASSERT_EQUAL(eval_with(fl->when, c, &c->shapes[0], nm, lost, 9), 0.0);
        CU_ASSERT_EQUAL(eval_with(tl->when, c, &c->shapes[0], nm, lost, 9), 1.0);
        /* an output rounded once to bf16 is not a term lost */
        double rounded[] = {40, 0.3, 0, 0, 8, 0, 0, 0.1, 0.2};
        CU_ASSERT_EQUAL(eval_with(tl->when, c, &c->shapes[0], nm, rounded, 9), 0.0);
    }
    kcs_contract_free(c);

    /* ORD-01: eta = gamma_k(2u) = 2 k u / (1 - 2 k u) (rounding toward zero too) */
    c = ut_contract_load_id("C-ORD-01");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    {
        kcs_shape s = {16, 1, 512, 0};
        double g = 2 * 512 * u32 / (1 - 2 * 512 * u32);
        CU_ASSERT_DOUBLE_EQUAL(eval_with(c->eta, c, &s, NULL, NULL, 0), g, g * 1e-15);
    }
    kcs_contract_free(c);

    /* ORD-02: repeat protocol, exact invariant on distinct digests */
    c = ut_contract_load_id("C-ORD-02");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->protocol, KCS_PROTO_REPEAT);
    /* its derivation's power boundary: a reordering in one run of 8
     * escapes the repetitions with probability (7/8)^r = 1.9e-4 */
    CU_ASSERT(pow(7.0 / 8.0, c->repetitions) < 2e-4);
    CU_ASSERT_EQUAL(c->tol_structure, KCS_TOL_INVARIANT);
    {
        const char *nm[] = {"distinct_digests", "nan_count", "inf_count"};
        double one[] = {1, 0, 0}, three[] = {3, 0, 0};
        CU_ASSERT_EQUAL(eval_with(c->clauses[0].quantity, c, &c->shapes[0], nm, one, 1), 0.0);
        CU_ASSERT_EQUAL(eval_with(c->clauses[0].quantity, c, &c->shapes[0], nm, three, 1), 2.0);
        CU_ASSERT_EQUAL(eval_with(c->eta, c, &c->shapes[0], NULL, NULL, 0), 0.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "run-to-run-reordering")->when, c, &c->shapes[0], nm,
                                  three, 3), 1.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "run-to-run-reordering")->when, c, &c->shapes[0], nm,
                                  one, 3), 0.0);
    }
    kcs_contract_free(c);

    /* ORD-03: batch invariance needs m >= 2 on every shape */
    c = ut_contract_load_id("C-ORD-03");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->protocol, KCS_PROTO_BATCH_INVARIANCE);
    for (int i = 0; i < c->n_shapes; i++)
        CU_ASSERT(c->shapes[i].m >= 2);
    CU_ASSERT_STRING_EQUAL(c->clauses[0].quantity_text, "spread_ulp");
    /* it binds only kernels that declare batch invariance */
    CU_ASSERT_EQUAL(c->declares, KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT));
    kcs_contract_free(c);

    /* PRC-06: (lambda sqrt(k) + 128) u + u(out), lambda = sqrt(2 ln(4 R 2^30))
     * for R = m * batch rows; it binds only kernels that round to nearest,
     * on random distributions, from 64 rows */
    c = ut_contract_load_id("C-PRC-06");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->tol_structure, KCS_TOL_POINTWISE_RELATIVE);
    CU_ASSERT_EQUAL(c->declares, KCS_DECL_BIT(KCS_DECL_ROUND_NEAREST));
    CU_ASSERT(!(c->value_dists & (1u << KCS_DIST_OFFSET)) &&
              !(c->value_dists & (1u << KCS_DIST_EXACT)) &&
              (c->value_dists & (1u << KCS_DIST_POSITIVE)));
    CU_ASSERT_EQUAL(c->m_min, 64);
    {
        const kcs_shape cases[] = {{64, 1, 4096, 0}, {4, 1, 65536, 0}, {65536, 1, 512, 2}};
        for (int i = 0; i < 3; i++) {
            double rows = (double)cases[i].m * (cases[i].batch ? cases[i].batch : 1);
            double lam = sqrt(2.0 * log(4.0 * rows * 1073741824.0));
            double want = (lam * sqrt((double)cases[i].k) + 128.0) * u32 + u32;
            CU_ASSERT_DOUBLE_EQUAL(eval_with(c->eta, c, &cases[i], NULL, NULL, 0), want, want * 1e-12);
            /* the stated false-alarm probability: 4 R exp(-lambda^2 / 2) = 2^-30 */
            CU_ASSERT_DOUBLE_EQUAL(4.0 * rows * exp(-lam * lam / 2.0), ldexp(1.0, -30), 1e-20);
        }
        /* lambda = 6.9 at R = 4 and 8.2 at R = 2^16, as the derivation says */
        CU_ASSERT_DOUBLE_EQUAL(sqrt(2.0 * log(16.0 * 1073741824.0)), 6.87, 0.01);
        CU_ASSERT_DOUBLE_EQUAL(sqrt(2.0 * log(4.0 * 65536.0 * 1073741824.0)), 8.16, 0.01);
    }
    kcs_contract_free(c);

    /* PRC-07: 1.001 lambda u + u(out) / 2 on the random_walk magnitude,
     * lambda = sqrt(2 ln(2 R 2^30)) for R = m * k * batch outputs (at least
     * 6, which the magnitude's W / 6 needs); attention kernels that round to
     * nearest, random distributions, n >= 16 */
    c = ut_contract_load_id("C-PRC-07");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->tol_structure, KCS_TOL_POINTWISE_RELATIVE);
    CU_ASSERT_EQUAL(c->oracle, KCS_ORACLE_FP64);
    CU_ASSERT_EQUAL(c->oracle_magnitude, KCS_MAG_RANDOM_WALK);
    CU_ASSERT_EQUAL(c->declares, KCS_DECL_BIT(KCS_DECL_ROUND_NEAREST));
    CU_ASSERT(!(c->value_dists & (1u << KCS_DIST_OFFSET)) &&
              !(c->value_dists & (1u << KCS_DIST_SPREAD)) &&
              (c->value_dists & (1u << KCS_DIST_POSITIVE)));
    CU_ASSERT(c->n_min == 16 && c->n_max == 4096 && c->k_max == 256);
    {
        const kcs_shape cases[] = {{16, 1024, 64, 0}, {4, 16, 256, 0}, {4, 4096, 16, 3}};
        for (int i = 0; i < 3; i++) {
            double k = (double)cases[i].k;
            double outs = (double)cases[i].m * k * (cases[i].batch ? cases[i].batch : 1);
            double lam = sqrt(2.0 * log(2.0 * outs * 1073741824.0));
            double want = 1.001 * lam * u32 + u32 / 2;
            CU_ASSERT_DOUBLE_EQUAL(eval_with(c->eta, c, &cases[i], NULL, NULL, 0), want, want * 1e-12);
            /* the stated false-alarm probability: 2 R exp(-lambda^2 / 2) = 2^-30 */
            CU_ASSERT_DOUBLE_EQUAL(2.0 * outs * exp(-lam * lam / 2.0), ldexp(1.0, -30), 1e-20);
            CU_ASSERT(lam >= 6.0);
        }
        /* lambda = 7.2 at R = 64 (the smallest call the precondition admits:
         * m = 4, k = 16) and 8.1 at R = 2^16, as the derivation says */
        CU_ASSERT_DOUBLE_EQUAL(sqrt(2.0 * log(128.0 * 1073741824.0)), 7.16, 0.01);
        CU_ASSERT_DOUBLE_EQUAL(sqrt(2.0 * log(2.0 * 65536.0 * 1073741824.0)), 8.07, 0.01);
    }
    kcs_contract_free(c);

    /* CMP-01: (2k + 4n + 16) u + u(out) at [16, 64, 64] = 401 * 2^-24 */
    c = ut_contract_load_id("C-CMP-01");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(eval_with(c->eta, c, &c->shapes[0], NULL, NULL, 0), 401 * u32);
    kcs_contract_free(c);

    /* CMP-02: errors in the remainder tiles vs wrong everywhere */
    c = ut_contract_load_id("C-CMP-02");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    {
        const char *nm[] = {"tau", "edge_share"};
        double edge[] = {5000, 0.95}, all[] = {5000, 129.0 / (65 * 65)};
        const kcs_signature *e = sig(c, "remainder-edge-error");
        CU_ASSERT_EQUAL(eval_with(e->when, c, &c->shapes[1], nm, edge, 2), 1.0);
        CU_ASSERT_EQUAL(eval_with(e->when, c, &c->shapes[1], nm, all, 2), 0.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "configuration-wrong-throughout")->when, c,
                                  &c->shapes[1], nm, all, 2), 1.0);
    }
    /* unaligned shapes leave a remainder of one for 8-, 16- and 32-tiles */
    int unaligned = 0;
    for (int i = 0; i < c->n_shapes; i++)
        unaligned += c->shapes[i].m % 32 == 1 || c->shapes[i].n % 32 == 1;
    CU_ASSERT(unaligned >= 3);
    kcs_contract_free(c);

    /* CMP-03: held-out classes, replay */
    c = ut_contract_load_id("C-CMP-03");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->n_held_out, 4);
    CU_ASSERT(c->held_out[1].m == 63 && c->held_out[1].n == 65 && c->held_out[1].k == 127);
    CU_ASSERT_EQUAL(c->held_out[3].batch, 3);
    for (int i = 0; i < c->n_shapes; i++)
        CU_ASSERT(c->shapes[i].m % 64 == 0 && c->shapes[i].n % 64 == 0);
    {
        const char *nm[] = {"tau", "held_out", "replayed"};
        double h[] = {10, 1, 0}, r[] = {1e5, 0, 1}, b[] = {10, 0, 0};
        const kcs_signature *ho = sig(c, "held-out-shape-error");
        const kcs_signature *rp = sig(c, "stale-result-replay");
        CU_ASSERT_EQUAL(eval_with(ho->when, c, &c->held_out[0], nm, h, 3), 1.0);
        CU_ASSERT_EQUAL(eval_with(rp->when, c, &c->held_out[0], nm, h, 3), 0.0);
        CU_ASSERT_EQUAL(eval_with(ho->when, c, &c->shapes[0], nm, r, 3), 0.0);
        CU_ASSERT_EQUAL(eval_with(rp->when, c, &c->shapes[0], nm, r, 3), 1.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "benchmarked-shape-error")->when, c, &c->shapes[0], nm,
                                  b, 3), 1.0);
    }
    kcs_contract_free(c);

    /* EXC-01: NaN injected, declared propagate, exact invariant */
    c = ut_contract_load_id("C-EXC-01");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->special_nan, 0.002);
    CU_ASSERT_FALSE(c->values_finite);
    CU_ASSERT_STRING_EQUAL(c->attrs, "nan=propagate");
    {
        const char *nm[] = {"nan_ref_count", "nan_count", "inf_count"};
        double zeroed[] = {256, 0, 0}, ok[] = {256, 256, 0};
        const kcs_signature *ns = sig(c, "nan-suppressed");
        CU_ASSERT_EQUAL(eval_with(ns->when, c, &c->shapes[0], nm, zeroed, 3), 1.0);
        CU_ASSERT_EQUAL(eval_with(ns->when, c, &c->shapes[0], nm, ok, 3), 0.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "inf-where-nan-due")->when, c, &c->shapes[0], nm,
                                  zeroed, 3), 0.0);
    }
    kcs_contract_free(c);

    /* EXC-02: raise iff out of range */
    c = ut_contract_load_id("C-EXC-02");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->attrs, "oob=raise");
    CU_ASSERT_EQUAL(c->special_oob, 0.05);
    CU_ASSERT_EQUAL(c->ops, 1u << KCS_OP_GATHER);
    {
        const char *nm[] = {"oob_count", "raised", "oob_raise", "max_abs", "mismatch_nonfinite"};
        /* oob_count, raised (oob_raise 1: the contract's own semantics), quantity */
        const double cases[4][3] = {{3, 0, 1}, {3, 1, 0}, {0, 0, 0}, {0, 1, 1}};
        for (int i = 0; i < 4; i++) {
            double v[5] = {cases[i][0], cases[i][1], 1, NAN, NAN}; /* the rows are not read */
            CU_ASSERT_EQUAL(eval_with(c->clauses[0].quantity, c, &c->shapes[0], nm, v, 5),
                            cases[i][2]);
        }
        /* declared oob=clamp|zero (oob_raise 0): never raise, rows exact */
        const double dcl[4][5] = {{3, 0, 0, 0, 0}, {3, 1, 0, 0, 0}, {3, 0, 0, 0.5, 0},
                                  {0, 0, 0, 0, 2}};
        const double dwant[4] = {0, 1, 1, 1};
        for (int i = 0; i < 4; i++)
            CU_ASSERT_EQUAL(eval_with(c->clauses[0].quantity, c, &c->shapes[0], nm, dcl[i], 5),
                            dwant[i]);
        const double ans[3] = {3, 0, 1}, rsd[3] = {3, 1, 1}, ans_decl[3] = {3, 0, 0};
        CU_ASSERT_EQUAL(eval_with(sig(c, "oob-silently-answered")->when, c, &c->shapes[0], nm,
                                  ans, 3), 1.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "oob-silently-answered")->when, c, &c->shapes[0], nm,
                                  rsd, 3), 0.0);
        /* answering is what a declared clamp does: not "silently answered" */
        CU_ASSERT_EQUAL(eval_with(sig(c, "oob-silently-answered")->when, c, &c->shapes[0], nm,
                                  ans_decl, 3), 0.0);
        const char *g[] = {"guard_ok"};
        double bad[] = {0}, good[] = {1};
        CU_ASSERT_EQUAL(eval_with(sig(c, "write-past-output")->when, c, &c->shapes[0], g, bad, 1),
                        1.0);
        CU_ASSERT_EQUAL(eval_with(sig(c, "write-past-output")->when, c, &c->shapes[0], g, good,
                                  1), 0.0);
    }
    kcs_contract_free(c);
}

static void test_names_and_io(void)
{
    CU_ASSERT_STRING_EQUAL(kcs_protocol_name(KCS_PROTO_ORACLE), "oracle");
    CU_ASSERT_STRING_EQUAL(kcs_protocol_name(KCS_PROTO_REPEAT), "repeat");
    CU_ASSERT_STRING_EQUAL(kcs_protocol_name(KCS_PROTO_BATCH_INVARIANCE), "batch_invariance");
    CU_ASSERT_STRING_EQUAL(kcs_protocol_name((kcs_protocol_kind)7), "?");
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
    CU_ASSERT_EQUAL(kcs_contract_load("/nonexistent/C-X.yaml", &c, &err), KCS_E_INVAL); /* a missing input is bad input */
    CU_ASSERT_PTR_NULL(c);
    kcs_contract_free(NULL);
}

static const ut_test tests[] = {
    {"malformed contracts", test_bad_contracts},
    {"C-PRC-01", test_prc01},
    {"print round trip", test_print_roundtrip},
    {"inline variants", test_inline},
    {"special pinf and ninf", test_special_signed_inf},
    {"the twelve contracts", test_all_contracts},
    {"contract values", test_contract_values},
    {"names and I/O", test_names_and_io},
};

UT_MAIN("contract", tests)
