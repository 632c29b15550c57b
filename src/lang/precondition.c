#include "precondition.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Dimension d (0..3: m, n, k, batch) of c: in its range and its shape
 * class (precondition.shape.multiple_of). */
static int dim(const kcs_contract *c, int d, int64_t v, int64_t lo, int64_t hi, kcs_error *err)
{
    static const char *const names[] = {"m", "n", "k", "batch"};
    int64_t mult = c->shape_mult[d];
    if (v >= lo && v <= hi && (mult <= 1 || v % mult == 0))
        return 0;
    char hs[32], cls[64] = "";
    if (hi == INT64_MAX)
        snprintf(hs, sizeof hs, "inf");
    else
        snprintf(hs, sizeof hs, "%lld", (long long)hi);
    if (mult > 1)
        snprintf(cls, sizeof cls, ", multiples of %lld", (long long)mult);
    if (v >= lo && v <= hi)
        return kcs_fail(err, KCS_E_INVAL, "dimension %s = %lld is not a multiple of %lld: the "
                        "precondition of %s admits %s in [%lld, %s]%s "
                        "(precondition.shape.multiple_of.%s)", names[d], (long long)v,
                        (long long)mult, c->id, names[d], (long long)lo, hs, cls, names[d]);
    return kcs_fail(err, KCS_E_INVAL, "dimension %s = %lld is outside the precondition's "
                    "range [%lld, %s]%s of %s", names[d], (long long)v, (long long)lo, hs, cls,
                    c->id);
}

int kcs_precondition_shape(const kcs_contract *c, const kcs_shape *s, kcs_error *err)
{
    int64_t b = s->batch > 0 ? s->batch : 1;
    int rc = dim(c, 0, s->m, c->m_min, c->m_max, err);
    if (!rc)
        rc = dim(c, 1, s->n, c->n_min, c->n_max, err);
    if (!rc)
        rc = dim(c, 2, s->k, c->k_min, c->k_max, err);
    if (!rc)
        rc = dim(c, 3, b, c->batch_min, c->batch_max, err);
    return rc;
}

int64_t kcs_precondition_fit(const kcs_contract *c, int d, int64_t v)
{
    const int64_t r[4][2] = {{c->m_min, c->m_max},
                             {c->n_min, c->n_max},
                             {c->k_min, c->k_max},
                             {c->batch_min, c->batch_max}};
    int64_t lo = r[d][0], hi = r[d][1], mult = c->shape_mult[d] > 1 ? c->shape_mult[d] : 1;
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    if (v % mult == 0)
        return v;
    int64_t down = v - v % mult;
    if (v <= hi - (mult - v % mult))
        return v + (mult - v % mult); /* up, still inside the range */
    return down >= lo ? down : 0;
}

/* 0 when bit v of mask is set, else KCS_E_INVAL naming the admitted ones:
 * input distributions (formats 0) or input formats (formats 1). */
static int admitted(const kcs_contract *c, uint32_t mask, int formats, int v, kcs_error *err)
{
    if (mask & (1u << v))
        return 0;
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < (formats ? KCS_FMT_COUNT : KCS_DIST_COUNT) && used < sizeof list; i++)
        if (mask & (1u << i))
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? " " : "",
                                     formats ? kcs_format_name((kcs_format)i)
                                             : kcs_dist_name((kcs_dist)i));
    if (formats == 2)
        return kcs_fail(err, KCS_E_INVAL, "dtype_out %s is not admitted by %s's precondition "
                        "(dtype_out: %s)", kcs_format_name((kcs_format)v), c->id, list);
    if (formats)
        return kcs_fail(err, KCS_E_INVAL, "dtype_in %s is not admitted by %s's precondition "
                        "(dtype_in: %s)", kcs_format_name((kcs_format)v), c->id, list);
    return kcs_fail(err, KCS_E_INVAL, "input distribution %s is not admitted by %s's "
                    "precondition (values.dist: %s)", kcs_dist_name((kcs_dist)v), c->id, list);
}

int kcs_precondition_dist(const kcs_contract *c, kcs_dist d, kcs_error *err)
{
    return admitted(c, c->value_dists, 0, (int)d, err);
}

int kcs_precondition_dtype(const kcs_contract *c, kcs_format f, kcs_error *err)
{
    return admitted(c, c->dtype_in, 1, (int)f, err);
}

int kcs_precondition_dtype_out(const kcs_contract *c, kcs_format f, kcs_error *err)
{
    /* a contract built in code, not loaded, admits its one dtype_out */
    uint32_t set = c->dtype_out_set ? c->dtype_out_set : 1u << c->dtype_out;
    return admitted(c, set, 2, (int)f, err);
}

int kcs_shape_parse_text(const char *text, kcs_shape *s)
{
    int64_t v[4] = {0, 0, 0, 0};
    int n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (errno || end == p || x <= 0 || n == 4 || *p == '-' || *p == '+' || *p == ' ')
            return KCS_E_INVAL;
        v[n++] = x;
        if (*end == '\0')
            break;
        if (*end != 'x' && *end != 'X')
            return KCS_E_INVAL;
        p = end + 1;
    }
    if (n < 3)
        return KCS_E_INVAL;
    memset(s, 0, sizeof *s);
    s->m = v[0];
    s->n = v[1];
    s->k = v[2];
    s->batch = n == 4 ? v[3] : 0;
    return 0;
}

int kcs_precondition_shape_ok(const kcs_contract *c, const kcs_shape *s)
{
    kcs_error e = {0};
    return kcs_precondition_shape(c, s, &e) == 0;
}

uint32_t kcs_precondition_op_dtypes(const kcs_contract *c, kcs_op op)
{
    const kcs_op_narrowing *nw = &c->per_op[op];
    return nw->set ? nw->dtype_in & c->dtype_in : c->dtype_in;
}

int kcs_precondition_op_shape(const kcs_contract *c, kcs_op op, const kcs_shape *s,
                              kcs_error *err)
{
    static const char *const names[] = {"m", "n", "k", "batch"};
    int rc = kcs_precondition_shape(c, s, err);
    const kcs_op_narrowing *nw = &c->per_op[op];
    if (rc || !nw->set)
        return rc;
    int d = kcs_op_narrowing_miss(nw, s);
    if (d < 0)
        return 0;
    const int64_t v[4] = {s->m, s->n, s->k, s->batch > 0 ? s->batch : 1};
    return kcs_fail(err, KCS_E_INVAL, "dimension %s = %lld is outside the precondition's range "
                    "[%lld, %lld] of %s for %s (precondition.per_op.%s.shape.%s)", names[d],
                    (long long)v[d], (long long)nw->range[d][0], (long long)nw->range[d][1],
                    c->id, kcs_op_name(op), kcs_op_name(op), names[d]);
}

int kcs_precondition_op_dtype(const kcs_contract *c, kcs_op op, kcs_format f, kcs_error *err)
{
    int rc = kcs_precondition_dtype(c, f, err);
    uint32_t ok = kcs_precondition_op_dtypes(c, op);
    if (rc || (ok & (1u << f)))
        return rc;
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < KCS_FMT_COUNT && used < sizeof list; i++)
        if (ok & (1u << i))
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? " " : "",
                                     kcs_format_name((kcs_format)i));
    return kcs_fail(err, KCS_E_INVAL, "dtype_in %s is not admitted by %s's precondition for %s "
                    "(precondition.per_op.%s.dtype_in: %s)", kcs_format_name(f), c->id,
                    kcs_op_name(op), kcs_op_name(op), list);
}

int kcs_precondition_op_ok(const kcs_contract *c, kcs_op op, kcs_format f, const kcs_shape *s)
{
    kcs_error e = {0};
    return kcs_precondition_op_shape(c, op, s, &e) == 0 &&
           kcs_precondition_op_dtype(c, op, f, &e) == 0;
}
