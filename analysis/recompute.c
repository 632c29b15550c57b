/* Regenerated inputs and oracle magnitudes at the sampled positions
 * (recompute.h). */
#include "recompute.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "oracle.h"

#define CACHE_MAX 64

struct kcs_recompute {
    double max_work;
    int n;
    struct {
        int src;
        char id[KCS_ID_MAX];
        kcs_contract *c;
    } cache[CACHE_MAX];
};

size_t kcs_sample_index(int j, size_t out_len, int n_samples)
{
    return out_len ? (size_t)((double)j * (double)out_len / n_samples) : 0;
}

int kcs_case_from_rec(const kcs_case_rec *r, int64_t id, kcs_case *cs, kcs_error *err)
{
    memset(cs, 0, sizeof *cs);
    cs->id = id;
    if (kcs_op_parse(r->op, &cs->op) || kcs_format_parse(r->dtype_in, &cs->dtype_in) ||
        kcs_format_parse(r->dtype_out, &cs->dtype_out) || kcs_acc_parse(r->dtype_acc, &cs->acc) ||
        kcs_dist_parse(r->input_dist, &cs->dist))
        return kcs_fail(err, KCS_E_INVAL,
                        "case %" PRId64 ": op/dtype/accumulator/distribution names (%s %s %s %s "
                        "%s) unknown to this kcs",
                        r->case_id, r->op, r->dtype_in, r->dtype_out, r->dtype_acc, r->input_dist);
    cs->shape = (kcs_shape){r->m, r->n, r->k, r->batch};
    cs->trials = r->trials;
    cs->seed = r->seed;
    return 0;
}

int kcs_recompute_new(double max_work, kcs_recompute **rc_p, kcs_error *err)
{
    kcs_recompute *rc = calloc(1, sizeof *rc);
    if (!rc)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    rc->max_work = max_work;
    *rc_p = rc;
    return 0;
}

void kcs_recompute_free(kcs_recompute *rc)
{
    if (!rc)
        return;
    for (int i = 0; i < rc->n; i++)
        kcs_contract_free(rc->cache[i].c);
    free(rc);
}

const kcs_contract *kcs_recompute_contract(kcs_recompute *rc, kcs_view *v, int64_t c,
                                           kcs_error *err)
{
    const kcs_view_case *vc = &v->cases[c];
    int s = vc->first_src;
    for (int i = 0; i < rc->n; i++)
        if (rc->cache[i].src == s && strcmp(rc->cache[i].id, vc->rec.contract) == 0)
            return rc->cache[i].c;
    char obj[64], *text = NULL;
    snprintf(obj, sizeof obj, "/contracts/%s", vc->rec.contract);
    kcs_contract *k = NULL;
    if (kcs_store_read_text(v->src[s].r, obj, &text, err))
        return NULL;
    char where[300];
    snprintf(where, sizeof where, "%s:%s", v->src[s].path, obj);
    int r = kcs_contract_load_string(where, text, &k, err);
    free(text);
    if (r)
        return NULL;
    if (rc->n == CACHE_MAX) { /* evict the oldest */
        kcs_contract_free(rc->cache[0].c);
        memmove(&rc->cache[0], &rc->cache[1], (CACHE_MAX - 1) * sizeof rc->cache[0]);
        rc->n--;
    }
    rc->cache[rc->n].src = s;
    snprintf(rc->cache[rc->n].id, sizeof rc->cache[rc->n].id, "%s", vc->rec.contract);
    rc->cache[rc->n].c = k;
    rc->n++;
    return k;
}

static double work_of(const kcs_case *cs, const kcs_call *call)
{
    double b = cs->shape.batch > 0 ? (double)cs->shape.batch : 1.0;
    if (cs->op == KCS_OP_GEMM || cs->op == KCS_OP_BATCHED_GEMM || cs->op == KCS_OP_ATTENTION)
        return (double)cs->shape.m * (double)cs->shape.n * (double)cs->shape.k * b;
    double w = 0.0;
    for (int i = 0; i < kcs_op_n_inputs(cs->op); i++)
        w += (double)kcs_op_in_len(call, i);
    return w;
}

int kcs_recompute_case(kcs_recompute *rc, kcs_view *v, int64_t c, double *ref_s, double *absref_s,
                       kcs_recomputed *out, kcs_error *err)
{
    memset(out, 0, sizeof *out);
    const kcs_view_case *vc = &v->cases[c];
    const kcs_view_source *src = &v->src[vc->first_src];
    int ns = v->n_samples;
    if (!vc->origin_ok) {
        snprintf(out->why, sizeof out->why, "%s: no readable study seed", src->path);
        return 0;
    }
    kcs_error e = {0};
    const kcs_contract *k = kcs_recompute_contract(rc, v, c, &e);
    if (!k) {
        snprintf(out->why, sizeof out->why, "contract: %.140s", e.msg);
        return 0;
    }
    kcs_case cs;
    if (kcs_case_from_rec(&vc->rec, vc->origin_id, &cs, &e)) {
        snprintf(out->why, sizeof out->why, "%.150s", e.msg);
        return 0;
    }
    kcs_call call;
    kcs_trial_call(k, &cs, 0, &call);
    if (cs.trials < 0 || cs.trials > v->max_trials) {
        /* a damaged /cases row (found: 2^31 trials made reduce run for hours) */
        snprintf(out->why, sizeof out->why, "/cases says %d trials, /results holds %d",
                 cs.trials, v->max_trials);
        return 0;
    }
    if (work_of(&cs, &call) * (cs.trials > 0 ? cs.trials : 1) > rc->max_work) {
        snprintf(out->why, sizeof out->why, "larger than the recompute limit (%.3g)",
                 rc->max_work);
        return 0;
    }
    size_t out_len = kcs_op_out_len(&call);
    double *ref = malloc((out_len ? out_len : 1) * sizeof *ref);
    double *absref = malloc((out_len ? out_len : 1) * sizeof *absref);
    if (!ref || !absref) {
        free(ref);
        free(absref);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory recomputing case %" PRId64, c);
    }
    uint64_t digest = 0;
    int rcode = 0, have = 0;
    for (int t = 0; t < cs.trials; t++) {
        kcs_inputs in;
        kcs_trial_call(k, &cs, t, &call);
        if ((rcode = kcs_inputs_make(k, &cs, t, vc->origin_seed, &call, &in, err)))
            break;
        digest = kcs_input_digest_fold(digest, in.digest, t);
        if (t == 0) {
            double scale = 0.0;
            int orc = kcs_oracle_run(KCS_ORACLE_FP64, NULL, &call, ref, absref, &scale, &e);
            if (orc == 0) {
                have = 1;
                out->scale = scale;
            } else {
                snprintf(out->why, sizeof out->why, "oracle: %.140s", e.msg);
            }
        }
        kcs_inputs_free(&in);
    }
    if (!rcode && have) {
        if (digest != vc->rec.input_digest) {
            /* the plan regenerates other inputs than the run digested: a
             * damaged or edited /cases row, or another generator */
            free(ref);
            free(absref);
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: /cases: row %" PRId64 ": field input_digest: %016" PRIx64
                            ", but the inputs its plan regenerates digest to %016" PRIx64
                            " (a damaged or edited row; a dataset of a kcs with another input "
                            "generator reduces with --no-recompute)",
                            src->path, vc->src_idx[vc->first_src], vc->rec.input_digest, digest);
        } else {
            for (int j = 0; j < ns; j++) {
                size_t i = kcs_sample_index(j, out_len, ns);
                ref_s[j] = i < out_len ? ref[i] : NAN;
                absref_s[j] = i < out_len ? absref[i] : NAN;
            }
            out->ok = 1;
        }
    }
    if (rcode && rcode != KCS_E_NOMEM)
        snprintf(out->why, sizeof out->why, "inputs: %.140s", err->msg);
    free(ref);
    free(absref);
    return rcode == KCS_E_NOMEM ? rcode : 0;
}
