/* Ordering signatures (signatures.h). */
#include "signatures.h"
#include "grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

const char *const kcs_sig_class_names[KCS_SIG_N] = {
    [KCS_SIG_NONDET] = "run-to-run-nondeterministic",
    [KCS_SIG_BATCH] = "batch-variant",
    [KCS_SIG_SCHEDULE] = "schedule-variant",
    [KCS_SIG_DETERMINISTIC] = "bitwise-deterministic",
    [KCS_SIG_INVARIANT] = "schedule-invariant",
    [KCS_SIG_NONE] = "not-run",
};

int kcs_sig_summary_init(kcs_sig_summary *s, int nr)
{
    memset(s, 0, sizeof *s);
    s->nr = nr;
    size_t n = (size_t)(nr > 0 ? nr : 1);
    s->count = calloc(n * KCS_SIG_N, sizeof *s->count);
    s->repeat_cases = calloc(n, sizeof(int64_t));
    s->repeat_fail = calloc(n, sizeof(int64_t));
    s->batch_cases = calloc(n, sizeof(int64_t));
    s->batch_fail = calloc(n, sizeof(int64_t));
    s->max_ulp = calloc(n, sizeof(double));
    s->pattern_rows = calloc(n, sizeof(int64_t));
    s->pattern_tiles = calloc(n, sizeof(int64_t));
    s->pattern_everywhere = calloc(n, sizeof(int64_t));
    s->pattern_scattered = calloc(n, sizeof(int64_t));
    if (!s->count || !s->repeat_cases || !s->repeat_fail || !s->batch_cases || !s->batch_fail ||
        !s->max_ulp || !s->pattern_rows || !s->pattern_tiles || !s->pattern_everywhere ||
        !s->pattern_scattered) {
        kcs_sig_summary_free(s);
        return KCS_E_NOMEM;
    }
    return 0;
}

void kcs_sig_summary_free(kcs_sig_summary *s)
{
    KCS_FREE(s->count, s->repeat_cases, s->repeat_fail, s->batch_cases, s->batch_fail, s->max_ulp,
             s->pattern_rows, s->pattern_tiles, s->pattern_everywhere, s->pattern_scattered);
    memset(s, 0, sizeof *s);
}

static int pair_index(int a, int b, int nr)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    return a * nr - a * (a + 1) / 2 + (b - a - 1);
}

/* Same digests on every trial both ran (and at least one such trial). */
static int bitwise_equal(const kcs_result_rec *res, int T, int a, int b)
{
    int compared = 0;
    for (int t = 0; t < T; t++) {
        const kcs_result_rec *x = &res[a * T + t], *y = &res[b * T + t];
        int xo = (kcs_status_of(x->status) == KCS_ST_OK), yo = (kcs_status_of(y->status) == KCS_ST_OK);
        if (xo != yo)
            return 0;
        if (!xo)
            continue;
        if (x->output_digest != y->output_digest)
            return 0;
        compared = 1;
    }
    return compared;
}

/* Whether rank r's bits differ from those of another rank that is not
 * itself nondeterministic on this case (under repeat: failed). */
static int differs_from_stable(const kcs_result_rec *res, int T, const int *cls, int r, int nr,
                               int rep)
{
    for (int q = 0; q < nr; q++) {
        if (q == r || cls[q] < 0 || cls[q] == cls[r])
            continue;
        int unstable = 0;
        for (int t = 0; rep && t < T; t++) {
            const kcs_result_rec *y = &res[q * T + t];
            unstable |= kcs_view_row_ran(y) && strcmp(y->verdict, "within_tolerance") != 0;
        }
        if (!unstable)
            return 1;
    }
    return 0;
}

void kcs_signatures_case(const kcs_case_rec *cs, int have_protocol, kcs_protocol_kind protocol,
                         const kcs_result_rec *res, int T, const kcs_divergence_row *pairs,
                         const kcs_rank_rec *ranks, int nr, kcs_signature_row *rows,
                         kcs_sig_summary *sum)
{
    int *cls = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *cls);
    int *size = calloc((size_t)(nr > 0 ? nr : 1), sizeof *size);
    if (!cls || !size) {
        free(cls);
        free(size);
        memset(rows, 0, (size_t)nr * sizeof *rows);
        return;
    }
    /* bitwise classes: the lowest rank with equal digests on every trial */
    int n_classes = 0;
    for (int r = 0; r < nr; r++) {
        int ok = 0;
        for (int t = 0; t < T; t++)
            ok |= (kcs_status_of(res[r * T + t].status) == KCS_ST_OK);
        cls[r] = -1;
        if (!ok)
            continue;
        for (int q = 0; q < r && cls[r] < 0; q++)
            if (cls[q] == q && bitwise_equal(res, T, q, r))
                cls[r] = q;
        if (cls[r] < 0) {
            cls[r] = r;
            n_classes++;
        }
        size[cls[r]]++;
    }
    int modal = -1;
    for (int r = 0; r < nr; r++)
        if (cls[r] == r && (modal < 0 || size[r] > size[modal]))
            modal = r;
    for (int r = 0; r < nr; r++) {
        kcs_signature_row *x = &rows[r];
        memset(x, 0, sizeof *x);
        x->case_id = cs->case_id;
        x->rank = r;
        snprintf(x->impl, sizeof x->impl, "%s", ranks[r].variant);
        snprintf(x->contract, sizeof x->contract, "%s", cs->contract);
        snprintf(x->protocol, sizeof x->protocol, "%s",
                 have_protocol ? kcs_protocol_name(protocol) : "?");
        x->k = cs->k;
        x->bitwise_class = cls[r];
        x->n_classes = n_classes;
        x->max_ulp_spread = NAN;
        x->frac_differ = NAN;
        x->reference_rank = -1;
        uint64_t dig[64];
        int nd = 0, fails = 0;
        for (int t = 0; t < T; t++) {
            const kcs_result_rec *y = &res[r * T + t];
            if (!kcs_view_row_ran(y))
                continue;
            x->n_trials++;
            fails |= strcmp(y->verdict, "within_tolerance") != 0;
            if ((kcs_status_of(y->status) != KCS_ST_OK))
                continue;
            kcs_digest_seen(dig, &nd, 64, y->output_digest);
        }
        x->distinct_digests = nd;
        /* the reference output: the modal one when several ranks share it,
         * else the rank closest to this one (smallest max |y_a - y_b|) */
        int ref = -1;
        if (cls[r] >= 0 && modal >= 0 && size[modal] >= 2) {
            ref = cls[r] == modal ? r : modal;
        } else if (cls[r] >= 0) {
            double best = INFINITY;
            for (int q = 0; q < nr; q++) {
                if (q == r || cls[q] < 0)
                    continue;
                double dq = pairs[pair_index(r, q, nr)].max_abs_diff;
                if (!isnan(dq) && dq < best) {
                    best = dq;
                    ref = q;
                }
            }
        }
        if (ref == r) {
            x->frac_differ = 0.0;
            x->max_ulp_spread = 0.0;
            snprintf(x->pattern, sizeof x->pattern, "none");
        } else if (ref >= 0) {
            const kcs_divergence_row *p = &pairs[pair_index(r, ref, nr)];
            x->reference_rank = ref;
            x->frac_differ = p->frac_differ;
            x->max_ulp_spread = p->max_ulp_diff;
            snprintf(x->pattern, sizeof x->pattern, "%s", p->pattern);
        }
        int k;
        if (cls[r] < 0) {
            snprintf(x->determinism, sizeof x->determinism, "unmeasured");
            k = KCS_SIG_NONE;
        } else {
            int rep = have_protocol && protocol == KCS_PROTO_REPEAT;
            int bat = have_protocol && protocol == KCS_PROTO_BATCH_INVARIANCE;
            snprintf(x->determinism, sizeof x->determinism, "%s",
                     rep ? (fails ? "nondeterministic" : "deterministic") : "unmeasured");
            if (rep) {
                sum->repeat_cases[r]++;
                sum->repeat_fail[r] += fails;
            }
            if (bat) {
                sum->batch_cases[r]++;
                sum->batch_fail[r] += fails;
            }
            if (rep && fails)
                k = KCS_SIG_NONDET;
            else if (bat && fails)
                k = KCS_SIG_BATCH;
            else if (differs_from_stable(res, T, cls, r, nr, rep))
                k = KCS_SIG_SCHEDULE;
            else
                k = rep ? KCS_SIG_DETERMINISTIC : KCS_SIG_INVARIANT;
            if (!isnan(x->max_ulp_spread) && !(x->max_ulp_spread <= sum->max_ulp[r]))
                sum->max_ulp[r] = x->max_ulp_spread;
            if (!strcmp(x->pattern, "rows") || !strcmp(x->pattern, "cols"))
                sum->pattern_rows[r]++;
            else if (!strncmp(x->pattern, "tiles", 5))
                sum->pattern_tiles[r]++;
            else if (!strcmp(x->pattern, "everywhere"))
                sum->pattern_everywhere[r]++;
            else if (!strcmp(x->pattern, "scattered"))
                sum->pattern_scattered[r]++;
        }
        snprintf(x->klass, sizeof x->klass, "%s", kcs_sig_class_names[k]);
        sum->count[r * KCS_SIG_N + k]++;
    }
    free(cls);
    free(size);
}
