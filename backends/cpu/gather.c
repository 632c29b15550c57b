/* CPU gather / index_select: out[r][:] = table[idx[r]][:] for a table m×k
 * (in[0]) and n indices (in[1], doubles holding integers). Out-of-range
 * indices follow attrs "oob=":
 *   raise (default)  the call returns KCS_E_RAISED naming the first bad
 *                    index and its position (also in call->msg when set),
 *                    and writes no output;
 *   clamp            below 0 -> row 0, >= m -> row m-1 (m = 0: KCS_E_INVAL);
 *   zero             the output row is zeros;
 *   undefined        served as clamp (never a read outside the table).
 * A non-integer index (fraction, NaN, Inf) is bad input: KCS_E_INVAL.
 * native copies whole rows (memcpy), own copies element by element; both
 * round the values into dtype_out (exact when dtype_out holds dtype_in). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "cpu.h"
#include "work.h"

enum { OOB_RAISE, OOB_CLAMP, OOB_ZERO };

static int oob_policy(const kcs_call *c, int *pol_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(c->attrs, "oob", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "cpu gather: attrs '%s' are malformed (key=value;...)",
                        c->attrs);
    if (rc == 0 || strcmp(v, "raise") == 0)
        *pol_p = OOB_RAISE;
    else if (strcmp(v, "clamp") == 0 || strcmp(v, "undefined") == 0)
        *pol_p = OOB_CLAMP;
    else if (strcmp(v, "zero") == 0)
        *pol_p = OOB_ZERO;
    else
        return kcs_fail(err, KCS_E_INVAL, "cpu gather: oob=%s (raise|clamp|zero|undefined)", v);
    return 0;
}

int kcs_cpu_gather(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    int v = kcs_cpu_variant(c, 0, err);
    if (v < 0)
        return v;
    int pol = OOB_RAISE;
    int rc = oob_policy(c, &pol, err);
    if (rc)
        return rc;
    const double *T = c->in[0], *idx = c->in[1];
    size_t k = (size_t)c->k;
    double m = (double)c->m;
    /* Validate every index before writing anything. */
    for (int64_t r = 0; r < c->n; r++) {
        double x = idx[r];
        if (!(x == x) || x != floor(x) || isinf(x))
            return kcs_fail(err, KCS_E_INVAL, "cpu gather: index %g at position %lld is not an "
                            "integer", x, (long long)r);
        if (x >= 0 && x < m)
            continue;
        if (pol == OOB_RAISE) {
            if (c->msg && c->msg_len)
                snprintf(c->msg, c->msg_len, "index %.0f at position %lld is out of range "
                         "[0, %lld)", x, (long long)r, (long long)c->m);
            return kcs_fail(err, KCS_E_RAISED, "cpu gather: index %.0f at position %lld is out "
                            "of range [0, %lld)", x, (long long)r, (long long)c->m);
        }
        if (pol == OOB_CLAMP && c->m == 0)
            return kcs_fail(err, KCS_E_INVAL, "cpu gather: oob=clamp on an empty table");
    }
    for (int64_t r = 0; r < c->n; r++) {
        double x = idx[r];
        double *out = c->out + (size_t)r * k;
        if (!(x >= 0 && x < m) && pol == OOB_ZERO) {
            for (size_t t = 0; t < k; t++)
                out[t] = 0.0;
            continue;
        }
        int64_t row = x < 0 ? 0 : x >= m ? c->m - 1 : (int64_t)x;
        const double *src = T + (size_t)row * k;
        if (v == 0) {
            memcpy(out, src, k * sizeof *out);
            if (c->dtype_out != c->dtype_in && c->dtype_out != KCS_FMT_FP64)
                for (size_t t = 0; t < k; t++)
                    out[t] = kcs_cpu_out(c, out[t]);
        } else {
            for (size_t t = 0; t < k; t++)
                out[t] = kcs_cpu_out(c, src[t]);
        }
    }
    return 0;
}
