/* Kernels whose faults the signatures must name (issue 42), built only
 * against kcs_plugin.h. gemm: D = A B (+ C) over fp32, tf32, bf16 or fp16
 * inputs decoded to float, every product added by one fp32 FMA in index
 * order, fp32 output; gather: rows of a table, the index policy below.
 * One library per mode (SIG_MODE), libkcs_sig_<mode>.so, graded by
 * tests/integration/test_signatures.sh and test_declared_semantics.sh:
 *   GOOD      the gemm above; gather raises on an out-of-range index
 *             (oob=raise, the contracts' default): conforms.
 *   OVER16    GOOD, then 16 bytes written past the end of the output (a
 *             vector store of four floats past the last tile).
 *   INFZERO   GOOD, but every infinite output becomes 0 (nan_to_num with
 *             posinf = neginf = 0 in the epilogue).
 *   OUTBF16   GOOD's fp32 sum, stored rounded to nearest to bf16 (then
 *             widened: the declared fp32 output holds a bf16 value).
 *   TRUNCTF32 the inputs truncated to tf32 (the low 13 bits of each fp32
 *             dropped) before the fp32 FMA chain.
 *   CLAMP     gather clamps an out-of-range index into [0, m) and declares
 *             it ("oob=clamp"): graded under oob=clamp, it conforms.
 *   CLAMPUNDECL the same gather, declaring nothing: under the contracts'
 *             oob=raise it answers where it must raise.
 *   ZERODECL  the same clamping gather, declaring "oob=zero": another
 *             policy than the one it declares.
 *   NANMASK   GOOD's gemm with every NaN input read as 0 (absent), declaring
 *             "nan=mask": graded under nan=mask, it conforms.
 *   NANMASKUNDECL the same gemm, declaring nothing: under the contracts'
 *             nan=propagate it suppresses NaN.
 * Every mode passes a small allclose test on finite in-range data except
 * OVER16 (whose values are right: only the guard sees it). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin_common.h"

#define MODE_GOOD 1
#define MODE_OVER16 2
#define MODE_INFZERO 3
#define MODE_OUTBF16 4
#define MODE_TRUNCTF32 5
#define MODE_CLAMP 6
#define MODE_CLAMPUNDECL 7
#define MODE_ZERODECL 8
#define MODE_NANMASK 9
#define MODE_NANMASKUNDECL 10
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define MODE CAT(MODE_, SIG_MODE)

static inline float tf32_trunc(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u &= ~0x1fffu;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline float bf16_rn(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return x;
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest, ties to even */
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

static int gemm(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    if (c->dtype_out != KCS_DT_F32 || kcs_plugin_dtype_size(c->dtype_in) == 0 ||
        c->dtype_in == KCS_DT_F64 || c->dtype_in == KCS_DT_I64 ||
        c->dtype_in == KCS_DT_F8_E4M3 || c->dtype_in == KCS_DT_F8_E5M2) {
        snprintf(msg, msg_len, "sig gemm: fp32/tf32/bf16/fp16 in, fp32 out only");
        return -1;
    }
    int64_t m = c->m, n = c->n, k = c->k;
    float *D = c->out;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float s = c->in[2] ? load(c->dtype_in, c->in[2], (size_t)(i * n + j)) : 0.0f;
            for (int64_t p = 0; p < k; p++) {
                float a = load(c->dtype_in, c->in[0], (size_t)(i * k + p));
                float b = load(c->dtype_in, c->in[1], (size_t)(p * n + j));
#if MODE == MODE_TRUNCTF32
                a = tf32_trunc(a);
                b = tf32_trunc(b);
#elif MODE == MODE_NANMASK || MODE == MODE_NANMASKUNDECL
                a = a != a ? 0.0f : a; /* a NaN element is absent */
                b = b != b ? 0.0f : b;
#endif
                s = fmaf(a, b, s);
            }
#if MODE == MODE_INFZERO
            if (isinf(s))
                s = 0.0f;
#elif MODE == MODE_OUTBF16
            s = bf16_rn(s);
#endif
            D[i * n + j] = s;
        }
#if MODE == MODE_OVER16
    memset((unsigned char *)c->out + c->out_bytes, 0, 16); /* four floats too many */
#endif
    return 0;
}

static int gather(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    size_t es = kcs_plugin_dtype_size(c->dtype_in);
    if (es == 0 || c->dtype_in == KCS_DT_I64 || c->dtype_out != c->dtype_in) {
        snprintf(msg, msg_len, "sig gather: dtype_out must equal dtype_in");
        return -1;
    }
    int64_t m = c->m;
    size_t row = (size_t)c->k * es;
    const int64_t *idx = c->in[1];
    if (c->out_bytes != (size_t)c->n * row) {
        snprintf(msg, msg_len, "sig gather: out_bytes %zu is not n*k*%zu", c->out_bytes, es);
        return -1;
    }
#if MODE != MODE_CLAMP && MODE != MODE_CLAMPUNDECL && MODE != MODE_ZERODECL
    for (int64_t r = 0; r < c->n; r++)
        if (idx[r] < 0 || idx[r] >= m) {
            snprintf(msg, msg_len, "index %lld at position %lld is out of range [0, %lld)",
                     (long long)idx[r], (long long)r, (long long)m);
            return 1;
        }
#endif
    for (int64_t r = 0; r < c->n; r++) {
        int64_t x = idx[r] < 0 ? 0 : idx[r] >= m ? m - 1 : idx[r];
        memcpy((unsigned char *)c->out + (size_t)r * row,
               (const unsigned char *)c->in[0] + (size_t)x * row, row);
    }
    return 0;
}

static int sig_run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    if (strcmp(c->op, "gemm") == 0)
        return gemm(c, msg, msg_len);
    if (strcmp(c->op, "gather") == 0)
        return gather(c, msg, msg_len);
    snprintf(msg, msg_len, "sig plugin: op %s not implemented", c->op);
    return -1;
}

#if MODE == MODE_CLAMP || MODE == MODE_ZERODECL || MODE == MODE_NANMASK
KCS_PLUGIN_EXPORT const char *kcs_plugin_declares(void)
{
    return MODE == MODE_CLAMP ? "oob=clamp" : MODE == MODE_ZERODECL ? "oob=zero" : "nan=mask";
}
#endif

#if MODE == MODE_CLAMP || MODE == MODE_CLAMPUNDECL || MODE == MODE_ZERODECL
KCS_TEST_PLUGIN(SIG_NAME, "gather", sig_run)
#else
KCS_TEST_PLUGIN(SIG_NAME, "gemm", sig_run)
#endif
