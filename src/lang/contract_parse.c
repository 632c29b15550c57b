/* The contract loader's shared parsing helpers (contract_load.h): error
 * positions, expressions, keywords, lists, sections and the names of
 * protocols (distributions: dist_names.c). Used by every part of the loader
 * (contract.c, contract_measure.c, contract_tolerance.c), and using none. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract_load.h"

static const char *const protocol_names[] = {
    [KCS_PROTO_ORACLE] = "oracle", [KCS_PROTO_REPEAT] = "repeat",
    [KCS_PROTO_BATCH_INVARIANCE] = "batch_invariance",
};

const char *kcs_protocol_name(kcs_protocol_kind p)
{
    return (p >= 0 && p <= KCS_PROTO_BATCH_INVARIANCE) ? protocol_names[p] : "?";
}



/* Record an error at an explicit position (expressions point inside their
 * scalar); same format and cap as kcs_yaml_error. */
void kcs_contract_error_at(kcs_yctx *y, int line, int col, const char *field, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (y->n_errors >= KCS_YAML_MAX_ERRORS) {
        kcs_yaml_error(y, NULL, NULL, "%s", msg); /* lets yamlx mark the overflow */
        return;
    }
    snprintf(y->errors[y->n_errors++], sizeof y->errors[0], "%s:%d:%d: %s: %s", y->path, line,
             col, field, msg);
}

/* The file position of column ecol (1-based) of the expression held by the
 * scalar n: exact when the source spells the expression unchanged on one
 * line (plain or quoted without escapes), else the scalar's start. */
void kcs_contract_expr_pos(kcs_yctx *y, struct fy_node *n, const char *text, int ecol, int *line_p,
                           int *col_p)
{
    kcs_yaml_pos(n, line_p, col_p);
    struct fy_token *t = fy_node_get_scalar_token(n);
    const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
    if (!m || ecol < 1)
        return;
    size_t off = (size_t)ecol - 1;
    if (off > strlen(text) || m->input_pos + off > strlen(y->text))
        return;
    if (!memcmp(y->text + m->input_pos, text, off) && !memchr(text, '\n', off))
        *col_p += (int)off;
}

/* Parse the expression in scalar n into *e_p / *text_p; it must be
 * number-typed. Returns false after recording why not. */
bool kcs_contract_expr(loader *L, struct fy_node *n, const char *field, kcs_expr **e_p,
                       char **text_p)
{
    char *text = kcs_yaml_strdup(L->y, n, field);
    if (!text)
        return false;
    *text_p = text;
    kcs_error err = {0};
    int ecol = 0, line, col;
    if (kcs_expr_parse(text, L->tab, e_p, &ecol, &err)) {
        const char *msg = err.msg;
        if (!strncmp(msg, "col ", 4) && strstr(msg, ": "))
            msg = strstr(msg, ": ") + 2;
        kcs_contract_expr_pos(L->y, n, text, ecol, &line, &col);
        kcs_contract_error_at(L->y, line, col, field, "%s (column %d of \"%.60s\")", msg, ecol,
                              text);
        return false;
    }
    if (kcs_expr_result_type(*e_p) != KCS_EXPR_NUMBER) {
        kcs_yaml_error(L->y, n, field, "must be a number, got a format (\"%.60s\")", text);
        kcs_expr_free(*e_p);
        *e_p = NULL;
        return false;
    }
    return true;
}

/* Items of a list field: a sequence, or one scalar standing for a list of
 * one. Returns the count (<= max) or -1 after recording an error. */
int kcs_contract_list_items(loader *L, struct fy_node *n, const char *field,
                            struct fy_node **items, int max)
{
    if (!n)
        return -1;
    if (fy_node_get_type(n) == FYNT_SCALAR) {
        items[0] = n;
        return 1;
    }
    if (fy_node_get_type(n) != FYNT_SEQUENCE) {
        kcs_yaml_error(L->y, n, field, "expected a list");
        return -1;
    }
    int count = fy_node_sequence_item_count(n);
    if (count < 1) {
        kcs_yaml_error(L->y, n, field, "must not be empty");
        return -1;
    }
    if (count > max) {
        kcs_yaml_error(L->y, n, field, "at most %d entries, got %d", max, count);
        return -1;
    }
    void *it = NULL;
    int i = 0;
    struct fy_node *c;
    while ((c = fy_node_sequence_iterate(n, &it)) && i < max)
        items[i++] = c;
    return i;
}

/* A keyword among names[0..n): its index, or -1 after recording an error. */
int kcs_contract_keyword(loader *L, struct fy_node *n, const char *field, const char *const *names,
                         int count)
{
    char buf[64];
    if (!kcs_yaml_str(L->y, n, field, buf, sizeof buf))
        return -1;
    for (int i = 0; i < count; i++)
        if (!strcmp(buf, names[i]))
            return i;
    char set[200] = "";
    for (int i = 0; i < count; i++) {
        strncat(set, names[i], sizeof set - strlen(set) - 1);
        if (i + 1 < count)
            strncat(set, " | ", sizeof set - strlen(set) - 1);
    }
    kcs_yaml_error(L->y, n, field, "unknown value '%s' (expected %s)", buf, set);
    return -1;
}

/* A name through a kcs_*_parse function. */
bool kcs_contract_parse_name(loader *L, struct fy_node *n, const char *field, const char *what,
                             int (*parse)(const char *, void *), void *out)
{
    char buf[64];
    if (!kcs_yaml_str(L->y, n, field, buf, sizeof buf))
        return false;
    if (parse(buf, out)) {
        kcs_yaml_error(L->y, n, field, "unknown %s '%s'", what, buf);
        return false;
    }
    return true;
}


/* A mapping part: the child key of map, checked to be a mapping with only
 * the allowed keys. NULL when absent or not a mapping (recorded). */
struct fy_node *kcs_contract_section(loader *L, struct fy_node *map, const char *key, bool required,
                                     const char *parent, const char *const *allowed)
{
    struct fy_node *n = kcs_yaml_get(L->y, map, key, required, parent);
    if (!n)
        return NULL;
    char f[64];
    snprintf(f, sizeof f, "%s%s%s", parent, *parent ? "." : "", key);
    if (fy_node_get_type(n) != FYNT_MAPPING) {
        kcs_yaml_error(L->y, n, f, "expected a mapping, got %s",
                       fy_node_get_type(n) == FYNT_SEQUENCE ? "a list" : "a scalar");
        return NULL;
    }
    kcs_yaml_check_keys(L->y, n, f, allowed);
    return n;
}

/* ---- the parts ---------------------------------------------------------- */

/* A [lo, hi] integer range. */
bool kcs_contract_load_range(loader *L, struct fy_node *n, const char *field, int64_t *lo_p,
                             int64_t *hi_p)
{
    if (fy_node_get_type(n) != FYNT_SEQUENCE || fy_node_sequence_item_count(n) != 2) {
        kcs_yaml_error(L->y, n, field, "expected [min, max]");
        return false;
    }
    int64_t lo, hi;
    if (!kcs_yaml_int(L->y, fy_node_sequence_get_by_index(n, 0), field, 1, INT64_MAX, &lo) ||
        !kcs_yaml_int(L->y, fy_node_sequence_get_by_index(n, 1), field, 1, INT64_MAX, &hi))
        return false;
    if (lo > hi) {
        kcs_yaml_error(L->y, n, field, "min %" PRId64 " is larger than max %" PRId64, lo, hi);
        return false;
    }
    *lo_p = lo;
    *hi_p = hi;
    return true;
}
