/* kcs run: every rank runs every case of the plan with its placement's
 * implementation; results are written collectively per case. */
#include "runner.h"

#include "check.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "journal.h"
#include "metrics.h"
#include "placement.h"
#include "protocol.h"
#include "progress.h"
#include "store.h"
#include "study.h"
#include "tensor.h"
#include "verdict.h"
#include "oracle_shared.h"
#include "stage_time.h"

typedef struct run_state {
    const kcs_run_opts *o;
    MPI_Comm comm;
    int rank, size;
    kcs_study *study;
    kcs_plan plan;
    kcs_rank_binding bind;
    kcs_store *store;
    kcs_case_rec *case_recs;
    kcs_result_rec *recs;
    double *samples;
    int degraded;
    kcs_journal journal;
    kcs_journal_entry *replay; /* resume: entries this rank journaled */
    unsigned char *done;       /* resume: case done on every rank */
} run_state;

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

void kcs_runner_handle_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

static void fill_case_rec(const run_state *s, const kcs_case *cs, kcs_case_rec *r)
{
    memset(r, 0, sizeof *r);
    const kcs_contract *c = s->study->contracts[cs->contract];
    r->case_id = cs->id;
    snprintf(r->contract, sizeof r->contract, "%s", c->id);
    snprintf(r->op, sizeof r->op, "%s", kcs_op_name(cs->op));
    snprintf(r->variant, sizeof r->variant, "per-rank");
    snprintf(r->dtype_in, sizeof r->dtype_in, "%s", kcs_format_name(cs->dtype_in));
    kcs_acc_str(&cs->acc, r->dtype_acc, sizeof r->dtype_acc);
    snprintf(r->dtype_out, sizeof r->dtype_out, "%s", kcs_format_name(cs->dtype_out));
    r->m = cs->shape.m;
    r->n = cs->shape.n;
    r->k = cs->shape.k;
    r->batch = cs->shape.batch;
    snprintf(r->input_dist, sizeof r->input_dist, "%s", kcs_dist_name(cs->dist));
    r->seed = cs->seed;
    r->trials = cs->trials;
}

static int run_case(run_state *s, int64_t ci, kcs_error *err)
{
    const kcs_case *cs = &s->plan.cases[ci];
    int T = s->plan.max_trials, ns = s->study->n_samples;
    uint64_t digest = 0;
    int rc = 0;
    if (s->done && s->done[ci]) {
        /* Journaled by every rank before an interruption: replay it. */
        const kcs_journal_entry *e = &s->replay[ci];
        memcpy(s->recs, e->recs, (size_t)T * sizeof *s->recs);
        memcpy(s->samples, e->samples, (size_t)ns * sizeof *s->samples);
        digest = e->input_digest;
    } else {
        for (int j = 0; j < ns; j++)
            s->samples[j] = NAN;
        kcs_case_memory mem = {0};
        kcs_trial_io io = {
            .study_seed = s->study->seed,
            .timeout_s = s->o->case_timeout > 0 ? s->o->case_timeout : s->study->timeout_s,
            .rank = s->rank,
            .verbose = s->o->verbose,
            .memory = &mem,
            .input_digest = &digest,
            .samples = s->samples,
            .n_samples = ns,
            .share_oracle = 1,
            .comm = s->comm,
        };
        const kcs_contract *c = s->study->contracts[cs->contract];
        for (int t = 0; t < T; t++) {
            if (rc) { /* failed: still join the shared reference of the trials left */
                if (t < cs->trials)
                    kcs_oracle_run_shared(s->comm, 0, c->oracle, c->oracle_profile, NULL, NULL,
                                          NULL, NULL, NULL);
                continue;
            }
            if (t >= cs->trials)
                kcs_protocol_blank(&s->recs[t], cs, s->rank, t, KCS_ST_SKIPPED, "");
            else
                rc = kcs_protocol_trial(c, cs, t, &s->bind, &io, &s->recs[t], err);
            if (!rc && (kcs_status_of(s->recs[t].status) != KCS_ST_OK) && (kcs_status_of(s->recs[t].status) != KCS_ST_RAISED) &&
                (kcs_status_of(s->recs[t].status) != KCS_ST_SKIPPED))
                s->degraded = 1;
        }
        kcs_stage_mark t0 = kcs_stage_begin();
        if (!rc)
            rc = kcs_journal_append(&s->journal, ci, digest, s->recs, s->samples, err);
        kcs_stage_add(KCS_STAGE_JOURNAL, t0);
    }
    kcs_stage_mark t0 = kcs_stage_begin();
    rc = kcs_agree(s->comm, rc, err);
    if (rc)
        return rc;
    /* Every rank generated the inputs itself: prove they are identical. */
    uint64_t lo, hi;
    MPI_Allreduce(&digest, &lo, 1, MPI_UINT64_T, MPI_MIN, s->comm);
    MPI_Allreduce(&digest, &hi, 1, MPI_UINT64_T, MPI_MAX, s->comm);
    kcs_stage_add(KCS_STAGE_SYNC, t0);
    if (lo != hi)
        return kcs_fail(err, KCS_E_INTERNAL,
                        "case %lld: ranks generated different inputs (digests %016llx vs %016llx)",
                        (long long)cs->id, (unsigned long long)lo, (unsigned long long)hi);
    fill_case_rec(s, cs, &s->case_recs[ci]);
    s->case_recs[ci].input_digest = digest;
    t0 = kcs_stage_begin();
    rc = kcs_store_write_case_results(s->store, ci, s->recs, T, s->samples, err);
    kcs_stage_add(KCS_STAGE_STORE, t0);
    return rc;
}

static int check_output(const run_state *s, const char *tmp, kcs_error *err)
{
    int rc = 0;
    if (s->rank == 0) {
        struct stat st;
        char jdir[4096];
        kcs_journal_dir(s->o->out_path, jdir, sizeof jdir);
        int has_journal = stat(jdir, &st) == 0;
        if (stat(s->o->out_path, &st) == 0 && !s->o->force)
            rc = kcs_fail(err, KCS_E_EXISTS,
                          "%s: output exists; refusing to overwrite it (use --force to replace)",
                          s->o->out_path);
        else if (has_journal && !s->o->resume && !s->o->force)
            rc = kcs_fail(err, KCS_E_EXISTS,
                          "%s: an interrupted run of this output exists; continue it with "
                          "`kcs run --resume %s` (or start over with --force)",
                          jdir, s->o->out_path);
        else if (!has_journal && s->o->resume)
            rc = kcs_fail(err, KCS_E_IO, "%s: no journal to resume from", jdir);
        else if (stat(tmp, &st) == 0 && unlink(tmp) != 0)
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot remove a stale partial output", tmp);
    }
    return kcs_agree(s->comm, rc, err);
}

/* Open this rank's journal: fresh, or (resume) read back what every rank
 * finished before the interruption. */
static int open_journal(run_state *s, kcs_error *err)
{
    kcs_journal_header h = {0};
    h.plan_hash = s->plan.hash;
    h.n_ranks = s->size;
    h.rank = s->rank;
    h.max_trials = s->plan.max_trials;
    h.n_samples = s->study->n_samples;
    h.n_cases = s->plan.n_cases;
    if (!realpath(s->study->path, h.study_path))
        snprintf(h.study_path, sizeof h.study_path, "%s", s->study->path);
    if (!s->o->resume)
        return kcs_journal_create(&s->journal, s->o->out_path, &h, err);
    s->replay = calloc((size_t)s->plan.n_cases, sizeof *s->replay);
    s->done = calloc((size_t)s->plan.n_cases, 1);
    if (!s->replay || !s->done)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory reading the journal");
    kcs_journal_header old;
    int rc = kcs_journal_resume(&s->journal, s->o->out_path, s->rank, &old, s->replay,
                                s->plan.n_cases, err);
    if (rc)
        return rc;
    if (old.plan_hash != h.plan_hash || old.n_ranks != h.n_ranks || old.rank != h.rank ||
        old.max_trials != h.max_trials || old.n_samples != h.n_samples)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: the journal belongs to another plan or rank count (plan %016llx on "
                        "%d ranks; now %016llx on %d): resume with the same study and -n",
                        s->journal.path, (unsigned long long)old.plan_hash, old.n_ranks,
                        (unsigned long long)h.plan_hash, h.n_ranks);
    for (int64_t c = 0; c < s->plan.n_cases; c++)
        s->done[c] = (unsigned char)s->replay[c].present;
    return 0;
}

/* Cases journaled by every rank are replayed; the rest run again. */
static void agree_done(run_state *s)
{
    if (!s->done)
        return;
    const int64_t chunk = 1 << 20;
    for (int64_t c = 0; c < s->plan.n_cases; c += chunk) {
        int n = (int)(s->plan.n_cases - c < chunk ? s->plan.n_cases - c : chunk);
        MPI_Allreduce(MPI_IN_PLACE, s->done + c, n, MPI_UNSIGNED_CHAR, MPI_MIN, s->comm);
    }
}

static void remove_journal(run_state *s)
{
    kcs_journal_close(&s->journal);
    char path[4096];
    kcs_journal_file(s->o->out_path, s->rank, path, sizeof path);
    unlink(path);
    MPI_Barrier(s->comm);
    if (s->rank == 0) {
        kcs_journal_dir(s->o->out_path, path, sizeof path);
        rmdir(path);
    }
}

int kcs_runner_run(const kcs_run_opts *o, MPI_Comm comm, kcs_error *err)
{
    run_state s = {0};
    s.o = o;
    s.comm = comm;
    MPI_Comm_rank(comm, &s.rank);
    MPI_Comm_size(comm, &s.size);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", o->out_path);
    kcs_run_opts local = *o;
    kcs_journal_header jh;
    int rc = 0;
    if (o->resume && !o->study_path) {
        /* `kcs run --resume OUT`: the journal names its study. */
        rc = kcs_journal_read_header(o->out_path, s.rank, &jh, err);
        if (!rc)
            local.study_path = jh.study_path;
    }
    if ((rc = kcs_agree(comm, rc, err)))
        goto out;
    o = &local;
    s.o = o;

    rc = kcs_study_load(o->study_path, &s.study, err);
    if ((rc = kcs_agree(comm, rc, err)))
        goto out;
    rc = kcs_plan_build(s.study, &s.plan, err);
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_study;
    uint64_t lo, hi;
    MPI_Allreduce(&s.plan.hash, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(&s.plan.hash, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (lo != hi) {
        rc = kcs_fail(err, KCS_E_INVAL,
                      "%s: ranks built different plans (hash %016llx vs %016llx): the study or "
                      "contract files differ between nodes",
                      o->study_path, (unsigned long long)lo, (unsigned long long)hi);
        goto out_plan;
    }
    /* the checks of `kcs check` (but the devices: an unavailable rank is a
     * status of the run): the same answer on every rank */
    kcs_check_opts chk = {.n_ranks = s.size, .no_placement = o->plugin != NULL,
                          .fewer_ranks_ok = o->fewer_ranks_ok};
    if (kcs_study_check(s.study, &s.plan, &chk, err) > 0) {
        rc = KCS_E_INVAL;
        goto out_plan;
    }
    if ((rc = check_output(&s, tmp, err)))
        goto out_plan;
    rc = open_journal(&s, err);
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_journal;
    agree_done(&s);

    kcs_binding_open(s.study, o->plugin, comm, o->verbose, &s.bind);
    if (!s.bind.ctx)
        s.degraded = 1;

    s.case_recs = calloc((size_t)s.plan.n_cases, sizeof *s.case_recs);
    s.recs = calloc((size_t)s.plan.max_trials, sizeof *s.recs);
    s.samples = calloc((size_t)s.study->n_samples, sizeof *s.samples);
    rc = (!s.case_recs || !s.recs || !s.samples) ? kcs_fail(err, KCS_E_NOMEM, "out of memory") : 0;
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_bind;

    /* every backend built, as rank 0's node sees it (the string is rank
     * 0's): "name: N devices", "name: excluded by KCS_BACKENDS", "name:
     * unavailable: <why: runtime not loadable, no driver, no device>" */
    char backends[4096] = "";
    if (s.rank == 0)
        kcs_backends_describe(backends, sizeof backends, 1);
    kcs_store_meta meta = {
        .command_line = o->command_line,
        .study = s.study,
        .plan = &s.plan,
        .n_ranks = s.size,
        .n_samples = s.study->n_samples,
        .backends = backends,
    };
    kcs_stage_mark t_store = kcs_stage_begin();
    rc = kcs_store_create(tmp, comm, &meta, &s.store, err);
    kcs_stage_add(KCS_STAGE_STORE, t_store);
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_bind;
    kcs_rank_rec rr;
    kcs_binding_record(&s.bind, s.rank, &rr);
    if ((rc = kcs_store_write_ranks(s.store, &rr, err)))
        goto out_abort;

    kcs_progress prog;
    kcs_progress_start(&prog, s.rank == 0 && !o->quiet, s.plan.n_cases, "cases");
    for (int64_t ci = 0; ci < s.plan.n_cases; ci++) {
        if ((rc = run_case(&s, ci, err)))
            goto out_abort;
        kcs_progress_step(&prog, ci + 1);
        int stop = stop_requested, any_stop;
        MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, comm);
        if (any_stop && ci + 1 < s.plan.n_cases) {
            kcs_progress_end(&prog);
            kcs_fail(err, KCS_E_INTERNAL,
                     "interrupted after %lld of %lld cases; the journal keeps them: continue "
                     "with `kcs run --resume %s`",
                     (long long)(ci + 1), (long long)s.plan.n_cases, o->out_path);
            kcs_store_abort(s.store);
            s.store = NULL;
            if (s.rank == 0)
                unlink(tmp);
            rc = KCS_RUN_INTERRUPTED;
            goto out_bind;
        }
    }
    kcs_progress_end(&prog);
    t_store = kcs_stage_begin();
    if ((rc = kcs_store_write_cases(s.store, s.case_recs, err)))
        goto out_abort;
    rc = kcs_store_close(s.store, err);
    kcs_stage_add(KCS_STAGE_STORE, t_store);
    s.store = NULL;
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_unlink;
    if (s.rank == 0 && rename(tmp, o->out_path) != 0)
        rc = kcs_fail(err, KCS_E_IO, "%s: cannot rename %s into place", o->out_path, tmp);
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_unlink;
    remove_journal(&s);
    int degraded = s.degraded, any;
    MPI_Allreduce(&degraded, &any, 1, MPI_INT, MPI_MAX, comm);
    rc = any ? KCS_RUN_DEGRADED : KCS_RUN_OK;
    goto out_bind;

out_abort:
    kcs_store_abort(s.store);
    s.store = NULL;
out_unlink:
    if (s.rank == 0)
        unlink(tmp);
out_bind:
    kcs_binding_close(&s.bind);
    free(s.case_recs);
    free(s.recs);
    free(s.samples);
out_journal:
    kcs_journal_close(&s.journal);
    kcs_journal_entries_free(s.replay, s.plan.n_cases);
    free(s.done);
out_plan:
    kcs_plan_free(&s.plan);
out_study:
    kcs_study_free(s.study);
out:
    if (rc < 0)
        return kcs_exit_status(rc) == 2 ? KCS_RUN_BAD_INPUT : KCS_RUN_FAILED;
    return rc;
}
