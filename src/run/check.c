#include "check.h"
#include "precondition.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "profile.h"
#include "journal.h"
#include "placement.h"

typedef struct checker {
    const kcs_check_opts *o;
    const kcs_study *s;
    int problems, warnings;
    kcs_error *err;
} checker;

/* A problem (is_problem, the first also the error) or a warning, printed
 * on the report as "<kind>: <message>". */
static void note(checker *k, int is_problem, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (is_problem && k->problems++ == 0)
        kcs_fail(k->err, KCS_E_INVAL, "%s", msg);
    if (!is_problem)
        k->warnings++;
    if (k->o->report)
        fprintf(k->o->report, "%s: %s\n", is_problem ? "problem" : "warning", msg);
}

static void problem(checker *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(checker *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note(k, 1, fmt, ap);
    va_end(ap);
}

static void warning(checker *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warning(checker *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note(k, 0, fmt, ap);
    va_end(ap);
}

double kcs_case_work(const kcs_case *c)
{
    double m = (double)(c->shape.m > 0 ? c->shape.m : 1);
    double n = (double)(c->shape.n > 0 ? c->shape.n : 1);
    double kk = (double)(c->shape.k > 0 ? c->shape.k : 1);
    double b = (double)(c->shape.batch > 0 ? c->shape.batch : 1);
    switch (c->op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
        return 2.0 * m * n * kk * b;
    case KCS_OP_ATTENTION:
        return 4.0 * m * n * kk * b; /* QK^T and PV */
    case KCS_OP_DOT:
        return 2.0 * kk * b;
    default:
        return m * n * kk * b;
    }
}

/* The rank count of the run and the placement entries its ranks take. */
static int ranks_of(const checker *k)
{
    if (k->o->n_ranks > 0)
        return k->o->n_ranks;
    return k->s->placement_auto || k->s->n_placement == 0 ? 1 : k->s->n_placement;
}

static void check_placement(checker *k, int n)
{
    const kcs_study *s = k->s;
    if (s->placement_auto || s->n_placement == 0 || k->o->no_placement)
        return;
    if (n < s->n_placement && !k->o->fewer_ranks_ok)
        problem(k,
                "%s:%d: placement has %d entries but the run has %d rank%s: entries %d..%d "
                "(from line %d) would never run (launch %d ranks, remove them, or pass "
                "--subset to run only the first %d)",
                s->path, s->placement[0].line, s->n_placement, n, n == 1 ? "" : "s", n,
                s->n_placement - 1, s->placement[n].line, s->n_placement, n);
    else if (n < s->n_placement)
        warning(k, "%s:%d: --subset: only the first %d of %d placement entries run", s->path,
                s->placement[0].line, n, s->n_placement);
    else if (n % s->n_placement != 0)
        warning(k,
                "%s:%d: %d ranks over %d placement entries: ranks take them cyclically, so "
                "some entries run on more ranks than others",
                s->path, s->placement[0].line, n, s->n_placement);
}

static int op_has_profile(kcs_op op)
{
    return op == KCS_OP_GEMM || op == KCS_OP_BATCHED_GEMM;
}

/* An emulated profile serves GEMMs of the formats it lists. */
static void check_profiles(checker *k, int n)
{
    const kcs_study *s = k->s;
    int used = s->placement_auto || k->o->no_placement ? 0
                                                       : (n < s->n_placement ? n : s->n_placement);
    for (int i = 0; i < used; i++) {
        const kcs_placement *p = &s->placement[i];
        if (!p->profile[0])
            continue;
        for (int w = 0; w < s->n_sweeps; w++) {
            const kcs_sweep *sw = &s->sweeps[w];
            const char *cid = sw->contract >= 0 ? s->contracts[sw->contract]->id : "?";
            if (!op_has_profile(sw->op)) {
                problem(k,
                        "%s:%d: placement[%d]: profile %s emulates matrix units (gemm, "
                        "batched_gemm) but cases[%d] (%s) is op %s: that rank could not run it",
                        s->path, p->line, i, p->profile, w, cid, kcs_op_name(sw->op));
                continue;
            }
            const kcs_profile_params *row;
            kcs_error e = {0};
            char name[KCS_PROFILE_SPEC_MAX];
            kcs_libpath lp;
            if (kcs_profile_spec_parse(p->profile, name, &lp, &e) ||
                kcs_profile_lookup(name, sw->dtype_in, &row, &e))
                problem(k, "%s:%d: placement[%d]: cases[%d] (%s, dtype_in %s): %s", s->path,
                        p->line, i, w, cid, kcs_format_name(sw->dtype_in), e.msg);
        }
    }
}

static int in_range(int64_t v, int64_t lo, int64_t hi)
{
    return v <= 0 || (v >= lo && v <= hi); /* 0: the op has no such dimension */
}

/* Every case of the plan against its contract's precondition. */
static void check_preconditions(checker *k, const kcs_plan *plan)
{
    const kcs_study *s = k->s;
    int shown = 0, more = 0;
    for (int64_t i = 0; i < plan->n_cases; i++) {
        const kcs_case *c = &plan->cases[i];
        const kcs_contract *ct = s->contracts[c->contract];
        char why[256] = "";
        kcs_error pe = {0};
        const kcs_shape *sh = &c->shape;
        const char *cls;
        int64_t cv, cmult;
        if (!in_range(sh->m, ct->m_min, ct->m_max))
            snprintf(why, sizeof why, "m = %lld outside [%lld, %lld]", (long long)sh->m,
                     (long long)ct->m_min, (long long)ct->m_max);
        else if (!in_range(sh->n, ct->n_min, ct->n_max))
            snprintf(why, sizeof why, "n = %lld outside [%lld, %lld]", (long long)sh->n,
                     (long long)ct->n_min, (long long)ct->n_max);
        else if (!in_range(sh->k, ct->k_min, ct->k_max))
            snprintf(why, sizeof why, "k = %lld outside [%lld, %lld]", (long long)sh->k,
                     (long long)ct->k_min, (long long)ct->k_max);
        else if (!in_range(sh->batch, ct->batch_min, ct->batch_max))
            snprintf(why, sizeof why, "batch = %lld outside [%lld, %lld]", (long long)sh->batch,
                     (long long)ct->batch_min, (long long)ct->batch_max);
        else if ((cls = kcs_contract_shape_class_miss(ct, sh, &cv, &cmult)))
            snprintf(why, sizeof why, "%s = %lld is not a multiple of %lld "
                     "(precondition.shape.multiple_of.%s)", cls, (long long)cv,
                     (long long)cmult, cls);
        else if (kcs_precondition_op_shape(ct, c->op, sh, &pe)) /* precondition.per_op */
            snprintf(why, sizeof why, "%s", pe.msg);
        else if (!(kcs_precondition_op_dtypes(ct, c->op) & (1u << c->dtype_in)))
            snprintf(why, sizeof why, "dtype_in %s is not admitted for %s",
                     kcs_format_name(c->dtype_in), kcs_op_name(c->op));
        else if (ct->value_dists && !(ct->value_dists & (1u << c->dist)))
            snprintf(why, sizeof why, "input distribution %s is not in precondition.values",
                     kcs_dist_name(c->dist));
        if (!why[0])
            continue;
        if (shown < 8) {
            problem(k, "%s: case %lld (%s %s %lldx%lldx%lld): violates the precondition of %s: %s",
                    s->path, (long long)c->id, ct->id, kcs_op_name(c->op), (long long)sh->m,
                    (long long)sh->n, (long long)sh->k, ct->id, why);
            shown++;
        } else {
            more++;
            k->problems++;
        }
    }
    if (more && k->o->report)
        fprintf(k->o->report, "problem: ... and %d more cases outside their preconditions\n",
                more);
}

static void check_output(checker *k)
{
    const char *out = k->o->out_path;
    if (!out)
        return;
    struct stat st;
    char jdir[4096];
    kcs_journal_dir(out, jdir, sizeof jdir);
    int has_journal = stat(jdir, &st) == 0;
    if (k->o->resume) {
        if (!has_journal)
            problem(k, "%s: no journal to resume from", jdir);
        return;
    }
    if (stat(out, &st) == 0 && !k->o->force)
        problem(k, "%s: output exists; `kcs run` refuses to overwrite it (use --force)", out);
    else if (has_journal && !k->o->force)
        problem(k, "%s: an interrupted run of this output exists (continue it with --resume)",
                jdir);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", out);
    const char *d = dirname(dir);
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
        problem(k, "%s: the output's directory %s does not exist", out, d);
    else if (access(d, W_OK | X_OK) != 0)
        problem(k, "%s: the output's directory %s is not writable (%s)", out, d,
                strerror(errno));
}

/* What this node offers the ranks' backends: a warning (or a problem with
 * require_devices) per backend that cannot run here. */
/* placement: auto on this node: what node-local ranks 0..n-1 would take */
static void show_auto(checker *k, int n)
{
    const char *names[16];
    int counts[16];
    int nb = kcs_placement_devices(names, counts);
    for (int r = 0; r < n && r < 16 && k->o->report; r++) {
        kcs_placement p;
        int cand = kcs_placement_auto_pick(names, counts, nb, r, &p);
        fprintf(k->o->report, "  auto here: node-local rank %d -> %s:%d%s\n", r, p.backend,
                p.device, cand ? "" : " (no device found: the CPU)");
    }
}

static void check_devices(checker *k, int n)
{
    const kcs_study *s = k->s;
    if (s->placement_auto) {
        show_auto(k, n);
        return;
    }
    int used = n < s->n_placement ? n : s->n_placement;
    for (int i = 0; i < used; i++) {
        const kcs_placement *p = &s->placement[i];
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strcmp(s->placement[j].backend, p->backend) == 0 &&
                    s->placement[j].device == p->device;
        if (seen)
            continue;
        if (strcmp(p->backend, "plugin") == 0) {
            if (access(p->path, R_OK) != 0)
                problem(k, "%s:%d: placement[%d]: plugin library %s: %s", s->path, p->line, i,
                        p->path, strerror(errno));
            continue;
        }
        char msg[768] = "";
        const kcs_backend_ops *ops = kcs_backend_find(p->backend);
        if (!ops) {
            snprintf(msg, sizeof msg, "backend %s is %s", p->backend, kcs_backend_why(p->backend));
        } else {
            kcs_device_info info[KCS_MAX_DEVICES];
            int count = 0;
            kcs_error e = {0};
            int dev = p->device < 0 ? 0 : p->device;
            if (ops->discover(info, KCS_MAX_DEVICES, &count, &e))
                snprintf(msg, sizeof msg, "%s", e.msg);
            else if (dev >= count)
                snprintf(msg, sizeof msg, "%s has %d device%s here, no device %d", p->backend,
                         count, count == 1 ? "" : "s", dev);
        }
        if (!msg[0])
            continue;
        if (k->o->require_devices)
            problem(k, "%s:%d: placement[%d]: not on this node: %s", s->path, p->line, i, msg);
        else
            warning(k, "%s:%d: placement[%d]: not on this node (its ranks would be unavailable "
                       "here): %s", s->path, p->line, i, msg);
    }
}

static void print_plan(const checker *k, const kcs_plan *plan, int n)
{
    FILE *f = k->o->report;
    const kcs_study *s = k->s;
    if (!f)
        return;
    double work = 0, trials = 0;
    for (int64_t i = 0; i < plan->n_cases; i++) {
        work += kcs_case_work(&plan->cases[i]) * plan->cases[i].trials;
        trials += plan->cases[i].trials;
    }
    fprintf(f, "study %s (%s): %d contract%s, %lld cases, %.0f trials per rank\n", s->name,
            s->path, s->n_contracts, s->n_contracts == 1 ? "" : "s", (long long)plan->n_cases,
            trials);
    if (s->placement_auto) {
        fprintf(f, "placement: auto (each node-local rank takes its GPU's native backend)\n");
    } else {
        for (int r = 0; r < n && r < 16; r++) {
            char pl[256];
            fprintf(f, "  rank %d: %s\n", r, kcs_placement_str(kcs_study_placement(s, r), pl,
                                                               sizeof pl));
        }
        if (n > 16)
            fprintf(f, "  ... (%d ranks)\n", n);
    }
    fprintf(f, "plan: %lld cases x %d rank%s = %lld case runs; work ~%.3g Gop per rank, "
               "~%.3g Gop in all\n",
            (long long)plan->n_cases, n, n == 1 ? "" : "s", (long long)plan->n_cases * n,
            work * 1e-9, work * 1e-9 * n);
}

int kcs_study_check(const kcs_study *s, const kcs_plan *plan, const kcs_check_opts *o,
                    kcs_error *err)
{
    checker k = {.o = o, .s = s, .err = err};
    int n = ranks_of(&k);
    print_plan(&k, plan, n);
    check_placement(&k, n);
    check_profiles(&k, n);
    check_preconditions(&k, plan);
    check_output(&k);
    if (o->devices)
        check_devices(&k, n);
    if (o->report)
        fprintf(o->report, "%d problem%s, %d warning%s\n", k.problems,
                k.problems == 1 ? "" : "s", k.warnings, k.warnings == 1 ? "" : "s");
    return k.problems;
}
