/* |A||B| (+|C|) for the componentwise measures (oracle_absprod.h).
 *
 * The magnitudes only scale the error; they need to be an upper bound of
 * the exact |A||B| that is tight to a small relative amount, not fp64
 * accurate. When every entry of A and B is an fp32 number (inputs of dtype
 * fp32, tf32, bf16, fp16, fp8 always are) and k <= KCS_ABSPROD_SGEMM_KMAX,
 * one OpenBLAS sgemm of |A| and |B| gives them at half the cost of a dgemm:
 *
 *   every term is >= 0, so in any order, with or without FMA, rounding to
 *   nearest, the computed c^ satisfies |c^ - c| <= gamma_k c + k 2^-149
 *   (Higham, Accuracy and Stability, 2nd ed., sec. 3.1; the last term
 *   bounds the subnormal range's absolute errors), hence
 *   c <= (c^ + k 2^-149) / (1 - gamma_k) <= (1 + 2 gamma_k) c^ + k 2^-148,
 *   gamma_k = k u / (1 - k u), u = 2^-24; the extra gamma_k covers the
 *   double roundings of the scaling itself, and a final factor 1 + 2^-52
 *   (at least one ulp up) the rounding of the sum with |C|. Overflow is excluded up front
 *   (max|a| max|b| k below 2^126).
 *
 * Since also c^ <= (1 + gamma_k) c + k 2^-149, the result exceeds the exact
 * |A||B| by at most 3 gamma_k + 2^-51 relative (+ k 2^-147); k <= 4096
 * keeps that below 0.08 %, so a componentwise error measured against it
 * reads at most 0.08 % low. Elsewhere (fp64
 * inputs, longer k, magnitudes near fp32's range, no memory for the fp32
 * copies) it is a dgemm of |A| and |B| as before, or for at most 256
 * outputs the same sums in place, without the copies. */
#include "oracle_absprod.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

/* Up to this many outputs the fp64 path sums in place instead of a dgemm
 * of copies (oracle_absprod.h: an fp64 sum of k nonnegative terms in any
 * order, as the dgemm's, relative error at most gamma_k(2^-53)). */
#define ABSPROD_DIRECT_OUTPUTS 256

/* fp32 buffers kept between calls (|B|; |A| and the product): a fresh
 * 20 MB malloc per call pays its page faults on every call, which cost as
 * much as the conversion into it. Per thread (only the thread that runs the
 * oracle keeps any); a buffer over ABSPROD_KEEP_FLOATS is freed after its
 * call instead of kept. */
#define ABSPROD_KEEP_FLOATS ((size_t)1 << 24) /* 64 MB */
typedef struct fbuf {
    float *p;
    size_t cap;
} fbuf;
static _Thread_local fbuf keep_b, keep_a;

static float *fbuf_get(fbuf *b, size_t n)
{
    if (b->cap < n) {
        free(b->p);
        b->p = malloc(n * sizeof *b->p);
        b->cap = b->p ? n : 0;
    }
    return b->p;
}

static void fbuf_done(fbuf *b)
{
    if (b->cap > ABSPROD_KEEP_FLOATS) {
        free(b->p);
        *b = (fbuf){0};
    }
}

/* f = |x| in fp32, *mx = max |x|; 1 when every |x_i| is an fp32 number
 * (then f is exact), else 0. */
static int abs_to_fp32(const double *x, size_t len, float *f, double *mx)
{
    double m = 0.0;
    int ok = 1;
    for (size_t i = 0; i < len; i++) {
        double a = fabs(x[i]);
        float v = (float)a;
        ok &= (double)v == a; /* NaN, Inf beyond fp32, extra bits: 0 */
        f[i] = v;
        m = a > m ? a : m;
    }
    *mx = m;
    return ok;
}

/* The fp32 path with |B| given (fb, its largest entry mb): 1 when done,
 * 0 when A is not all fp32 numbers, the magnitudes could overflow, or no
 * memory (AR untouched). */
static int absprod_fp32(size_t m, size_t n, size_t k, const double *A, const float *fb, double mb,
                        double *AR)
{
    float *fa = fbuf_get(&keep_a, m * k + m * n + 1);
    if (!fa)
        return 0;
    float *fc = fa + m * k;
    double ma;
    int ok = abs_to_fp32(A, m * k, fa, &ma) && ma * mb * (double)k < 0x1p126;
    if (ok) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, fa,
                    (int)k, fb, (int)n, 0.0f, fc, (int)n);
        double ku = (double)k * 0x1p-24;
        double grow = 1.0 + 2.0 * (ku / (1.0 - ku)), floor_ = (double)k * 0x1p-148;
        /* |C| + the bound, then one ulp up: the sum's own rounding to
         * nearest may have gone down by half an ulp */
        for (size_t i = 0; i < m * n; i++)
            AR[i] = (AR[i] + (grow * (double)fc[i] + floor_)) * (1.0 + 0x1p-52);
    }
    fbuf_done(&keep_a);
    return ok;
}

/* The paths without fp32 copies: in place for few outputs, else a dgemm. */
static int absprod_fp64(size_t m, size_t n, size_t k, const double *A, const double *B, double *AR)
{
    if (m * n <= ABSPROD_DIRECT_OUTPUTS) {
        /* few outputs (the long-k points of sweeps and grades): summed in
         * place, row by row; copies of |A| and |B| (16 MB at 4 x 4 x 2^20)
         * would cost more in page faults than the products */
        for (size_t i = 0; i < m; i++) {
            double *ar = AR + i * n;
            const double *a = A + i * k;
            for (size_t j = 0; j < k; j++) {
                double aj = fabs(a[j]);
                const double *b = B + j * n;
                for (size_t l = 0; l < n; l++)
                    ar[l] += aj * fabs(b[l]);
            }
        }
        return 0;
    }
    double *aa = malloc((m * k + k * n + 1) * sizeof *aa);
    if (!aa)
        return KCS_E_NOMEM;
    double *ab = aa + m * k;
    for (size_t i = 0; i < m * k; i++)
        aa[i] = fabs(A[i]);
    for (size_t i = 0; i < k * n; i++)
        ab[i] = fabs(B[i]);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, aa,
                (int)k, ab, (int)n, 1.0, AR, (int)n);
    free(aa);
    return 0;
}

static void abs_c(size_t len, const double *C, double *AR)
{
    for (size_t i = 0; i < len; i++)
        AR[i] = C ? fabs(C[i]) : 0.0;
}

int kcs_absprod_gemm(size_t m, size_t n, size_t k, const double *A, const double *B,
                     const double *C, double *AR)
{
    abs_c(m * n, C, AR);
    if (m == 0 || n == 0 || k == 0)
        return 0;
    if (k <= KCS_ABSPROD_SGEMM_KMAX) {
        float *fb = fbuf_get(&keep_b, k * n + 1);
        double mb;
        int done = fb && abs_to_fp32(B, k * n, fb, &mb) && absprod_fp32(m, n, k, A, fb, mb, AR);
        fbuf_done(&keep_b);
        if (done)
            return 0;
    }
    return absprod_fp64(m, n, k, A, B, AR);
}
