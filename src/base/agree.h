/* Agreement on local success/failure across ranks (agree.c). */
#ifndef KCS_AGREE_H
#define KCS_AGREE_H

#include <mpi.h>

#include "error.h"

/* Collective agreement on a local status: returns the lowest (most severe)
 * rc of all ranks, and copies the error message of the lowest failing rank
 * into err on every rank. */
int kcs_agree(MPI_Comm comm, int rc, kcs_error *err);

#endif
