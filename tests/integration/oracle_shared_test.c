/* kcs_oracle_run_shared under MPI (ctest: mpiexec -n 4; any P works): the
 * fp64 GEMM reference split by rows over the ranks equals what every rank
 * computes alone (kcs_oracle_run), within the fp64 rounding of a dot
 * product (|d| <= 2 k 2^-53 (|A||B|)_ij; the two differ only in how BLAS
 * blocks the k sum, if at all), and |A||B| and the scale likewise; shapes
 * with m < P and other oracles fall back to local computation; a rank that
 * is not ok (local_ok = 0) makes every rank compute locally, with no
 * collective left unmatched. The scale is bit-identical (norm_fro.h: the
 * same chunks, summed in the same order, whichever rank summed each). When
 * one entry of B (the last) is not an fp32 number, every rank must take the
 * fp64 path for |A||B|, as one rank does: then a2 is held to dgemm's
 * tolerance, which the fp32 path's excess (about 2 k 2^-24) would break. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "oracle_absprod.h"
#include "oracle_shared.h"
#include "rng.h"
#include "tensor.h"

static int rank, P;

static void one_b(int64_t m, int64_t n, int64_t k, int with_c, kcs_oracle_kind kind, int bad_rank,
                  int odd_b)
{
    size_t mk = (size_t)(m * k), kn = (size_t)(k * n), mn = (size_t)(m * n);
    double *A = malloc(mk * sizeof *A), *B = malloc(kn * sizeof *B), *C = malloc(mn * sizeof *C);
    double *r1 = malloc(mn * sizeof *r1), *a1 = malloc(mn * sizeof *a1);
    double *r2 = malloc(mn * sizeof *r2), *a2 = malloc(mn * sizeof *a2);
    kcs_fill(A, mk, KCS_DIST_NORMAL, KCS_FMT_FP32, 9, 1, (uint64_t)(m + n + k));
    kcs_fill(B, kn, KCS_DIST_NORMAL, KCS_FMT_FP32, 9, 2, (uint64_t)(m + n + k));
    kcs_fill(C, mn, KCS_DIST_NORMAL, KCS_FMT_FP32, 9, 3, (uint64_t)(m + n + k));
    if (odd_b) /* no longer an fp32 number; |A||B| hardly changes */
        B[kn - 1] *= 1.0 + 0x1p-40;
    kcs_call c = {0};
    c.op = KCS_OP_GEMM;
    c.dtype_in = c.dtype_out = KCS_FMT_FP32;
    c.m = m;
    c.n = n;
    c.k = k;
    c.in[0] = A;
    c.in[1] = B;
    c.in[2] = with_c ? C : NULL;
    kcs_error e1 = {0}, e2 = {0};
    double s1 = -1, s2 = -2;
    int ok = rank != bad_rank;
    int rc2 = kcs_oracle_run_shared(MPI_COMM_WORLD, ok, kind, NULL, ok ? &c : NULL, r2, a2, &s2,
                                    &e2);
    if (ok) {
        int rc1 = kcs_oracle_run(kind, NULL, &c, r1, a1, &s1, &e1);
        CHECK(rc1 == 0 && rc2 == 0, "rc %d %d (%s %s)", rc1, rc2, e1.msg, e2.msg);
        long exact = 0, bad = 0;
        for (size_t i = 0; i < mn; i++) {
            double tol = 2.0 * (double)k * 0x1p-53 * a1[i];
            /* |A||B|: two upper bounds, each within its stated excess */
            double atol = k <= KCS_ABSPROD_SGEMM_KMAX && !odd_b
                              ? (3.0 * (double)k * 0x1p-24 + 0x1p-50) * a1[i] + (double)k * 0x1p-147
                              : tol;
            bad += fabs(r1[i] - r2[i]) > tol || fabs(a1[i] - a2[i]) > atol;
            exact += r1[i] == r2[i];
        }
        CHECK(bad == 0, "%ldx%ldx%ld C=%d kind %d bad-rank %d odd-B %d: %ld of %zu outside the bound",
              (long)m, (long)n, (long)k, with_c, (int)kind, bad_rank, odd_b, bad, mn);
        CHECK(s1 == s2, "scale %a vs %a", s1, s2);
        if (rank == 0 && bad_rank < 0 && kind == KCS_ORACLE_FP64)
            printf("%ldx%ldx%ld C=%d: %ld of %zu reference values bit-identical to one rank's\n",
                   (long)m, (long)n, (long)k, with_c, exact, mn);
    } else {
        CHECK(rc2 == 0, "a rank that is not ok gets 0, got %d", rc2);
    }
    free(A);
    free(B);
    free(C);
    free(r1);
    free(a1);
    free(r2);
    free(a2);
}

static void one(int64_t m, int64_t n, int64_t k, int with_c, kcs_oracle_kind kind, int bad_rank)
{
    one_b(m, n, k, with_c, kind, bad_rank, 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int64_t shapes[][3] = {{1, 7, 5}, {3, 3, 3}, {37, 29, 300}, {256, 64, 1024}, {5, 8, 2}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int wc = 0; wc < 2; wc++) {
            one(shapes[i][0], shapes[i][1], shapes[i][2], wc, KCS_ORACLE_FP64, -1);
            if (shapes[i][0] * shapes[i][1] * shapes[i][2] <= 400000) /* MPFR: keep it short */
                one(shapes[i][0], shapes[i][1], shapes[i][2], wc, KCS_ORACLE_EXACT, -1);
        }
    one_b(64, 300, 40, 1, KCS_ORACLE_FP64, -1, 1); /* B not fp32: the fp64 |A||B| everywhere */
    one_b(64, 300, 40, 0, KCS_ORACLE_FP64, -1, 0);
    one_b(24, 9, KCS_ABSPROD_SGEMM_KMAX + 3, 1, KCS_ORACLE_FP64, -1, 0); /* k past the fp32 path */
    for (int bad = 0; bad < P; bad++) /* one rank not ok: all compute locally */
        one(37, 29, 300, 1, KCS_ORACLE_FP64, bad);
    return check_finish("oracle_shared_test");
}
