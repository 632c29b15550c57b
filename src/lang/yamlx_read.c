/* Reading a parsed YAML document strictly (see yamlx.h): mapping keys
 * checked against an allowed set, required children, and typed scalars
 * (YAML 1.2 core schema: plain integers, decimal numbers with .inf/.nan,
 * true/false only) with a diagnostic at the node on every mismatch. */
#include "yamlx.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* ---- mappings ----------------------------------------------------------- */

static void join_field(char *buf, size_t len, const char *field, const char *key)
{
    if (field && *field)
        snprintf(buf, len, "%s.%s", field, key);
    else
        snprintf(buf, len, "%s", key);
}

void kcs_yaml_check_keys(kcs_yctx *y, struct fy_node *map, const char *field,
                         const char *const *allowed)
{
    if (!map)
        return;
    if (fy_node_get_type(map) != FYNT_MAPPING) {
        kcs_yaml_error(y, map, field, "expected a mapping");
        return;
    }
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(map, &it))) {
        struct fy_node *k = fy_node_pair_key(p);
        const char *ks = (k && fy_node_get_type(k) == FYNT_SCALAR) ? fy_node_get_scalar0(k) : NULL;
        if (!ks) {
            kcs_yaml_error(y, k ? k : map, field, "keys must be plain strings");
            continue;
        }
        bool ok = false;
        for (const char *const *a = allowed; a && *a; a++)
            if (strcmp(*a, ks) == 0) {
                ok = true;
                break;
            }
        if (ok)
            continue;
        char set[160];
        size_t used = 0;
        set[0] = '\0';
        for (const char *const *a = allowed; a && *a && used < sizeof set - 8; a++) {
            int w = snprintf(set + used, sizeof set - used, "%s%s", a == allowed ? "" : ", ", *a);
            if (w < 0 || (size_t)w >= sizeof set - used) {
                snprintf(set + (sizeof set - 5), 5, "...");
                break;
            }
            used += (size_t)w;
        }
        /* Echo the key only when it looks like one: a path that is not a
         * YAML file at all (kcs run /etc/shadow) must not be printed back. */
        int shown = ks[0] != '\0' && strlen(ks) <= 48;
        for (const char *c = ks; shown && *c; c++)
            shown = isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.';
        char f[128];
        join_field(f, sizeof f, field, shown ? ks : "(a key not shown)");
        kcs_yaml_error(y, k, f, "unknown key (allowed: %s)", set);
    }
}

struct fy_node *kcs_yaml_get(kcs_yctx *y, struct fy_node *map, const char *key, bool required,
                             const char *field)
{
    if (!map)
        return NULL;
    char f[128];
    join_field(f, sizeof f, field, key);
    if (fy_node_get_type(map) != FYNT_MAPPING) {
        if (required)
            kcs_yaml_error(y, map, field, "expected a mapping");
        return NULL;
    }
    struct fy_node_pair *p = fy_node_mapping_lookup_pair_by_string(map, key, FY_NT);
    if (!p) {
        if (required)
            kcs_yaml_error(y, map, f, "missing required key");
        return NULL;
    }
    return fy_node_pair_value(p);
}

/* ---- scalars ------------------------------------------------------------ */

static const char *type_word(struct fy_node *n)
{
    switch (fy_node_get_type(n)) {
    case FYNT_SEQUENCE: return "a sequence";
    case FYNT_MAPPING: return "a mapping";
    default: return "a scalar";
    }
}

static bool is_null_plain(struct fy_node *n, const char *s)
{
    if (fy_node_get_style(n) != FYNS_PLAIN)
        return false;
    return !s || !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

/* The text of a scalar node, or NULL after recording why not. */
static const char *scalar_text(kcs_yctx *y, struct fy_node *n, const char *field, const char *want,
                               bool plain_only)
{
    if (fy_node_get_type(n) != FYNT_SCALAR) {
        kcs_yaml_error(y, n, field, "expected %s, got %s", want, type_word(n));
        return NULL;
    }
    size_t len = 0;
    const char *s = fy_node_get_scalar(n, &len);
    if (is_null_plain(n, s)) {
        kcs_yaml_error(y, n, field, "expected %s, got an empty value", want);
        return NULL;
    }
    if (!s || memchr(s, '\0', len)) {
        kcs_yaml_error(y, n, field, "expected %s", want);
        return NULL;
    }
    if (plain_only && fy_node_get_style(n) != FYNS_PLAIN) {
        kcs_yaml_error(y, n, field, "expected %s, got a quoted string", want);
        return NULL;
    }
    return fy_node_get_scalar0(n);
}

bool kcs_yaml_str(kcs_yctx *y, struct fy_node *n, const char *field, char *buf, size_t len)
{
    if (!n)
        return false;
    const char *s = scalar_text(y, n, field, "a string", false);
    if (!s)
        return false;
    if (strlen(s) >= len) {
        kcs_yaml_error(y, n, field, "string longer than %zu characters", len ? len - 1 : 0);
        return false;
    }
    memcpy(buf, s, strlen(s) + 1);
    return true;
}

char *kcs_yaml_strdup(kcs_yctx *y, struct fy_node *n, const char *field)
{
    if (!n)
        return NULL;
    const char *s = scalar_text(y, n, field, "a string", false);
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        kcs_yaml_error(y, n, field, "out of memory");
    return d;
}

bool kcs_yaml_int(kcs_yctx *y, struct fy_node *n, const char *field, int64_t lo, int64_t hi,
                  int64_t *v_p)
{
    if (!n)
        return false;
    const char *s = scalar_text(y, n, field, "an integer", true);
    if (!s)
        return false;
    const char *d = s + ((*s == '-' || *s == '+') ? 1 : 0);
    if (!*d || strspn(d, "0123456789") != strlen(d)) {
        kcs_yaml_error(y, n, field, "expected an integer, got '%.40s'", s);
        return false;
    }
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || v < lo || v > hi) {
        kcs_yaml_error(y, n, field, "%.40s is out of range [%" PRId64 ", %" PRId64 "]", s, lo, hi);
        return false;
    }
    *v_p = (int64_t)v;
    return true;
}

bool kcs_yaml_num(kcs_yctx *y, struct fy_node *n, const char *field, double *v_p)
{
    if (!n)
        return false;
    const char *s = scalar_text(y, n, field, "a number", true);
    if (!s)
        return false;
    /* YAML 1.2 core schema: decimal/scientific numbers and .inf/.nan. */
    static const struct { const char *t; double v; } special[] = {
        {".inf", INFINITY}, {".Inf", INFINITY}, {".INF", INFINITY}, {"+.inf", INFINITY},
        {"+.Inf", INFINITY}, {"+.INF", INFINITY}, {"-.inf", -INFINITY}, {"-.Inf", -INFINITY},
        {"-.INF", -INFINITY}, {".nan", NAN}, {".NaN", NAN}, {".NAN", NAN},
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (!strcmp(s, special[i].t)) {
            *v_p = special[i].v;
            return true;
        }
    /* strtod also takes hex floats, "inf" and "nan": demand the plain
     * decimal shape [+-]digits[.digits][(e|E)[+-]digits]. */
    const char *c = s + ((*s == '-' || *s == '+') ? 1 : 0);
    size_t int_digits = strspn(c, "0123456789");
    c += int_digits;
    size_t frac_digits = 0;
    if (*c == '.') {
        c++;
        frac_digits = strspn(c, "0123456789");
        c += frac_digits;
    }
    bool ok = int_digits + frac_digits > 0;
    if (ok && (*c == 'e' || *c == 'E')) {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        size_t exp_digits = strspn(c, "0123456789");
        ok = exp_digits > 0;
        c += exp_digits;
    }
    if (!ok || *c) {
        kcs_yaml_error(y, n, field, "expected a number, got '%.40s'", s);
        return false;
    }
    errno = 0;
    double v = strtod(s, NULL);
    if (errno == ERANGE && isinf(v)) {
        kcs_yaml_error(y, n, field, "%.40s is out of the range of a double", s);
        return false;
    }
    *v_p = v;
    return true;
}

bool kcs_yaml_bool(kcs_yctx *y, struct fy_node *n, const char *field, bool *v_p)
{
    if (!n)
        return false;
    const char *s = scalar_text(y, n, field, "a boolean (true or false)", true);
    if (!s)
        return false;
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
        *v_p = true;
        return true;
    }
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
        *v_p = false;
        return true;
    }
    kcs_yaml_error(y, n, field, "expected a boolean (true or false), got '%.40s'", s);
    return false;
}
