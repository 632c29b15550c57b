/* Elementwise kernels graded through the plugin ABI, built only against
 * kcs_plugin.h: y = f(x) over m×k values, f from attrs "fn=" (exp by
 * default; tanh, silu, gelu_tanh, rsqrt), inputs fp32 / bf16 / fp16
 * decoded to float exactly, float arithmetic, fp32 output. One library per
 * mode (EW_MODE), libkcs_ew_<mode>.so, graded by
 * tests/integration/test_elementwise.sh:
 *   GOOD   libm's expf, tanhf, sqrtf in the stable forms (silu = x / (1 +
 *          e^-x), gelu_tanh = x / (1 + e^(-2 c0 (x + c1 x^3))), the limits
 *          -0 at -Inf): conforms.
 *   POLY   exp by range reduction, x = n ln 2 + r (|r| <= ln2 / 2, r in
 *          float), and the degree-4 Taylor polynomial of e^r: relative
 *          error up to r^5/120 = 4.2e-5 (about 700 ulp), which passes an
 *          allclose test at rtol 1e-3 and propagates NaN, overflows to Inf
 *          and underflows gradually (ldexpf). Fails C-PRC-05.
 *   NAN0   GOOD, but a NaN input gives 0 (a "safe" exp that sanitises its
 *          input, as nan_to_num would): fails C-EXC-01.
 *   VEC    declares batch_invariant; calls of more than 4096 values take a
 *          "vectorised" exp (Cephes' expf: Cody-Waite reduction and a
 *          degree-6 polynomial in float, within 2 ulp), smaller ones
 *          libm's expf. Both accurate (C-PRC-05 passes), their last bits
 *          differ, so a row's result depends on the batch it came in:
 *          fails C-ORD-03. GOOD, POLY and NAN0 declare batch_invariant
 *          too (every value is computed alone) and keep it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin_common.h"

#define MODE_GOOD 1
#define MODE_POLY 2
#define MODE_NAN0 3
#define MODE_VEC 4
#define VEC_MIN 4096 /* VEC: calls of more values take the vectorised exp */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define MODE CAT(MODE_, EW_MODE)

#if MODE == MODE_VEC
/* Cephes expf (S. L. Moshier): x = n ln2 + r, ln2 split in two (C1 + C2),
 * e^r by a degree-6 polynomial; ldexpf for the scale (gradual underflow). */
static float cephes_expf(float x)
{
    if (x != x || x > 88.7228394f)
        return x + INFINITY;
    if (x < -103.972084f)
        return 0.0f;
    float z = floorf(1.44269504088896341f * x + 0.5f);
    float r = x - z * 0.693359375f;
    r = r - z * -2.12194440e-4f;
    float r2 = r * r;
    float p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
                4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
    p = p * r2 + r + 1.0f;
    return ldexpf(p, (int)z);
}

#endif
static int vec_path; /* VEC: this call is large enough for the vectorised exp */

static float my_exp(float x)
{
#if MODE == MODE_POLY
    if (x != x || x > 89.0f)
        return x + INFINITY; /* NaN stays NaN; beyond the overflow threshold: Inf */
    if (x < -105.0f)
        return 0.0f;
    float n = rintf(x * 1.44269504f);
    float r = x - n * 0.693147181f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6.0f + r * (1.0f / 24.0f))));
    return ldexpf(p, (int)n);
#elif MODE == MODE_NAN0
    return x != x ? 0.0f : expf(x);
#elif MODE == MODE_VEC
    return vec_path ? cephes_expf(x) : expf(x);
#else
    return expf(x);
#endif
}

static float f_of(int fn, float x)
{
    const float c0 = 0.797884560802865f, c1 = 0.044715f;
    switch (fn) {
    case 1: return tanhf(x);
    case 2:
        if (isinf(x))
            return x > 0 ? x : -0.0f;
        return x / (1.0f + my_exp(-x));
    case 3:
        if (isinf(x))
            return x > 0 ? x : -0.0f;
        return x / (1.0f + my_exp(-2.0f * c0 * (x + c1 * x * x * x)));
    case 4: return 1.0f / sqrtf(x);
    default: return my_exp(x);
    }
}

/* fn= from "key=value;..." (exp when absent); -1 for a name it does not know. */
static int fn_of(const char *attrs)
{
    static const char *const names[] = {"exp", "tanh", "silu", "gelu_tanh", "rsqrt"};
    const char *p = strstr(attrs, "fn=");
    if (!p || (p != attrs && p[-1] != ';' && p[-1] != ' '))
        return 0;
    p += 3;
    size_t len = strcspn(p, "; ");
    for (int i = 0; i < 5; i++)
        if (strlen(names[i]) == len && strncmp(p, names[i], len) == 0)
            return i;
    return -1;
}

static int run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    kcs_dtype t = c->dtype_in;
    if (strcmp(c->op, "elementwise") != 0 || c->dtype_out != KCS_DT_F32 ||
        (t != KCS_DT_F32 && t != KCS_DT_BF16 && t != KCS_DT_F16)) {
        snprintf(msg, msg_len, "elementwise with fp32/bf16/fp16 inputs and fp32 output only");
        return -1;
    }
    int fn = fn_of(c->attrs);
    if (fn < 0) {
        snprintf(msg, msg_len, "unknown function in attrs '%s'", c->attrs);
        return -1;
    }
    size_t n = (size_t)c->m * (size_t)c->k;
    vec_path = n > VEC_MIN;
    float *y = c->out;
    for (size_t i = 0; i < n; i++)
        y[i] = f_of(fn, load(t, c->in[0], i));
    return 0;
}

KCS_TEST_PLUGIN(EW_NAME, "elementwise", run)

KCS_PLUGIN_EXPORT const char *kcs_plugin_declares(void)
{
    return "batch_invariant";
}
