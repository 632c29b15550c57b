/* Agreement on local success/failure across ranks, so that no rank waits
 * in a collective that a failed rank will never enter. */
#include <string.h>

#include "agree.h"

int kcs_agree(MPI_Comm comm, int rc, kcs_error *err)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int mine[2] = {rc, rank}, worst[2];
    /* MPI_MINLOC on (rc, rank): the most negative rc, lowest rank on ties. */
    MPI_Allreduce(mine, worst, 1, MPI_2INT, MPI_MINLOC, comm);
    if (worst[0] == 0)
        return 0;
    char msg[KCS_ERRMSG_MAX];
    if (rank == worst[1])
        memcpy(msg, err->msg, sizeof msg);
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, worst[1], comm);
    if (rank != worst[1] || rc == 0) {
        memcpy(err->msg, msg, sizeof msg);
    }
    err->code = worst[0];
    return worst[0];
}
