/* Block-scaled matrix units (blockscale.h). The model (docs/profiles.md,
 * after MMA-Sim's Blackwell model, arXiv:2511.10909):
 *
 * fp8 elements (k = 32 per instruction, one scale per row of A and column
 * of B): the global step of nvidia-b200's fp8 path with the scales' exponents
 * added to each product's: a product's alignment exponent is
 * e(a) + e(b) + e(sa) + e(sb) (elements clamped at their format's emin, a
 * zero element -126), c's is e(c) (-126 for 0); every term truncated to a
 * multiple of 2^(E - 25), summed exactly, d = the sum rounded toward zero
 * to fp32.
 *
 * fp4 elements (k = 64): each run of 16 products is summed exactly first;
 * the run's alignment exponent is the scales' exponents e(sa) + e(sb) alone
 * (not the run sum's magnitude); with c's exponent they give E, every term
 * is truncated to a multiple of 2^(E - 35), summed exactly, rounded toward
 * zero to fp32. A NaN scale or NaN c gives NaN. */
#include "blockscale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- codes ------------------------------------------------------------------ */

double kcs_bs_decode(kcs_bs_code f, unsigned code)
{
    switch (f) {
    case KCS_BS_FP4_E2M1: {
        code &= 0xF;
        int e = (int)((code >> 1) & 3), m = (int)(code & 1);
        double v = e ? ldexp(1.0 + m / 2.0, e - 1) : m * 0.5;
        return (code & 8) ? -v : v;
    }
    case KCS_BS_UE8M0:
        code &= 0xFF;
        return code == 255 ? NAN : ldexp(1.0, (int)code - 127);
    case KCS_BS_UE4M3:
        return fabs(kcs_format_decode(KCS_FMT_FP8_E4M3, code & 0x7F));
    default:
        return NAN;
    }
}

bool kcs_bs_encode(kcs_bs_code f, double x, unsigned *code)
{
    unsigned n = f == KCS_BS_FP4_E2M1 ? 16 : f == KCS_BS_UE4M3 ? 128 : 256;
    for (unsigned c = 0; c < n; c++) {
        double v = kcs_bs_decode(f, c);
        if (v == x && !isnan(v) && signbit(v) == signbit(x)) {
            *code = c;
            return true;
        }
    }
    return false;
}

const char *kcs_bs_code_name(kcs_bs_code f)
{
    static const char *const n[] = {"fp4_e2m1", "ue8m0", "ue4m3"};
    return f < KCS_BS_CODE_COUNT ? n[f] : "unknown";
}

/* ---- schemes ------------------------------------------------------------------ */

#define SRC_BS "Xie, Wang, Yang, Yang, MMA-Sim, arXiv:2511.10909 (commit c785138), Blackwell"

static const kcs_bs_scheme schemes[] = {
    {"mxfp8_e4m3", false, KCS_FMT_FP8_E4M3, KCS_BS_UE8M0, 32, 32,
     SRC_BS " tcgen05.mma.block_scale kind::mxf8f6f4 (e4m3, ue8m0 per 32)"},
    {"mxfp8_e5m2", false, KCS_FMT_FP8_E5M2, KCS_BS_UE8M0, 32, 32,
     SRC_BS " tcgen05.mma.block_scale kind::mxf8f6f4 (e5m2, ue8m0 per 32)"},
    {"mxfp4", true, KCS_FMT_FP32, KCS_BS_UE8M0, 32, 64,
     SRC_BS " tcgen05.mma.block_scale kind::mxf4 (e2m1, ue8m0 per 32)"},
    {"mxfp4_block16", true, KCS_FMT_FP32, KCS_BS_UE8M0, 16, 64,
     SRC_BS " tcgen05.mma.block_scale kind::mxf4nvf4 block16 (e2m1, ue8m0 per 16)"},
    {"nvfp4", true, KCS_FMT_FP32, KCS_BS_UE4M3, 16, 64,
     SRC_BS " tcgen05.mma.block_scale kind::mxf4nvf4 (e2m1, ue4m3 per 16)"},
};
#define N_SCHEMES ((int)(sizeof schemes / sizeof schemes[0]))

int kcs_bs_scheme_table(const kcs_bs_scheme **rows_p, int *n_p)
{
    *rows_p = schemes;
    *n_p = N_SCHEMES;
    return 0;
}

int kcs_bs_scheme_lookup(const char *profile, const char *name, const kcs_bs_scheme **s_p,
                         kcs_error *err)
{
    if (!profile || strcmp(profile, "nvidia-b200") != 0)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "block-scaled inputs are modelled for nvidia-b200 only, not '%s'",
                        profile ? profile : "(null)");
    char list[256] = "";
    size_t len = 0;
    for (int i = 0; i < N_SCHEMES; i++) {
        if (name && strcmp(schemes[i].name, name) == 0) {
            *s_p = &schemes[i];
            return 0;
        }
        int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", schemes[i].name);
        if (w > 0 && (size_t)w < sizeof list - len)
            len += (size_t)w;
    }
    return kcs_fail(err, KCS_E_INVAL, "unknown block-scaled input '%s' (known: %s)",
                    name ? name : "(null)", list);
}

/* ---- the step ------------------------------------------------------------------ */

/* Alignment exponent: 0 -> -126 (as the zero-operand feature zero_exp=min);
 * else floor(log2|x|) clamped at emin. Significand *m = |x| / 2^e. */
static int align_exp(double x, int emin)
{
    if (x == 0.0)
        return -126;
    int e = ilogb(x);
    return e < emin ? emin : e;
}

static double trunc_to(double t, double q)
{
    return trunc(t / q) * q; /* exact: power-of-two q */
}

/* One instruction for one output: terms v[0..n) with exponents ex[0..n)
 * (c first), truncated to 2^(E - frac), summed (exact: < 2^50 quanta),
 * rounded toward zero to fp32. */
static double fused(const double *v, const int *ex, int n, int frac)
{
    int E = ex[0];
    for (int i = 1; i < n; i++)
        E = ex[i] > E ? ex[i] : E;
    double q = ldexp(1.0, E - frac), S = 0.0;
    for (int i = 0; i < n; i++)
        S += trunc_to(v[i], q);
    return kcs_round_bits(S, 24, KCS_RZ);
}

int kcs_blockscaled_gemm_ref(const kcs_bs_scheme *s, int64_t m, int64_t n, int64_t k,
                             const double *A, const double *SA, const double *B,
                             const double *SB, const double *C, double *D)
{
    if (!s || k % s->kinst != 0 || s->kinst % s->block != 0 || s->kinst > 64)
        return KCS_E_INVAL;
    int64_t ns = k / s->block; /* scales per row of A / column of B */
    int emin_e = s->fp4 ? -126 : kcs_format_get(s->elem)->emin;
    int emin_s = s->scale == KCS_BS_UE8M0 ? -127 : kcs_format_get(KCS_FMT_FP8_E4M3)->emin;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double c = C ? (double)(float)C[i * n + j] : 0.0;
            for (int64_t l0 = 0; l0 < k; l0 += s->kinst) {
                double v[65];
                int ex[65], cnt = 0;
                bool nan = isnan(c);
                for (int64_t b = l0 / s->block; b < (l0 + s->kinst) / s->block; b++)
                    nan |= isnan(SA[i * ns + b]) || isnan(SB[b * n + j]);
                if (nan) {
                    c = NAN;
                    continue;
                }
                if (!s->fp4) { /* fp8: IEEE where the exact sum is not finite */
                    double sa = SA[i * ns + l0 / s->block], sb = SB[(l0 / s->block) * n + j];
                    double ieee = c;
                    bool fin = isfinite(c);
                    for (int64_t l = l0; l < l0 + s->kinst; l++) {
                        fin &= isfinite(A[i * k + l]) && isfinite(B[l * n + j]);
                        ieee += A[i * k + l] * B[l * n + j] * sa * sb;
                    }
                    if (!fin || !isfinite(ieee)) {
                        c = ieee;
                        continue;
                    }
                    int es = align_exp(sa, emin_s) + align_exp(sb, emin_s);
                    v[cnt] = c;
                    ex[cnt++] = align_exp(c, -126);
                    for (int64_t l = l0; l < l0 + s->kinst; l++) {
                        double a = A[i * k + l], bb = B[l * n + j];
                        v[cnt] = a * bb * sa * sb;
                        ex[cnt++] = align_exp(a, emin_e) + align_exp(bb, emin_e) + es;
                    }
                    c = fused(v, ex, cnt, 25);
                } else {
                    if (!isfinite(c))
                        continue; /* +-Inf c passes through (products are finite) */
                    v[cnt] = c;
                    ex[cnt++] = align_exp(c, -126);
                    for (int64_t r = l0; r < l0 + s->kinst; r += 16) {
                        double run = 0.0; /* exact: <= 16 products of e2m1 values */
                        for (int64_t l = r; l < r + 16; l++)
                            run += A[i * k + l] * B[l * n + j];
                        double sa = SA[i * ns + r / s->block], sb = SB[(r / s->block) * n + j];
                        v[cnt] = run * sa * sb;
                        ex[cnt++] = align_exp(sa, emin_s) + align_exp(sb, emin_s);
                    }
                    c = fused(v, ex, cnt, 35);
                }
            }
            D[i * n + j] = c;
        }
    return 0;
}

/* ---- the same model, fast ---------------------------------------------------- *
 * Exponents decoded once per GEMM (align_exp of every element and scale),
 * each term truncated by an integer conversion of v * 2^(frac - E) (exact:
 * power-of-two scaling, |v| / q < 2^50) and the quanta summed in int64,
 * which is the reference's exact double sum. The reference's IEEE check of
 * an fp8 instruction (c + the products in double, taken when it is not
 * finite) can only fire on a NaN/Inf c when every element and scale is
 * below 2^300 in magnitude (then each term is below 2^854); inputs outside
 * that range, and NaN/Inf elements or infinite scales, take the reference
 * as a whole. */

static double fused_fast(const double *v, const int *ex, int n, int frac)
{
    int E = ex[0];
    for (int i = 1; i < n; i++)
        E = ex[i] > E ? ex[i] : E;
    double iq = ldexp(1.0, frac - E), q = ldexp(1.0, E - frac);
    int64_t T = 0;
    for (int i = 0; i < n; i++)
        T += (int64_t)(v[i] * iq);
    return kcs_round_bits((double)T * q, 24, KCS_RZ);
}

/* every value below 2^300 in magnitude (NaN allowed where nan_ok) */
static bool tame(const double *x, size_t len, bool nan_ok)
{
    for (size_t i = 0; i < len; i++)
        if (!(fabs(x[i]) < 0x1p300) && !(nan_ok && isnan(x[i])))
            return false;
    return true;
}

int kcs_blockscaled_gemm(const kcs_bs_scheme *s, int64_t m, int64_t n, int64_t k,
                         const double *A, const double *SA, const double *B, const double *SB,
                         const double *C, double *D)
{
    if (!s || k % s->kinst != 0 || s->kinst % s->block != 0 || s->kinst > 64)
        return KCS_E_INVAL;
    int64_t ns = k / s->block;
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nsa = (size_t)(m * ns),
           nsb = (size_t)(ns * n);
    /* non-finite elements or scales (NaN scales aside) or huge values: the
     * reference */
    if (!tame(A, na, false) || !tame(B, nb, false) || !tame(SA, nsa, true) ||
        !tame(SB, nsb, true))
        return kcs_blockscaled_gemm_ref(s, m, n, k, A, SA, B, SB, C, D);
    int emin_e = s->fp4 ? -126 : kcs_format_get(s->elem)->emin;
    int emin_s = s->scale == KCS_BS_UE8M0 ? -127 : kcs_format_get(KCS_FMT_FP8_E4M3)->emin;
    int *xa = malloc(sizeof(int) * (na ? na : 1)), *xb = malloc(sizeof(int) * (nb ? nb : 1));
    int *xsa = malloc(sizeof(int) * (nsa ? nsa : 1)), *xsb = malloc(sizeof(int) * (nsb ? nsb : 1));
    if (!xa || !xb || !xsa || !xsb) {
        free(xa);
        free(xb);
        free(xsa);
        free(xsb);
        return KCS_E_NOMEM;
    }
    for (size_t i = 0; i < na && !s->fp4; i++)
        xa[i] = align_exp(A[i], emin_e);
    for (size_t i = 0; i < nb && !s->fp4; i++)
        xb[i] = align_exp(B[i], emin_e);
    for (size_t i = 0; i < nsa; i++)
        xsa[i] = isnan(SA[i]) ? 0 : align_exp(SA[i], emin_s);
    for (size_t i = 0; i < nsb; i++)
        xsb[i] = isnan(SB[i]) ? 0 : align_exp(SB[i], emin_s);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double c = C ? (double)(float)C[i * n + j] : 0.0;
            for (int64_t l0 = 0; l0 < k; l0 += s->kinst) {
                double v[65];
                int ex[65], cnt = 0;
                bool nan = isnan(c);
                for (int64_t b = l0 / s->block; b < (l0 + s->kinst) / s->block; b++)
                    nan |= isnan(SA[i * ns + b]) || isnan(SB[b * n + j]);
                if (nan) {
                    c = NAN;
                    continue;
                }
                if (!s->fp4) {
                    int64_t bi = l0 / s->block;
                    double sa = SA[i * ns + bi], sb = SB[bi * n + j];
                    if (!isfinite(c)) {
                        /* the reference's IEEE path (finite elements) */
                        double ieee = c;
                        for (int64_t l = l0; l < l0 + s->kinst; l++)
                            ieee += A[i * k + l] * B[l * n + j] * sa * sb;
                        c = ieee;
                        continue;
                    }
                    int es = xsa[i * ns + bi] + xsb[bi * n + j];
                    v[cnt] = c;
                    ex[cnt++] = align_exp(c, -126);
                    for (int64_t l = l0; l < l0 + s->kinst; l++) {
                        v[cnt] = A[i * k + l] * B[l * n + j] * sa * sb;
                        ex[cnt++] = xa[i * k + l] + xb[l * n + j] + es;
                    }
                    c = fused_fast(v, ex, cnt, 25);
                } else {
                    if (!isfinite(c))
                        continue;
                    v[cnt] = c;
                    ex[cnt++] = align_exp(c, -126);
                    for (int64_t r = l0; r < l0 + s->kinst; r += 16) {
                        double run = 0.0;
                        for (int64_t l = r; l < r + 16; l++)
                            run += A[i * k + l] * B[l * n + j];
                        double sa = SA[i * ns + r / s->block], sb = SB[(r / s->block) * n + j];
                        v[cnt] = run * sa * sb;
                        ex[cnt++] = xsa[i * ns + r / s->block] + xsb[(r / s->block) * n + j];
                    }
                    c = fused_fast(v, ex, cnt, 35);
                }
            }
            D[i * n + j] = c;
        }
    free(xa);
    free(xb);
    free(xsa);
    free(xsb);
    return 0;
}
