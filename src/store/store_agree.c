/* Agreement of the store's collective steps (store_writer.h): the first
 * failing rank's code and message become every rank's. Its own file so
 * that store.c and store_batch.c both call it without calling each other. */
#include <mpi.h>
#include <string.h>

#include "store_writer.h"

/* The first failing rank's code and message become every rank's. */
static int agree(MPI_Comm comm, int rank, int size, int rc, kcs_error *err)
{
    int mine = rc ? rank : size, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (rc && first > rank) /* cannot happen; keeps a local failure a failure */
        first = rank;
    if (first == size)
        return 0;
    struct {
        int code;
        char msg[KCS_ERRMSG_MAX];
    } m;
    memset(&m, 0, sizeof m);
    if (rank == first) {
        m.code = rc;
        if (err)
            memcpy(m.msg, err->msg, sizeof m.msg);
    }
    MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm);
    if (first == 0)
        return kcs_fail(err, m.code, "%s", m.msg);
    return kcs_fail(err, m.code, "rank %d: %s", first, m.msg);
}

int kcs_store_agree(kcs_store *st, int rc, kcs_error *err)
{
    return agree(st->comm, st->rank, st->size, rc, err);
}

int kcs_store_agree_comm(MPI_Comm comm, int rc, kcs_error *err)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    return agree(comm, rank, size, rc, err);
}
