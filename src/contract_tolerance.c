/* The tolerance part of a contract and the rules that keep eta honest:
 * eta is a magnitude built from what a case binds (never from measured
 * metrics), it is finite and positive on every measured case, and its
 * derivation must not say that it was measured from the candidate. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contract_load.h"

static const char *const tol_names[] = {
    [KCS_TOL_BACKWARD_ERROR] = "backward_error",
    [KCS_TOL_POINTWISE_RELATIVE] = "pointwise_relative",
    [KCS_TOL_POINTWISE_ABSOLUTE] = "pointwise_absolute", [KCS_TOL_ULP] = "ulp",
    [KCS_TOL_INVARIANT] = "invariant", [KCS_TOL_COMPOSITE] = "composite",
};

const char *kcs_tol_structure_name(kcs_tol_structure s)
{
    return (s >= 0 && s <= KCS_TOL_COMPOSITE) ? tol_names[s] : "?";
}

const char *const kcs_contract_measured_phrases[] = {
    "measured from the candidate",   "measured on the candidate",
    "measured off the candidate",    "fitted to the candidate",
    "fit to the candidate",          "fitted to the kernel under test",
    "calibrated on the candidate",   "calibrated against the candidate",
    "measured from the kernel under test", "measured on the kernel under test",
    "observed on the candidate",     NULL,
};

/* Names an eta may use besides format literals: what a case binds. */
static const char *const eta_vars[] = {"m", "n", "k", "batch", "dtype_in", "dtype_acc",
                                       "dtype_out", NULL};

/* Column (1-based) of the first whole-word occurrence of name in text. */
static int word_col(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        bool left = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool right = !(isalnum((unsigned char)p[nl]) || p[nl] == '_');
        if (left && right)
            return (int)(p - text) + 1;
    }
    return 1;
}

static bool measured_derivation(const char *text, const char **phrase_p)
{
    /* lower-case, whitespace collapsed */
    size_t len = strlen(text);
    char *norm = malloc(len + 1);
    if (!norm)
        return false;
    size_t j = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (isspace(ch)) {
            if (j && norm[j - 1] != ' ')
                norm[j++] = ' ';
        } else {
            norm[j++] = (char)tolower(ch);
        }
    }
    norm[j] = '\0';
    bool hit = false;
    for (const char *const *p = kcs_contract_measured_phrases; *p && !hit; p++)
        if (strstr(norm, *p)) {
            hit = true;
            *phrase_p = *p;
        }
    free(norm);
    return hit;
}

void kcs_contract_load_tolerance(loader *L, struct fy_node *root)
{
    static const char *const keys[] = {"structure", "eta", "derivation", NULL};
    kcs_contract *c = L->c;
    struct fy_node *t = kcs_contract_section(L, root, "tolerance", true, "", keys);
    if (!t)
        return;
    struct fy_node *s = kcs_yaml_get(L->y, t, "structure", true, "tolerance");
    int st = s ? kcs_contract_keyword(L, s, "tolerance.structure", tol_names, KCS_TOL_COMPOSITE + 1)
               : -1;
    if (st >= 0)
        c->tol_structure = (kcs_tol_structure)st;

    struct fy_node *en = kcs_yaml_get(L->y, t, "eta", true, "tolerance");
    if (en && kcs_contract_expr(L, en, "tolerance.eta", &c->eta, &c->eta_text)) {
        if (kcs_expr_is_condition(c->eta))
            kcs_yaml_error(L->y, en, "tolerance.eta",
                           "must be a magnitude, not a condition (\"%.60s\")", c->eta_text);
        for (int i = 0; i < L->tab->n; i++) {
            const char *nm = L->tab->syms[i].name;
            if (!kcs_expr_uses(c->eta, i))
                continue;
            bool ok = false;
            kcs_format f;
            for (const char *const *v = eta_vars; *v && !ok; v++)
                ok = !strcmp(*v, nm);
            if (!ok && L->tab->syms[i].type == KCS_EXPR_FORMAT && !kcs_format_parse(nm, &f))
                ok = true;
            if (!ok) {
                int line, col, ecol = word_col(c->eta_text, nm);
                kcs_contract_expr_pos(L->y, en, c->eta_text, ecol, &line, &col);
                kcs_contract_error_at(L->y, line, col, "tolerance.eta",
                         "'%s' is measured, eta may use only m n k batch dtype_in dtype_acc "
                         "dtype_out and formats (column %d)", nm, ecol);
            }
        }
    }
    struct fy_node *dn = kcs_yaml_get(L->y, t, "derivation", true, "tolerance");
    c->derivation = kcs_yaml_strdup(L->y, dn, "tolerance.derivation");
    const char *phrase = NULL;
    if (c->derivation && strspn(c->derivation, " \t\r\n") == strlen(c->derivation))
        kcs_yaml_error(L->y, dn, "tolerance.derivation", "must not be empty");
    else if (c->derivation && measured_derivation(c->derivation, &phrase))
        kcs_yaml_error(L->y, dn, "tolerance.derivation",
                       "eta must come from first principles, not be measured from the "
                       "candidate under test (says '%s')", phrase);
}

/* eta is finite and positive (>= 0 for invariant structures) for every
 * measured case: each shape with each declared input format. */
void kcs_contract_check_eta(loader *L, struct fy_node *root)
{
    kcs_contract *c = L->c;
    if (!L->shapes_ok || !L->pre_ok)
        return;
    if (!c->eta || L->y->n_errors)
        return;
    double *v = calloc((size_t)L->tab->n, sizeof *v);
    if (!v)
        return;
    int idx[7];
    for (int j = 0; j < 7; j++)
        idx[j] = -1;
    for (int i = 0; i < L->tab->n; i++) {
        kcs_format f;
        v[i] = NAN;
        for (int j = 0; j < 7; j++)
            if (!strcmp(L->tab->syms[i].name, eta_vars[j]))
                idx[j] = i;
        if (L->tab->syms[i].type == KCS_EXPR_FORMAT && !kcs_format_parse(L->tab->syms[i].name, &f))
            v[i] = (double)f;
    }
    struct fy_node *en = kcs_yaml_get(L->y, kcs_yaml_get(L->y, root, "tolerance", false, ""), "eta",
                                      false, "tolerance");
    bool zero_ok = c->tol_structure == KCS_TOL_INVARIANT;
    for (int i = 0; i < c->n_shapes; i++) {
        for (int f = 0; f < KCS_FMT_COUNT; f++) {
            if (!(c->dtype_in & (1u << f)))
                continue;
            const kcs_shape *s = &c->shapes[i];
            double bind[7] = {(double)s->m, (double)s->n, (double)s->k,
                              (double)(s->batch ? s->batch : 1), (double)f,
                              c->dtype_acc.bits > 0 ? -(double)c->dtype_acc.bits
                                                    : (double)c->dtype_acc.fmt,
                              (double)c->dtype_out};
            for (int j = 0; j < 7; j++)
                if (idx[j] >= 0)
                    v[idx[j]] = bind[j];
            double eta = kcs_expr_eval(c->eta, v);
            if (!isfinite(eta) || eta < 0 || (eta == 0 && !zero_ok)) {
                kcs_yaml_error(L->y, en, "tolerance.eta",
                               "is %g for shape [%" PRId64 ", %" PRId64 ", %" PRId64
                               "] with dtype_in %s; it must be finite and %s",
                               eta, s->m, s->n, s->k, kcs_format_name((kcs_format)f),
                               zero_ok ? "non-negative" : "positive");
                free(v);
                return;
            }
        }
    }
    free(v);
}


