/* The measurement part of a contract (part 7, the protocol that produces
 * the evidence): benchmarked and held-out shapes, input distributions,
 * trials, integrity guards, the protocol kind and its repetitions, the
 * semantics declared to kernels (attrs), injected special values and the
 * seed; and the checks that tie the protocol to the precondition and the
 * scope. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attrs.h"
#include "contract_load.h"
#include "nan_mask.h"

#define DIM_MAX INT32_MAX              /* largest m, n, k, batch of a measured shape */
#define OPERAND_MAX (INT64_C(1) << 31) /* largest operand (elements) of a measured shape */
#define TRIALS_MAX 10000
#define REPETITIONS_MAX 1000

static int parse_dist_v(const char *s, void *o) { return kcs_dist_parse(s, o); }

/* Declared semantics a contract may hand to kernels, with their values. */
static const struct {
    const char *key;
    const char *values[6];
} attr_keys[] = {
    {"oob", {"raise", "clamp", "zero", "undefined", NULL}},
    {"nan", {"propagate", "mask", "raise", NULL}},
    {"overflow", {"inf", "saturate", "nan", NULL}},
    {"subnormal", {"preserve", "flush", NULL}},
    {"fn", {"exp", "tanh", "silu", "gelu_tanh", "rsqrt", NULL}}, /* elementwise.h */
};
#define N_ATTR_KEYS ((int)(sizeof attr_keys / sizeof attr_keys[0]))

static void load_shape(loader *L, struct fy_node *n, const char *field, kcs_shape *s)
{
    int count = fy_node_get_type(n) == FYNT_SEQUENCE ? fy_node_sequence_item_count(n) : -1;
    if (count != 3 && count != 4) {
        kcs_yaml_error(L->y, n, field, "expected [m, n, k] or [m, n, k, batch]");
        L->shapes_ok = false;
        return;
    }
    int64_t v[4] = {0, 0, 0, 0};
    for (int i = 0; i < count; i++)
        if (!kcs_yaml_int(L->y, fy_node_sequence_get_by_index(n, i), field, 1, DIM_MAX, &v[i]))
            L->shapes_ok = false;
    *s = (kcs_shape){v[0], v[1], v[2], v[3]};
    int64_t b = v[3] ? v[3] : 1;
    if (L->shapes_ok && (v[0] * v[2] * b > OPERAND_MAX || v[2] * v[1] * b > OPERAND_MAX ||
                         v[0] * v[1] * b > OPERAND_MAX)) {
        kcs_yaml_error(L->y, n, field, "an operand has more than 2^31 elements");
        L->shapes_ok = false;
    }
}

/* A list of shapes into out[]: the count, or -1 (recorded). */
static int load_shapes(loader *L, struct fy_node *sh, const char *field, kcs_shape *out)
{
    struct fy_node *items[KCS_MAX_SHAPES];
    int n = -1;
    if (sh && (fy_node_get_type(sh) == FYNT_SCALAR ||
               (fy_node_get_type(sh) == FYNT_SEQUENCE && fy_node_sequence_item_count(sh) > 0 &&
                fy_node_get_type(fy_node_sequence_get_by_index(sh, 0)) == FYNT_SCALAR)))
        kcs_yaml_error(L->y, sh, field, "expected a list of shapes, e.g. [[64, 64, 256]]");
    else
        n = kcs_contract_list_items(L, sh, field, items, KCS_MAX_SHAPES);
    for (int i = 0; i < n; i++) {
        char f[48];
        snprintf(f, sizeof f, "%s[%d]", field, i);
        load_shape(L, items[i], f, &out[i]);
    }
    if (n < 1)
        L->shapes_ok = false;
    return n;
}

const kcs_shape *kcs_contract_measured_shape(loader *L, struct fy_node *root, int i,
                                             struct fy_node **node_p, char *field, size_t len)
{
    kcs_contract *c = L->c;
    bool held = i >= c->n_shapes;
    int j = held ? i - c->n_shapes : i;
    const char *key = held ? "held_out" : "shapes";
    struct fy_node *meas = kcs_yaml_get(L->y, root, "measurement", false, "");
    struct fy_node *sh = kcs_yaml_get(L->y, meas, key, false, "measurement");
    *node_p = sh && fy_node_get_type(sh) == FYNT_SEQUENCE ? fy_node_sequence_get_by_index(sh, j)
                                                         : sh;
    snprintf(field, len, "measurement.%s[%d]", key, j);
    return held ? &c->held_out[j] : &c->shapes[j];
}

void kcs_contract_check_measured_shapes(loader *L, struct fy_node *root, kcs_shape_check_fn check)
{
    kcs_contract *c = L->c;
    if (!L->shapes_ok || !L->pre_ok)
        return;
    for (int i = 0; i < c->n_shapes + c->n_held_out; i++) {
        struct fy_node *n;
        char f[40];
        const kcs_shape *s = kcs_contract_measured_shape(L, root, i, &n, f, sizeof f);
        check(L, s, n, f);
    }
}

/* attrs: "key=value;..." with known keys and values, stored canonical
 * (no spaces, one ';' between pairs, in the order written). */
static void load_attrs(loader *L, struct fy_node *n)
{
    const char *field = "measurement.attrs";
    char buf[sizeof L->c->attrs], out[sizeof L->c->attrs] = "";
    if (!kcs_yaml_str(L->y, n, field, buf, sizeof buf))
        return;
    if (kcs_attrs_check(buf)) {
        kcs_yaml_error(L->y, n, field, "'%s' is not of the form key=value;key=value (keys "
                       "[a-z0-9_], each once)", buf);
        return;
    }
    bool ok = true;
    for (char *save = NULL, *seg = strtok_r(buf, ";", &save); seg;
         seg = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(seg, '=');
        if (!eq)
            continue; /* a blank segment (kcs_attrs_check passed) */
        char *k = seg, *v = eq + 1;
        *eq = '\0';
        k += strspn(k, " ");
        k[strcspn(k, " ")] = '\0';
        v += strspn(v, " ");
        for (size_t e = strlen(v); e && v[e - 1] == ' '; e--)
            v[e - 1] = '\0';
        int key = -1;
        for (int i = 0; i < N_ATTR_KEYS && key < 0; i++)
            if (!strcmp(k, attr_keys[i].key))
                key = i;
        if (key < 0) {
            kcs_yaml_error(L->y, n, field, "unknown key '%s' (expected oob | nan | overflow | "
                           "subnormal | fn)", k);
            ok = false;
            continue;
        }
        bool vok = false;
        char set[80] = "";
        for (const char *const *a = attr_keys[key].values; *a; a++) {
            vok = vok || !strcmp(v, *a);
            snprintf(set + strlen(set), sizeof set - strlen(set), "%s%s", *set ? " | " : "", *a);
        }
        if (!vok) {
            kcs_yaml_error(L->y, n, field, "%s=%s: unknown value (expected %s)", k, v, set);
            ok = false;
            continue;
        }
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s=%s", *out ? ";" : "", k, v);
    }
    if (ok)
        memcpy(L->c->attrs, out, sizeof out);
}

static void load_special(loader *L, struct fy_node *m)
{
    static const char *const keys[] = {"nan", "inf", "pinf", "ninf", "subnormal", "oob",
                                       "infs", NULL};
    kcs_contract *c = L->c;
    double *dst[] = {&c->special_nan,  &c->special_inf,       &c->special_pinf,
                     &c->special_ninf, &c->special_subnormal, &c->special_oob,
                     &c->special_infs};
    struct fy_node *s = kcs_contract_section(L, m, "special", false, "measurement", keys);
    if (!s)
        return;
    for (int i = 0; keys[i]; i++) {
        char f[40];
        snprintf(f, sizeof f, "measurement.special.%s", keys[i]);
        struct fy_node *n = kcs_yaml_get(L->y, s, keys[i], false, "measurement.special");
        double v;
        if (!n || !kcs_yaml_num(L->y, n, f, &v))
            continue;
        if (!(v >= 0.0 && v <= 1.0))
            kcs_yaml_error(L->y, n, f, "%g is not a fraction in [0, 1]", v);
        else
            *dst[i] = v;
    }
    double sum = c->special_nan + c->special_inf + c->special_pinf + c->special_ninf +
                 c->special_subnormal + c->special_infs;
    if (sum > 1.0)
        kcs_yaml_error(L->y, s, "measurement.special",
                       "nan + inf + pinf + ninf + subnormal%s is %g; the fractions of one input "
                       "must sum to at most 1", c->special_infs > 0 ? " + infs" : "", sum);
}

bool kcs_contract_injects_nonfinite(const kcs_contract *c)
{
    return c->special_nan > 0 || c->special_inf > 0 || c->special_pinf > 0 ||
           c->special_ninf > 0 || c->special_infs > 0;
}

static void load_protocol(loader *L, struct fy_node *m)
{
    static const char *const protocols[] = {"oracle", "repeat", "batch_invariance"};
    kcs_contract *c = L->c;
    struct fy_node *p = kcs_yaml_get(L->y, m, "protocol", false, "measurement");
    int pk = p ? kcs_contract_keyword(L, p, "measurement.protocol", protocols, 3) : 0;
    if (pk >= 0)
        c->protocol = (kcs_protocol_kind)pk;
    struct fy_node *r = kcs_yaml_get(L->y, m, "repetitions", false, "measurement");
    int64_t reps;
    if (r && kcs_yaml_int(L->y, r, "measurement.repetitions", 1, REPETITIONS_MAX, &reps)) {
        if (c->protocol == KCS_PROTO_REPEAT && reps < 2)
            kcs_yaml_error(L->y, r, "measurement.repetitions",
                           "is %" PRId64 "; protocol repeat compares runs on identical inputs "
                           "and needs at least 2", reps);
        else if (c->protocol != KCS_PROTO_REPEAT && reps > 1 && pk >= 0)
            kcs_yaml_error(L->y, r, "measurement.repetitions",
                           "%" PRId64 " repetitions need protocol repeat (protocol is %s)", reps,
                           kcs_protocol_name(c->protocol));
        else
            c->repetitions = (int)reps;
    } else if (!r && c->protocol == KCS_PROTO_REPEAT) {
        kcs_yaml_error(L->y, p, "measurement.repetitions",
                       "missing: protocol repeat needs repetitions >= 2");
    }
}

void kcs_contract_load_measurement(loader *L, struct fy_node *root)
{
    static const char *const keys[] = {"shapes", "held_out", "held_out_draw", "inputs", "trials",
                                       "guards", "protocol", "repetitions", "attrs", "special",
                                       "seed", NULL};
    static const char *const guard_keys[] = {"poison", "fresh_inputs", "revalidate", NULL};
    static const char *const poisons[] = {"sentinel", "none"};
    kcs_contract *c = L->c;
    struct fy_node *m = kcs_contract_section(L, root, "measurement", true, "", keys);
    if (!m)
        return;

    L->shapes_ok = true;
    int n = load_shapes(L, kcs_yaml_get(L->y, m, "shapes", true, "measurement"),
                        "measurement.shapes", c->shapes);
    if (n > 0)
        c->n_shapes = n;
    struct fy_node *ho = kcs_yaml_get(L->y, m, "held_out", false, "measurement");
    if (ho) {
        n = load_shapes(L, ho, "measurement.held_out", c->held_out);
        if (n > 0)
            c->n_held_out = n;
    }
    struct fy_node *hd = kcs_yaml_get(L->y, m, "held_out_draw", false, "measurement");
    int64_t draws;
    if (hd && kcs_yaml_int(L->y, hd, "measurement.held_out_draw", 0, 16, &draws)) {
        c->held_out_draw = (int)draws;
        if (draws > 0 && (c->ops & ~((1u << KCS_OP_GEMM) | (1u << KCS_OP_BATCHED_GEMM))))
            kcs_yaml_error(L->y, hd, "measurement.held_out_draw",
                           "draws gemm shapes; the scope holds other ops (draws are for "
                           "gemm and batched_gemm only)");
    }

    struct fy_node *items[KCS_MAX_DISTS];
    struct fy_node *in = kcs_yaml_get(L->y, m, "inputs", true, "measurement");
    n = kcs_contract_list_items(L, in, "measurement.inputs", items, KCS_MAX_DISTS);
    for (int i = 0; i < n; i++) {
        char f[40];
        snprintf(f, sizeof f, "measurement.inputs[%d]", i);
        if (kcs_contract_parse_name(L, items[i], f, "distribution", parse_dist_v,
                                    &c->dists[c->n_dists]))
            c->n_dists++;
    }
    int64_t trials;
    if (kcs_yaml_int(L->y, kcs_yaml_get(L->y, m, "trials", true, "measurement"),
                     "measurement.trials", 1, TRIALS_MAX, &trials))
        c->trials = (int)trials;

    struct fy_node *g = kcs_contract_section(L, m, "guards", true, "measurement", guard_keys);
    if (g) {
        struct fy_node *p = kcs_yaml_get(L->y, g, "poison", true, "measurement.guards");
        int pk = p ? kcs_contract_keyword(L, p, "measurement.guards.poison", poisons, 2) : -1;
        c->guard_poison = pk == 0;
        kcs_yaml_bool(L->y, kcs_yaml_get(L->y, g, "fresh_inputs", true, "measurement.guards"),
                      "measurement.guards.fresh_inputs", &c->guard_fresh_inputs);
        kcs_yaml_bool(L->y, kcs_yaml_get(L->y, g, "revalidate", true, "measurement.guards"),
                      "measurement.guards.revalidate", &c->guard_revalidate);
    }

    load_protocol(L, m);
    struct fy_node *a = kcs_yaml_get(L->y, m, "attrs", false, "measurement");
    if (a)
        load_attrs(L, a);
    load_special(L, m);
    struct fy_node *sd = kcs_yaml_get(L->y, m, "seed", false, "measurement");
    int64_t seed;
    if (sd && kcs_yaml_int(L->y, sd, "measurement.seed", 0, INT64_MAX, &seed))
        c->seed = (uint64_t)seed;
}

static bool same_shape(const kcs_shape *a, const kcs_shape *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k &&
           (a->batch ? a->batch : 1) == (b->batch ? b->batch : 1);
}

/* Shapes are distinct (a held-out shape is never also benchmarked), the
 * protocol can run on every shape, and injected values agree with the
 * precondition and the scope. */
void kcs_contract_check_measurement(loader *L, struct fy_node *root)
{
    kcs_contract *c = L->c;
    struct fy_node *meas = kcs_yaml_get(L->y, root, "measurement", false, "");
    if (L->shapes_ok) {
        int total = c->n_shapes + c->n_held_out;
        for (int i = 0; i < total; i++) {
            struct fy_node *n, *n2;
            char f[48], f2[48];
            const kcs_shape *s = kcs_contract_measured_shape(L, root, i, &n, f, sizeof f);
            for (int j = 0; j < i; j++) {
                const kcs_shape *s2 = kcs_contract_measured_shape(L, root, j, &n2, f2, sizeof f2);
                if (!same_shape(s, s2))
                    continue;
                if (i >= c->n_shapes && j < c->n_shapes)
                    kcs_yaml_error(L->y, n, f, "is also benchmarked as %s; a held-out shape "
                                   "must not be one of measurement.shapes", f2);
                else
                    kcs_yaml_error(L->y, n, f, "repeats %s", f2);
                break;
            }
            if (c->protocol == KCS_PROTO_BATCH_INVARIANCE && s->m < 2)
                kcs_yaml_error(L->y, n, f, "m is %" PRId64 "; protocol batch_invariance compares "
                               "op(x[:1]) with op(x)[:1] and needs m >= 2", s->m);
        }
    }
    if (kcs_nan_mask_declared(c->attrs))
        for (int op = 0; op < KCS_OP_COUNT; op++)
            if ((c->ops & (1u << op)) && !kcs_nan_mask_defined((kcs_op)op)) {
                kcs_yaml_error(L->y, kcs_yaml_get(L->y, meas, "attrs", false, "measurement"),
                               "measurement.attrs", "nan=mask is not defined for op %s in scope "
                               "(defined for reduce_sum, dot, gemm, batched_gemm, allreduce, "
                               "softmax)", kcs_op_name((kcs_op)op));
                break;
            }
    struct fy_node *sp = kcs_yaml_get(L->y, meas, "special", false, "measurement");
    if (!sp || fy_node_get_type(sp) != FYNT_MAPPING)
        return;
    if (L->pre_ok && c->values_finite && kcs_contract_injects_nonfinite(c)) {
        /* name the first non-finite key given */
        const char *key = c->special_nan > 0   ? "nan"
                          : c->special_inf > 0 ? "inf"
                          : c->special_pinf > 0 ? "pinf"
                          : c->special_ninf > 0 ? "ninf"
                                                : "infs";
        char f[40];
        snprintf(f, sizeof f, "measurement.special.%s", key);
        kcs_yaml_error(L->y, kcs_yaml_get(L->y, sp, key, false, "measurement.special"), f,
                       "injects non-finite inputs, but precondition.values.finite is true");
    }
    if (c->special_oob > 0 && c->ops && !(c->ops & (1u << KCS_OP_GATHER)))
        kcs_yaml_error(L->y, kcs_yaml_get(L->y, sp, "oob", false, "measurement.special"),
                       "measurement.special.oob",
                       "out-of-range indices need an op that reads indices (gather) in scope");
}
