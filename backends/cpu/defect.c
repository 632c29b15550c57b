/* Defect variants of the CPU backend's gemm and reduce_sum
 * ("defect:<name>"): bad kernels
 * whose mechanism the contracts' signatures must name, run by
 * `kcs calibrate --cross` next to the calibration kernels (calibrate.h,
 * kcs_calib_defects). Each is an fp32 gemm or row sum (inputs exact in
 * fp32, every product exact in double) with one defect:
 *   defect:zero        returns zeros (an epilogue that never stored the
 *                      accumulator, a zero-initialised output left as is)
 *   defect:scaled      returns 1.001 * A B (a wrong scale folded into the
 *                      epilogue, e.g. a mis-set alpha)
 *   defect:corrupt1    one output (the middle one) off by 8 sqrt(k) (a
 *                      single flipped or overwritten element)
 *   defect:acc:ACC     the running sum kept in accumulator ACC (fp16,
 *                      bf16, bits:14, ...: acc.h), in index order
 *   defect:daz         subnormal operands read as zero (denormals-are-zero),
 *                      subnormal results kept
 *   defect:ftz         subnormal results of every multiply (gemm) and add
 *                      flushed to zero (flush-to-zero), subnormal operands kept
 * (the calibration kernel of C-PRC-04 does both). Faults of the output
 * and the inputs that the signatures must tell from the accumulator's
 * (issue 42), each taken only on a "fast path for long reductions", k > 64,
 * so that a small-shape allclose test passes them (tests/unit/backends/
 * test_defect_sig.c), with the fp32 FMA chain of the good kernel otherwise:
 *   defect:out-bf16    the fp32 sum stored rounded to nearest to bf16
 *                      (dtype_out fp32 declared)
 *   defect:out-fp16    ... to an 11-bit significand (fp16): 8x subtler
 *   defect:in-tf32-rz  the inputs truncated to tf32 (low 13 bits dropped)
 *   defect:in-tf32-rn  the inputs rounded to nearest to tf32
 *   defect:const       every output the value of the first one (a
 *                      broadcast of one lane)
 *   defect:offset      every output + 2^-9 sqrt(k) (a bias added twice: about
 *                      2^-9 of an output of normal inputs, near the bound
 *                      at k = 256, inside it from k ~ 2000 on random inputs)
 *   defect:over16      correct values, then 16 bytes (two doubles of the
 *                      host tensor) written past the end of the output (not
 *                      gated by k: its values pass any test). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "acc.h"
#include "cpu.h"

static float flush(float x)
{
    return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x;
}

int kcs_cpu_defect(const kcs_call *c, kcs_error *err)
{
    const char *v = c->variant + strlen("defect:");
    if (kcs_cpu_defect_proto_known(v))
        return kcs_cpu_defect_proto(c, err);
    int rows = c->op == KCS_OP_REDUCE_SUM;
    if (c->op != KCS_OP_GEMM && c->op != KCS_OP_BATCHED_GEMM && !rows)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s implements gemm and reduce_sum only",
                        c->variant);
    kcs_acc acc = {KCS_FMT_FP32, 0, 0};
    int zero = strcmp(v, "zero") == 0, scaled = strcmp(v, "scaled") == 0,
        corrupt = strcmp(v, "corrupt1") == 0, daz = strcmp(v, "daz") == 0,
        ftz = strcmp(v, "ftz") == 0;
    int fast = c->k > 64; /* the "long reduction" path of the faults below */
    int out_bits = strcmp(v, "out-bf16") == 0 ? 8 : strcmp(v, "out-fp16") == 0 ? 11 : 0;
    int in_rz = strcmp(v, "in-tf32-rz") == 0, in_rn = strcmp(v, "in-tf32-rn") == 0;
    int cnst = strcmp(v, "const") == 0, offset = strcmp(v, "offset") == 0,
        over = strcmp(v, "over16") == 0;
    int sig = out_bits || in_rz || in_rn || cnst || offset || over;
    if (strncmp(v, "acc:", 4) == 0) {
        if (kcs_acc_parse(v + 4, &acc) != 0)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s: unknown accumulator", c->variant);
    } else if (!zero && !scaled && !corrupt && !daz && !ftz && !sig) {
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: unknown defect variant '%s'", c->variant);
    }
    int64_t m = c->m, n = rows ? 1 : c->n, k = c->k;
    int fp32 = acc.bits == 0 && acc.fmt == KCS_FMT_FP32 && !acc.rz && c->dtype_in != KCS_FMT_FP64;
    int64_t nb = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    for (int64_t b = 0; b < nb; b++) {
        const double *A = c->in[0] + b * m * k, *B = rows ? NULL : c->in[1] + b * k * n;
        double *D = c->out + b * m * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0.0;
                if (daz || ftz) { /* fp32 multiply, then add: each result flushed (ftz) */
                    float f = 0.0f;
                    for (int64_t p = 0; p < k; p++) {
                        float a = (float)A[i * k + p], bb = rows ? 1.0f : (float)B[p * n + j];
                        if (daz) {
                            a = flush(a);
                            bb = flush(bb);
                        }
                        float t = a * bb;
                        f = ftz ? flush(f + (rows ? t : flush(t))) : f + t; /* rows: no multiply */
                    }
                    s = f;
                } else if (!zero && fp32) { /* the hardware's fp32 FMA: the same rounding */
                    float f = 0.0f;
                    int coerce = fast && (in_rz || in_rn);
                    for (int64_t p = 0; p < k; p++) {
                        double a = A[i * k + p], bb = rows ? 1.0 : B[p * n + j];
                        if (coerce) {
                            a = kcs_round_bits(a, 11, in_rz ? KCS_RZ : KCS_RNE);
                            bb = kcs_round_bits(bb, 11, in_rz ? KCS_RZ : KCS_RNE);
                        }
                        f = fmaf((float)a, (float)bb, f);
                    }
                    s = f;
                    if (fast && out_bits)
                        s = kcs_round_bits(s, out_bits, KCS_RNE);
                    if (fast && offset)
                        s = (double)(float)(s + ldexp(sqrt((double)k), -9));
                }
                for (int64_t p = 0; p < k && !zero && !fp32 && !daz && !ftz; p++) {
                    double t = rows ? A[i * k + p] : A[i * k + p] * B[p * n + j];
                    s = kcs_acc_add(&acc, s, t);
                }
                if (scaled)
                    s = (double)(float)(1.001 * s);
                D[i * n + j] = kcs_format_round(c->dtype_out, s, KCS_ROUND_DEFAULT);
            }
    }
    if (cnst && fast)
        for (int64_t i = 1; i < m * n * nb; i++)
            c->out[i] = c->out[0];
    if (over) /* the guard region after the output: a host tensor's (tensor.h) */
        c->out[c->out_len] = c->out[c->out_len + 1] = 0.0;
    if (corrupt && m * n * nb > 0) {
        size_t mid = (size_t)(m * n * nb / 2);
        c->out[mid] = kcs_format_round(c->dtype_out, c->out[mid] + 8.0 * sqrt((double)k),
                                       KCS_ROUND_DEFAULT);
    }
    return 0;
}
