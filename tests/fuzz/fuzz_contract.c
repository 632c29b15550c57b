/* libFuzzer target: arbitrary bytes as a contract file (YAML reading,
 * validation, expression parsing inside it) and as a bare expression.
 * A contract that loads must print, and its printed YAML must load again
 * and print identically (the normal form is a fixed point).
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -Ibackends -Iinclude \
 *       tests/fuzz/fuzz_contract.c <libkcs sources or libkcs.a> -lfyaml -lm
 *   ./a.out tests/fuzz/corpus_contract */
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
