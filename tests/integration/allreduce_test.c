/* kcs_allreduce under MPI (ctest runs it with mpiexec -n 4; any P works,
 * the hand-derived case needs P = 4).
 *   1. ring, tree and library vs the exact sum of all ranks' vectors:
 *      |y - s| <= (P-1) u(acc) sum|x| per element. Any order of P - 1
 *      additions of P terms, each rounded to nearest, stays within
 *      (P-1) u sum|x| (Rump, "Error estimation of floating-point summation
 *      and dot product", BIT 52 (2012), Thm 3.1; no underflow here); the
 *      inputs are exact in acc, so the first rounding is exact. library
 *      sums in fp64 ((P-1) 2^-53 sum|x|) and rounds once (u |s|), also
 *      within the bound for P >= 2. s is the MPFR-exact sum rounded to
 *      double: the test allows 2^-53 sum|x| more for that.
 *   2. integers with an fp64 accumulator: every partial sum is exact, so
 *      tree and library are bitwise equal (and equal to the exact sum).
 *   3. ring and tree give bitwise identical results on every rank
 *      (MPI_Allreduce MIN/MAX of XXH3 digests); in place (y = x) equals
 *      separate buffers; a k whose ring chunks need two message segments.
 *   4. hand-derived, P = 4, fp16 accumulator (spacing 2 at 2048; 2049 is a
 *      tie that rounds to the even 2048): element 0 of x_0..x_3 =
 *      2048, 1, 1, 0 lies in ring chunk 0, summed from rank 1:
 *      ((1 + 1) + 0) + 2048 = 2050; tree: (2048 + 1) + (1 + 0) =
 *      2048 + 1 = 2048; library: 2050 in fp64, 2050 in fp16. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce.h"
#include "exact.h"
#include "metrics.h"
#include "mpi_check.h"
#include "rng.h"

static int rank, P;

/* x_r of every rank r, deterministic: rank r's vector is row r. Values of
 * fmt with exponents spread over 2^-6 .. 2^6 (so orders matter). */
static void inputs(double *all, int64_t k, kcs_format fmt, int integers, uint64_t seed)
{
    for (int r = 0; r < P; r++) {
        kcs_rng g;
        kcs_rng_init(&g, seed, (uint64_t)r, (uint64_t)k);
        for (int64_t i = 0; i < k; i++) {
            double v = integers ? floor(ldexp(kcs_rng_normal(&g), 20))
                                : kcs_rng_normal(&g) * ldexp(1.0, (int)(kcs_rng_u32(&g) % 13) - 6);
            all[r * k + i] = kcs_format_round(fmt, v, KCS_ROUND_DEFAULT);
        }
    }
}

static uint64_t same_everywhere(const double *y, int64_t k)
{
    unsigned long long d = kcs_digest_bytes(y, (size_t)k * sizeof *y, 0), lo, hi;
    MPI_Allreduce(&d, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&d, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

static void check_bound(const char *acc_name, kcs_format fmt, int64_t k)
{
    kcs_acc acc;
    kcs_acc_parse(acc_name, &acc);
    double u = acc.bits > 0 ? ldexp(1.0, -acc.bits) : kcs_format_u(acc.fmt);
    double *all = malloc((size_t)(P * k) * sizeof *all), *y = malloc((size_t)k * sizeof *y);
    double *col = malloc((size_t)P * sizeof *col), *s = malloc((size_t)k * sizeof *s);
    double *sabs = malloc((size_t)k * sizeof *sabs);
    kcs_exact *ex;
    kcs_error err = {0};
    if (!all || !y || !col || !s || !sabs || kcs_exact_new(P, &ex, &err)) {
        check_fails++;
        return;
    }
    inputs(all, k, fmt, 0, 77 + (uint64_t)k);
    for (int64_t i = 0; i < k; i++) {
        sabs[i] = 0.0;
        for (int r = 0; r < P; r++) {
            col[r] = all[r * k + i];
            sabs[i] += fabs(col[r]);
        }
        s[i] = kcs_exact_sum(ex, col, P, KCS_FMT_FP64);
    }
    for (int a = 0; a < 3; a++) {
        kcs_allreduce_algo algo = (kcs_allreduce_algo)a;
        int rc = kcs_allreduce(all + rank * k, y, k, algo, &acc, MPI_COMM_WORLD, &err);
        CHECK(rc == 0, "%s", err.msg);
        int bad = 0;
        double worst = 0.0;
        for (int64_t i = 0; i < k; i++) {
            double bound = ((P - 1) * u + 0x1p-53) * sabs[i] * (1.0 + P * 0x1p-53);
            double e = fabs(y[i] - s[i]);
            bad += !(e <= bound);
            if (sabs[i] > 0)
                worst = fmax(worst, e / (u * sabs[i]));
        }
        CHECK(bad == 0, "%s acc=%s k=%lld: %d elements over (P-1) u sum|x| (worst %.3g u)",
              kcs_allreduce_algo_name(algo), acc_name, (long long)k, bad, worst);
        if (algo != KCS_ALLREDUCE_LIBRARY)
            CHECK(same_everywhere(y, k), "%s acc=%s k=%lld: ranks disagree",
                  kcs_allreduce_algo_name(algo), acc_name, (long long)k);
    }
    kcs_exact_free(ex);
    free(all);
    free(y);
    free(col);
    free(s);
    free(sabs);
}

static void check_integers(int64_t k)
{
    kcs_acc acc = {KCS_FMT_FP64, 0, 0};
    double *all = malloc((size_t)(P * k) * sizeof *all);
    double *yt = malloc((size_t)k * sizeof *yt), *yl = malloc((size_t)k * sizeof *yl);
    kcs_error err = {0};
    inputs(all, k, KCS_FMT_FP64, 1, 5);
    CHECK(kcs_allreduce(all + rank * k, yt, k, KCS_ALLREDUCE_TREE, &acc, MPI_COMM_WORLD, &err) == 0,
          "%s", err.msg);
    CHECK(kcs_allreduce(all + rank * k, yl, k, KCS_ALLREDUCE_LIBRARY, &acc, MPI_COMM_WORLD,
                        &err) == 0, "%s", err.msg);
    CHECK(memcmp(yt, yl, (size_t)k * sizeof *yt) == 0, "tree and library differ on integers");
    int bad = 0;
    for (int64_t i = 0; i < k; i++) {
        double s = 0.0; /* |x| < 2^26, P small: every partial sum is exact */
        for (int r = 0; r < P; r++)
            s += all[r * k + i];
        bad += yt[i] != s;
    }
    CHECK(bad == 0, "tree on integers is not the exact sum (%d elements)", bad);
    free(all);
    free(yt);
    free(yl);
}

/* y = x (in place) gives the same bits as separate buffers. */
static void check_in_place(int64_t k)
{
    kcs_acc acc = {KCS_FMT_BF16, 0, 0};
    double *all = malloc((size_t)(P * k) * sizeof *all), *y = malloc((size_t)k * sizeof *y);
    kcs_error err = {0};
    inputs(all, k, KCS_FMT_BF16, 0, 9);
    for (int a = 0; a < 3; a++) {
        double *x = all + rank * k;
        int rc = kcs_allreduce(x, y, k, (kcs_allreduce_algo)a, &acc, MPI_COMM_WORLD, &err);
        rc |= kcs_allreduce(x, x, k, (kcs_allreduce_algo)a, &acc, MPI_COMM_WORLD, &err);
        CHECK(rc == 0, "%s", err.msg);
        CHECK(memcmp(x, y, (size_t)k * sizeof *y) == 0, "%s: in place differs",
              kcs_allreduce_algo_name((kcs_allreduce_algo)a));
        inputs(all, k, KCS_FMT_BF16, 0, 9);
    }
    free(all);
    free(y);
}

static void check_hand_derived(void)
{
    if (P != 4)
        return;
    kcs_acc acc = {KCS_FMT_FP16, 0, 0};
    const double x0[4] = {2048, 1, 1, 0};
    double x[4] = {x0[rank], 0.5, 0.25 * rank, -1.0}, y[4];
    kcs_error err = {0};
    const double want[3] = {2050, 2048, 2050};
    for (int a = 0; a < 3; a++) {
        CHECK(kcs_allreduce(x, y, 4, (kcs_allreduce_algo)a, &acc, MPI_COMM_WORLD, &err) == 0,
              "%s", err.msg);
        CHECK(y[0] == want[a], "%s: y[0] = %g, want %g", kcs_allreduce_algo_name(a), y[0],
              want[a]);
        /* the other elements are exact in every order: 2, 1.5, -4 */
        CHECK(y[1] == 2.0 && y[2] == 1.5 && y[3] == -4.0, "%s: exact elements %g %g %g",
              kcs_allreduce_algo_name(a), y[1], y[2], y[3]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *accs[] = {"fp32", "bf16", "fp16", "bits:12", "fp64"};
    const kcs_format fmts[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_FP16,
                               KCS_FMT_FP32};
    const int64_t ks[] = {1, 3, 1000, 4099};
    for (int a = 0; a < 5; a++)
        for (int i = 0; i < 4; i++)
            check_bound(accs[a], fmts[a], ks[i]);
    /* chunks of 65537..65538 doubles: two message segments per ring step */
    check_bound("fp32", KCS_FMT_FP32, 4 * 65536 + 5);
    check_integers(1000);
    check_in_place(1001);
    check_hand_derived();
    kcs_allreduce_algo al;
    CHECK(kcs_allreduce_algo_parse("ring", &al) == 0 && al == KCS_ALLREDUCE_RING, "parse ring");
    CHECK(kcs_allreduce_algo_parse("butterfly", &al) == KCS_E_INVAL, "parse butterfly");
    return check_finish("allreduce_test");
}
