/* Writing the merged dataset (merge.h). */
#define _POSIX_C_SOURCE 200809L

#include "merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "build_info.h"
#include "store_digest.h"

struct kcs_merge_out {
    char *path;
    kcs_h5out *o;
    kcs_h5table *results;
};

static int root_attrs(kcs_merge_out *m, const kcs_view *v, const char *cmd, kcs_error *err)
{
    char created[32], name[64] = "merge:", hash[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    XXH3_state_t *h = XXH3_createState();
    if (!h)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    XXH3_64bits_reset(h);
    for (int s = 0; s < v->n_src; s++) {
        size_t used = strlen(name);
        snprintf(name + used, sizeof name - used, "%s%s", s ? " + " : " ",
                 v->src[s].info.study_name);
        XXH3_64bits_update(h, v->src[s].info.plan_hash, strlen(v->src[s].info.plan_hash));
    }
    snprintf(hash, sizeof hash, "%016" PRIx64, (uint64_t)XXH3_64bits_digest(h));
    XXH3_freeState(h);
    kcs_h5out *o = m->o;
    int rc;
    if ((rc = kcs_h5out_identity(o, created, "merged", cmd, err)) ||
        (rc = kcs_h5out_attr_str(o, "/", "study_name", name, err)) ||
        (rc = kcs_h5out_attr_str(o, "/", "plan_hash", hash, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "n_ranks", v->n_ranks, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "n_cases", v->n_cases, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "max_trials", v->max_trials, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "n_samples", v->n_samples, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "n_sources", v->n_src, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "complete", 0, err)))
        return rc;
    return 0;
}

static int source_provenance(kcs_merge_out *m, const kcs_view *v, int s, kcs_error *err)
{
    const kcs_view_source *src = &v->src[s];
    char g[96], obj[128];
    snprintf(g, sizeof g, "/provenance/sources/%d", s);
    int rc;
    if ((rc = kcs_h5out_group(m->o, g, err)))
        return rc;
    const kcs_store_info *in = &src->info;
    if ((rc = kcs_h5out_attr_str(m->o, g, "path", src->path, err)) ||
        (rc = kcs_h5out_attr_str(m->o, g, "study_name", in->study_name, err)) ||
        (rc = kcs_h5out_attr_str(m->o, g, "plan_hash", in->plan_hash, err)) ||
        (rc = kcs_h5out_attr_str(m->o, g, "created", in->created, err)) ||
        (rc = kcs_h5out_attr_str(m->o, g, "software_version", in->software_version, err)) ||
        (rc = kcs_h5out_attr_str(m->o, g, "git_hash", in->git_hash, err)) ||
        (rc = kcs_h5out_attr_str(m->o, g, "command_line",
                                 in->command_line ? in->command_line : "", err)) ||
        (rc = kcs_h5out_attr_i64(m->o, g, "n_ranks", in->n_ranks, err)) ||
        (rc = kcs_h5out_attr_i64(m->o, g, "first_rank", src->first_rank, err)) ||
        (rc = kcs_h5out_attr_i64(m->o, g, "n_cases", in->n_cases, err)))
        return rc;
    static const char *const objs[] = {"/provenance/build", "/provenance/ranks", "/study",
                                       "/contracts"};
    static const char *const names[] = {"build", "ranks", "study", "contracts"};
    for (int i = 0; i < 4; i++) {
        snprintf(obj, sizeof obj, "%s/%s", g, names[i]);
        kcs_error e = {0};
        /* a source without one of them (an older writer) still merges */
        if (kcs_h5out_copy(m->o, src->path, objs[i], obj, &e) && e.code != KCS_E_INVAL)
            return kcs_fail(err, e.code, "%s", e.msg);
    }
    return 0;
}

static int contracts_union(kcs_merge_out *m, const kcs_view *v, kcs_error *err)
{
    int rc = kcs_h5out_group(m->o, "/contracts", err);
    char **done = NULL;
    int nd = 0;
    for (int s = 0; s < v->n_src && !rc; s++) {
        char **ids = NULL;
        int n = 0;
        kcs_error e = {0};
        if (kcs_store_read_contract_ids(v->src[s].r, &ids, &n, &e))
            continue;
        for (int i = 0; i < n && !rc; i++) {
            int seen = 0;
            for (int j = 0; j < nd; j++)
                seen |= !strcmp(done[j], ids[i]);
            if (seen)
                continue;
            char obj[128], *text = NULL;
            snprintf(obj, sizeof obj, "/contracts/%s", ids[i]);
            if ((rc = kcs_store_read_text(v->src[s].r, obj, &text, err)))
                break;
            rc = kcs_h5out_text(m->o, obj, text, err);
            free(text);
            char **nd2 = realloc(done, (size_t)(nd + 1) * sizeof *done);
            if (!nd2 || !(nd2[nd] = strdup(ids[i]))) {
                done = nd2 ? nd2 : done;
                rc = rc ? rc : kcs_fail(err, KCS_E_NOMEM, "out of memory");
                break;
            }
            done = nd2;
            nd++;
        }
        kcs_store_strings_free(ids, n);
    }
    kcs_store_strings_free(done, nd);
    return rc;
}

int kcs_merge_out_open(const char *path, kcs_view *v, const char *command_line,
                       kcs_merge_out **m_p, kcs_error *err)
{
    kcs_merge_out *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    int rc = kcs_h5out_create(path, &m->o, err);
    if (rc) {
        free(m->path);
        free(m);
        return rc;
    }
    int nf;
    const kcs_field *f;
    if ((rc = root_attrs(m, v, command_line, err)) ||
        (rc = kcs_h5out_group(m->o, "/provenance", err)) ||
        (rc = kcs_h5out_group(m->o, "/provenance/sources", err)) ||
        (rc = kcs_h5out_group(m->o, "/samples", err)))
        goto fail;
    f = kcs_store_rank_fields(&nf);
    kcs_h5table *t = NULL;
    if ((rc = kcs_h5table_open(m->o, "/provenance/ranks", f, nf, sizeof(kcs_rank_rec), &t, err)))
        goto fail;
    rc = kcs_h5table_append(t, v->ranks, v->n_ranks, err);
    int r2 = kcs_h5table_close(t, err);
    if (rc || (rc = r2))
        goto fail;
    kcs_error e = {0};
    if (kcs_h5out_copy(m->o, v->src[0].path, "/provenance/build", "/provenance/build", &e) &&
        (rc = kcs_h5out_group(m->o, "/provenance/build", err)))
        goto fail;
    if ((rc = kcs_h5out_text(m->o, "/study", v->src[0].study_text ? v->src[0].study_text : "",
                             err)) ||
        (rc = contracts_union(m, v, err)))
        goto fail;
    for (int s = 0; s < v->n_src; s++)
        if ((rc = source_provenance(m, v, s, err)))
            goto fail;
    f = kcs_store_result_fields(&nf);
    if ((rc = kcs_h5table_open(m->o, "/results", f, nf, sizeof(kcs_result_rec), &m->results,
                               err)))
        goto fail;
    *m_p = m;
    return 0;
fail:
    kcs_merge_out_abort(m);
    return rc;
}

int kcs_merge_out_case(kcs_merge_out *m, const kcs_view *v, int64_t c, const kcs_result_rec *res,
                       const double *samples, int have_samples, kcs_error *err)
{
    int rc = kcs_h5table_append(m->results, res, (int64_t)v->n_ranks * v->max_trials, err);
    if (rc || !have_samples)
        return rc;
    char obj[48];
    snprintf(obj, sizeof obj, "/samples/%" PRId64, c);
    return kcs_h5out_matrix(m->o, obj, v->n_ranks, v->n_samples, samples, err);
}

int kcs_merge_out_finish(kcs_merge_out *m, const kcs_view *v, kcs_error *err)
{
    int rc = kcs_h5table_close(m->results, err);
    m->results = NULL;
    int nf, nof;
    const kcs_field *f = kcs_store_case_fields(&nf);
    const kcs_field *of = kcs_origin_rec_fields(&nof);
    kcs_h5table *cases = NULL, *orig = NULL;
    if (rc ||
        (rc = kcs_h5table_open(m->o, "/cases", f, nf, sizeof(kcs_case_rec), &cases, err)) ||
        (rc = kcs_h5table_open(m->o, "/provenance/case_origin", of, nof, sizeof(kcs_origin_rec),
                               &orig, err)))
        goto out;
    for (int64_t c = 0; c < v->n_cases && !rc; c++) {
        const kcs_view_case *vc = &v->cases[c];
        kcs_origin_rec o = {c, vc->first_src, vc->origin_id, vc->origin_seed, vc->origin_ok};
        if (!(rc = kcs_h5table_append(cases, &vc->rec, 1, err)))
            rc = kcs_h5table_append(orig, &o, 1, err);
    }
out:
    if (cases) {
        int r2 = kcs_h5table_close(cases, err);
        rc = rc ? rc : r2;
    }
    if (orig) {
        int r2 = kcs_h5table_close(orig, err);
        rc = rc ? rc : r2;
    }
    if (!rc && !(rc = kcs_h5out_attr_i64(m->o, "/", "complete", 1, err))) {
        rc = kcs_h5out_close(m->o, err);
        m->o = NULL;
        /* a kcs dataset like the run's: its raw groups sealed by digests */
        if (!rc)
            rc = kcs_store_seal(m->path, err);
        if (rc)
            remove(m->path);
    }
    kcs_merge_out_abort(m);
    return rc;
}

void kcs_merge_out_abort(kcs_merge_out *m)
{
    if (!m)
        return;
    if (m->results) {
        kcs_error e = {0};
        kcs_h5table_close(m->results, &e);
    }
    if (m->o) {
        kcs_h5out_abort(m->o);
        remove(m->path);
    }
    free(m->path);
    free(m);
}
