/* What calib_sweep.c and calib_sweep_proto.c share (calib_sweep.h): the
 * plan of one point and the growing row table. */
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

int kcs_sweep_point_plan(const kcs_contract *c, kcs_op op, kcs_format f, kcs_shape sh,
                         const kcs_calib_run *run, int T, kcs_plan *plan, kcs_error *err)
{
    kcs_sweep sw = {.contract = 0, .op = op, .dtype_in = f, .dtype_out = c->dtype_out};
    sw.shapes[0] = sh;
    sw.n_shapes = 1;
    sw.trials = T;
    kcs_study s = {0};
    s.path = c->path;
    s.seed = run->seed;
    s.max_memory_mib = 8192;
    s.timeout_s = run->timeout_s;
    s.contracts[0] = (kcs_contract *)c;
    s.n_contracts = 1;
    s.sweeps = &sw;
    s.n_sweeps = 1;
    return kcs_plan_build(&s, plan, err);
}
