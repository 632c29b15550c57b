#include "op.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static const char *const op_names[KCS_OP_COUNT] = {
    [KCS_OP_GEMM] = "gemm",           [KCS_OP_BATCHED_GEMM] = "batched_gemm",
    [KCS_OP_REDUCE_SUM] = "reduce_sum", [KCS_OP_DOT] = "dot",
    [KCS_OP_SOFTMAX] = "softmax",     [KCS_OP_LAYERNORM] = "layernorm",
    [KCS_OP_RMSNORM] = "rmsnorm",     [KCS_OP_ATTENTION] = "attention",
    [KCS_OP_GATHER] = "gather",       [KCS_OP_ALLREDUCE] = "allreduce",
    [KCS_OP_ELEMENTWISE] = "elementwise", [KCS_OP_NORM] = "norm",
};

const char *kcs_op_name(kcs_op op)
{
    return (op >= 0 && op < KCS_OP_COUNT) ? op_names[op] : "?";
}

int kcs_op_parse(const char *name, kcs_op *op_p)
{
    for (int i = 0; i < KCS_OP_COUNT; i++) {
        if (strcmp(name, op_names[i]) == 0) {
            *op_p = (kcs_op)i;
            return 0;
        }
    }
    if (strcmp(name, "index_select") == 0) {
        *op_p = KCS_OP_GATHER;
        return 0;
    }
    return KCS_E_INVAL;
}

/* Parse a positive integer after "name:"; returns -1 when malformed. */
static int64_t parse_param(const char *s)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v <= 0)
        return -1;
    return v;
}

int kcs_schedule_parse(const char *text, kcs_schedule *s_p)
{
    kcs_schedule s = {0};
    if (strcmp(text, "sequential") == 0) {
        s.kind = KCS_SCHED_SEQUENTIAL;
    } else if (strcmp(text, "pairwise") == 0) {
        s.kind = KCS_SCHED_PAIRWISE;
    } else if (strcmp(text, "atomic") == 0) {
        s.kind = KCS_SCHED_ATOMIC;
    } else if (strncmp(text, "blocked:", 8) == 0) {
        s.kind = KCS_SCHED_BLOCKED;
        s.param = parse_param(text + 8);
    } else if (strncmp(text, "splitk:", 7) == 0) {
        s.kind = KCS_SCHED_SPLITK;
        s.param = parse_param(text + 7);
    } else {
        return KCS_E_INVAL;
    }
    if ((s.kind == KCS_SCHED_BLOCKED || s.kind == KCS_SCHED_SPLITK) && s.param <= 0)
        return KCS_E_INVAL;
    *s_p = s;
    return 0;
}

const char *kcs_schedule_str(const kcs_schedule *s, char *buf, size_t len)
{
    switch (s->kind) {
    case KCS_SCHED_SEQUENTIAL: snprintf(buf, len, "sequential"); break;
    case KCS_SCHED_PAIRWISE: snprintf(buf, len, "pairwise"); break;
    case KCS_SCHED_BLOCKED: snprintf(buf, len, "blocked:%lld", (long long)s->param); break;
    case KCS_SCHED_SPLITK: snprintf(buf, len, "splitk:%lld", (long long)s->param); break;
    case KCS_SCHED_ATOMIC: snprintf(buf, len, "atomic"); break;
    default: snprintf(buf, len, "?"); break;
    }
    return buf;
}

int kcs_acc_parse(const char *text, kcs_acc *acc_p)
{
    kcs_acc a = {0};
    size_t tl = strlen(text);
    if (tl > 3 && strcmp(text + tl - 3, ":rz") == 0 && tl < 64) {
        char base[64];
        memcpy(base, text, tl - 3);
        base[tl - 3] = '\0';
        int rc = kcs_acc_parse(base, &a);
        if (rc || a.rz)
            return KCS_E_INVAL;
        a.rz = 1;
        *acc_p = a;
        return 0;
    }
    if (strncmp(text, "bits:", 5) == 0) {
        int64_t b = parse_param(text + 5);
        if (b < 2 || b > 53)
            return KCS_E_INVAL;
        a.bits = (int)b;
        a.fmt = KCS_FMT_FP32;
    } else if (kcs_format_parse(text, &a.fmt) != 0) {
        return KCS_E_INVAL;
    }
    *acc_p = a;
    return 0;
}

const char *kcs_acc_str(const kcs_acc *a, char *buf, size_t len)
{
    if (a->bits > 0)
        snprintf(buf, len, "bits:%d%s", a->bits, a->rz ? ":rz" : "");
    else
        snprintf(buf, len, "%s%s", kcs_format_name(a->fmt), a->rz ? ":rz" : "");
    return buf;
}

int kcs_op_n_inputs(kcs_op op)
{
    switch (op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM: return 3; /* A, B, optional C */
    case KCS_OP_REDUCE_SUM:
    case KCS_OP_SOFTMAX:
    case KCS_OP_ELEMENTWISE:
    case KCS_OP_NORM:
    case KCS_OP_ALLREDUCE: return 1;
    case KCS_OP_DOT: return 2;
    case KCS_OP_LAYERNORM: return 3;
    case KCS_OP_RMSNORM: return 2;
    case KCS_OP_ATTENTION: return 3;
    case KCS_OP_GATHER: return 2;
    default: return 0;
    }
}

static size_t nb(const kcs_call *c)
{
    return (size_t)(c->batch > 0 ? c->batch : 1);
}

size_t kcs_op_in_len(const kcs_call *c, int i)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    switch (c->op) {
    case KCS_OP_GEMM:
        return i == 0 ? m * k : i == 1 ? k * n : i == 2 ? m * n : 0;
    case KCS_OP_BATCHED_GEMM:
        return nb(c) * (i == 0 ? m * k : i == 1 ? k * n : i == 2 ? m * n : 0);
    case KCS_OP_REDUCE_SUM:
    case KCS_OP_SOFTMAX:
    case KCS_OP_ELEMENTWISE:
    case KCS_OP_NORM:
        return i == 0 ? m * k : 0;
    case KCS_OP_DOT:
        return i < 2 ? k : 0;
    case KCS_OP_LAYERNORM:
        return i == 0 ? m * k : (i == 1 || i == 2) ? k : 0;
    case KCS_OP_RMSNORM:
        return i == 0 ? m * k : i == 1 ? k : 0;
    case KCS_OP_ATTENTION:
        return nb(c) * (i == 0 ? m * k : (i == 1 || i == 2) ? n * k : 0);
    case KCS_OP_GATHER:
        return i == 0 ? m * k : i == 1 ? n : 0;
    case KCS_OP_ALLREDUCE: /* m contributions (ranks) of length k; m <= 1: one */
        return i == 0 ? (m > 1 ? m : 1) * k : 0;
    default:
        return 0;
    }
}

size_t kcs_op_out_len(const kcs_call *c)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    switch (c->op) {
    case KCS_OP_GEMM: return m * n;
    case KCS_OP_BATCHED_GEMM: return nb(c) * m * n;
    case KCS_OP_REDUCE_SUM:
    case KCS_OP_NORM: return m;
    case KCS_OP_DOT: return 1;
    case KCS_OP_SOFTMAX:
    case KCS_OP_LAYERNORM:
    case KCS_OP_RMSNORM:
    case KCS_OP_ELEMENTWISE: return m * k;
    case KCS_OP_ATTENTION: return nb(c) * m * k;
    case KCS_OP_GATHER: return n * k;
    case KCS_OP_ALLREDUCE: return k;
    default: return 0;
    }
}
