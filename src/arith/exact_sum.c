/* When exact-sum inputs exist (exact_sum.h); the inputs themselves are
 * src/plan/inputs_exact.c. */
#include "exact_sum.h"

int kcs_exact_op_ok(kcs_op op)
{
    return op == KCS_OP_GEMM || op == KCS_OP_BATCHED_GEMM || op == KCS_OP_DOT ||
           op == KCS_OP_REDUCE_SUM || op == KCS_OP_ALLREDUCE;
}

int64_t kcs_exact_terms(kcs_op op, int64_t m, int64_t k)
{
    return op == KCS_OP_ALLREDUCE ? (m > 1 ? m : 1) : k;
}

int kcs_exact_bits(const kcs_acc *acc, kcs_format out)
{
    int pa = acc->bits > 0 ? acc->bits : kcs_format_get(acc->fmt)->p;
    int po = kcs_format_get(out)->p;
    int p = pa < po ? pa : po;
    return p > 53 ? 53 : p;
}

int kcs_exact_acc_bits(const kcs_acc *acc)
{
    int pa = acc->bits > 0 ? acc->bits : kcs_format_get(acc->fmt)->p;
    return pa > 53 ? 53 : pa;
}

int kcs_exact_narrow_out(kcs_op op, const kcs_acc *acc, kcs_format out)
{
    return (op == KCS_OP_GEMM || op == KCS_OP_BATCHED_GEMM) &&
           kcs_format_get(out)->p < kcs_exact_acc_bits(acc);
}

int64_t kcs_exact_narrow_carriers(int64_t k)
{
    int64_t h = k >= 1 ? (k - 1) / 2 : 0, top = 1;
    while (2 * top < k) /* the largest power of two below k */
        top *= 2;
    int64_t right = k - top, nc = 3;
    if (nc > h)
        nc = h;
    if (nc > right)
        nc = right;
    return nc > 0 ? nc : 0;
}

int kcs_exact_ceil_log2(int64_t k)
{
    int l = 0;
    while (l < 62 && ((int64_t)1 << l) < k)
        l++;
    return l;
}

int kcs_exact_check(kcs_op op, const kcs_acc *acc, kcs_format in, kcs_format out, int64_t k,
                    kcs_error *err)
{
    if (!kcs_exact_op_ok(op))
        return kcs_fail(err, KCS_E_INVAL, "exact inputs exist for gemm, batched_gemm, dot, "
                        "reduce_sum and allreduce only, not %s", kcs_op_name(op));
    if (kcs_exact_narrow_out(op, acc, out)) {
        /* (k - 1) / 2 cancelling pairs, all but the carriers drawn for a
         * (P - 3)-bit sum (inputs_exact_narrow.c) */
        int64_t h = k >= 1 ? (k - 1) / 2 - kcs_exact_narrow_carriers(k) : 0;
        int pa = kcs_exact_acc_bits(acc);
        if (k < 1 || pa - 4 - kcs_exact_ceil_log2(h > 1 ? h : 1) < 0)
            return kcs_fail(err, KCS_E_INVAL, "exact inputs with a %s output need 1 <= k <= "
                            "2^%d + 8 for a %d-bit accumulator (k = %lld)", kcs_format_name(out),
                            pa - 3, pa, (long long)k);
        if (kcs_format_get(in)->p < 2)
            return kcs_fail(err, KCS_E_INVAL, "exact inputs need an input format with at "
                            "least 2 significand bits (%s)", kcs_format_name(in));
        return 0;
    }
    int P = kcs_exact_bits(acc, out);
    if (k < 1 || P - 1 - kcs_exact_ceil_log2(k) < 0)
        return kcs_fail(err, KCS_E_INVAL, "exact inputs need 1 <= %s <= 2^%d for a %d-bit "
                        "accumulator (%s = %lld)", op == KCS_OP_ALLREDUCE ? "m" : "k", P - 1,
                        P, op == KCS_OP_ALLREDUCE ? "m" : "k", (long long)k);
    if (kcs_format_get(in)->p < 2)
        return kcs_fail(err, KCS_E_INVAL, "exact inputs need an input format with at least "
                        "2 significand bits (%s)", kcs_format_name(in));
    return 0;
}
