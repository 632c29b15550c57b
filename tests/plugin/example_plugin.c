/* An example kernel library graded by kcs through the plugin ABI
 * (include/kcs_plugin.h): what a kernel author writes.
 *
 * It offers two ops:
 *   gemm    D = C + A·B (C may be NULL), A m×k, B k×n, row-major.
 *           dtype_in fp32 (also tf32, bf16, fp16: decoded to float exactly),
 *           dtype_acc fp32, dtype_out fp32, bf16 or fp16. Each D[i][j] starts
 *           from C[i][j] (or 0) and adds the products A[i][p]·B[p][j] in
 *           order p = 0..k-1 in float arithmetic (-ffp-contract=off: no
 *           fused multiply-add); a bf16 or fp16 output is the float sum
 *           rounded once to nearest (ties to even).
 *   gather  out[r][:] = table[idx[r]][:], table m×k of any dtype (the bytes
 *           are copied; dtype_out must equal dtype_in), idx n int64.
 *           attrs "oob=raise|clamp|zero" (default raise; "undefined" is
 *           served as clamp): raise returns 1 with a message naming the
 *           index, clamp reads row 0 / row m-1, zero writes a zero row.
 *
 * Built three times from this file (tests/plugin/CMakeLists.txt):
 *   libkcs_example_plugin.so         the correct kernels;
 *   libkcs_example_plugin_large_m.so -DEXAMPLE_LARGE_M: correct up to m = 256,
 *       bf16 running sums above (shape special-casing that no listed shape
 *       reaches; C-CMP-03's drawn held-out shapes do);
 *   libkcs_example_plugin_broken.so  -DEXAMPLE_BROKEN: the calibration "bad"
 *       implementation, which passes the functional test a kernel author
 *       would write yet violates two contracts:
 *       - C-PRC-01 (accumulator precision): for k > 64 its gemm takes a "fast
 *         path for long reductions" that rounds the running sum to bf16
 *         after every add, while fp32 accumulation is declared. Small
 *         shapes (8x8x8, 16x16x16) take the exact fp32 path and pass a
 *         torch-style allclose; for k > 64 its backward error
 *         ||D - Dref||_F / (||A||_F·||B||_F) is about u(bf16)/sqrt(12)
 *         = 1.1e-3 on normal inputs, above 2·k·u(fp32) up to k of about
 *         9000 (35x at k = 256, 2.3x at k = 4096).
 *       - C-EXC-02 (out-of-bounds semantics): under oob=raise its gather
 *         answers an out-of-range index with table[idx mod m] instead of
 *         raising ("the bounds check was too slow").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_common.h"

#define BF16_FAST_PATH_K 64 /* broken variant: bf16 accumulation above this k */
#define BF16_LARGE_M 256    /* large-m variant: bf16 accumulation above this m */

#if defined(EXAMPLE_BROKEN) || defined(EXAMPLE_LARGE_M)
/* Round a float to the nearest bf16 value (ties to even), kept as a float. */
static float round_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return x; /* Inf / NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return f32_from_bits(u & 0xffff0000u);
}
#endif

/* --- gemm ------------------------------------------------------------------ */

static int gemm(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    kcs_dtype t = c->dtype_in;
    if (t != KCS_DT_F32 && t != KCS_DT_TF32 && t != KCS_DT_BF16 && t != KCS_DT_F16) {
        snprintf(msg, msg_len, "example gemm: dtype_in %d unsupported (fp32, tf32, bf16, fp16)",
                 (int)t);
        return -1;
    }
    kcs_dtype to = c->dtype_out;
    if (c->dtype_acc != KCS_DT_F32 ||
        (to != KCS_DT_F32 && to != KCS_DT_BF16 && to != KCS_DT_F16)) {
        snprintf(msg, msg_len, "example gemm: only fp32 accumulation and an fp32, bf16 or fp16 "
                 "output (got dtype_acc %d, dtype_out %d)", (int)c->dtype_acc, (int)to);
        return -1;
    }
    size_t osize = to == KCS_DT_F32 ? sizeof(float) : sizeof(uint16_t);
    if (c->m < 0 || c->n < 0 || c->k < 0 ||
        c->out_bytes != (size_t)c->m * (size_t)c->n * osize) {
        snprintf(msg, msg_len, "example gemm: out_bytes %zu does not hold %lldx%lld outputs",
                 c->out_bytes, (long long)c->m, (long long)c->n);
        return -1;
    }
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    const void *A = c->in[0], *B = c->in[1], *C = c->in[2];
    /* fp32 sums in place; a narrow output's row is summed in a float row
     * buffer and rounded once into it */
    float row[512], *heap = NULL;
    if (to != KCS_DT_F32 && n > sizeof row / sizeof row[0] && !(heap = malloc(n * sizeof *heap))) {
        snprintf(msg, msg_len, "example gemm: out of memory");
        return -1;
    }
#ifdef EXAMPLE_BROKEN
    int narrow = k > BF16_FAST_PATH_K;
#elif defined(EXAMPLE_LARGE_M)
    int narrow = m > BF16_LARGE_M; /* a "large-m" tile path, correct below it */
#endif
    /* Row i of D accumulates in place: D[i][j] += A[i][p] * B[p][j] for
     * p = 0..k-1 (the same order for every element as a dot product). */
    for (size_t i = 0; i < m; i++) {
        float *d = to == KCS_DT_F32 ? (float *)c->out + i * n : heap ? heap : row;
        for (size_t j = 0; j < n; j++)
            d[j] = C ? load(t, C, i * n + j) : 0.0f;
        for (size_t p = 0; p < k; p++) {
            float a = load(t, A, i * k + p);
            for (size_t j = 0; j < n; j++) {
                float prod = a * load(t, B, p * n + j);
#if defined(EXAMPLE_BROKEN) || defined(EXAMPLE_LARGE_M)
                d[j] = narrow ? round_bf16(d[j] + prod) : d[j] + prod;
#else
                d[j] = d[j] + prod;
#endif
            }
        }
        if (to != KCS_DT_F32)
            for (size_t j = 0; j < n; j++)
                store(to, c->out, i * n + j, d[j]);
    }
    free(heap);
    return 0;
}

/* --- gather ---------------------------------------------------------------- */

enum { OOB_RAISE, OOB_CLAMP, OOB_ZERO };

/* Find key in "k=v;k=v" and copy its value; 1 found, 0 absent. */
static int attr(const char *attrs, const char *key, char *val, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = attrs; p && *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        const char *end = strchr(p, ';');
        size_t seg = end ? (size_t)(end - p) : strlen(p);
        if (seg > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t vl = seg - kl - 1;
            while (vl > 0 && p[kl + vl] == ' ')
                vl--;
            snprintf(val, len, "%.*s", (int)vl, p + kl + 1);
            return 1;
        }
        p += seg;
    }
    return 0;
}

static int gather(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    size_t es = kcs_plugin_dtype_size(c->dtype_in);
    if (es == 0 || c->dtype_in == KCS_DT_I64 || c->dtype_out != c->dtype_in) {
        snprintf(msg, msg_len, "example gather: dtype_out must equal dtype_in (got %d, %d)",
                 (int)c->dtype_in, (int)c->dtype_out);
        return -1;
    }
    char v[32] = "raise";
    int pol = OOB_RAISE;
    attr(c->attrs, "oob", v, sizeof v);
    if (strcmp(v, "clamp") == 0 || strcmp(v, "undefined") == 0)
        pol = OOB_CLAMP;
    else if (strcmp(v, "zero") == 0)
        pol = OOB_ZERO;
    else if (strcmp(v, "raise") != 0) {
        snprintf(msg, msg_len, "example gather: oob=%s (raise|clamp|zero|undefined)", v);
        return -1;
    }
    int64_t m = c->m;
    size_t row = (size_t)c->k * es;
    const unsigned char *T = c->in[0];
    const int64_t *idx = c->in[1];
    unsigned char *out = c->out;
    if (c->out_bytes != (size_t)c->n * row) {
        snprintf(msg, msg_len, "example gather: out_bytes %zu is not n·k·%zu", c->out_bytes, es);
        return -1;
    }
#ifndef EXAMPLE_BROKEN
    /* Check every index before writing anything. */
    if (pol == OOB_RAISE)
        for (int64_t r = 0; r < c->n; r++)
            if (idx[r] < 0 || idx[r] >= m) {
                snprintf(msg, msg_len, "index %lld at position %lld is out of range [0, %lld)",
                         (long long)idx[r], (long long)r, (long long)m);
                return 1;
            }
#endif
    for (int64_t r = 0; r < c->n; r++) {
        int64_t x = idx[r];
        unsigned char *dst = out + (size_t)r * row;
        if (x < 0 || x >= m) {
            if (pol == OOB_ZERO || m == 0) {
                memset(dst, 0, row); /* +0 in every dtype */
                continue;
            }
#ifdef EXAMPLE_BROKEN
            if (pol == OOB_RAISE)
                x = ((x % m) + m) % m; /* wraps instead of raising */
            else
#endif
                x = x < 0 ? 0 : m - 1;
        }
        memcpy(dst, T + (size_t)x * row, row);
    }
    return 0;
}

/* --- the descriptor ---------------------------------------------------------- */

static int example_run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    if (strcmp(c->op, "gemm") == 0)
        return gemm(c, msg, msg_len);
    if (strcmp(c->op, "gather") == 0)
        return gather(c, msg, msg_len);
    snprintf(msg, msg_len, "example plugin: op %s not implemented", c->op);
    return -1;
}

static const kcs_plugin example = {
    .abi_version = KCS_PLUGIN_ABI_VERSION,
#ifdef EXAMPLE_BROKEN
    .name = "kcs-example-broken",
#else
    .name = "kcs-example",
#endif
    .ops = "gemm,gather",
    .run = example_run,
};

KCS_PLUGIN_EXPORT const kcs_plugin *kcs_plugin_get(void)
{
    return &example;
}
