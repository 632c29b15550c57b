/* nan=mask: NaN inputs substituted before the op (nan_mask.h). */
#include "nan_mask.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"

int kcs_nan_mask_declared(const char *attrs)
{
    char v[16];
    return attrs && kcs_attrs_get(attrs, "nan", v, sizeof v) == 1 && strcmp(v, "mask") == 0;
}

bool kcs_nan_mask_defined(kcs_op op)
{
    switch (op) {
    case KCS_OP_REDUCE_SUM:
    case KCS_OP_DOT:
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
    case KCS_OP_ALLREDUCE:
    case KCS_OP_SOFTMAX:
        return true;
    default:
        return false;
    }
}

double kcs_nan_mask_fill(kcs_op op)
{
    return op == KCS_OP_SOFTMAX ? -INFINITY : 0.0;
}

void kcs_nan_mask_free(double *bufs[KCS_MAX_INPUTS])
{
    for (int i = 0; i < KCS_MAX_INPUTS; i++) {
        free(bufs[i]);
        bufs[i] = NULL;
    }
}

int kcs_nan_mask_call(const kcs_call *c, kcs_call *out, double *bufs[KCS_MAX_INPUTS])
{
    *out = *c;
    double fill = kcs_nan_mask_fill(c->op);
    for (int i = 0; i < KCS_MAX_INPUTS; i++)
        bufs[i] = NULL;
    for (int i = 0; i < KCS_MAX_INPUTS; i++) {
        if (!c->in[i])
            continue;
        size_t len = c->in_len[i] ? c->in_len[i] : kcs_op_in_len(c, i);
        bufs[i] = malloc((len ? len : 1) * sizeof *bufs[i]);
        if (!bufs[i]) {
            kcs_nan_mask_free(bufs);
            return KCS_E_NOMEM;
        }
        for (size_t j = 0; j < len; j++)
            bufs[i][j] = isnan(c->in[i][j]) ? fill : c->in[i][j];
        out->in[i] = bufs[i];
    }
    return 0;
}
