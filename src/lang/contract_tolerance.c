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
#include "exact_sum.h"

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

void kcs_contract_free_tolerance(kcs_contract *c)
{
    for (int i = 0; i < KCS_MAX_CLAUSES; i++) {
        kcs_tol_clause *t = &c->clauses[i];
        free(t->eta_text);
        if (t->eta)
            kcs_expr_free(t->eta);
        free(t->quantity_text);
        if (t->quantity)
            kcs_expr_free(t->quantity);
    }
    memset(c->clauses, 0, sizeof c->clauses);
    c->n_clauses = 0;
    c->eta = NULL; /* mirrors of clause 0 */
    c->eta_text = NULL;
    free(c->derivation);
    c->derivation = NULL;
}

/* eta of a clause: a magnitude built only from what a case binds. */
static bool load_eta(loader *L, struct fy_node *en, const char *field, kcs_tol_clause *t)
{
    if (!kcs_contract_expr(L, en, field, &t->eta, &t->eta_text))
        return false;
    bool ok = true;
    if (kcs_expr_is_condition(t->eta)) {
        kcs_yaml_error(L->y, en, field, "must be a magnitude, not a condition (\"%.60s\")",
                       t->eta_text);
        ok = false;
    }
    for (int i = 0; i < L->tab->n; i++) {
        const char *nm = L->tab->syms[i].name;
        if (!kcs_expr_uses(t->eta, i))
            continue;
        bool bound = false;
        kcs_format f;
        for (const char *const *v = eta_vars; *v && !bound; v++)
            bound = !strcmp(*v, nm);
        if (!bound && L->tab->syms[i].type == KCS_EXPR_FORMAT && !kcs_format_parse(nm, &f))
            bound = true;
        if (!bound) {
            int line, col, ecol = word_col(t->eta_text, nm);
            kcs_contract_expr_pos(L->y, en, t->eta_text, ecol, &line, &col);
            kcs_contract_error_at(L->y, line, col, field,
                                  "'%s' is measured, eta may use only m n k batch dtype_in "
                                  "dtype_acc dtype_out and formats (column %d)", nm, ecol);
            ok = false;
        }
    }
    return ok;
}

/* The measured quantity of an invariant clause: a number over the whole
 * symbol table that depends on at least one measurement. */
static bool load_quantity(loader *L, struct fy_node *qn, const char *field, kcs_tol_clause *t)
{
    if (!kcs_contract_expr(L, qn, field, &t->quantity, &t->quantity_text))
        return false;
    static const char *const derived[] = {"tau", "eta"};
    for (int i = 0; i < L->tab->n; i++)
        for (int j = 0; j < 2; j++)
            if (kcs_expr_uses(t->quantity, i) && !strcmp(L->tab->syms[i].name, derived[j])) {
                int line, col, ecol = word_col(t->quantity_text, derived[j]);
                kcs_contract_expr_pos(L->y, qn, t->quantity_text, ecol, &line, &col);
                kcs_contract_error_at(L->y, line, col, field,
                                      "'%s' is computed from the quantity and cannot be part "
                                      "of it (column %d)", derived[j], ecol);
                return false;
            }
    for (int i = 0; i < L->tab->n; i++) {
        if (!kcs_expr_uses(t->quantity, i) || L->tab->syms[i].type != KCS_EXPR_NUMBER)
            continue;
        bool bound = !strcmp(L->tab->syms[i].name, "exact_inputs"); /* bound by the case */
        for (const char *const *v = eta_vars; *v && !bound; v++)
            bound = !strcmp(*v, L->tab->syms[i].name);
        if (!bound)
            return true;
    }
    kcs_yaml_error(L->y, qn, field, "uses no measured quantity (\"%.60s\"); an invariant "
                   "bounds something a run measures", t->quantity_text);
    return false;
}

/* One clause {structure, eta, quantity?} from mapping t (the tolerance
 * itself or an item of `all`); prefix names its fields. Returns whether it
 * loaded cleanly. */
static bool load_clause(loader *L, struct fy_node *t, const char *prefix, int st,
                        kcs_tol_clause *cl)
{
    char f[64];
    bool ok = st >= 0;
    cl->structure = st >= 0 ? (kcs_tol_structure)st : KCS_TOL_BACKWARD_ERROR;
    snprintf(f, sizeof f, "%s.eta", prefix);
    struct fy_node *en = kcs_yaml_get(L->y, t, "eta", true, prefix);
    ok = en && load_eta(L, en, f, cl) && ok;
    snprintf(f, sizeof f, "%s.quantity", prefix);
    struct fy_node *qn = kcs_yaml_get(L->y, t, "quantity", false, prefix);
    if (st == KCS_TOL_INVARIANT && !qn) {
        kcs_yaml_error(L->y, t, f, "missing required key (an invariant clause names the "
                       "quantity it bounds, e.g. \"distinct_digests - 1\")");
        ok = false;
    } else if (st >= 0 && st != KCS_TOL_INVARIANT && qn) {
        kcs_yaml_error(L->y, qn, f, "only invariant clauses take a quantity; %s bounds its own "
                       "metric", kcs_tol_structure_name((kcs_tol_structure)st));
        ok = false;
    } else if (qn) {
        ok = load_quantity(L, qn, f, cl) && ok;
    }
    return ok;
}

/* The clauses of a composite: tolerance.all, 1..KCS_MAX_CLAUSES mappings
 * of non-composite structure. */
static bool load_composite(loader *L, struct fy_node *t)
{
    static const char *const keys[] = {"structure", "eta", "quantity", NULL};
    kcs_contract *c = L->c;
    struct fy_node *all = kcs_yaml_get(L->y, t, "all", true, "tolerance");
    if (!all)
        return false;
    if (fy_node_get_type(all) != FYNT_SEQUENCE) {
        kcs_yaml_error(L->y, all, "tolerance.all", "expected a list of clauses "
                       "{structure, eta, quantity}");
        return false;
    }
    struct fy_node *items[KCS_MAX_CLAUSES];
    int n = kcs_contract_list_items(L, all, "tolerance.all", items, KCS_MAX_CLAUSES);
    bool ok = n > 0;
    for (int i = 0; i < n; i++) {
        char f[40], fs[56];
        snprintf(f, sizeof f, "tolerance.all[%d]", i);
        if (fy_node_get_type(items[i]) != FYNT_MAPPING) {
            kcs_yaml_error(L->y, items[i], f, "expected a mapping {structure, eta, quantity}");
            ok = false;
            continue;
        }
        kcs_yaml_check_keys(L->y, items[i], f, keys);
        snprintf(fs, sizeof fs, "%s.structure", f);
        struct fy_node *s = kcs_yaml_get(L->y, items[i], "structure", true, f);
        int st = s ? kcs_contract_keyword(L, s, fs, tol_names, KCS_TOL_COMPOSITE + 1) : -1;
        if (st == KCS_TOL_COMPOSITE) {
            kcs_yaml_error(L->y, s, fs, "a composite clause cannot nest another composite");
            st = -1;
        }
        ok = load_clause(L, items[i], f, st, &c->clauses[i]) && ok;
        c->n_clauses = i + 1;
    }
    return ok;
}

void kcs_contract_load_tolerance(loader *L, struct fy_node *root)
{
    static const char *const keys[] = {"structure", "eta", "quantity", "all", "derivation",
                                       NULL};
    kcs_contract *c = L->c;
    int before = L->y->n_errors;
    struct fy_node *t = kcs_contract_section(L, root, "tolerance", true, "", keys);
    if (!t)
        return;
    struct fy_node *s = kcs_yaml_get(L->y, t, "structure", true, "tolerance");
    int st = s ? kcs_contract_keyword(L, s, "tolerance.structure", tol_names, KCS_TOL_COMPOSITE + 1)
               : -1;
    if (st >= 0)
        c->tol_structure = (kcs_tol_structure)st;

    if (st == KCS_TOL_COMPOSITE) {
        static const char *const single[] = {"eta", "quantity"};
        for (int i = 0; i < 2; i++) {
            struct fy_node *x = kcs_yaml_get(L->y, t, single[i], false, "tolerance");
            if (x) {
                char f[32];
                snprintf(f, sizeof f, "tolerance.%s", single[i]);
                kcs_yaml_error(L->y, x, f, "a composite tolerance has its clauses in `all`; "
                               "give each clause its own %s", single[i]);
            }
        }
        load_composite(L, t);
    } else {
        struct fy_node *all = kcs_yaml_get(L->y, t, "all", false, "tolerance");
        if (all && st >= 0)
            kcs_yaml_error(L->y, all, "tolerance.all", "only structure composite takes a "
                           "list of clauses (structure is %s)", tol_names[st]);
        load_clause(L, t, "tolerance", st, &c->clauses[0]);
        c->n_clauses = 1;
    }
    c->eta = c->clauses[0].eta;
    c->eta_text = c->clauses[0].eta_text;

    struct fy_node *dn = kcs_yaml_get(L->y, t, "derivation", true, "tolerance");
    c->derivation = kcs_yaml_strdup(L->y, dn, "tolerance.derivation");
    const char *phrase = NULL;
    if (c->derivation && strspn(c->derivation, " \t\r\n") == strlen(c->derivation))
        kcs_yaml_error(L->y, dn, "tolerance.derivation", "must not be empty");
    else if (c->derivation && measured_derivation(c->derivation, &phrase))
        kcs_yaml_error(L->y, dn, "tolerance.derivation",
                       "eta must come from first principles, not be measured from the "
                       "candidate under test (says '%s')", phrase);
    L->tol_ok = L->y->n_errors == before;
}

/* The eta node of clause i (for diagnostics). */
static struct fy_node *eta_node(loader *L, struct fy_node *root, int i, char *field, size_t len)
{
    struct fy_node *t = kcs_yaml_get(L->y, root, "tolerance", false, "");
    if (L->c->tol_structure != KCS_TOL_COMPOSITE) {
        snprintf(field, len, "tolerance.eta");
        return kcs_yaml_get(L->y, t, "eta", false, "tolerance");
    }
    snprintf(field, len, "tolerance.all[%d].eta", i);
    struct fy_node *all = kcs_yaml_get(L->y, t, "all", false, "tolerance");
    return kcs_yaml_get(L->y, fy_node_sequence_get_by_index(all, i), "eta", false, "tolerance");
}

/* Every clause's eta is finite and positive (>= 0 for invariant clauses:
 * an exact invariant) for every measured case: each measured shape, the
 * held-out ones too, with each declared input format. */
void kcs_contract_check_eta(loader *L, struct fy_node *root)
{
    kcs_contract *c = L->c;
    if (!L->shapes_ok || !L->pre_ok || !L->tol_ok || c->n_clauses < 1)
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
    /* name dtype_out in a message only where the contract admits several */
    bool multi_out = (c->dtype_out_set & (c->dtype_out_set - 1)) != 0;
    for (int ci = 0; ci < c->n_clauses; ci++) {
        const kcs_tol_clause *cl = &c->clauses[ci];
        bool zero_ok = cl->structure == KCS_TOL_INVARIANT;
        bool bad = false;
        for (int i = 0; i < c->n_shapes + c->n_held_out && !bad; i++) {
            const kcs_shape *s = i < c->n_shapes ? &c->shapes[i] : &c->held_out[i - c->n_shapes];
            for (int fi = 0; fi < KCS_FMT_COUNT * KCS_FMT_COUNT && !bad; fi++) {
                /* every admitted (dtype_in, dtype_out) */
                int f = fi % KCS_FMT_COUNT, fo = fi / KCS_FMT_COUNT;
                if (!(c->dtype_in & (1u << f)) || !(c->dtype_out_set & (1u << fo)))
                    continue;
                double bind[7] = {(double)s->m, (double)s->n, (double)s->k,
                                  (double)(s->batch ? s->batch : 1), (double)f,
                                  c->dtype_acc.bits > 0 ? -(double)c->dtype_acc.bits
                                                        : (double)c->dtype_acc.fmt,
                                  (double)fo};
                for (int j = 0; j < 7; j++)
                    if (idx[j] >= 0)
                        v[idx[j]] = bind[j];
                double eta = kcs_expr_eval(cl->eta, v);
                if (isfinite(eta) && eta >= 0 && (eta > 0 || zero_ok))
                    continue;
                char field[40];
                struct fy_node *en = eta_node(L, root, ci, field, sizeof field);
                kcs_yaml_error(L->y, en, field,
                               "is %g for shape [%" PRId64 ", %" PRId64 ", %" PRId64
                               "] with dtype_in %s%s%s; it must be finite and %s",
                               eta, s->m, s->n, s->k, kcs_format_name((kcs_format)f),
                               multi_out ? ", dtype_out " : "",
                               multi_out ? kcs_format_name((kcs_format)fo) : "",
                               zero_ok ? "non-negative" : "positive");
                bad = true;
            }
        }
    }
    free(v);
    /* Exact-sum inputs: some op of the scope must have them, and every
     * measured k must admit them with the declared accumulator. */
    for (int d = 0; d < c->n_dists; d++) {
        if (c->dists[d] != KCS_DIST_EXACT)
            continue;
        struct fy_node *mn = kcs_yaml_get(L->y, root, "measurement", false, "");
        struct fy_node *in = kcs_yaml_get(L->y, mn, "inputs", false, "measurement");
        int any = 0;
        for (int op = 0; op < KCS_OP_COUNT; op++)
            any |= (c->ops & (1u << op)) && kcs_exact_op_ok((kcs_op)op);
        if (!any) {
            kcs_yaml_error(L->y, in, "measurement.inputs", "exact inputs exist for gemm, "
                           "batched_gemm, dot, reduce_sum and allreduce; the scope holds none "
                           "of them");
            break;
        }
        int failed = 0; /* every op of the scope that has them, with its count of terms */
        for (int i = 0; i < c->n_shapes + c->n_held_out && !failed; i++) {
            const kcs_shape *sh = i < c->n_shapes ? &c->shapes[i] : &c->held_out[i - c->n_shapes];
            for (int op = 0; op < KCS_OP_COUNT && !failed; op++) {
                if (!(c->ops & (1u << op)) || !kcs_exact_op_ok((kcs_op)op))
                    continue;
                kcs_error e = {0};
                int bad_out = 0;
                for (int fo = 0; fo < KCS_FMT_COUNT && !bad_out; fo++)
                    bad_out = (c->dtype_out_set & (1u << fo)) &&
                              kcs_exact_check((kcs_op)op, &c->dtype_acc, KCS_FMT_FP32,
                                              (kcs_format)fo,
                                              kcs_exact_terms((kcs_op)op, sh->m, sh->k), &e);
                if (bad_out) {
                    kcs_yaml_error(L->y, in, "measurement.inputs", "shape [%" PRId64 ", %" PRId64
                                   ", %" PRId64 "]: %s", sh->m, sh->n, sh->k, e.msg);
                    failed = 1;
                }
            }
        }
        break;
    }
}
