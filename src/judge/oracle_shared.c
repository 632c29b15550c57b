/* The fp64 GEMM reference split by rows over the ranks (oracle_shared.h). */
#include "oracle_shared.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "nan_mask.h"
#include "norm_fro.h"
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

/* The normwise scale ||A||_F ||B||_F (+ ||C||_F) by the chunks of
 * norm_fro.h, the chunks (of A, then B, then C) split over the ranks and
 * allgathered: the bits of kcs_norm_fro on one rank. part holds one double
 * per chunk, counts 2 size ints. */
/* Lengths of A, B, C (0 without C), their chunk counts; returns the total. */
static size_t scale_chunks(const kcs_call *c, size_t len[3], size_t nc[3])
{
    len[0] = (size_t)(c->m * c->k);
    len[1] = (size_t)(c->k * c->n);
    len[2] = c->in[2] ? (size_t)(c->m * c->n) : 0;
    size_t total = 0;
    for (int a = 0; a < 3; a++)
        total += nc[a] = kcs_norm_nchunks(len[a]);
    return total;
}

static double shared_scale(MPI_Comm comm, const kcs_call *c, double *part, int *counts)
{
    int size = 1, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    size_t len[3], nc[3], total = scale_chunks(c, len, nc);
    int *displs = counts + size;
    for (int q = 0; q < size; q++) {
        displs[q] = (int)(total * (size_t)q / (size_t)size);
        counts[q] = (int)(total * (size_t)(q + 1) / (size_t)size) - displs[q];
    }
    kcs_stage_mark t0 = kcs_stage_begin();
    size_t g0 = (size_t)displs[rank], g1 = g0 + (size_t)counts[rank], base = 0;
    for (int a = 0; a < 3; a++) { /* this rank's chunks of array a */
        size_t lo = g0 > base ? g0 - base : 0, hi = g1 - base < nc[a] ? g1 - base : nc[a];
        if (g1 > base && lo < hi)
            kcs_norm_chunks(c->in[a], len[a], lo, hi, part + base + lo);
        base += nc[a];
    }
    kcs_stage_add(KCS_STAGE_ORACLE, t0);
    t0 = kcs_stage_begin();
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, part, counts, displs, MPI_DOUBLE, comm);
    kcs_stage_add(KCS_STAGE_SYNC, t0);
    double s = kcs_norm_from_chunks(part, nc[0]) * kcs_norm_from_chunks(part + nc[0], nc[1]);
    if (c->in[2])
        s += kcs_norm_from_chunks(part + nc[0] + nc[1], nc[2]);
    return s;
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
    double *part = NULL;
    if (split) {
        size_t len[3], nc[3], chunks = scale_chunks(call, len, nc);
        part = malloc((chunks + 1) * sizeof *part);
        split = chunks <= INT32_MAX;
    }
    split = split && counts && part;
    int all = 0;
    MPI_Allreduce(&split, &all, 1, MPI_INT, MPI_MIN, comm);
    kcs_stage_add(KCS_STAGE_SYNC, t0);
    t0 = kcs_stage_begin();
    if (!all) {
        free(counts);
        free(part);
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
        free(part);
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
    kcs_stage_add(KCS_STAGE_SYNC, t0);
    *scale_p = shared_scale(comm, call, part, counts); /* books its own time */
    free(counts);
    free(part);
    return 0;
}
