/* kcs calibrate --sweep: see calib_sweep.h. */
#include "calib_sweep.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "precondition.h"
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
    {"calib", NULL, NULL, 2}, /* the contract's calibration bad kernel: defective only
                                  above its own k (or m*n) threshold, so reported, not
                                  counted as a miss where it is still correct */
};

/* One point: the contract's protocol at shape sh, dtype f, op, T trials
 * over every distribution it measures; a trial is flagged when any of its
 * distributions' calls is not within tolerance. */
static int point(const kcs_contract *c, kcs_op op, kcs_format f, kcs_shape sh,
                 kcs_rank_binding *b, const kcs_calib_run *run, int T, int *ran_p,
                 int *flagged_p, kcs_error *err)
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
    kcs_plan plan;
    int rc = kcs_plan_build(&s, &plan, err);
    if (rc)
        return rc;
    unsigned char *flag = calloc((size_t)T, 1), *ok = calloc((size_t)T, 1);
    if (!flag || !ok) {
        free(flag);
        free(ok);
        kcs_plan_free(&plan);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < plan.n_cases && !rc; i++) {
        const kcs_case *cs = &plan.cases[i];
        kcs_case_memory mem = {0};
        uint64_t digest = 0;
        kcs_trial_io io = {.study_seed = run->seed, .timeout_s = run->timeout_s,
                           .verbose = run->verbose, .memory = &mem, .input_digest = &digest};
        for (int t = 0; t < cs->trials && t < T && !rc; t++) {
            kcs_result_rec rec;
            rc = kcs_protocol_trial(c, cs, t, b, &io, &rec, err);
            if (rc)
                break;
            if (strcmp(rec.status, "ok") && strcmp(rec.status, "raised"))
                continue;
            ok[t] = 1;
            if (strcmp(rec.verdict, "within_tolerance"))
                flag[t] = 1;
        }
    }
    kcs_plan_free(&plan);
    int ran = 0, fl = 0;
    for (int t = 0; t < T; t++) {
        ran += ok[t];
        fl += ok[t] && flag[t];
    }
    free(flag);
    free(ok);
    *ran_p = ran;
    *flagged_p = fl;
    return rc;
}

int kcs_calib_sweep(kcs_contract *const *cs, int n, const kcs_calib_run *run,
                    const kcs_sweep_opts *o, kcs_sweep_row **rows_p, int *n_rows_p,
                    int *misses_p, kcs_error *err)
{
    int cap = 256, nr = 0, misses = 0, rc = 0;
    kcs_sweep_row *rows = malloc((size_t)cap * sizeof *rows);
    if (!rows)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    const kcs_op sweep_ops[] = {KCS_OP_GEMM, KCS_OP_REDUCE_SUM, KCS_OP_DOT};
    for (int ci = 0; ci < n && !rc; ci++) {
        const kcs_contract *c = cs[ci];
        if (c->protocol != KCS_PROTO_ORACLE)
            continue; /* repeat / batch-invariance contracts: not power curves of k */
        kcs_op op = KCS_OP_COUNT;
        for (size_t j = 0; j < 3 && op == KCS_OP_COUNT; j++)
            if (c->ops & (1u << sweep_ops[j]))
                op = sweep_ops[j];
        if (op == KCS_OP_COUNT || c->special_nan > 0 || c->special_inf > 0 || c->attrs[0])
            continue;
        int64_t kmax = c->k_max;
        if (o->max_k > 0 && o->max_k < kmax)
            kmax = o->max_k;
        int64_t mn = op == KCS_OP_DOT ? 1 : 4;
        for (int64_t k = c->k_min > 1 ? c->k_min : 1; k <= kmax && !rc;) {
            kcs_shape sh = {mn, op == KCS_OP_GEMM ? mn : 1, k, 0};
            if (kcs_precondition_shape_ok(c, &sh)) {
                for (int f = 0; f < KCS_FMT_COUNT && !rc; f++) {
                    if (!(c->dtype_in & (1u << f)))
                        continue;
                    for (size_t ki = 0; ki < sizeof kernels / sizeof kernels[0] && !rc; ki++) {
                        const kernel_def *kd = &kernels[ki];
                        kcs_rank_binding b;
                        if ((rc = kcs_calib_bind("cpu", 0, NULL, 0, &b, NULL, err)))
                            break;
                        char name[40];
                        if (!strcmp(kd->variant, "calib")) {
                            if (!kcs_calib_find(c->id)) {
                                kcs_binding_close(&b);
                                continue;
                            }
                            snprintf(b.pl.variant, sizeof b.pl.variant, "calib:%s:bad", c->id);
                            snprintf(name, sizeof name, "calib:%s:bad", c->id);
                        } else {
                            snprintf(b.pl.variant, sizeof b.pl.variant, "%s", kd->variant);
                            if (kd->acc) {
                                kcs_acc_parse(kd->acc, &b.pl.acc);
                                b.pl.acc_set = 1;
                            }
                            if (kd->schedule)
                                kcs_schedule_parse(kd->schedule, &b.pl.schedule);
                            snprintf(name, sizeof name, "%s%s%s%s%s", kd->variant,
                                     kd->acc ? " " : "", kd->acc ? kd->acc : "",
                                     kd->schedule ? " " : "", kd->schedule ? kd->schedule : "");
                        }
                        int ran = 0, fl = 0;
                        rc = point(c, op, (kcs_format)f, sh, &b, run, o->trials, &ran, &fl, err);
                        kcs_binding_close(&b);
                        if (rc || ran == 0)
                            continue;
                        if (nr == cap) {
                            kcs_sweep_row *r2 = realloc(rows, (size_t)cap * 2 * sizeof *rows);
                            if (!r2) {
                                rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
                                break;
                            }
                            rows = r2;
                            cap *= 2;
                        }
                        kcs_sweep_row *r = &rows[nr++];
                        memset(r, 0, sizeof *r);
                        snprintf(r->contract, sizeof r->contract, "%s", c->id);
                        snprintf(r->kernel, sizeof r->kernel, "%s", name);
                        snprintf(r->klass, sizeof r->klass, "%s",
                                 kd->bad == 2 ? "calib-bad" : kd->bad ? "bad" : "conforming");
                        snprintf(r->op, sizeof r->op, "%s", kcs_op_name(op));
                        snprintf(r->dtype_in, sizeof r->dtype_in, "%s",
                                 kcs_format_name((kcs_format)f));
                        r->m = sh.m;
                        r->n = sh.n;
                        r->k = sh.k;
                        r->trials = ran;
                        r->flagged = fl;
                        r->rate = (double)fl / ran;
                        kcs_clopper_pearson(fl, ran, 0.95, &r->ci_lo, &r->ci_hi);
                        misses += kd->bad == 1 ? r->rate < 0.99 : kd->bad == 0 ? fl > 0 : 0;
                    }
                }
            }
            int64_t next = k * (o->k_factor > 1 ? o->k_factor : 4);
            k = (k < kmax && next > kmax) ? kmax : next;
        }
    }
    if (rc) {
        free(rows);
        return rc;
    }
    *rows_p = rows;
    *n_rows_p = nr;
    *misses_p = misses;
    return 0;
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
