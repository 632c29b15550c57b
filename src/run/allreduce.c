/* Allreduce with an explicit accumulator: ring, tree, library (see
 * allreduce.h for the order of additions). */
#include "allreduce.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"

#define TAG_RS 0x4B01
#define TAG_AG 0x4B02
#define TAG_RED 0x4B03
#define TAG_BC 0x4B04
#define KCS_ALLREDUCE_SEG ((int64_t)1 << 16)

static const char *const names[] = {"ring", "tree", "library"};

int kcs_allreduce_algo_parse(const char *text, kcs_allreduce_algo *algo_p)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(text, names[i]) == 0) {
            *algo_p = (kcs_allreduce_algo)i;
            return 0;
        }
    return KCS_E_INVAL;
}

const char *kcs_allreduce_algo_name(kcs_allreduce_algo algo)
{
    return algo >= 0 && algo <= KCS_ALLREDUCE_LIBRARY ? names[algo] : "?";
}

static int mpi_fail(kcs_error *err, int mrc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mrc, s, &len);
    return kcs_fail(err, KCS_E_MPI, "allreduce: %s failed: %.*s", what, len, s);
}

static int64_t chunk_lo(int64_t k, int P, int c)
{
    return (int64_t)(((__int128)k * c) / P);
}

/* Send ns doubles to next while receiving nr from prev, in nseg segments
 * of at most KCS_ALLREDUCE_SEG doubles (bounded messages). nseg is the same
 * on every rank (from the largest chunk), so segment i of a sender always
 * meets segment i of its receiver, with the same count. The order of
 * additions is per element and does not depend on the segmenting. */
static int exchange(const double *sb, int64_t ns, double *rb, int64_t nr, int64_t nseg, int next,
                    int prev, int tag, MPI_Comm comm)
{
    for (int64_t i = 0; i < nseg; i++) {
        int64_t off = i * KCS_ALLREDUCE_SEG;
        int64_t cs = ns - off < KCS_ALLREDUCE_SEG ? ns - off : KCS_ALLREDUCE_SEG;
        int64_t cr = nr - off < KCS_ALLREDUCE_SEG ? nr - off : KCS_ALLREDUCE_SEG;
        cs = cs < 0 ? 0 : cs;
        cr = cr < 0 ? 0 : cr;
        int mrc = MPI_Sendrecv(sb + (cs ? off : 0), (int)cs, MPI_DOUBLE, next, tag,
                               rb + (cr ? off : 0), (int)cr, MPI_DOUBLE, prev, tag, comm,
                               MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS)
            return mrc;
    }
    return MPI_SUCCESS;
}

static int ring(double *y, int64_t k, const kcs_acc *acc, MPI_Comm comm, int P, int r,
                double *tmp, kcs_error *err)
{
    int next = (r + 1) % P, prev = (r + P - 1) % P;
    int64_t maxc = (k + P - 1) / P; /* the largest chunk: floor bounds differ by <= 1 */
    int64_t nseg = maxc > 0 ? (maxc + KCS_ALLREDUCE_SEG - 1) / KCS_ALLREDUCE_SEG : 1;
    /* Reduce-scatter. Before step s, rank r holds the partial of chunk
     * (r - 1 - s) mod P, which started at rank (r - s) ... ; it sends that
     * partial on and receives chunk (r - 2 - s) mod P, adding its own x. */
    for (int s = 0; s < P - 1; s++) {
        int cs = ((r - 1 - s) % P + 2 * P) % P, cr = ((r - 2 - s) % P + 2 * P) % P;
        int64_t slo = chunk_lo(k, P, cs), shi = chunk_lo(k, P, cs + 1);
        int64_t rlo = chunk_lo(k, P, cr), rhi = chunk_lo(k, P, cr + 1);
        int mrc = exchange(y + slo, shi - slo, tmp, rhi - rlo, nseg, next, prev, TAG_RS, comm);
        if (mrc != MPI_SUCCESS)
            return mpi_fail(err, mrc, "MPI_Sendrecv (ring reduce-scatter)");
        for (int64_t i = rlo; i < rhi; i++)
            y[i] = kcs_acc_add(acc, tmp[i - rlo], y[i]); /* partial so far + own x */
    }
    /* Allgather: rank r owns finished chunk r; at step s it sends chunk
     * (r - s) mod P and receives chunk (r - 1 - s) mod P. */
    for (int s = 0; s < P - 1; s++) {
        int cs = ((r - s) % P + P) % P, cr = ((r - 1 - s) % P + 2 * P) % P;
        int64_t slo = chunk_lo(k, P, cs), shi = chunk_lo(k, P, cs + 1);
        int64_t rlo = chunk_lo(k, P, cr), rhi = chunk_lo(k, P, cr + 1);
        int mrc = exchange(y + slo, shi - slo, y + rlo, rhi - rlo, nseg, next, prev, TAG_AG,
                           comm);
        if (mrc != MPI_SUCCESS)
            return mpi_fail(err, mrc, "MPI_Sendrecv (ring allgather)");
    }
    return 0;
}

static int tree(double *y, int64_t k, const kcs_acc *acc, MPI_Comm comm, int P, int r,
                double *tmp, kcs_error *err)
{
    int top = 1;
    for (int d = 1; d < P; d <<= 1) {
        top = d << 1;
        if (r % (2 * d) == d) {
            int mrc = MPI_Send(y, (int)k, MPI_DOUBLE, r - d, TAG_RED, comm);
            if (mrc != MPI_SUCCESS)
                return mpi_fail(err, mrc, "MPI_Send (tree reduce)");
            break;
        }
        if (r % (2 * d) == 0 && r + d < P) {
            int mrc = MPI_Recv(tmp, (int)k, MPI_DOUBLE, r + d, TAG_RED, comm, MPI_STATUS_IGNORE);
            if (mrc != MPI_SUCCESS)
                return mpi_fail(err, mrc, "MPI_Recv (tree reduce)");
            for (int64_t i = 0; i < k; i++)
                y[i] = kcs_acc_add(acc, y[i], tmp[i]); /* own + received */
        }
    }
    /* Broadcast from rank 0 along the same binomial tree, widest step first. */
    for (int d = top >> 1; d >= 1; d >>= 1) {
        if (r % (2 * d) == 0 && r + d < P) {
            int mrc = MPI_Send(y, (int)k, MPI_DOUBLE, r + d, TAG_BC, comm);
            if (mrc != MPI_SUCCESS)
                return mpi_fail(err, mrc, "MPI_Send (tree broadcast)");
        } else if (r % (2 * d) == d) {
            int mrc = MPI_Recv(y, (int)k, MPI_DOUBLE, r - d, TAG_BC, comm, MPI_STATUS_IGNORE);
            if (mrc != MPI_SUCCESS)
                return mpi_fail(err, mrc, "MPI_Recv (tree broadcast)");
        }
    }
    return 0;
}

int kcs_allreduce(const double *x, double *y, int64_t k, kcs_allreduce_algo algo,
                  const kcs_acc *acc, MPI_Comm comm, kcs_error *err)
{
    if (k < 0 || k > INT_MAX)
        return kcs_fail(err, KCS_E_INVAL, "allreduce: k=%lld out of range", (long long)k);
    int P, r;
    int mrc = MPI_Comm_size(comm, &P);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_rank(comm, &r);
    if (mrc != MPI_SUCCESS)
        return mpi_fail(err, mrc, "MPI_Comm_size/rank");
    if (algo == KCS_ALLREDUCE_LIBRARY) {
        mrc = MPI_Allreduce(x == y ? MPI_IN_PLACE : x, y, (int)k, MPI_DOUBLE, MPI_SUM, comm);
        if (mrc != MPI_SUCCESS)
            return mpi_fail(err, mrc, "MPI_Allreduce");
        for (int64_t i = 0; i < k; i++)
            y[i] = kcs_acc_round(acc, y[i]);
        return 0;
    }
    if (algo != KCS_ALLREDUCE_RING && algo != KCS_ALLREDUCE_TREE)
        return kcs_fail(err, KCS_E_INVAL, "allreduce: unknown algorithm %d", (int)algo);
    double *tmp = malloc((size_t)(k + 1) * sizeof *tmp);
    if (!tmp)
        return kcs_fail(err, KCS_E_NOMEM, "allreduce: out of memory (k=%lld)", (long long)k);
    for (int64_t i = 0; i < k; i++)
        y[i] = kcs_acc_round(acc, x[i]);
    int rc = algo == KCS_ALLREDUCE_RING ? ring(y, k, acc, comm, P, r, tmp, err)
                                        : tree(y, k, acc, comm, P, r, tmp, err);
    free(tmp);
    return rc;
}
