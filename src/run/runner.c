/* kcs run: every rank runs every case of the plan with its placement's
 * implementation; results are handed to the store per case (it writes them
 * collectively, a batch of cases at a time). */
#include "runner.h"
#include "semantics.h"
#include "grow.h"

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
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include "backend.h"
#include "journal.h"
#include "metrics.h"
#include "outlock.h"
#include "placement.h"
#include "probe_order.h"
#include "protocol.h"
#include "progress.h"
#include "store.h"
#include "store_verify.h"
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
    kcs_outlock lock;          /* rank 0: the output's lock */
    int journaled;             /* this rank has a case in its journal */
    uint64_t *digests;         /* per case: digest of this rank's rows as written */
    kcs_journal_header settings; /* what shapes results besides the study */
    int cleaned;               /* journals removed or deliberately kept (collective) */
    char *order_text;          /* record_order: /provenance/order until the store has it */
    kcs_contract sem_copy;     /* the contract under the semantics the ranks declare */
    unsigned char sem_said[64]; /* rank 0: contracts whose declared semantics were printed */
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

/* The contract a case is judged under: its own, or where every rank's
 * kernel declares other semantics (nan=mask, oob=clamp|zero|undefined,
 * semantics.h) the same ones, a copy with those attrs; rank 0 says which
 * on stderr, once per contract (kcs.check reads it). Ranks that declare
 * differently are judged under the contract's own (their reference is
 * computed together). Collective. */
static const kcs_contract *judged_contract(run_state *s, const kcs_case *cs)
{
    const kcs_contract *c = s->study->contracts[cs->contract];
    uint32_t ops = 1u << cs->op;
    char note[256];
    const kcs_contract *j = c;
    if (s->bind.ctx)
        j = kcs_declared_semantics(c, &s->bind, &ops, &s->sem_copy, note, sizeof note);
    uint64_t mine = j == c ? 0 : XXH3_64bits(j->attrs, strlen(j->attrs)) | 1u, lo, hi;
    MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, s->comm);
    MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, s->comm);
    if (lo != hi || j == c)
        return c;
    if (s->rank == 0 && cs->contract < (int)sizeof s->sem_said && !s->sem_said[cs->contract]) {
        s->sem_said[cs->contract] = 1;
        fprintf(stderr, "kcs run: %s judged under declared semantics %s\n", c->id, note);
    }
    return j;
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
        if (e->broken && !s->bind.broken) {
            /* the backend hung or crashed in this case: later cases see it
             * unusable, as in the uninterrupted run */
            s->bind.broken = 1;
            snprintf(s->bind.why, sizeof s->bind.why, "%s", e->why);
        }
        for (int t = 0; t < T; t++)
            if (strcmp(s->recs[t].status, "ok") && strcmp(s->recs[t].status, "raised") &&
                strcmp(s->recs[t].status, "skipped"))
                s->degraded = 1;
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
        const kcs_contract *c = judged_contract(s, cs);
        for (int t = 0; t < T; t++) {
            if (!rc && stop_requested)
                /* a signal: stop between trials; the case is not journaled
                 * here and runs again on resume */
                rc = kcs_fail(err, KCS_E_INTERRUPTED, "interrupted in case %lld",
                              (long long)cs->id);
            if (rc) { /* failed or stopped: still join the shared reference of the
                       * trials left, so that no other rank waits in it */
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
            rc = kcs_journal_append(&s->journal, ci, digest, s->recs, s->samples, s->bind.broken,
                                    s->bind.why, err);
        if (!rc)
            s->journaled = 1;
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

/* Rank 0 takes the output's lock before anything is written, then checks
 * what is there. */
static int check_output(run_state *s, const char *tmp, kcs_error *err)
{
    int rc = 0;
    if (s->rank == 0) {
        struct stat st;
        const char *out = s->o->out_path;
        rc = kcs_outlock_take(&s->lock, out, err);
        int has_journal = !rc && kcs_outlock_has_journals(&s->lock);
        char was[300] = "";
        if (s->lock.stale[0])
            snprintf(was, sizeof was, " (left by %s, which is gone)", s->lock.stale);
        if (rc)
            ;
        else if (stat(out, &st) == 0 && !s->o->force)
            rc = kcs_fail(err, KCS_E_EXISTS,
                          "%s: output exists; refusing to overwrite it (use --force to replace)",
                          out);
        else if (has_journal && !s->o->resume && !s->o->force)
            rc = kcs_fail(err, KCS_E_EXISTS,
                          "%s: an interrupted run of this output exists%s; continue it with "
                          "`kcs run --resume %s` (or start over with --force, which discards it)",
                          s->lock.dir, was, out);
        else if (!has_journal && s->o->resume)
            rc = kcs_fail(err, KCS_E_INVAL, "%s: no journal to resume from", s->lock.dir);
        else if (stat(tmp, &st) == 0 && unlink(tmp) != 0)
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot remove a stale partial output: %s", tmp,
                          strerror(errno));
        if (rc && s->lock.fd >= 0)
            kcs_outlock_release(&s->lock, s->lock.created_dir && !has_journal);
    }
    if (!rc && s->rank == 0 && s->o->force && !s->o->resume)
        kcs_outlock_clear_journals(&s->lock); /* --force: the old journals go, all ranks' */
    return kcs_agree(s->comm, rc, err);
}

/* Everything besides the study that shapes the results: --plugin (its
 * path and the library's bytes), --case-timeout, KCS_BACKENDS. */
static int read_settings(const kcs_run_opts *o, kcs_journal_header *h, kcs_error *err)
{
    memset(h, 0, sizeof *h);
    if (o->plugin) {
        if (!realpath(o->plugin, h->plugin))
            return kcs_fail(err, KCS_E_INVAL, "--plugin %s: %s", o->plugin, strerror(errno));
        FILE *f = fopen(h->plugin, "rb");
        if (!f)
            return kcs_fail(err, KCS_E_INVAL, "--plugin %s: %s", o->plugin, strerror(errno));
        XXH3_state_t *x = XXH3_createState();
        char buf[65536];
        size_t n;
        XXH3_64bits_reset(x);
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            XXH3_64bits_update(x, buf, n);
        h->plugin_digest = XXH3_64bits_digest(x);
        XXH3_freeState(x);
        fclose(f);
    }
    h->case_timeout = o->case_timeout > 0 ? o->case_timeout : 0;
    const char *be = getenv("KCS_BACKENDS");
    snprintf(h->backends_env, sizeof h->backends_env, "%s", be ? be : "");
    return 0;
}

/* Resume: take the interrupted run's settings where none are given; refuse
 * a difference (exit 2) naming it. */
static int merge_settings(kcs_journal_header *now, const kcs_run_opts *o,
                          const kcs_journal_header *old, kcs_error *err)
{
    if (!o->plugin) {
        snprintf(now->plugin, sizeof now->plugin, "%s", old->plugin);
        now->plugin_digest = old->plugin_digest;
    } else if (strcmp(now->plugin, old->plugin) != 0) {
        return kcs_fail(err, KCS_E_INVAL,
                        "--plugin %s differs from the interrupted run's (%s): resume without "
                        "--plugin to continue with the same library",
                        now->plugin, old->plugin[0] ? old->plugin : "none");
    }
    if (o->case_timeout <= 0)
        now->case_timeout = old->case_timeout;
    else if (now->case_timeout != old->case_timeout)
        return kcs_fail(err, KCS_E_INVAL,
                        "--case-timeout %g differs from the interrupted run's (%g): resume "
                        "without --case-timeout",
                        now->case_timeout, old->case_timeout);
    if (strcmp(now->backends_env, old->backends_env) != 0)
        return kcs_fail(err, KCS_E_INVAL,
                        "KCS_BACKENDS=\"%s\" differs from the interrupted run's (\"%s\"): "
                        "resume with the same environment",
                        now->backends_env, old->backends_env);
    if (now->plugin[0]) {
        kcs_run_opts check = *o;
        check.plugin = now->plugin;
        kcs_journal_header again;
        int rc = read_settings(&check, &again, err);
        if (rc) {
            char why[KCS_ERRMSG_MAX];
            snprintf(why, sizeof why, "%s", err->msg);
            return kcs_fail(err, KCS_E_INVAL,
                            "the interrupted run's plugin cannot be read any more: %.900s", why);
        }
        if (again.plugin_digest != old->plugin_digest)
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: the plugin library changed since the interrupted run (its "
                            "results would mix two libraries): start over with --force",
                            now->plugin);
    }
    return 0;
}

/* The plan hash with the settings folded in (recorded in the dataset and
 * the journal header). */
static uint64_t settings_hash(uint64_t plan_hash, const kcs_journal_header *h)
{
    char text[4600];
    int n = snprintf(text, sizeof text, "plugin=%s %016llx case_timeout=%.17g backends=%s",
                     h->plugin, (unsigned long long)h->plugin_digest, h->case_timeout,
                     h->backends_env);
    if (n < 0 || (size_t)n >= sizeof text)
        n = (int)sizeof text - 1;
    return XXH3_64bits_withSeed(text, (size_t)n, plan_hash);
}

/* Open this rank's journal: fresh, or (resume) read back what every rank
 * finished before the interruption. */
static int open_journal(run_state *s, kcs_error *err)
{
    kcs_journal_header h = s->settings;
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
                        "%d ranks; now %016llx on %d): resume with the same study, contract "
                        "files and -n (or start over with --force)",
                        s->journal.path, (unsigned long long)old.plan_hash, old.n_ranks,
                        (unsigned long long)h.plan_hash, h.n_ranks);
    for (int64_t c = 0; c < s->plan.n_cases; c++) {
        s->done[c] = (unsigned char)s->replay[c].present;
        s->journaled |= s->replay[c].present;
    }
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
    if (s->rank == 0)
        kcs_outlock_release(&s->lock, 1);
    s->cleaned = 1;
}

/* After a failure (not an interruption): a fresh run that journaled
 * nothing cannot be resumed, so its journals go; otherwise they stay for
 * `--resume`. Collective; every rank is here after an agreed failure. */
static void cleanup_failed(run_state *s)
{
    int mine = s->journaled, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, s->comm);
    int held = s->rank == 0 ? s->lock.fd >= 0 : 0;
    MPI_Bcast(&held, 1, MPI_INT, 0, s->comm);
    if (held && !any && !s->o->resume) {
        remove_journal(s);
        return;
    }
    kcs_journal_close(&s->journal);
    if (s->rank == 0)
        kcs_outlock_release(&s->lock, 0);
    s->cleaned = 1;
}

int kcs_runner_run(const kcs_run_opts *o, MPI_Comm comm, kcs_error *err)
{
    run_state s = {0};
    s.o = o;
    s.comm = comm;
    s.lock.fd = -1;
    MPI_Comm_rank(comm, &s.rank);
    MPI_Comm_size(comm, &s.size);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", o->out_path);
    kcs_run_opts local = *o;
    kcs_journal_header jh;
    int rc = read_settings(o, &s.settings, err);
    if (!rc && o->resume && s.rank == 0) {
        /* a live job on this output is named before its journals are read
         * (they may still be being created) */
        kcs_outlock probe;
        memset(&probe, 0, sizeof probe);
        probe.fd = -1;
        rc = kcs_outlock_take(&probe, o->out_path, err);
        if (!rc)
            kcs_outlock_release(&probe, probe.created_dir);
    }
    if ((rc = kcs_agree(comm, rc, err)))
        goto out;
    if (!rc && o->resume) {
        /* the journal names its study and the settings that shaped it */
        rc = kcs_journal_read_header(o->out_path, s.rank, &jh, err);
        if (!rc && !o->study_path)
            local.study_path = jh.study_path;
        if (!rc)
            rc = merge_settings(&s.settings, o, &jh, err);
    }
    if ((rc = kcs_agree(comm, rc, err)))
        goto out;
    local.plugin = s.settings.plugin[0] ? s.settings.plugin : NULL;
    local.case_timeout = s.settings.case_timeout;
    o = &local;
    s.o = o;

    rc = kcs_study_load(o->study_path, &s.study, err);
    if ((rc = kcs_agree(comm, rc, err)))
        goto out;
    rc = kcs_plan_build(s.study, &s.plan, err);
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_study;
    s.plan.hash = settings_hash(s.plan.hash, &s.settings);
    uint64_t lo, hi;
    MPI_Allreduce(&s.plan.hash, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(&s.plan.hash, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (lo != hi) {
        rc = kcs_fail(err, KCS_E_INVAL,
                      "%s: ranks built different plans (hash %016llx vs %016llx): the study, "
                      "contract or plugin files differ between nodes",
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
    s.digests = calloc((size_t)s.plan.n_cases + 1, sizeof *s.digests);
    rc = (!s.case_recs || !s.recs || !s.samples || !s.digests)
             ? kcs_fail(err, KCS_E_NOMEM, "out of memory")
             : 0;
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_bind;

    /* every backend built, as rank 0's node sees it (the string is rank
     * 0's): "name: N devices", "name: excluded by KCS_BACKENDS", "name:
     * unavailable: <why: runtime not loadable, no driver, no device>" */
    char backends[4096] = "";
    if (s.rank == 0)
        kcs_backends_describe(backends, sizeof backends, 1);
    /* record_order: every rank's summation trees, the same text everywhere */
    if (s.study->record_order) {
        if (s.rank == 0 && !o->quiet)
            fprintf(stderr, "kcs run: record_order: probing every rank's summation order\n");
        rc = kcs_order_record(&s.bind, &s.plan, comm, o->verbose, &s.order_text, err);
        if ((rc = kcs_agree(comm, rc, err)))
            goto out_bind;
    }
    kcs_store_meta meta = {
        .order = s.order_text,
        .command_line = o->command_line,
        .study = s.study,
        .plan = &s.plan,
        .n_ranks = s.size,
        .n_samples = s.study->n_samples,
        .backends = backends,
    };
    /* Room for the whole file before any collective HDF5 work: on a full
     * disk, creating the layout fails on the rank that writes metadata
     * while the others wait in a collective (ROMIO hangs there). Rank 0
     * reserves the estimate in a probe file and frees it; the file's own
     * reservation follows its creation. KCS_TEST_NO_RESERVE=1 (tests only)
     * skips both, so that the read-back check meets writes MPI-IO lost. */
    const char *noreserve = getenv("KCS_TEST_NO_RESERVE");
    int reserve = !(noreserve && !strcmp(noreserve, "1"));
    if (s.rank == 0 && reserve) {
        char probe[4200];
        snprintf(probe, sizeof probe, "%s.space", tmp);
        int pfd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (pfd < 0)
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot create: %s", probe, strerror(errno));
        else {
            close(pfd);
            rc = kcs_store_reserve(probe, kcs_store_size_estimate(&meta), err);
            unlink(probe);
        }
    }
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_bind;
    kcs_stage_mark t_store = kcs_stage_begin();
    rc = kcs_store_create(tmp, comm, &meta, &s.store, err);
    kcs_stage_add(KCS_STAGE_STORE, t_store);
    free(s.order_text);
    s.order_text = NULL;
    meta.order = NULL;
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_bind;
    kcs_store_record_digests(s.store, s.digests);
    /* The whole file's space now: a full disk fails here, on rank 0, and
     * not inside a collective write later. */
    if (s.rank == 0 && o->verbose)
        fprintf(stderr, "[rank 0] reserving %lld bytes for %s\n",
                (long long)kcs_store_size_estimate(&meta), tmp);
    rc = s.rank == 0 && reserve ? kcs_store_reserve(tmp, kcs_store_size_estimate(&meta), err) : 0;
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_abort;
    kcs_rank_rec rr;
    kcs_binding_record(&s.bind, s.rank, &rr);
    if ((rc = kcs_store_write_ranks(s.store, &rr, err)))
        goto out_abort;

    kcs_progress prog;
    kcs_progress_start(&prog, s.rank == 0 && !o->quiet, s.plan.n_cases, "cases");
    for (int64_t ci = 0; ci < s.plan.n_cases; ci++) {
        rc = run_case(&s, ci, err);
        int stop = stop_requested || rc == KCS_E_INTERRUPTED, any_stop;
        if (rc && rc != KCS_E_INTERRUPTED)
            goto out_abort;
        kcs_progress_step(&prog, ci + (rc ? 0 : 1));
        MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, comm);
        if (any_stop && (rc || ci + 1 < s.plan.n_cases)) {
            kcs_progress_end(&prog);
            kcs_fail(err, KCS_E_INTERRUPTED,
                     "interrupted %s %lld of %lld cases; the journal keeps them: continue "
                     "with `kcs run --resume %s`",
                     rc ? "between two trials of a case, after" : "after",
                     (long long)(ci + (rc ? 0 : 1)), (long long)s.plan.n_cases, o->out_path);
            kcs_store_abort(s.store);
            s.store = NULL;
            if (s.rank == 0)
                unlink(tmp);
            kcs_journal_close(&s.journal);
            if (s.rank == 0)
                kcs_outlock_release(&s.lock, 0);
            rc = KCS_RUN_INTERRUPTED;
            goto out_bind;
        }
    }
    kcs_progress_end(&prog);
    /* No process of a kernel's worker box is left once the dataset is
     * written (a worker's box is reaped whole here). */
    kcs_binding_close(&s.bind);
    t_store = kcs_stage_begin();
    if ((rc = kcs_store_write_cases(s.store, s.case_recs, err)))
        goto out_abort;
    rc = kcs_store_close(s.store, err);
    kcs_stage_add(KCS_STAGE_STORE, t_store);
    s.store = NULL;
    if ((rc = kcs_agree(comm, rc, err)))
        goto out_keep;
    /* Trust nothing the close said: read it back before it goes in place
     * and before a journal is removed. */
    if ((rc = kcs_store_verify(tmp, comm, &meta, s.digests, o->readback_exe, err)))
        goto out_keep;
    rc = s.rank == 0 ? kcs_publish(tmp, o->out_path, o->force, err) : 0;
    if ((rc = kcs_agree(comm, rc, err))) {
        if (rc == KCS_E_EXISTS) {
            /* complete and verified under the temporary name: nothing to resume */
            remove_journal(&s);
            goto out_bind;
        }
        goto out_keep;
    }
    remove_journal(&s);
    int degraded = s.degraded, any;
    MPI_Allreduce(&degraded, &any, 1, MPI_INT, MPI_MAX, comm);
    rc = any ? KCS_RUN_DEGRADED : KCS_RUN_OK;
    goto out_bind;

out_keep:
    /* the partial file stays for inspection; the journals for --resume */
    {
        char why[KCS_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        kcs_fail(err, rc,
                 "%.700s; %s is left as it is and the journals are kept: fix the cause (e.g. "
                 "free space), then `kcs run --resume %s`",
                 why, tmp, o->out_path);
    }
    cleanup_failed(&s);
    goto out_bind;
out_abort:
    kcs_store_abort(s.store);
    s.store = NULL;
    if (s.rank == 0)
        unlink(tmp);
    cleanup_failed(&s);
out_bind:
    free(s.order_text);
    kcs_binding_close(&s.bind);
    KCS_FREE(s.case_recs, s.recs, s.samples, s.digests);
out_journal:
    if (rc < 0 && !s.cleaned)
        cleanup_failed(&s);
    kcs_journal_close(&s.journal);
    if (s.rank == 0)
        kcs_outlock_release(&s.lock, 0);
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
