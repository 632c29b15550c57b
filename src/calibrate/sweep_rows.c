/* The sweep's growing row table (calib_sweep.h), shared by calib_sweep.c
 * and calib_sweep_proto.c. */
#include "calib_sweep.h"

#include <stdlib.h>

int kcs_sweep_rows_room(kcs_sweep_row **rows, int *nr, int *cap, kcs_error *err)
{
    if (*nr < *cap)
        return 0;
    kcs_sweep_row *r2 = realloc(*rows, (size_t)*cap * 2 * sizeof **rows);
    if (!r2)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    *rows = r2;
    *cap *= 2;
    return 0;
}
