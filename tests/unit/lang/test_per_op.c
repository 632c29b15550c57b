/* Per-op preconditions (src/lang/contract_per_op.c, precondition.c):
 * precondition.per_op narrows one op's formats and shape ranges; cases of
 * that op outside them are refused with a message naming the per-op field,
 * the other ops keep the contract's precondition; the narrowing loads,
 * prints and reads back; the loader refuses an op out of scope, formats or
 * ranges that widen the contract's, and a narrowing no measured shape lies
 * in (file:line:field); the plan leaves the op's cases outside it out. */
#include <stdio.h>
#include <string.h>

#include "precondition.h"
#include "study.h"
#include "unit_helpers.h"

/* A softmax + layernorm contract with `per_op` (YAML lines under
 * precondition:, NULL for none) and measured shapes `shapes`. */
static kcs_contract *load_per_op(const char *per_op, const char *shapes, kcs_error *err)
{
    ut_contract s = {.ops = "softmax, layernorm", .shapes = shapes};
    char lines[512];
    snprintf(lines, sizeof lines, "  shape: { k: [2, 65536] }%s%s", per_op ? "\n" : "",
             per_op ? per_op : "");
    return ut_contract_load_pre(&s, lines, "per_op.yaml", err);
}

static const char *const NARROW =
    "  per_op:\n"
    "    layernorm: { dtype_in: [fp32], shape: { k: [2, 512] } }";

static void test_check(void)
{
    kcs_error err = {0};
    kcs_contract *c = load_per_op(NARROW, "[[8, 1, 64], [4, 1, 2048]]", &err);
    if (!c)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(c->per_op[KCS_OP_LAYERNORM].set);
    CU_ASSERT_FALSE(c->per_op[KCS_OP_SOFTMAX].set);
    CU_ASSERT_EQUAL(kcs_precondition_op_dtypes(c, KCS_OP_LAYERNORM), 1u << KCS_FMT_FP32);
    CU_ASSERT_EQUAL(kcs_precondition_op_dtypes(c, KCS_OP_SOFTMAX), c->dtype_in);

    kcs_shape in = {4, 1, 512, 0}, out = {4, 1, 2048, 0};
    CU_ASSERT(kcs_precondition_op_ok(c, KCS_OP_LAYERNORM, KCS_FMT_FP32, &in));
    CU_ASSERT_FALSE(kcs_precondition_op_ok(c, KCS_OP_LAYERNORM, KCS_FMT_FP32, &out));
    CU_ASSERT_FALSE(kcs_precondition_op_ok(c, KCS_OP_LAYERNORM, KCS_FMT_BF16, &in));
    CU_ASSERT(kcs_precondition_op_ok(c, KCS_OP_SOFTMAX, KCS_FMT_BF16, &out));
    CU_ASSERT(kcs_precondition_shape_ok(c, &out)); /* the contract-wide check is unchanged */

    err = (kcs_error){0};
    CU_ASSERT_EQUAL(kcs_precondition_op_shape(c, KCS_OP_LAYERNORM, &out, &err), KCS_E_INVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, "dimension k = 2048 is outside the precondition's range "
                                    "[2, 512] of C-PRC-90 for layernorm "
                                    "(precondition.per_op.layernorm.shape.k)");
    err = (kcs_error){0};
    CU_ASSERT_EQUAL(kcs_precondition_op_dtype(c, KCS_OP_LAYERNORM, KCS_FMT_BF16, &err),
                    KCS_E_INVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, "dtype_in bf16 is not admitted by C-PRC-90's precondition "
                                    "for layernorm (precondition.per_op.layernorm.dtype_in: "
                                    "fp32)");
    /* outside the contract's own range: the contract-wide message first */
    kcs_shape far = {4, 1, 131072, 0};
    err = (kcs_error){0};
    CU_ASSERT_EQUAL(kcs_precondition_op_shape(c, KCS_OP_LAYERNORM, &far, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "[2, 65536] of C-PRC-90") != NULL);
    kcs_contract_free(c);
}

/* The plan of the contract's own shapes: softmax keeps both, layernorm
 * only the one inside its range. */
static void test_plan(void)
{
    kcs_error err = {0};
    kcs_contract *c = load_per_op(NARROW, "[[8, 1, 64], [4, 1, 2048]]", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_sweep sw[2] = {
        {.contract = 0, .op = KCS_OP_SOFTMAX, .dtype_in = KCS_FMT_FP32, .dtype_out = KCS_FMT_FP32},
        {.contract = 0, .op = KCS_OP_LAYERNORM, .dtype_in = KCS_FMT_FP32,
         .dtype_out = KCS_FMT_FP32},
    };
    kcs_study s = {0};
    s.path = "per_op.yaml";
    s.seed = 7;
    s.max_memory_mib = 1024;
    s.timeout_s = 10;
    s.contracts[0] = c;
    s.n_contracts = 1;
    s.sweeps = sw;
    s.n_sweeps = 2;
    kcs_plan plan;
    CU_ASSERT_EQUAL_FATAL(kcs_plan_build(&s, &plan, &err), 0);
    int soft = 0, ln = 0, ln_long = 0;
    for (int64_t i = 0; i < plan.n_cases; i++) {
        const kcs_case *cs = &plan.cases[i];
        if (cs->op == KCS_OP_SOFTMAX)
            soft++;
        if (cs->op == KCS_OP_LAYERNORM) {
            ln++;
            ln_long += cs->shape.k > 512;
        }
    }
    CU_ASSERT_EQUAL(soft, 2);
    CU_ASSERT_EQUAL(ln, 1);
    CU_ASSERT_EQUAL(ln_long, 0);
    kcs_plan_free(&plan);
    kcs_contract_free(c);
}

/* The normal form keeps the narrowing and reads back to itself. */
static void test_print(void)
{
    kcs_error err = {0};
    kcs_contract *c = load_per_op(NARROW, "[[8, 1, 64]]", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_contract *c2 = NULL;
    char *p1 = ut_contract_reprint(c, "p.yaml", &c2);
    CU_ASSERT(strstr(p1, "  per_op: {layernorm: {dtype_in: [fp32], shape: {k: [2, 512]}}}\n") !=
              NULL);
    CU_ASSERT_EQUAL(c2->per_op[KCS_OP_LAYERNORM].range[2][1], 512);
    char *js = ut_contract_print(c, true);
    CU_ASSERT(strstr(js, "\"per_op\": {\"layernorm\": {\"dtype_in\": [\"fp32\"], "
                         "\"shape\": {\"k\": [2, 512]}}}") != NULL);
    free(p1), free(js);
    kcs_contract_free(c);
    kcs_contract_free(c2);
}

/* Malformed narrowings: file:line:col: field: message. */
static void test_bad(void)
{
    static const struct {
        const char *per_op, *shapes, *want;
    } bad[] = {
        {"  per_op: { gemm: { dtype_in: [fp32] } }", "[[8, 1, 64]]",
         "precondition.per_op: op 'gemm' is not in scope.ops"},
        {"  per_op: { nosuch: { dtype_in: [fp32] } }", "[[8, 1, 64]]",
         "precondition.per_op: unknown op 'nosuch'"},
        {"  per_op: { layernorm: { dtype_in: [fp64] } }", "[[8, 1, 64]]",
         "precondition.per_op.layernorm.dtype_in[0]: fp64 is not in precondition.dtype_in"},
        {"  per_op: { layernorm: { shape: { k: [1, 512] } } }", "[[8, 1, 64]]",
         "precondition.per_op.layernorm.shape.k: [1, 512] is not inside precondition.shape.k"},
        {"  per_op: { layernorm: { shape: { k: [600, 512] } } }", "[[8, 1, 64]]",
         "precondition.per_op.layernorm.shape.k: min 600 is larger than max 512"},
        {"  per_op: { layernorm: { eta: 3 } }", "[[8, 1, 64]]",
         "precondition.per_op.layernorm.eta: unknown key"},
        {"  per_op: { layernorm: [fp32] }", "[[8, 1, 64]]",
         "precondition.per_op.layernorm: expected a mapping"},
        {"  per_op: { layernorm: { shape: { k: [2, 32] } } }", "[[8, 1, 64]]",
         "measurement.shapes: no measured shape lies inside precondition.per_op.layernorm"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kcs_error err = {0};
        kcs_contract *c = load_per_op(bad[i].per_op, bad[i].shapes, &err);
        ut_expect_refused(i, c, &err, bad[i].want, "per_op.yaml:");
    }
}

static const ut_test tests[] = {
    {"per-op check and messages", test_check},
    {"plan leaves out the op's other shapes", test_plan},
    {"normal form", test_print},
    {"malformed narrowings", test_bad},
};

UT_MAIN("per_op", tests)
