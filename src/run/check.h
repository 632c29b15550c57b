/* A study checked without running it (`kcs check`, and the first step of
 * `kcs run`): placement against the rank count, emulated profiles against
 * the ops and formats of the cases, the contracts' preconditions (shape
 * ranges, input distributions) for every case, the output path, and (when
 * asked) which backends and devices this node offers. Prints the plan:
 * ranks, cases x ranks, a work estimate. */
#ifndef KCS_CHECK_H
#define KCS_CHECK_H

#include <stdio.h>

#include "error.h"
#include "study.h"

typedef struct kcs_check_opts {
    int n_ranks;          /* ranks of the run; 0: the placement's length (1 for auto) */
    int no_placement;     /* every rank runs one plugin (kcs run --plugin): no placement */
    int fewer_ranks_ok;   /* placement entries beyond the rank count are no problem */
    const char *out_path; /* checked when not NULL */
    int force;            /* an existing output / journal may be replaced */
    int resume;           /* the output's journal must exist */
    int devices;          /* look at this node's backends and devices */
    int require_devices;  /* ... and count a missing one as a problem, not a warning */
    FILE *report;         /* plan, warnings and problems; NULL: none */
} kcs_check_opts;

/* The number of problems found (0: the study can run as asked); err holds
 * the first one (KCS_E_INVAL) when there are any. */
int kcs_study_check(const kcs_study *s, const kcs_plan *plan, const kcs_check_opts *o,
                    kcs_error *err);

/* The operation count of one call of a case (2mnk per GEMM, one per
 * element touched for the row ops): the plan's work estimate. */
double kcs_case_work(const kcs_case *c);

#endif
