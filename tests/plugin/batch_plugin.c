/* GEMM kernels for C-ORD-03 (batch invariance), built only against
 * kcs_plugin.h. One library per mode (BATCH_MODE):
 *   INVARIANT   declares batch_invariant; every output is one fp32 FMA
 *               chain over k in index order, whatever m is: it keeps the
 *               promise.
 *   DEPENDENT   declares batch_invariant, but a batch of exactly one row
 *               takes a "GEMV" path that sums k in two halves (each half an
 *               fp32 chain, the halves added in fp32): as accurate as the
 *               other path, so every tolerance test passes, yet the row's
 *               bits depend on the batch it came in. Breaks the promise.
 *   UNDECLARED  the DEPENDENT arithmetic without the declaration (what
 *               OpenBLAS does): C-ORD-03 does not bind it (NOT-CLAIMED).
 *   BADDECL     declares a property kcs does not know: refused at load.
 * fp32 inputs and output only (other formats: the plugin's own failure
 * return, which kcs grade reports as a format not offered). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin_common.h"

#define MODE_INVARIANT 1
#define MODE_DEPENDENT 2
#define MODE_UNDECLARED 3
#define MODE_BADDECL 4
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define MODE CAT(MODE_, BATCH_MODE)

static float chain(const float *a, const float *b, int64_t lda_step, int64_t ldb_step,
                   int64_t lo, int64_t hi)
{
    float s = 0.0f;
    for (int64_t p = lo; p < hi; p++)
        s = fmaf(a[p * lda_step], b[p * ldb_step], s);
    return s;
}

static int run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    if (strcmp(c->op, "gemm") != 0 || c->dtype_in != KCS_DT_F32 ||
        c->dtype_out != KCS_DT_F32) {
        snprintf(msg, msg_len, "only fp32 gemm");
        return -1;
    }
    const float *A = c->in[0], *B = c->in[1], *C = c->in[2];
    float *D = c->out;
    int gemv = MODE != MODE_INVARIANT && c->m == 1;
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j = 0; j < c->n; j++) {
            const float *a = A + i * c->k, *b = B + j;
            float s;
            if (gemv) {
                int64_t h = (c->k + 1) / 2;
                s = chain(a, b, 1, c->n, 0, h) + chain(a, b, 1, c->n, h, c->k);
            } else {
                s = chain(a, b, 1, c->n, 0, c->k);
            }
            D[i * c->n + j] = C ? C[i * c->n + j] + s : s;
        }
    return 0;
}

KCS_TEST_PLUGIN(BATCH_NAME, "gemm", run)

#if MODE == MODE_INVARIANT || MODE == MODE_DEPENDENT
KCS_PLUGIN_EXPORT const char *kcs_plugin_declares(void)
{
    return "batch_invariant";
}
#elif MODE == MODE_BADDECL
KCS_PLUGIN_EXPORT const char *kcs_plugin_declares(void)
{
    return "batch_invariant, bit_exact_everywhere";
}
#endif
