/* What calib_sweep.c, calib_sweep_proto.c and calib_sweep_elem.c share
 * (calib_sweep.h): the plan of one point, one kernel's calls over it, and
 * the growing row table. */
#include "calib_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "stats.h"

void kcs_sweep_bind_kernel(kcs_rank_binding *b, const char *variant, const char *acc,
                           const char *schedule, char *name, size_t len)
{
    snprintf(b->pl.variant, sizeof b->pl.variant, "%s", variant);
    if (acc) {
        kcs_acc_parse(acc, &b->pl.acc);
        b->pl.acc_set = 1;
    }
    if (schedule)
        kcs_schedule_parse(schedule, &b->pl.schedule);
    snprintf(name, len, "%s%s%s%s%s", variant, acc ? " " : "", acc ? acc : "",
             schedule ? " " : "", schedule ? schedule : "");
}

int kcs_sweep_out_alloc(kcs_sweep_out *o, int64_t n_dist, int T)
{
    size_t cells = (size_t)(n_dist * T) + 1;
    o->n_dist = n_dist;
    o->T = T;
    o->ok = calloc(cells, 1);
    o->flag = calloc(cells, 1);
    o->unclaimed = calloc(cells, 1);
    o->dig = calloc(cells, sizeof *o->dig);
    return o->ok && o->flag && o->unclaimed && o->dig;
}

void kcs_sweep_out_free(kcs_sweep_out *o)
{
    free(o->ok);
    free(o->flag);
    free(o->unclaimed);
    free(o->dig);
    memset(o, 0, sizeof *o);
}

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

int kcs_sweep_point_plan_dists(const kcs_contract *c, kcs_op op, kcs_format f, kcs_shape sh,
                               const kcs_dist *dists, int n_dists, const kcs_calib_run *run,
                               int T, kcs_plan *plan, kcs_error *err)
{
    return kcs_sweep_point_plan_out(c, op, f, c->dtype_out, sh, dists, n_dists, run, T, plan,
                                    err);
}

int kcs_sweep_point_plan_out(const kcs_contract *c, kcs_op op, kcs_format f, kcs_format fout,
                             kcs_shape sh, const kcs_dist *dists, int n_dists,
                             const kcs_calib_run *run, int T, kcs_plan *plan, kcs_error *err)
{
    kcs_sweep sw = {.contract = 0, .op = op, .dtype_in = f, .dtype_out = fout};
    sw.shapes[0] = sh;
    sw.n_shapes = 1;
    sw.trials = T;
    for (int i = 0; i < n_dists && i < KCS_MAX_DISTS; i++)
        sw.dists[sw.n_dists++] = dists[i];
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

int kcs_sweep_point_plan(const kcs_contract *c, kcs_op op, kcs_format f, kcs_shape sh,
                         const kcs_calib_run *run, int T, kcs_plan *plan, kcs_error *err)
{
    return kcs_sweep_point_plan_dists(c, op, f, sh, NULL, 0, run, T, plan, err);
}

int kcs_sweep_point_calls(const kcs_contract *c, const kcs_plan *plan, kcs_rank_binding *b,
                          const kcs_calib_run *run, int T, unsigned char *ok,
                          unsigned char *flag, unsigned char *unclaimed, uint64_t *dig,
                          kcs_error *err)
{
    kcs_case_memory mem = {0};
    int rc = 0;
    for (int64_t i = 0; i < plan->n_cases && !rc; i++) {
        const kcs_case *cs = &plan->cases[i];
        uint64_t digest = 0;
        kcs_trial_io io = {.study_seed = run->seed, .timeout_s = run->timeout_s,
                           .verbose = run->verbose, .memory = &mem, .input_digest = &digest,
                           .verdict_only = KCS_IO_PASS_FAIL};
        for (int t = 0; t < T && t < cs->trials && !rc; t++) {
            kcs_result_rec rec;
            if ((rc = kcs_protocol_trial(c, cs, t, b, &io, &rec, err)))
                break;
            if (strcmp(rec.status, "ok") && strcmp(rec.status, "raised"))
                continue;
            size_t at = (size_t)(i * T + t);
            int nc = !strcmp(rec.verdict, "not_claimed");
            ok[at] = 1;
            dig[at] = rec.output_digest;
            if (unclaimed)
                unclaimed[at] = (unsigned char)nc;
            flag[at] = !nc && strcmp(rec.verdict, "within_tolerance") != 0;
        }
    }
    return rc;
}

void kcs_sweep_row_fill(kcs_sweep_row *r, const char *contract, const char *kernel,
                        const char *klass, kcs_op op, kcs_format f, kcs_shape sh, int32_t trials,
                        int32_t flagged, int32_t inert)
{
    memset(r, 0, sizeof *r);
    snprintf(r->contract, sizeof r->contract, "%s", contract);
    snprintf(r->kernel, sizeof r->kernel, "%s", kernel);
    snprintf(r->klass, sizeof r->klass, "%s", klass);
    snprintf(r->op, sizeof r->op, "%s", kcs_op_name(op));
    snprintf(r->dtype_in, sizeof r->dtype_in, "%s", kcs_format_name(f));
    r->m = sh.m;
    r->n = sh.n;
    r->k = sh.k;
    r->trials = trials;
    r->flagged = flagged;
    r->inert = inert;
    r->rate = trials > 0 ? (double)flagged / trials : NAN;
    if (trials > 0)
        kcs_clopper_pearson(flagged, trials, 0.95, &r->ci_lo, &r->ci_hi);
    else
        r->ci_lo = r->ci_hi = NAN;
}
