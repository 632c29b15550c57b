/* libFuzzer target: arbitrary bytes as a contract file (YAML reading,
 * validation, expression parsing inside it) and as a bare expression.
 * A contract that loads must print, and its printed YAML must load again
 * and print identically (the normal form is a fixed point); its clauses
 * and signatures are then judged on a trial whose metrics come from the
 * input bytes (verdict evaluation of composite and invariant clauses).
 * Built by tests/fuzz/CMakeLists.txt (target fuzz_contract) when clang is
 * found; by hand:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_POSIX_C_SOURCE=200809L \
 *       -Isrc -Ibackends -Iinclude tests/fuzz/fuzz_contract.c src/contract*.c \
 *       src/lang/expr.c src/yamlx*.c src/judge/verdict.c src/arith/format.c src/arith/op.c src/arith/attrs.c \
 *       src/base/error.c -lfyaml -lm
 *   ./a.out -max_total_time=60 corpus_work tests/fuzz/corpus_contract contracts */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "verdict.h"

static char *print(const kcs_contract *c, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    if (kcs_contract_print(c, f, json) != 0)
        abort();
    fclose(f);
    return buf;
}

static void fuzz_expr(const char *text)
{
    const kcs_expr_symtab *tab = kcs_verdict_symtab();
    kcs_expr *e = NULL;
    kcs_error err = {0};
    int col = 0;
    if (kcs_expr_parse(text, tab, &e, &col, &err) == 0) {
        double v[KCS_SYM_COUNT];
        for (int i = 0; i < KCS_SYM_COUNT; i++)
            v[i] = i < KCS_SYM_FMT_FIRST ? (double)(i + 1) : (double)(i - KCS_SYM_FMT_FIRST);
        (void)kcs_expr_eval(e, v);
        for (int i = 0; i < tab->n; i++)
            (void)kcs_expr_uses(e, i);
        kcs_expr_free(e);
    } else if (col < 1 || strncmp(err.msg, "col ", 4) != 0) {
        abort(); /* every parse error names its column */
    }
}

/* Judge one made-up trial of every measured shape: metrics from bytes. */
static void fuzz_judge(const kcs_contract *c, const uint8_t *data, size_t size)
{
    static const double pool[] = {0.0, 1.0, 0.5, 2.0, 1e-7, 1e30, -1.0, INFINITY, NAN, 3.0};
    size_t at = 0;
    if (size == 0)
        return;
#define BYTE() data[at++ % size]
#define NEXT() pool[BYTE() % (sizeof pool / sizeof pool[0])]
    for (int i = 0; i < c->n_shapes + c->n_held_out && i < 4; i++) {
        kcs_case cs = {0};
        cs.op = KCS_OP_GEMM;
        cs.dtype_in = KCS_FMT_FP32;
        cs.dtype_out = c->dtype_out;
        cs.acc = c->dtype_acc;
        cs.shape = i < c->n_shapes ? c->shapes[i] : c->held_out[i - c->n_shapes];
        cs.held_out = i >= c->n_shapes;
        kcs_observation o = {0};
        o.m.max_abs = NEXT();
        o.m.max_rel = NEXT();
        o.m.max_ulp = NEXT();
        o.m.backward_err = NEXT();
        o.m.max_scaled = NEXT();
        o.m.rms_scaled = NEXT();
        o.m.effective_acc_bits = NEXT();
        o.m.nan_count = (int64_t)(BYTE() % 3);
        o.m.mismatch_nonfinite = (int64_t)(BYTE() % 2);
        o.guard_ok = (int)(BYTE() & 1);
        o.raised = (int)(BYTE() & 1);
        o.distinct_digests = 1 + (int)(BYTE() % 3);
        o.spread_ulp = NEXT();
        o.rowsum_err = NEXT();
        o.bad_frac = NEXT();
        o.trial = i;
        kcs_verdict v;
        kcs_verdict_judge(c, &cs, &o, &v);
        if (v.kind != KCS_VERDICT_WITHIN && v.kind != KCS_VERDICT_VIOLATION &&
            v.kind != KCS_VERDICT_UNDER)
            abort();
        if (v.kind == KCS_VERDICT_VIOLATION && !v.signature[0])
            abort();
    }
#undef NEXT
#undef BYTE
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    if (size <= 4096)
        fuzz_expr(text);

    kcs_contract *c = NULL;
    kcs_error err = {0};
    if (kcs_contract_load_string("fuzz.yaml", text, &c, &err) == 0) {
        char *yaml = print(c, false);
        char *json = print(c, true);
        kcs_contract *c2 = NULL;
        if (kcs_contract_load_string("printed.yaml", yaml, &c2, &err) != 0) {
            fprintf(stderr, "printed contract does not load:\n%s\n---\n%s\n", err.msg, yaml);
            abort();
        }
        char *yaml2 = print(c2, false);
        if (strcmp(yaml, yaml2) != 0)
            abort();
        fuzz_judge(c, data, size);
        free(yaml2);
        kcs_contract_free(c2);
        free(json);
        free(yaml);
        kcs_contract_free(c);
    } else if (err.code != KCS_E_INVAL && err.code != KCS_E_NOMEM) {
        abort();
    }
    free(text);
    return 0;
}
