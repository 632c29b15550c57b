/* The fp64 GEMM reference split by rows over the ranks (oracle_shared.h). */
#include "oracle_shared.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "metrics.h"
#include "nan_mask.h"
#include "oracle_absprod.h"
#include "stage_time.h"

/* Rows [r0, r1) of D = C + A·B and of |A||B| + |C| (as gemm_fp64 in
 * oracle.c computes them for the whole matrix). 0 or KCS_E_NOMEM. */
static int rows_fp64(const kcs_call *c, int64_t r0, int64_t r1, double *ref, double *absref)
{
    size_t m = (size_t)(r1 - r0), n = (size_t)c->n, k = (size_t)c->k;
    if (m == 0)
        return 0;
    const double *A = c->in[0] + (size_t)r0 * k, *B = c->in[1];
    const double *C = c->in[2] ? c->in[2] + (size_t)r0 * n : NULL;
    double *R = ref + (size_t)r0 * n, *AR = absref + (size_t)r0 * n;
    for (size_t i = 0; i < m * n; i++)
        R[i] = C ? C[i] : 0.0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, A, (int)k,
                B, (int)n, C ? 1.0 : 0.0, R, (int)n);
    return kcs_absprod_gemm(m, n, k, A, B, C, AR);
}

/* First row of rank q's block: blocks start at multiples of 8 rows (BLAS
 * kernels work on row panels; aligned blocks make most reference values the
 * same bits as one rank's whole-matrix call); the last rank takes the rest. */
static int64_t block_start(int64_t m, int q, int size)
{
    if (q >= size)
        return m;
    return (m * q / size) / 8 * 8;
}

int kcs_oracle_run_shared(MPI_Comm comm, int local_ok, kcs_oracle_kind kind, const char *profile,
                          const kcs_call *call, double *ref, double *absref, double *scale_p,
                          kcs_error *err)
{
    int size = 1, rank = 0, rc = 0;
    kcs_stage_mark t0 = kcs_stage_begin();
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    /* Split only what every rank can split: a plain fp64 GEMM of the same
     * shape everywhere (the shape comes from the plan, so it agrees). */
    int split = local_ok && call && kind == KCS_ORACLE_FP64 && call->op == KCS_OP_GEMM &&
                size > 1 && call->m >= size && call->m * call->n <= INT32_MAX &&
                !kcs_nan_mask_declared(call->attrs); /* masked: kcs_oracle_run */
    int *counts = split ? malloc(2 * (size_t)size * sizeof *counts) : NULL;
    split = split && counts;
    int all = 0;
    MPI_Allreduce(&split, &all, 1, MPI_INT, MPI_MIN, comm);
    kcs_stage_add(KCS_STAGE_SYNC, t0);
    t0 = kcs_stage_begin();
    if (!all) {
        free(counts);
        rc = local_ok ? kcs_oracle_run(kind, profile, call, ref, absref, scale_p, err) : 0;
        kcs_stage_add(KCS_STAGE_ORACLE, t0);
        return rc;
    }
    int64_t m = call->m, n = call->n;
    int64_t r0 = block_start(m, rank, size), r1 = block_start(m, rank + 1, size);
    int bad = rows_fp64(call, r0, r1, ref, absref) != 0, any_bad = 0;
    kcs_stage_add(KCS_STAGE_ORACLE, t0);
    t0 = kcs_stage_begin();
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm);
    if (any_bad) { /* out of memory somewhere: everyone computes it all */
        free(counts);
        kcs_stage_add(KCS_STAGE_SYNC, t0);
        t0 = kcs_stage_begin();
        rc = kcs_oracle_run(kind, profile, call, ref, absref, scale_p, err);
        kcs_stage_add(KCS_STAGE_ORACLE, t0);
        return rc;
    }
    int *displs = counts + size;
    for (int q = 0; q < size; q++) {
        int64_t q0 = block_start(m, q, size), q1 = block_start(m, q + 1, size);
        counts[q] = (int)((q1 - q0) * n);
        displs[q] = (int)(q0 * n);
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ref, counts, displs, MPI_DOUBLE, comm);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, absref, counts, displs, MPI_DOUBLE, comm);
    free(counts);
    kcs_stage_add(KCS_STAGE_SYNC, t0);
    t0 = kcs_stage_begin();
    /* the normwise denominator: cheap, the same formula as gemm_fp64 */
    size_t mk = (size_t)(call->m * call->k), kn = (size_t)(call->k * call->n);
    double s = kcs_norm_fro(call->in[0], mk) * kcs_norm_fro(call->in[1], kn);
    if (call->in[2])
        s += kcs_norm_fro(call->in[2], (size_t)(m * n));
    *scale_p = s;
    kcs_stage_add(KCS_STAGE_ORACLE, t0);
    return 0;
}
