/* Per-op preconditions: `precondition.per_op` narrows the input formats
 * and shape ranges for one op of the scope, where a clause has power for
 * that op over less than the contract's whole precondition (C-PRC-02's
 * variance clause on layernorm: see contracts/C-PRC-02/README.md).
 *
 *   precondition:
 *     dtype_in: [fp32, bf16, fp16]
 *     shape: { k: [2, 65536] }
 *     per_op:
 *       layernorm: { dtype_in: [fp32], shape: { k: [2, 512] } }
 *
 * A narrowing may only narrow: its formats are a subset of the contract's
 * and its ranges lie inside the contract's. The op must be in scope, and
 * at least one measured shape must lie inside its narrowed ranges (else
 * the contract would measure nothing of that op). The check of a case
 * against it is precondition.c's (kcs_precondition_op_*). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "contract_load.h"

static const char *const dim_keys[] = {"m", "n", "k", "batch", NULL};

static void contract_range(const kcs_contract *c, int d, int64_t *lo, int64_t *hi)
{
    const int64_t r[4][2] = {{c->m_min, c->m_max},
                             {c->n_min, c->n_max},
                             {c->k_min, c->k_max},
                             {c->batch_min, c->batch_max}};
    *lo = r[d][0];
    *hi = r[d][1];
}

static int parse_format_v(const char *s, void *o) { return kcs_format_parse(s, o); }

static void load_one(loader *L, kcs_op op, struct fy_node *n, const char *opname)
{
    static const char *const keys[] = {"dtype_in", "shape", NULL};
    kcs_contract *c = L->c;
    kcs_op_narrowing *nw = &c->per_op[op];
    char parent[64], f[96];
    snprintf(parent, sizeof parent, "precondition.per_op.%s", opname);
    if (fy_node_get_type(n) != FYNT_MAPPING) {
        kcs_yaml_error(L->y, n, parent, "expected a mapping with dtype_in and/or shape");
        return;
    }
    kcs_yaml_check_keys(L->y, n, parent, keys);
    nw->set = true;
    nw->dtype_in = c->dtype_in;
    for (int d = 0; d < 4; d++)
        contract_range(c, d, &nw->range[d][0], &nw->range[d][1]);

    struct fy_node *dl = kcs_yaml_get(L->y, n, "dtype_in", false, parent);
    if (dl) {
        struct fy_node *items[KCS_FMT_COUNT * 2];
        snprintf(f, sizeof f, "%s.dtype_in", parent);
        int ni = kcs_contract_list_items(L, dl, f, items, KCS_FMT_COUNT * 2);
        uint32_t mask = 0;
        for (int i = 0; i < ni; i++) {
            kcs_format fmt;
            snprintf(f, sizeof f, "%s.dtype_in[%d]", parent, i);
            if (!kcs_contract_parse_name(L, items[i], f, "format", parse_format_v, &fmt))
                continue;
            if (!(c->dtype_in & (1u << fmt)))
                kcs_yaml_error(L->y, items[i], f, "%s is not in precondition.dtype_in: a "
                               "per-op precondition may only narrow the contract's",
                               kcs_format_name(fmt));
            mask |= 1u << fmt;
        }
        if (ni > 0)
            nw->dtype_in = mask & c->dtype_in;
    }
    struct fy_node *sh = kcs_contract_section(L, n, "shape", false, parent, dim_keys);
    if (!sh)
        return;
    for (int d = 0; d < 4; d++) {
        char sp[80];
        snprintf(sp, sizeof sp, "%s.shape", parent);
        struct fy_node *r = kcs_yaml_get(L->y, sh, dim_keys[d], false, sp);
        int64_t lo, hi, clo, chi;
        snprintf(f, sizeof f, "%s.shape.%s", parent, dim_keys[d]);
        if (!r || !kcs_contract_load_range(L, r, f, &lo, &hi))
            continue;
        contract_range(c, d, &clo, &chi);
        if (lo < clo || hi > chi) {
            kcs_yaml_error(L->y, r, f, "[%" PRId64 ", %" PRId64 "] is not inside "
                           "precondition.shape.%s: a per-op precondition may only narrow the "
                           "contract's", lo, hi, dim_keys[d]);
            continue;
        }
        nw->range[d][0] = lo;
        nw->range[d][1] = hi;
    }
}

void kcs_contract_load_per_op(loader *L, struct fy_node *precondition)
{
    struct fy_node *po = kcs_yaml_get(L->y, precondition, "per_op", false, "precondition");
    if (!po)
        return;
    if (fy_node_get_type(po) != FYNT_MAPPING) {
        kcs_yaml_error(L->y, po, "precondition.per_op", "expected a mapping from op names to "
                       "narrower preconditions");
        return;
    }
    void *it = NULL;
    struct fy_node_pair *pr;
    while ((pr = fy_node_mapping_iterate(po, &it))) {
        struct fy_node *key = fy_node_pair_key(pr), *val = fy_node_pair_value(pr);
        char name[32];
        kcs_op op;
        if (!kcs_yaml_str(L->y, key, "precondition.per_op", name, sizeof name))
            continue;
        if (kcs_op_parse(name, &op)) {
            kcs_yaml_error(L->y, key, "precondition.per_op", "unknown op '%s'", name);
            continue;
        }
        if (!(L->c->ops & (1u << op))) {
            kcs_yaml_error(L->y, key, "precondition.per_op", "op '%s' is not in scope.ops",
                           name);
            continue;
        }
        load_one(L, op, val, name);
    }
}

/* Every narrowed op keeps at least one measured shape (listed, not
 * held-out) inside its ranges. */
void kcs_contract_check_per_op(loader *L, struct fy_node *root)
{
    kcs_contract *c = L->c;
    if (!L->shapes_ok || !L->pre_ok)
        return;
    for (int op = 0; op < KCS_OP_COUNT; op++) {
        if (!c->per_op[op].set)
            continue;
        int inside = 0;
        for (int i = 0; i < c->n_shapes && !inside; i++)
            inside = kcs_op_narrowing_miss(&c->per_op[op], &c->shapes[i]) < 0;
        if (inside)
            continue;
        struct fy_node *n;
        char f[40];
        (void)kcs_contract_measured_shape(L, root, 0, &n, f, sizeof f);
        kcs_yaml_error(L->y, n, "measurement.shapes", "no measured shape lies inside "
                       "precondition.per_op.%s: the contract would measure nothing of %s",
                       kcs_op_name((kcs_op)op), kcs_op_name((kcs_op)op));
    }
}

int kcs_op_narrowing_miss(const kcs_op_narrowing *nw, const kcs_shape *s)
{
    const int64_t v[4] = {s->m, s->n, s->k, s->batch > 0 ? s->batch : 1};
    for (int d = 0; d < 4; d++)
        if (v[d] < nw->range[d][0] || v[d] > nw->range[d][1])
            return d;
    return -1;
}
