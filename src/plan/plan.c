/* Expansion of a study into its plan of cases: shapes × input
 * distributions per case entry, in file order. Every rank builds the same
 * plan; its hash (XXH3 of a canonical text) is agreed by the runner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "held_out_draw.h"
#include "inputs_exact.h"
#include "rng.h"

#include "study.h"

/* SplitMix64 finalizer: derive a per-case seed from the study seed. */
static uint64_t mix64(uint64_t x)
{
    x += KCS_GOLDEN64;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Bytes one case needs on a rank: its inputs, the output with guards, the
 * reference and magnitudes, plus backend scratch of the size of the
 * largest input (transposes, term buffers). Computed in double so absurd
 * shapes cannot overflow. */
static double case_bytes(const kcs_case *cs)
{
    kcs_call c = {0};
    c.op = cs->op;
    c.m = cs->shape.m;
    c.n = cs->shape.n;
    c.k = cs->shape.k;
    c.batch = cs->shape.batch;
    double elems = 0.0, largest = 0.0;
    for (int i = 0; i < kcs_op_n_inputs(cs->op); i++) {
        double len = (double)kcs_op_in_len(&c, i);
        elems += len;
        largest = len > largest ? len : largest;
    }
    elems += 3.0 * (double)kcs_op_out_len(&c) + largest;
    return elems * sizeof(double);
}

int kcs_plan_build(const kcs_study *s, kcs_plan *plan_p, kcs_error *err)
{
    int64_t total = 0;
    for (int i = 0; i < s->n_sweeps; i++) {
        const kcs_sweep *w = &s->sweeps[i];
        const kcs_contract *c = s->contracts[w->contract];
        int ns = w->n_shapes ? w->n_shapes : c->n_shapes + c->n_held_out + c->held_out_draw;
        int nd = w->n_dists ? w->n_dists : c->n_dists;
        total += (int64_t)ns * nd;
    }
    if (total == 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: the study expands to no cases", s->path);
    kcs_plan p = {0};
    p.cases = calloc((size_t)total, sizeof *p.cases);
    XXH3_state_t *h = XXH3_createState();
    if (!p.cases || !h) {
        free(p.cases);
        XXH3_freeState(h);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory building the plan");
    }
    XXH3_64bits_reset(h);
    char line[512];
    /* v2: the input generator's version is part of the plan (rng.h); the
     * study's per-call time limit shapes results (timeout rows) */
    int len = snprintf(line, sizeof line, "kcs-plan-v2 inputs=%d seed=%llu samples=%d timeout=%.17g\n",
                       KCS_INPUTS_VERSION, (unsigned long long)s->seed, s->n_samples, s->timeout_s);
    XXH3_64bits_update(h, line, (size_t)len);
    for (int i = 0; i < s->n_contracts; i++) {
        /* The contract text is part of the plan: ranks must judge alike. */
        XXH3_64bits_update(h, s->contracts[i]->text, strlen(s->contracts[i]->text));
    }
    for (int r = 0; r < s->n_placement; r++) {
        char pl[256];
        kcs_placement_str(&s->placement[r], pl, sizeof pl);
        XXH3_64bits_update(h, pl, strlen(pl));
    }
    for (int i = 0; i < s->n_sweeps; i++) {
        const kcs_sweep *w = &s->sweeps[i];
        const kcs_contract *c = s->contracts[w->contract];
        /* The contract's own shapes are followed by its held-out classes
         * and the shapes it draws over its precondition (from the study's
         * seed: held_out_draw.h); a study that names its shapes measures
         * exactly those. */
        kcs_shape drawn[KCS_MAX_SHAPES];
        int n_drawn = w->n_shapes ? 0
                                  : kcs_held_out_draw(c, w->op, mix64(s->seed ^ mix64(c->seed)),
                                                      c->held_out_draw, drawn);
        int n_fixed = c->n_shapes + c->n_held_out;
        int ns = w->n_shapes ? w->n_shapes : n_fixed + n_drawn;
        int nd = w->n_dists ? w->n_dists : c->n_dists;
        const kcs_dist *dists = w->n_dists ? w->dists : c->dists;
        for (int a = 0; a < ns; a++) {
            int held = !w->n_shapes && a >= c->n_shapes;
            kcs_shape shape = w->n_shapes  ? w->shapes[a]
                              : a >= n_fixed ? drawn[a - n_fixed]
                              : held         ? c->held_out[a - c->n_shapes]
                                             : c->shapes[a];
            /* The contract's own shapes outside a per-op precondition
             * (precondition.per_op: narrower for this op) are not this
             * op's cases; a study's named shapes were checked on load. */
            if (!w->n_shapes && c->per_op[w->op].set &&
                kcs_op_narrowing_miss(&c->per_op[w->op], &shape) >= 0)
                continue;
            for (int b = 0; b < nd; b++) {
                /* Exact-sum inputs are measured on the ops that have them
                 * (a contract may list them beside ops such as attention). */
                if (dists[b] == KCS_DIST_EXACT && !kcs_exact_op_ok(w->op))
                    continue;
                if (dists[b] == KCS_DIST_EXACT &&
                    kcs_exact_check(w->op, &c->dtype_acc, w->dtype_in, w->dtype_out,
                                    kcs_exact_terms(w->op, shape.m, shape.k), err)) {
                    char why[KCS_ERRMSG_MAX];
                    snprintf(why, sizeof why, "%s", err->msg);
                    kcs_fail(err, KCS_E_INVAL, "%s: cases[%d]: %s", s->path, i, why);
                    free(p.cases);
                    XXH3_freeState(h);
                    return err->code;
                }
                kcs_case *cs = &p.cases[p.n_cases];
                cs->id = p.n_cases;
                cs->contract = w->contract;
                cs->op = w->op;
                cs->dtype_in = w->dtype_in;
                cs->dtype_out = w->dtype_out;
                cs->acc = c->dtype_acc;
                cs->shape = shape;
                cs->held_out = held;
                cs->dist = dists[b];
                cs->trials = w->trials ? w->trials : c->trials;
                cs->seed = mix64(s->seed ^ mix64((uint64_t)cs->id) ^ mix64(c->seed));
                if (cs->trials > p.max_trials)
                    p.max_trials = cs->trials;
                double need = case_bytes(cs) / (1024.0 * 1024.0);
                if (need > (double)s->max_memory_mib) {
                    kcs_fail(err, KCS_E_INVAL,
                             "%s: cases[%d]: shape [%lld, %lld, %lld, %lld] of %s needs %.0f MiB "
                             "per rank, above the cap of %lld MiB (max_memory_mib or "
                             "KCS_MAX_MEMORY_MIB)",
                             s->path, i, (long long)cs->shape.m, (long long)cs->shape.n,
                             (long long)cs->shape.k, (long long)cs->shape.batch,
                             kcs_op_name(cs->op), need, (long long)s->max_memory_mib);
                    free(p.cases);
                    XXH3_freeState(h);
                    return err->code;
                }
                char acc[16];
                len = snprintf(line, sizeof line,
                               "%lld %s %s %s %s %s %lld %lld %lld %lld %s %d %llu %d\n",
                               (long long)cs->id, c->id, kcs_op_name(cs->op),
                               kcs_format_name(cs->dtype_in), kcs_format_name(cs->dtype_out),
                               kcs_acc_str(&cs->acc, acc, sizeof acc), (long long)cs->shape.m,
                               (long long)cs->shape.n, (long long)cs->shape.k,
                               (long long)cs->shape.batch, kcs_dist_name(cs->dist), cs->trials,
                               (unsigned long long)cs->seed, cs->held_out);
                XXH3_64bits_update(h, line, (size_t)len);
                /* the narrow-output generator's version, after the lines
                 * of the cases that use it only (inputs_exact.h) */
                if (cs->dist == KCS_DIST_EXACT &&
                    kcs_exact_narrow_out(cs->op, &cs->acc, cs->dtype_out)) {
                    len = snprintf(line, sizeof line, "narrow=%d\n", KCS_INPUTS_NARROW_VERSION);
                    XXH3_64bits_update(h, line, (size_t)len);
                }
                p.n_cases++;
            }
        }
    }
    p.hash = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    if (p.n_cases == 0) {
        free(p.cases);
        return kcs_fail(err, KCS_E_INVAL, "%s: the study expands to no cases (exact inputs "
                        "exist for gemm, batched_gemm, dot and reduce_sum only)", s->path);
    }
    *plan_p = p;
    return 0;
}

void kcs_plan_free(kcs_plan *p)
{
    free(p->cases);
    memset(p, 0, sizeof *p);
}
