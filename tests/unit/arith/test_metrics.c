/* Metrics against hand-computed values and against their element-by-element
 * definition, and digests. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error_shape.h"
#include "metrics.h"
#include "tensor.h"

static void test_hand_values(void)
{
    /* y vs ref: differences 0, 2^-20, -2^-22 at values 1, 2, 0.5 (fp32). */
    double ref[3] = {1.0, 2.0, 0.5};
    double y[3] = {1.0, 2.0 + 0x1p-20, 0.5 - 0x1p-22};
    double absref[3] = {4.0, 4.0, 1.0};
    kcs_metrics m;
    kcs_metrics_compute(y, ref, absref, 3, KCS_FMT_FP32, 2.0, 16, -1e30, &m);
    CU_ASSERT_EQUAL(m.max_abs, 0x1p-20);
    CU_ASSERT_EQUAL(m.max_rel, 0x1p-21);
    /* ULPs: at 2 the fp32 spacing is 2^-22 -> 4 ulp; at 0.5 (below) the
     * spacing is 2^-25 -> 8 ulp */
    CU_ASSERT_EQUAL(m.max_ulp, 8.0);
    CU_ASSERT_DOUBLE_EQUAL(m.mean_ulp, 4.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(m.backward_err, sqrt(0x1p-40 + 0x1p-44) / 2.0, 1e-20);
    CU_ASSERT_EQUAL(m.max_scaled, 0x1p-22); /* 2^-22/1 vs 2^-20/4 */
    CU_ASSERT_EQUAL(m.nan_count, 0);
    CU_ASSERT_EQUAL(m.sentinel_count, 0);
}

static void test_nonfinite_and_sentinel(void)
{
    double s = kcs_sentinel(KCS_FMT_FP32);
    CU_ASSERT(isfinite(s) && s < 0);
    CU_ASSERT(kcs_format_exact(KCS_FMT_FP32, s));
    double ref[4] = {NAN, 1.0, INFINITY, 3.0};
    double y[4] = {NAN, NAN, INFINITY, s};
    kcs_metrics m;
    kcs_metrics_compute(y, ref, NULL, 4, KCS_FMT_FP32, 1.0, 4, s, &m);
    CU_ASSERT_EQUAL(m.nan_count, 2);
    CU_ASSERT_EQUAL(m.inf_count, 1);
    CU_ASSERT_EQUAL(m.mismatch_nonfinite, 1); /* NaN where 1.0 was due */
    CU_ASSERT_EQUAL(m.sentinel_count, 1);
    CU_ASSERT(isinf(m.backward_err));
}

static void test_guards(void)
{
    kcs_tensor t;
    kcs_error e = {0};
    CU_ASSERT_FATAL(kcs_tensor_alloc(&t, 10, KCS_FMT_FP16, &e) == 0);
    CU_ASSERT(kcs_tensor_guards_ok(&t));
    CU_ASSERT_EQUAL(kcs_tensor_count_sentinel(&t), 10);
    t.data[9] = 1.0;
    CU_ASSERT(kcs_tensor_guards_ok(&t));
    t.data[10] = 1.0; /* one past the end */
    CU_ASSERT(!kcs_tensor_guards_ok(&t));
    kcs_tensor_poison(&t);
    t.data[-1] = NAN; /* one before the start */
    CU_ASSERT(!kcs_tensor_guards_ok(&t));
    kcs_tensor_free(&t);
}

static void test_digests(void)
{
    double a[100], b[100];
    for (int i = 0; i < 100; i++)
        a[i] = b[i] = i * 0.25;
    CU_ASSERT_EQUAL(kcs_digest_values(a, 100, KCS_FMT_FP32), kcs_digest_values(b, 100, KCS_FMT_FP32));
    b[57] = nextafterf((float)b[57], 100.0f); /* one fp32 ulp */
    CU_ASSERT_NOT_EQUAL(kcs_digest_values(a, 100, KCS_FMT_FP32),
                        kcs_digest_values(b, 100, KCS_FMT_FP32));
}

/* The definition, one output at a time (what metrics.c computed before it
 * worked in blocks): the blocked code must give the same bits. */
static void ref_metrics(const double *y, const double *ref, const double *absref, size_t n,
                        kcs_format out_fmt, double sentinel, kcs_metrics *m)
{
    memset(m, 0, sizeof *m);
    double sum_sq = 0.0, sum_ulp = 0.0, sum_scaled_sq = 0.0;
    size_t n_finite = 0, n_scaled = 0;
    for (size_t i = 0; i < n; i++) {
        double a = y[i], b = ref[i];
        if (absref && absref[i] < 0.0)
            continue;
        if (isnan(a))
            m->nan_count++;
        else if (isinf(a))
            m->inf_count++;
        if (a == sentinel)
            m->sentinel_count++;
        if (!isfinite(a) || !isfinite(b)) {
            bool same = (isnan(a) && isnan(b)) || (isinf(a) && isinf(b) && (a > 0) == (b > 0));
            if (!same)
                m->mismatch_nonfinite++;
            continue;
        }
        double d = fabs(a - b);
        n_finite++;
        sum_sq += d * d;
        if (d > m->max_abs)
            m->max_abs = d;
        if (b != 0.0) {
            double r = d / fabs(b);
            if (r > m->max_rel)
                m->max_rel = r;
        } else if (d > 0.0) {
            m->max_rel = INFINITY;
        }
        double u = kcs_format_ulp_distance(out_fmt, a, b);
        sum_ulp += u;
        if (u > m->max_ulp)
            m->max_ulp = u;
        if (absref && absref[i] > 0.0) {
            double s = d / absref[i];
            sum_scaled_sq += s * s;
            n_scaled++;
            if (s > m->max_scaled)
                m->max_scaled = s;
        }
    }
    /* the sums, as the fields that carry them */
    m->mean_ulp = n_finite ? sum_ulp / (double)n_finite : 0.0;
    m->backward_err = sqrt(sum_sq);
    m->rms_scaled = n_scaled ? sqrt(sum_scaled_sq / (double)n_scaled) : 0.0;
}

/* The error shape's definition, output by output (error_shape.c before it
 * worked in blocks). */
static void ref_shape(const double *y, const double *ref, const double *absref, size_t n,
                      kcs_error_shape *e)
{
    double sy = 0, sr = 0, nn = 0, zeros = 0, nonzero = 0;
    int neg = 0, pos = 0;
    for (size_t i = 0; i < n; i++) {
        if ((absref && absref[i] < 0.0) || !isfinite(y[i]) || !isfinite(ref[i]))
            continue;
        sy += y[i];
        sr += ref[i];
        nn++;
        neg |= ref[i] < 0.0;
        pos |= ref[i] > 0.0;
        if (ref[i] != 0.0) {
            nonzero++;
            zeros += y[i] == 0.0;
        }
    }
    e->zero_frac = nonzero > 0 ? zeros / nonzero : 0.0;
    e->ref_corr = 1.0;
    e->peak_share = e->scale_fit = e->ref_scale = 0.0;
    e->mixed_signs = neg && pos;
    if (nn == 0)
        return;
    double my = sy / nn, mr = sr / nn;
    double cyy = 0, crr = 0, cyr = 0, sdd = 0, maxd = 0, sdr = 0, srr = 0;
    for (size_t i = 0; i < n; i++) {
        if ((absref && absref[i] < 0.0) || !isfinite(y[i]) || !isfinite(ref[i]))
            continue;
        double a = y[i] - my, b = ref[i] - mr, d = y[i] - ref[i];
        cyy += a * a;
        crr += b * b;
        cyr += a * b;
        sdd += d * d;
        maxd = d * d > maxd ? d * d : maxd;
        sdr += d * ref[i];
        srr += ref[i] * ref[i];
    }
    if (!(sdd > 0.0))
        return;
    e->ref_corr = cyy > 0.0 && crr > 0.0 ? cyr / sqrt(cyy * crr) : 0.0;
    e->peak_share = maxd / sdd;
    if (srr > 0.0) {
        double c = sdr / srr, res = 0.0;
        for (size_t i = 0; i < n; i++) {
            if ((absref && absref[i] < 0.0) || !isfinite(y[i]) || !isfinite(ref[i]))
                continue;
            double r = (y[i] - ref[i]) - c * ref[i];
            res += r * r;
        }
        e->scale_fit = 1.0 - res / sdd;
        e->ref_scale = c;
    }
}

static int same_shape(const kcs_metrics *g, const kcs_error_shape *w)
{
    return memcmp(&g->zero_frac, &w->zero_frac, sizeof(double)) == 0 &&
           memcmp(&g->ref_corr, &w->ref_corr, sizeof(double)) == 0 &&
           memcmp(&g->peak_share, &w->peak_share, sizeof(double)) == 0 &&
           memcmp(&g->scale_fit, &w->scale_fit, sizeof(double)) == 0 &&
           memcmp(&g->ref_scale, &w->ref_scale, sizeof(double)) == 0 &&
           memcmp(&g->mixed_signs, &w->mixed_signs, sizeof(double)) == 0;
}

static uint64_t mix(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Random outputs near their references (errors from 0 to many ulps),
 * exact zeros, NaN, +-Inf on either side, the sentinel, values beyond
 * fp16's range, absref with zeros and negatives (not judged) or none;
 * lengths around the block size; every output format. */
static void test_blocked_equals_definition(void)
{
    enum { N = 1100 };
    static double y[N], r[N], ar[N];
    const double sentinel = -12345.678;
    const kcs_format fmts[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_FP64,
                               KCS_FMT_FP8_E4M3, KCS_FMT_TF32};
    const size_t lens[] = {0, 1, 255, 256, 257, 1100};
    uint64_t st = 42;
    int bad = 0, cases = 0;
    for (int rep = 0; rep < 60; rep++) {
        for (int i = 0; i < N; i++) {
            uint64_t z = mix(&st);
            double base = ldexp((double)(int64_t)(mix(&st) >> 11) * 0x1p-52 - 1.0,
                                (int)(z % 40) - 20);
            if (rep % 3 == 2)
                base *= 1e6; /* beyond fp16's range */
            r[i] = base;
            y[i] = base * (1.0 + ldexp((double)(int)(z >> 40 & 0xff) - 128.0, -30 + (int)(z >> 50 & 15)));
            ar[i] = fabs(base) * (1.0 + (double)(z >> 20 & 7));
            unsigned c = (unsigned)((z >> 8) % 40);
            if (rep % 2 == 0 && c <= 5)
                c = 39; /* half the data all finite: the maxima and sums compared too */
            switch (c) {
            case 0: y[i] = NAN; break;
            case 1: r[i] = NAN; break;
            case 2: y[i] = r[i] = NAN; break;
            case 3: y[i] = INFINITY; break;
            case 4: y[i] = -INFINITY; r[i] = -INFINITY; break;
            case 5: r[i] = INFINITY; break;
            case 6: y[i] = sentinel; break;
            case 7: r[i] = 0.0; break;
            case 8: y[i] = r[i] = 0.0; break;
            case 9: ar[i] = -1.0; break;
            case 10: ar[i] = 0.0; break;
            case 11: y[i] = r[i]; break;
            case 12: ar[i] = -1.0; y[i] = rep % 2 ? NAN : sentinel; break; /* not judged */
            case 13: ar[i] = -1.0; y[i] = rep % 2 ? INFINITY : r[i] * 2.0; break;
            default: break;
            }
        }
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                for (int with_abs = 0; with_abs < 2; with_abs++) {
                    const double *a = with_abs ? ar : NULL;
                    kcs_metrics got, want;
                    kcs_metrics_compute(y, r, a, lens[l], fmts[f], 0.0, 0, sentinel, &got);
                    ref_metrics(y, r, a, lens[l], fmts[f], sentinel, &want);
                    kcs_error_shape ws;
                    ref_shape(y, r, a, lens[l], &ws);
                    int ok = got.nan_count == want.nan_count &&
                             got.inf_count == want.inf_count &&
                             got.sentinel_count == want.sentinel_count &&
                             got.mismatch_nonfinite == want.mismatch_nonfinite &&
                             same_bits(got.mean_ulp, want.mean_ulp) && same_shape(&got, &ws);
                    if (want.mismatch_nonfinite == 0)
                        ok = ok && same_bits(got.max_abs, want.max_abs) &&
                             same_bits(got.max_rel, want.max_rel) &&
                             same_bits(got.max_ulp, want.max_ulp) &&
                             same_bits(got.max_scaled, want.max_scaled) &&
                             same_bits(got.backward_err, want.backward_err) &&
                             same_bits(got.rms_scaled, want.rms_scaled);
                    if (!ok && bad++ < 5)
                        printf("\n  rep %d fmt %d len %zu abs %d: max_abs %a/%a max_ulp %a/%a "
                               "mean_ulp %a/%a rms %a/%a",
                               rep, (int)fmts[f], lens[l], with_abs, got.max_abs, want.max_abs,
                               got.max_ulp, want.max_ulp, got.mean_ulp, want.mean_ulp,
                               got.rms_scaled, want.rms_scaled);
                    cases++;
                }
    }
    printf("\n  %d (data, format, length, absref) cases, %d differ\n", cases, bad);
    CU_ASSERT_EQUAL(bad, 0);
}

/* With no non-finite output the maxima and sums are compared above only
 * where no mismatch sets them to Inf; here every output is finite, so all
 * of them are compared (a block-boundary or ordering slip shows here). */
static void test_blocked_finite(void)
{
    enum { N = 3000 };
    static double y[N], r[N], ar[N];
    uint64_t st = 7;
    int bad = 0;
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < N; i++) {
            r[i] = ldexp((double)(int64_t)(mix(&st) >> 11) * 0x1p-52 - 1.0, (int)(mix(&st) % 30) - 15);
            y[i] = (double)(float)(r[i] * (1.0 + ldexp((double)(int)(mix(&st) % 200) - 100.0, -26)));
            ar[i] = i % 17 == 0 ? 0.0 : fabs(r[i]) * 3.0;
        }
        kcs_metrics got, want;
        kcs_metrics_compute(y, r, ar, N - (size_t)rep, KCS_FMT_FP32, 0.0, 0, -1.0, &got);
        ref_metrics(y, r, ar, N - (size_t)rep, KCS_FMT_FP32, -1.0, &want);
        kcs_error_shape ws;
        ref_shape(y, r, ar, N - (size_t)rep, &ws);
        bad += !same_shape(&got, &ws);
        CU_ASSERT(ws.ref_corr > 0.9 && ws.peak_share > 0.0 && ws.scale_fit != 0.0);
        bad += !(same_bits(got.max_abs, want.max_abs) && same_bits(got.max_rel, want.max_rel) &&
                 same_bits(got.max_ulp, want.max_ulp) && same_bits(got.mean_ulp, want.mean_ulp) &&
                 same_bits(got.max_scaled, want.max_scaled) &&
                 same_bits(got.backward_err, want.backward_err) &&
                 same_bits(got.rms_scaled, want.rms_scaled));
        CU_ASSERT(want.max_ulp > 0.0 && want.rms_scaled > 0.0);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("metrics", NULL, NULL);
    CU_add_test(s, "hand-computed errors", test_hand_values);
    CU_add_test(s, "non-finite and sentinel counts", test_nonfinite_and_sentinel);
    CU_add_test(s, "guard regions", test_guards);
    CU_add_test(s, "digests see one ulp", test_digests);
    CU_add_test(s, "blocked metrics equal the definition", test_blocked_equals_definition);
    CU_add_test(s, "blocked metrics, finite outputs", test_blocked_finite);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    return f != 0;
}
