/* kcs calibrate --sweep: see calib_sweep.h. */
#include "calib_sweep.h"
#include "calib_sweep_elem.h"
#include "calib_sweep_ops.h"
#include "calib_sweep_proto.h"
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "precondition.h"
#include "progress.h"
#include "protocol.h"
#include "store_h5.h"

const kcs_field *kcs_sweep_row_fields(int *n_p)
{
    static const kcs_field f[] = {
        KCS_FIELD(kcs_sweep_row, contract, KCS_FIELD_STR),
        KCS_FIELD(kcs_sweep_row, kernel, KCS_FIELD_STR),
        KCS_FIELD(kcs_sweep_row, klass, KCS_FIELD_STR),
        KCS_FIELD(kcs_sweep_row, op, KCS_FIELD_STR),
        KCS_FIELD(kcs_sweep_row, dtype_in, KCS_FIELD_STR),
        KCS_FIELD(kcs_sweep_row, m, KCS_FIELD_I64),
        KCS_FIELD(kcs_sweep_row, n, KCS_FIELD_I64),
        KCS_FIELD(kcs_sweep_row, k, KCS_FIELD_I64),
        KCS_FIELD(kcs_sweep_row, trials, KCS_FIELD_I32),
        KCS_FIELD(kcs_sweep_row, flagged, KCS_FIELD_I32),
        KCS_FIELD(kcs_sweep_row, inert, KCS_FIELD_I32),
        KCS_FIELD(kcs_sweep_row, rate, KCS_FIELD_F64),
        KCS_FIELD(kcs_sweep_row, ci_lo, KCS_FIELD_F64),
        KCS_FIELD(kcs_sweep_row, ci_hi, KCS_FIELD_F64),
    };
    *n_p = (int)(sizeof f / sizeof f[0]);
    return f;
}

typedef struct kernel_def {
    const char *variant; /* native | own | calib (the contract's bad) */
    const char *acc;     /* NULL: the contract's */
    const char *schedule;
    int bad;
} kernel_def;

static const kernel_def kernels[] = {
    {"own", "fp32", "sequential", 0},   {"own", "fp32", "pairwise", 0},
    {"own", "fp32", "blocked:64", 0},   {"own", "fp32", "splitk:4", 0},
    {"own", "fp32:rz", "sequential", 0}, {"own", "fp32:rz", "pairwise", 0},
    {"own", "fp64", "sequential", 0},   {"native", NULL, NULL, 0},
    {"own", "bf16", "sequential", 1},   {"own", "fp16", "sequential", 1},
    {"own", "bits:14", "sequential", 1}, {"own", "bits:16", "sequential", 1},
    {"own", "bits:18", "sequential", 1}, {"own", "bf16", "pairwise", 1},
    {"calib", NULL, NULL, 2}, /* the contract's own calibration bad kernel */
};
#define N_KERNELS (sizeof kernels / sizeof kernels[0])
#define MAX_SWEEP_KERNELS 32 /* the longest catalogue (calib_sweep_ops.c too) */

/* The narrow accumulators are the mechanism of the contracts that bind the
 * accumulation (PRC, ORD); under a CMP or EXC contract, whose mechanism is
 * another, they are reported as off-target and not counted (C-PRC-01
 * catches them at every point). */
static int counted_bad(const kcs_contract *c, const kcs_sweep_kdef *kd)
{
    if (kd->targets)
        return kcs_sweep_ops_counted(c, kd);
    if (kd->bad == 2)
        return 1;
    return kd->bad == 1 && (!strcmp(c->family, "PRC") || !strcmp(c->family, "ORD"));
}

/* One point for nk kernels (bindings bs): the contract's protocol at
 * shape sh, dtype f, op, T trials over every distribution it measures,
 * trial by trial, each trial's inputs generated once and handed (a fresh
 * copy each) to every kernel in turn. Per kernel j, pos[j]: ok[t]: trial
 * t ran (status ok or raised) for every distribution; flag[t]: some
 * distribution's call was not within tolerance; dig[i * T + t]: the
 * output digest of distribution i's call in trial t. */
static int point(const kcs_contract *c, kcs_op op, kcs_format f, kcs_format fout, kcs_shape sh,
                 kcs_rank_binding *bs, int nk, const kcs_calib_run *run, int T,
                 kcs_sweep_out *pos, kcs_progress *prog, int64_t done, kcs_error *err)
{
    kcs_plan plan;
    int rc = kcs_sweep_point_plan_out(c, op, f, fout, sh, NULL, 0, run, T, &plan, err);
    if (rc)
        return rc;
    /* one replay memory per kernel for the point's distributions (one
     * shape): a kernel that hands the first distribution's output back
     * for the second one's inputs is replaying, whichever case it came
     * from */
    kcs_case_memory *mem = calloc((size_t)nk, sizeof *mem);
    rc = mem ? 0 : kcs_fail(err, KCS_E_NOMEM, "out of memory");
    for (int j = 0; j < nk && !rc; j++) {
        kcs_sweep_out *po = &pos[j];
        if (!kcs_sweep_out_alloc(po, plan.n_cases, T)) {
            rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
            break;
        }
        memset(po->ok, plan.n_cases > 0, (size_t)T);
        memset(po->unclaimed, plan.n_cases > 0, (size_t)T);
    }
    kcs_inputs_cache cache = {0};
    int64_t steps = plan.n_cases * T, step = 0;
    for (int64_t i = 0; i < plan.n_cases && !rc; i++) {
        const kcs_case *cs = &plan.cases[i];
        uint64_t digest = 0;
        kcs_trial_io io = {.study_seed = run->seed, .timeout_s = run->timeout_s,
                           .verbose = run->verbose, .input_digest = &digest,
                           .verdict_only = KCS_IO_PASS_FAIL, .inputs_cache = &cache};
        for (int t = 0; t < T && !rc; t++, step++) {
            kcs_progress_part(prog, done, (double)step / (double)(steps > 0 ? steps : 1));
            for (int j = 0; j < nk && !rc; j++) {
                kcs_sweep_out *po = &pos[j];
                kcs_result_rec rec;
                if (t >= cs->trials) {
                    po->ok[t] = 0;
                    continue;
                }
                io.memory = &mem[j];
                rc = kcs_protocol_trial(c, cs, t, &bs[j], &io, &rec, err);
                if (rc)
                    break;
                if (strcmp(rec.status, "ok") && strcmp(rec.status, "raised")) {
                    po->ok[t] = 0;
                    continue;
                }
                po->dig[i * T + t] = rec.output_digest;
                /* not_claimed: the contract does not bind this kernel
                 * (precondition.declares), neither a pass nor a flag */
                int nc = !strcmp(rec.verdict, "not_claimed");
                if (!nc)
                    po->unclaimed[t] = 0;
                if (!nc && strcmp(rec.verdict, "within_tolerance"))
                    po->flag[t] = 1;
            }
        }
    }
    kcs_inputs_cache_free(&cache);
    free(mem);
    kcs_plan_free(&plan);
    if (rc)
        for (int j = 0; j < nk; j++)
            kcs_sweep_out_free(&pos[j]);
    return rc;
}

/* Did the defect show in trial t: does some distribution's output differ
 * from every conforming kernel's output of the same inputs? A bad kernel
 * whose output is bit for bit a conforming kernel's cannot be told apart
 * by any check, and need not be: there it computed a conforming result. */
static int manifest(const kcs_sweep_out *bad, const kcs_sweep_out *conf, int n_conf, int T,
                    int t)
{
    for (int64_t i = 0; i < bad->n_dist; i++) {
        int same = 0;
        for (int j = 0; j < n_conf && !same; j++)
            same = conf[j].ok && conf[j].ok[t] && conf[j].n_dist == bad->n_dist &&
                   conf[j].dig[i * T + t] == bad->dig[i * T + t];
        if (!same)
            return 1;
    }
    return 0;
}

static int bind_kernel(const kcs_contract *c, const kcs_sweep_kdef *kd, kcs_rank_binding *b,
                       char *name, size_t name_len, kcs_error *err)
{
    int rc = kcs_calib_bind("cpu", 0, NULL, 0, b, NULL, err);
    if (rc)
        return rc;
    if (!strncmp(kd->variant, "calib:", 6)) { /* another contract's calibration kernel */
        snprintf(b->pl.variant, sizeof b->pl.variant, "%s", kd->variant);
        snprintf(name, name_len, "%s", b->pl.variant);
        return 0;
    }
    if (!strcmp(kd->variant, "calib")) { /* the contract's calibration bad or good kernel */
        snprintf(b->pl.variant, sizeof b->pl.variant, "calib:%s:%s", c->id,
                 kd->bad ? "bad" : "good");
        snprintf(name, name_len, "%s", b->pl.variant);
        return 0;
    }
    kcs_sweep_bind_kernel(b, kd->variant, kd->acc, kd->schedule, name, name_len);
    return 0;
}

/* The shape of a point at k: m = n = 4 (dot: 1 x 1; reduce_sum, norm: n = 1),
 * moved into the precondition's shape classes where it has any. */
static kcs_shape sweep_shape(const kcs_contract *c, kcs_op op, int64_t k)
{
    int64_t mn = op == KCS_OP_DOT ? 1 : 4;
    kcs_shape sh = {mn, op == KCS_OP_GEMM ? mn : 1, k, 0};
    if (c->shape_mult[0] > 1)
        sh.m = kcs_precondition_fit(c, 0, sh.m);
    if (c->shape_mult[1] > 1)
        sh.n = kcs_precondition_fit(c, 1, sh.n);
    return sh;
}

/* The points of contract c (0 when c is not swept): gemm, reduce_sum, dot
 * or norm over k here (m = n = 4; dot 1 x 1; reduce_sum and norm n = 1); softmax, layernorm, attention and
 * reduce_sum under declared subnormal semantics in calib_sweep_ops.c.
 * *ops_p: 1 when the latter serve c (their kernel catalogue too). */
static int sweep_points(const kcs_contract *c, const kcs_sweep_opts *o, kcs_sweep_point *pts,
                        int max_ks, int *ops_p)
{
    const kcs_op sweep_ops[] = {KCS_OP_GEMM, KCS_OP_REDUCE_SUM, KCS_OP_DOT, KCS_OP_NORM};
    int nops = kcs_sweep_ops_points(c, o, pts, max_ks);
    *ops_p = nops > 0;
    if (nops > 0)
        return nops;
    if (c->protocol != KCS_PROTO_ORACLE)
        return 0; /* repeat / batch-invariance contracts: not power curves of k */
    kcs_op op = KCS_OP_COUNT;
    for (size_t j = 0; j < sizeof sweep_ops / sizeof sweep_ops[0] && op == KCS_OP_COUNT; j++)
        if (c->ops & (1u << sweep_ops[j]))
            op = sweep_ops[j];
    if (op == KCS_OP_COUNT || kcs_contract_injects_nonfinite(c) || c->attrs[0])
        return 0;
    int64_t kmax = c->k_max;
    if (o->max_k > 0 && o->max_k < kmax)
        kmax = o->max_k;
    int n = 0;
    for (int64_t k = c->k_min > 1 ? c->k_min : 1; k <= kmax && n < max_ks;) {
        /* k in the precondition's shape class (multiple_of; k itself without one) */
        int64_t kc = kcs_precondition_fit(c, 2, k);
        if (kc > kmax && c->shape_mult[2] > 1)
            kc -= c->shape_mult[2]; /* the multiple below --max-k */
        kcs_shape sh = sweep_shape(c, op, kc);
        kcs_error pe = {0};
        if (kc > 0 && kc <= kmax && !kcs_precondition_op_shape(c, op, &sh, &pe) && kc >= o->min_k &&
            (n == 0 || kc > pts[n - 1].sh.k))
            pts[n++] = (kcs_sweep_point){op, sh};
        int64_t next = k * (o->k_factor > 1 ? o->k_factor : 4);
        k = (k < kmax && next > kmax) ? kmax : next;
    }
    return n;
}

/* Whether narrow-output state s of entry e is the first of its (dtype_in,
 * dtype_out) pair and c admits that pair for op. */
static int narrow_pair(const kcs_contract *c, kcs_op op, const kcs_calib_entry *e, int s)
{
    const kcs_calib_narrow *a = &e->narrow[s];
    for (int j = 0; j < s; j++)
        if (e->narrow[j].dtype_in == a->dtype_in && e->narrow[j].dtype_out == a->dtype_out)
            return 0;
    kcs_error pe = {0};
    return (op == KCS_OP_GEMM || op == KCS_OP_BATCHED_GEMM) &&
           !kcs_precondition_dtype_out(c, a->dtype_out, &pe) &&
           (kcs_precondition_op_dtypes(c, op) & (1u << a->dtype_in));
}

/* The narrow-output states of c's calibration (calibration.yaml narrow:)
 * at the gemm points ks: per (dtype_in, dtype_out) pair, the gemm
 * catalogue's conforming kernels and the pair's good states as the
 * conforming kernels, its bad states as the bad ones, each row named
 * "<kernel> > <dtype_out>". */
static int narrow_sweep(const kcs_contract *c, const kcs_sweep_point *ks, int nk,
                        const kcs_calib_run *run, int T, kcs_sweep_row **rows, int *nr,
                        int *cap, int *misses, kcs_progress *prog, int64_t *done,
                        kcs_error *err)
{
    const kcs_calib_entry *e = kcs_calib_find(c->id);
    int rc = 0;
    for (int s0 = 0; e && s0 < e->n_narrow && !rc; s0++) {
        const kcs_calib_narrow *a = &e->narrow[s0];
        int idx[KCS_CALIB_MAX_NARROW], ns = 0;
        for (int pass = 1; pass >= 0; pass--) /* the good states first */
            for (int j = 0; j < e->n_narrow; j++)
                if (e->narrow[j].dtype_in == a->dtype_in &&
                    e->narrow[j].dtype_out == a->dtype_out && e->narrow[j].pass == pass)
                    idx[ns++] = j;
        for (int ki = 0; ki < nk && !rc; ki++) {
            if (!narrow_pair(c, ks[ki].op, e, s0))
                continue;
            kcs_rank_binding bs[MAX_SWEEP_KERNELS];
            kcs_sweep_out pos[MAX_SWEEP_KERNELS], conf[MAX_SWEEP_KERNELS];
            char names[MAX_SWEEP_KERNELS][40];
            int nb = 0, n_conf = 0, bad_of[MAX_SWEEP_KERNELS];
            memset(pos, 0, sizeof pos);
            memset(conf, 0, sizeof conf);
            /* the gemm catalogue's conforming kernels, each rounding its
             * result once to dtype_out */
            for (size_t kk = 0; kk < N_KERNELS && !rc; kk++) {
                if (kernels[kk].bad)
                    continue;
                if ((rc = kcs_calib_bind("cpu", 0, NULL, 0, &bs[nb], NULL, err)))
                    break;
                char nm[40];
                kcs_sweep_bind_kernel(&bs[nb], kernels[kk].variant, kernels[kk].acc,
                                      kernels[kk].schedule, nm, sizeof nm);
                snprintf(names[nb], sizeof names[nb], "%.30s > %s", nm,
                         kcs_format_name(a->dtype_out));
                bad_of[nb++] = 0;
            }
            for (int j = 0; j < ns && !rc; j++) {
                if ((rc = kcs_calib_bind("cpu", 0, NULL, 0, &bs[nb], NULL, err)))
                    break;
                snprintf(bs[nb].pl.variant, sizeof bs[nb].pl.variant, "calib:%s:%s", c->id,
                         e->narrow[idx[j]].kernel);
                snprintf(names[nb], sizeof names[nb], "calib:%s:%s > %s", c->id,
                         e->narrow[idx[j]].kernel, kcs_format_name(a->dtype_out));
                bad_of[nb++] = !e->narrow[idx[j]].pass;
            }
            if (!rc)
                rc = point(c, ks[ki].op, a->dtype_in, a->dtype_out, ks[ki].sh, bs, nb, run, T,
                           pos, prog, *done, err);
            for (int j = 0; j < nb; j++)
                kcs_binding_close(&bs[j]);
            for (int j = 0; j < nb && !rc; j++) {
                int bad = bad_of[j], ran = 0, fl = 0, inert = 0;
                kcs_sweep_out po = pos[j];
                memset(&pos[j], 0, sizeof pos[j]);
                for (int t = 0; t < T; t++) {
                    if (!po.ok[t])
                        continue;
                    if (bad && !manifest(&po, conf, n_conf, T, t)) {
                        inert++;
                        continue;
                    }
                    ran++;
                    fl += po.flag[t];
                }
                if (bad)
                    kcs_sweep_out_free(&po);
                else
                    conf[n_conf++] = po;
                if (ran + inert == 0 || (rc = kcs_sweep_rows_room(rows, nr, cap, err)))
                    continue;
                kcs_sweep_row *r = &(*rows)[(*nr)++];
                kcs_sweep_row_fill(r, c->id, names[j], bad ? "bad" : "conforming", ks[ki].op,
                                   a->dtype_in, ks[ki].sh, ran, fl, inert);
                *misses += kcs_sweep_row_missed(r);
            }
            for (int j = 0; j < nb; j++)
                kcs_sweep_out_free(&pos[j]);
            for (int j = 0; j < n_conf; j++)
                kcs_sweep_out_free(&conf[j]);
            kcs_progress_step(prog, ++*done);
        }
    }
    return rc;
}

int kcs_calib_sweep(kcs_contract *const *cs, int n, const kcs_calib_run *run,
                    const kcs_sweep_opts *o, kcs_sweep_row **rows_p, int *n_rows_p,
                    int *misses_p, kcs_error *err)
{
    int cap = 256, nr = 0, misses = 0, rc = 0, T = o->trials;
    kcs_sweep_row *rows = malloc((size_t)cap * sizeof *rows);
    if (!rows)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    enum { MAX_KS = 64 };
    int64_t total = 0, done = 0;
    for (int ci = 0; ci < n; ci++) {
        kcs_sweep_point ks[MAX_KS];
        int by_ops = 0;
        int nk = sweep_points(cs[ci], o, ks, MAX_KS, &by_ops), proto = 0;
        if (nk == 0) { /* the protocol and exceptional-value contracts; elementwise exp */
            kcs_shape pts[MAX_KS];
            nk = kcs_sweep_proto_points(cs[ci], o, pts, MAX_KS);
            if (nk == 0)
                nk = kcs_sweep_elem_points(cs[ci], o, pts, MAX_KS);
            proto = 1;
        }
        const kcs_calib_entry *e = kcs_calib_find(cs[ci]->id);
        for (int ki = 0; ki < nk; ki++) { /* the formats each point's op admits */
            uint32_t fm = proto ? cs[ci]->dtype_in : kcs_precondition_op_dtypes(cs[ci], ks[ki].op);
            for (int f = 0; f < KCS_FMT_COUNT; f++)
                total += (fm >> f) & 1u;
            for (int s = 0; !proto && e && s < e->n_narrow; s++) /* narrow-output pairs */
                total += narrow_pair(cs[ci], ks[ki].op, e, s);
        }
    }
    kcs_progress prog;
    kcs_progress_start(&prog, o->progress, total, "sweep points");
    for (int ci = 0; ci < n && !rc; ci++) {
        const kcs_contract *c = cs[ci];
        kcs_sweep_point ks[MAX_KS];
        int by_ops;
        int nk = sweep_points(c, o, ks, MAX_KS, &by_ops);
        if (nk == 0) { /* calib_sweep_proto.c: nothing when c is not one of them */
            int first = nr;
            rc = kcs_sweep_proto_run(c, run, o, &rows, &nr, &cap, &prog, &done, err);
            if (!rc) /* calib_sweep_elem.c: likewise */
                rc = kcs_sweep_elem_run(c, run, o, &rows, &nr, &cap, &prog, &done, err);
            for (int i = first; i < nr; i++)
                misses += kcs_sweep_row_missed(&rows[i]);
            continue;
        }
        for (int ki = 0; ki < nk && !rc; ki++) {
            kcs_op op = ks[ki].op;
            kcs_shape sh = ks[ki].sh;
            size_t n_kernels = N_KERNELS;
            kcs_sweep_kdef gemm_table[N_KERNELS];
            for (size_t kk = 0; kk < N_KERNELS; kk++)
                gemm_table[kk] = (kcs_sweep_kdef){kernels[kk].variant, kernels[kk].acc,
                                                  kernels[kk].schedule, kernels[kk].bad, NULL};
            const kcs_sweep_kdef *table =
                by_ops ? kcs_sweep_ops_kernels(op, &n_kernels) : gemm_table;
            for (int f = 0; f < KCS_FMT_COUNT && !rc; f++) {
                if (!(kcs_precondition_op_dtypes(c, op) & (1u << f)))
                    continue;
                kcs_sweep_out conf[MAX_SWEEP_KERNELS], pos[MAX_SWEEP_KERNELS];
                kcs_rank_binding bs[MAX_SWEEP_KERNELS];
                const kcs_sweep_kdef *kds[MAX_SWEEP_KERNELS];
                char names[MAX_SWEEP_KERNELS][40];
                int n_conf = 0, nb = 0;
                memset(conf, 0, sizeof conf);
                memset(pos, 0, sizeof pos);
                for (size_t kk = 0; kk < n_kernels && kk < MAX_SWEEP_KERNELS && !rc; kk++) {
                    const kcs_sweep_kdef *kd = &table[kk];
                    if (!strcmp(kd->variant, "calib") && !kcs_calib_find(c->id))
                        continue;
                    if (!strncmp(kd->variant, "calib:", 6) && /* the own one is "calib" */
                        !strncmp(kd->variant + 6, c->id, strlen(c->id)))
                        continue;
                    if ((rc = bind_kernel(c, kd, &bs[nb], names[nb], sizeof names[nb], err)))
                        break;
                    kds[nb++] = kd;
                }
                if (!rc)
                    rc = point(c, op, (kcs_format)f, c->dtype_out, sh, bs, nb, run, T, pos, &prog,
                               done, err);
                for (int j = 0; j < nb; j++)
                    kcs_binding_close(&bs[j]);
                /* the rows, in catalogue order: a bad kernel's trial counts
                 * where its output differs from every conforming kernel's
                 * (the conforming ones come first in every catalogue) */
                for (int j = 0; j < nb && !rc; j++) {
                    const kcs_sweep_kdef *kd = kds[j];
                    kcs_sweep_out po = pos[j];
                    memset(&pos[j], 0, sizeof pos[j]);
                    int ran = 0, fl = 0, inert = 0, uncl = 0;
                    for (int t = 0; t < T; t++) {
                        if (!po.ok[t])
                            continue;
                        uncl += po.unclaimed[t];
                        if (kd->bad && !manifest(&po, conf, n_conf, T, t)) {
                            inert++;
                            continue;
                        }
                        ran++;
                        fl += po.flag[t];
                    }
                    if (kd->bad)
                        kcs_sweep_out_free(&po);
                    else
                        conf[n_conf++] = po;
                    if (ran + inert == 0 || (rc = kcs_sweep_rows_room(&rows, &nr, &cap, err)))
                        continue;
                    kcs_sweep_row *r = &rows[nr++];
                    int counted = !kd->bad || counted_bad(c, kd);
                    /* a conforming kernel the contract does not bind (it
                     * does not declare what precondition.declares asks):
                     * every trial must be not_claimed; the row counts
                     * those that were not */
                    int unbound = !kd->bad && ran > 0 && uncl > 0;
                    kcs_sweep_row_fill(r, c->id, names[j],
                                       unbound           ? "unclaimed"
                                       : !kd->bad        ? "conforming"
                                       : counted         ? "bad"
                                                         : "off-target",
                                       op, (kcs_format)f, sh, ran, unbound ? ran - uncl : fl, inert);
                    misses += kcs_sweep_row_missed(r);
                }
                for (int j = 0; j < nb; j++)
                    kcs_sweep_out_free(&pos[j]);
                for (int j = 0; j < n_conf; j++)
                    kcs_sweep_out_free(&conf[j]);
                kcs_progress_step(&prog, ++done);
            }
        }
        if (!rc && !by_ops)
            rc = narrow_sweep(c, ks, nk, run, T, &rows, &nr, &cap, &misses, &prog, &done, err);
    }
    kcs_progress_end(&prog);
    if (rc) {
        free(rows);
        return rc;
    }
    *rows_p = rows;
    *n_rows_p = nr;
    *misses_p = misses;
    return 0;
}

int kcs_sweep_row_missed(const kcs_sweep_row *r)
{
    if (!strcmp(r->klass, "conforming") || !strcmp(r->klass, "unclaimed"))
        return r->flagged > 0;
    return !strcmp(r->klass, "bad") && r->trials > 0 && r->rate < 0.99;
}

int kcs_store_sweep_write(const char *path, const kcs_sweep_row *rows, int n,
                          const char *command_line, kcs_error *err)
{
    kcs_h5_quiet();
    if (access(path, F_OK) == 0)
        return kcs_fail(err, KCS_E_EXISTS, "%s: exists; refusing to overwrite", path);
    hid_t file = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0)
        return kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot create");
    int rc = 0, nf;
    if (kcs_h5_put_str(file, "schema", "kcs") < 0 ||
        kcs_h5_put_str(file, "content", "calibration_sweep") < 0 ||
        kcs_h5_put_str(file, "command_line", command_line ? command_line : "") < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, "/", "cannot write attributes");
    const kcs_field *f = kcs_sweep_row_fields(&nf);
    hid_t t = kcs_h5_compound(f, nf, sizeof *rows);
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL), d = -1;
    if (!rc && (t < 0 || sp < 0))
        rc = kcs_h5_fail(err, KCS_E_INTERNAL, path, "/calibration_sweep", "cannot build type");
    else if (!rc && (d = H5Dcreate2(file, "/calibration_sweep", t, sp, H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, "/calibration_sweep", "cannot create");
    else if (!rc && n > 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, "/calibration_sweep", "write failed");
    if (d >= 0)
        H5Dclose(d);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (H5Fclose(file) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "closing the file failed");
    if (rc)
        remove(path);
    return rc;
}
