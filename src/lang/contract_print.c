/* kcs_contract_print: the normalized form of a loaded contract (canonical
 * names, all eight parts, defaults made explicit where they matter) as YAML
 * that kcs_contract_load reads back, or as one JSON object. Used by
 * `kcs lint`. */
#include "contract.h"
#include "freivalds.h"
#include "json.h"
#include "declares.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct out {
    FILE *f;
    bool json;
} out;

/* A double-quoted string valid in both JSON and YAML. */
#define qstr kcs_json_str

/* A canonical name: bare in YAML, quoted in JSON. */
static void name(const out *o, const char *s)
{
    if (o->json)
        qstr(o->f, s);
    else
        fputs(s, o->f);
}

/* key: in YAML at the given indent, "key": in JSON (with a leading comma
 * unless first). */
static void key(const out *o, int indent, bool first, const char *k)
{
    if (o->json)
        fprintf(o->f, "%s\"%s\": ", first ? "" : ", ", k);
    else
        fprintf(o->f, "%*s%s: ", indent, "", k);
}

/* A key inside a one-line {...} map. */
static void ikey(const out *o, bool first, const char *k)
{
    fprintf(o->f, "%s%s%s%s: ", first ? "" : ", ", o->json ? "\"" : "", k, o->json ? "\"" : "");
}

static void eol(const out *o)
{
    if (!o->json)
        fputc('\n', o->f);
}

/* key of a nested block: "key:\n" in YAML, "key": { in JSON. */
static void open_map(const out *o, const char *k)
{
    if (o->json)
        fprintf(o->f, ", \"%s\": {", k);
    else
        fprintf(o->f, "%s:\n", k);
}

static void close_map(const out *o)
{
    if (o->json)
        fputc('}', o->f);
}

static void range(const out *o, bool *first, const char *k, int64_t lo, int64_t hi)
{
    if (lo == 1 && hi == INT64_MAX)
        return;
    fprintf(o->f, "%s%s%s%s: [%" PRId64 ", %" PRId64 "]", *first ? "" : ", ",
            o->json ? "\"" : "", k, o->json ? "\"" : "", lo, hi);
    *first = false;
}

/* precondition.per_op: each narrowed op's formats and the ranges where
 * they differ from the contract's. */
static void per_op(const out *p, const kcs_contract *c)
{
    static const char *const dims[] = {"m", "n", "k", "batch"};
    const int64_t cr[4][2] = {{c->m_min, c->m_max},
                              {c->n_min, c->n_max},
                              {c->k_min, c->k_max},
                              {c->batch_min, c->batch_max}};
    bool any = false;
    for (int op = 0; op < KCS_OP_COUNT; op++) {
        const kcs_op_narrowing *nw = &c->per_op[op];
        if (!nw->set)
            continue;
        if (!any)
            key(p, 2, false, "per_op"), fputc('{', p->f);
        ikey(p, !any, kcs_op_name((kcs_op)op)), fputc('{', p->f);
        any = true;
        ikey(p, true, "dtype_in"), fputc('[', p->f);
        for (int i = 0, fi = 1; i < KCS_FMT_COUNT; i++)
            if (nw->dtype_in & (1u << i)) {
                fputs(fi ? "" : ", ", p->f), name(p, kcs_format_name((kcs_format)i));
                fi = 0;
            }
        fputc(']', p->f);
        bool first = true;
        for (int d = 0; d < 4; d++) {
            if (nw->range[d][0] == cr[d][0] && nw->range[d][1] == cr[d][1])
                continue;
            if (first)
                ikey(p, false, "shape"), fputc('{', p->f);
            range(p, &first, dims[d], nw->range[d][0], nw->range[d][1]);
        }
        if (!first)
            fputc('}', p->f);
        fputc('}', p->f);
    }
    if (any)
        fputc('}', p->f), eol(p);
}

/* A tolerance clause: inline {structure, eta, quantity} in a composite's
 * list, else the eta (and quantity) keys of the tolerance mapping. */
static void clause(const out *o, const kcs_tol_clause *t, bool inline_map)
{
    if (inline_map) {
        ikey(o, true, "structure"), name(o, kcs_tol_structure_name(t->structure));
        ikey(o, false, "eta"), qstr(o->f, t->eta_text);
        if (t->quantity_text)
            ikey(o, false, "quantity"), qstr(o->f, t->quantity_text);
        return;
    }
    key(o, 2, false, "eta"), qstr(o->f, t->eta_text), eol(o);
    if (t->quantity_text)
        key(o, 2, false, "quantity"), qstr(o->f, t->quantity_text), eol(o);
}

/* A list of shapes: [[m, n, k], [m, n, k, batch], ...]. */
static void shapes(FILE *f, const kcs_shape *s, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s[%" PRId64 ", %" PRId64 ", %" PRId64, i ? ", " : "", s[i].m, s[i].n,
                s[i].k);
        if (s[i].batch)
            fprintf(f, ", %" PRId64, s[i].batch);
        fputc(']', f);
    }
    fputc(']', f);
}

/* The shortest decimal that reads back as x. */
static void num(FILE *f, double x)
{
    char buf[32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    fputs(buf, f);
}

static bool has_shape(const kcs_contract *c)
{
    return c->m_min != 1 || c->m_max != INT64_MAX || c->n_min != 1 || c->n_max != INT64_MAX ||
           c->k_min != 1 || c->k_max != INT64_MAX || c->batch_min != 1 ||
           c->batch_max != INT64_MAX || c->shape_mult[0] || c->shape_mult[1] ||
           c->shape_mult[2] || c->shape_mult[3];
}

int kcs_contract_print(const kcs_contract *c, FILE *f, bool json)
{
    out o = {f, json};
    const out *p = &o;
    bool first;
    char buf[32];
    if (json)
        fputc('{', f);
    key(p, 0, true, "id"), name(p, c->id), eol(p);
    key(p, 0, false, "title"), qstr(f, c->title), eol(p);
    key(p, 0, false, "family"), name(p, c->family), eol(p);
    key(p, 0, false, "primitive"), name(p, c->primitive), eol(p);

    open_map(p, "scope");
    key(p, 2, true, "ops"), fputc('[', f);
    first = true;
    for (int i = 0; i < KCS_OP_COUNT; i++)
        if (c->ops & (1u << i)) {
            fputs(first ? "" : ", ", f), name(p, kcs_op_name((kcs_op)i));
            first = false;
        }
    fputc(']', f), eol(p), close_map(p);

    open_map(p, "precondition");
    key(p, 2, true, "dtype_in"), fputc('[', f);
    first = true;
    for (int i = 0; i < KCS_FMT_COUNT; i++)
        if (c->dtype_in & (1u << i)) {
            fputs(first ? "" : ", ", f), name(p, kcs_format_name((kcs_format)i));
            first = false;
        }
    fputc(']', f), eol(p);
    key(p, 2, false, "dtype_acc"), name(p, kcs_acc_str(&c->dtype_acc, buf, sizeof buf)), eol(p);
    if (!c->dtype_out_set || c->dtype_out_set == (1u << c->dtype_out)) {
        key(p, 2, false, "dtype_out"), name(p, kcs_format_name(c->dtype_out)), eol(p);
    } else { /* the default first, then the others */
        key(p, 2, false, "dtype_out"), fputc('[', f), name(p, kcs_format_name(c->dtype_out));
        for (int i = 0; i < KCS_FMT_COUNT; i++)
            if ((c->dtype_out_set & (1u << i)) && i != (int)c->dtype_out)
                fputs(", ", f), name(p, kcs_format_name((kcs_format)i));
        fputc(']', f), eol(p);
    }
    if (has_shape(c)) {
        key(p, 2, false, "shape"), fputc('{', f);
        first = true;
        range(p, &first, "m", c->m_min, c->m_max);
        range(p, &first, "n", c->n_min, c->n_max);
        range(p, &first, "k", c->k_min, c->k_max);
        range(p, &first, "batch", c->batch_min, c->batch_max);
        if (c->shape_mult[0] || c->shape_mult[1] || c->shape_mult[2] || c->shape_mult[3]) {
            static const char *const dims[] = {"m", "n", "k", "batch"};
            ikey(p, first, "multiple_of"), fputc('{', f);
            for (int d = 0, fd = 1; d < 4; d++)
                if (c->shape_mult[d]) {
                    ikey(p, fd, dims[d]), fprintf(f, "%" PRId64, c->shape_mult[d]);
                    fd = 0;
                }
            fputc('}', f);
            first = false;
        }
        fputc('}', f), eol(p);
    }
    key(p, 2, false, "values"), fputc('{', f);
    ikey(p, true, "dist");
    if (c->value_dists == (1u << KCS_DIST_COUNT) - 1) {
        name(p, "any");
    } else {
        fputc('[', f);
        first = true;
        for (int i = 0; i < KCS_DIST_COUNT; i++)
            if (c->value_dists & (1u << i)) {
                fputs(first ? "" : ", ", f), name(p, kcs_dist_name((kcs_dist)i));
                first = false;
            }
        fputc(']', f);
    }
    ikey(p, false, "finite");
    fputs(c->values_finite ? "true}" : "false}", f), eol(p);
    if (c->declares) {
        key(p, 2, false, "declares"), fputc('[', f);
        for (int i = 0, first_d = 1; i < KCS_DECL_COUNT; i++)
            if (c->declares & KCS_DECL_BIT(i)) {
                fputs(first_d ? "" : ", ", f), name(p, kcs_decl_name((kcs_decl)i));
                first_d = 0;
            }
        fputc(']', f), eol(p);
    }
    per_op(p, c);
    close_map(p);

    key(p, 0, false, "postcondition"), qstr(f, c->postcondition), eol(p);

    open_map(p, "tolerance");
    key(p, 2, true, "structure"), name(p, kcs_tol_structure_name(c->tol_structure)), eol(p);
    if (c->tol_structure == KCS_TOL_COMPOSITE) {
        if (json)
            key(p, 2, false, "all"), fputc('[', f);
        else
            fputs("  all:\n", f);
        for (int i = 0; i < c->n_clauses; i++) {
            fputs(json ? (i ? ", {" : "{") : "    - {", f);
            clause(p, &c->clauses[i], true);
            fputc('}', f), eol(p);
        }
        if (json)
            fputc(']', f);
    } else if (c->n_clauses > 0) {
        clause(p, &c->clauses[0], false);
    }
    key(p, 2, false, "derivation"), qstr(f, c->derivation), eol(p);
    close_map(p);

    key(p, 0, false, "oracle"), fputc('{', f);
    ikey(p, true, "kind");
    if (c->oracle == KCS_ORACLE_MODEL) {
        char m[48];
        snprintf(m, sizeof m, "model:%s", c->oracle_profile);
        name(p, m);
    } else if (c->oracle == KCS_ORACLE_FREIVALDS) {
        char m[64];
        snprintf(m, sizeof m, "freivalds:%d:%s", c->fv_probes,
                 kcs_fv_mode_name((kcs_fv_mode)c->fv_mode));
        name(p, m);
    } else {
        name(p, c->oracle == KCS_ORACLE_EXACT ? "exact" : "fp64");
    }
    if (c->oracle_magnitude == KCS_MAG_RANDOM_WALK)
        ikey(p, false, "magnitude"), name(p, "random_walk");
    fputc('}', f), eol(p);

    open_map(p, "measurement");
    key(p, 2, true, "shapes"), shapes(f, c->shapes, c->n_shapes), eol(p);
    if (c->n_held_out || json)
        key(p, 2, false, "held_out"), shapes(f, c->held_out, c->n_held_out), eol(p);
    if (c->held_out_draw || json)
        key(p, 2, false, "held_out_draw"), fprintf(f, "%d", c->held_out_draw), eol(p);
    key(p, 2, false, "inputs"), fputc('[', f);
    for (int i = 0; i < c->n_dists; i++)
        fputs(i ? ", " : "", f), name(p, kcs_dist_name(c->dists[i]));
    fputc(']', f), eol(p);
    key(p, 2, false, "trials"), fprintf(f, "%d", c->trials), eol(p);
    key(p, 2, false, "guards"), fputc('{', f);
    ikey(p, true, "poison"), name(p, c->guard_poison ? "sentinel" : "none");
    ikey(p, false, "fresh_inputs");
    fputs(c->guard_fresh_inputs ? "true" : "false", f);
    ikey(p, false, "revalidate");
    fputs(c->guard_revalidate ? "true" : "false", f);
    fputc('}', f), eol(p);
    key(p, 2, false, "protocol"), name(p, kcs_protocol_name(c->protocol)), eol(p);
    if (c->protocol == KCS_PROTO_REPEAT || c->repetitions != 1 || json)
        key(p, 2, false, "repetitions"), fprintf(f, "%d", c->repetitions), eol(p);
    if (c->attrs[0] || json)
        key(p, 2, false, "attrs"), qstr(f, c->attrs), eol(p);
    const double sp[] = {c->special_nan,  c->special_inf,       c->special_pinf,
                         c->special_ninf, c->special_subnormal, c->special_oob};
    static const char *const sp_names[] = {"nan", "inf", "pinf", "ninf", "subnormal", "oob"};
    if (sp[0] > 0 || sp[1] > 0 || sp[2] > 0 || sp[3] > 0 || sp[4] > 0 || sp[5] > 0 ||
        c->special_infs > 0 || json) {
        key(p, 2, false, "special"), fputc('{', f);
        first = true;
        for (int i = 0; i < 6; i++)
            if (sp[i] > 0 || json) {
                ikey(p, first, sp_names[i]), num(f, sp[i]);
                first = false;
            }
        if (c->special_infs > 0) /* only where given: older listings stay as they were */
            ikey(p, first, "infs"), num(f, c->special_infs);
        fputc('}', f), eol(p);
    }
    key(p, 2, false, "seed"), fprintf(f, "%" PRIu64, c->seed), eol(p);
    close_map(p);

    fputs(json ? ", \"signature\": [" : "signature:\n", f);
    for (int i = 0; i < c->n_sigs; i++) {
        const kcs_signature *s = &c->sigs[i];
        if (json) {
            fprintf(f, "%s{\"name\": ", i ? ", " : ""), name(p, s->name);
            fputs(", \"when\": ", f), qstr(f, s->when_text);
            fputs(", \"explain\": ", f), qstr(f, s->explain), fputc('}', f);
        } else {
            fputs("  - name: ", f), name(p, s->name);
            fputs("\n    when: ", f), qstr(f, s->when_text);
            fputs("\n    explain: ", f), qstr(f, s->explain), fputc('\n', f);
        }
    }
    if (json)
        fputs("]}\n", f);
    return ferror(f) ? KCS_E_IO : 0;
}
