/* The merged view of one or several datasets (view.h). */
#include "view.h"
#include "grow.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "h5out.h"
#include "yamlx.h"

/* kcs_study_load's default seed (src/lang/study.c) for a study without `seed:`. */
#define KCS_DEFAULT_STUDY_SEED 20260601ull

static const kcs_field origin_fields[] = {
    KCS_FIELD(kcs_origin_rec, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_origin_rec, source, KCS_FIELD_I32),
    KCS_FIELD(kcs_origin_rec, source_case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_origin_rec, study_seed, KCS_FIELD_U64),
    KCS_FIELD(kcs_origin_rec, seed_ok, KCS_FIELD_I32),
};

KCS_FIELD_TABLE(kcs_origin_rec_fields, origin_fields)

int kcs_view_row_ran(const kcs_result_rec *x)
{
    return kcs_status_of(x->status) != KCS_ST_SKIPPED && kcs_status_of(x->status) != KCS_ST_ABSENT;
}

int kcs_view_study_seed(const char *text, uint64_t *seed_p, int *explicit_p, kcs_error *err)
{
    kcs_yctx y;
    int rc = kcs_yaml_open_string(&y, "/study", text, err);
    if (rc)
        return rc;
    uint64_t seed = KCS_DEFAULT_STUDY_SEED;
    int expl = 0;
    struct fy_node *v = kcs_yaml_get(&y, kcs_yaml_root(&y), "seed", false, "seed");
    int64_t s;
    if (v && kcs_yaml_int(&y, v, "seed", 0, INT64_MAX, &s)) {
        seed = (uint64_t)s;
        expl = 1;
    }
    rc = kcs_yaml_finish(&y, err);
    kcs_yaml_close(&y);
    if (rc)
        return rc;
    *seed_p = seed;
    *explicit_p = expl;
    return 0;
}

/* The identity of a case across datasets. */
static void case_key(const kcs_case_rec *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s|%s|%s|%s|%s|%" PRId64 "|%" PRId64 "|%" PRId64 "|%" PRId64 "|%s|%" PRIu64,
             c->contract, c->op, c->dtype_in, c->dtype_acc, c->dtype_out, c->m, c->n, c->k,
             c->batch, c->input_dist, c->seed);
}

static void case_label(const kcs_case_rec *c, char *buf, size_t len)
{
    snprintf(buf, len,
             "%s %s %s->%s acc %s, m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
             ", %s inputs, seed %" PRIu64,
             c->contract, c->op, c->dtype_in, c->dtype_out, c->dtype_acc, c->m, c->n, c->k,
             c->batch, c->input_dist, c->seed);
}

typedef struct hmap {
    int64_t *slot; /* view case index + 1, 0 = empty */
    uint64_t mask;
} hmap;

static int hmap_grow(hmap *h, const kcs_view *v, uint64_t need)
{
    uint64_t cap = 1024;
    while (cap < 2 * need)
        cap *= 2;
    if (h->slot && cap <= h->mask + 1)
        return 0;
    int64_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    free(h->slot);
    h->slot = s;
    h->mask = cap - 1;
    for (int64_t i = 0; i < v->n_cases; i++) {
        char key[512];
        case_key(&v->cases[i].rec, key, sizeof key);
        uint64_t p = XXH3_64bits(key, strlen(key)) & h->mask;
        while (h->slot[p])
            p = (p + 1) & h->mask;
        h->slot[p] = i + 1;
    }
    return 0;
}

static int add_source(kcs_view *v, int s, hmap *h, int64_t *cap_p, kcs_error *err)
{
    kcs_view_source *src = &v->src[s];
    int64_t n = src->info.n_cases;
    enum { BATCH = 1024 };
    kcs_case_rec *buf = malloc(BATCH * sizeof *buf);
    if (!buf)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory merging %s", src->path);
    /* a merged dataset says where the inputs of its cases come from */
    kcs_origin_rec *origin = NULL;
    int64_t n_origin = 0;
    int nf;
    const kcs_field *of = kcs_origin_rec_fields(&nf);
    int rc = kcs_h5in_table(src->path, "/provenance/case_origin", of, nf, sizeof *origin, 1,
                            (void **)&origin, &n_origin, err);
    if (!rc && origin && n_origin != n) {
        free(origin);
        origin = NULL;
    }
    for (int64_t first = 0; first < n && !rc; first += BATCH) {
        int64_t cnt = n - first < BATCH ? n - first : BATCH;
        if ((rc = kcs_store_read_cases(src->r, first, cnt, buf, err)))
            break;
        for (int64_t j = 0; j < cnt && !rc; j++) {
            const kcs_case_rec *c = &buf[j];
            char key[512];
            case_key(c, key, sizeof key);
            if (hmap_grow(h, v, (uint64_t)v->n_cases + 1) < 0) {
                rc = kcs_fail(err, KCS_E_NOMEM, "out of memory merging %s", src->path);
                break;
            }
            uint64_t p = XXH3_64bits(key, strlen(key)) & h->mask;
            int64_t found = -1;
            while (h->slot[p]) {
                char other[512];
                case_key(&v->cases[h->slot[p] - 1].rec, other, sizeof other);
                if (strcmp(key, other) == 0) {
                    found = h->slot[p] - 1;
                    break;
                }
                p = (p + 1) & h->mask;
            }
            if (found >= 0) {
                kcs_view_case *vc = &v->cases[found];
                if (vc->src_idx[s] >= 0) {
                    rc = kcs_fail(err, KCS_E_INVAL, "%s: cases %" PRId64 " and %" PRId64
                                  " are the same case; not a dataset kcs wrote",
                                  src->path, vc->src_case_id[s], c->case_id);
                    break;
                }
                if (vc->rec.input_digest != c->input_digest || vc->rec.trials != c->trials) {
                    char label[512];
                    case_label(c, label, sizeof label);
                    rc = kcs_fail(err, KCS_E_INVAL,
                                  "refusing to merge: %s (case %" PRId64 ") and %s (case %" PRId64
                                  ") hold the same case (%s) with different inputs: input "
                                  "digests %016" PRIx64 " over %d trials vs %016" PRIx64
                                  " over %d trials",
                                  v->src[vc->first_src].path, vc->src_case_id[vc->first_src],
                                  src->path, c->case_id, label, vc->rec.input_digest,
                                  vc->rec.trials, c->input_digest, c->trials);
                    break;
                }
                vc->src_idx[s] = first + j;
                vc->src_case_id[s] = c->case_id;
                src->n_matched++;
                continue;
            }
            if (v->n_cases == *cap_p) {
                int64_t nc = *cap_p ? 2 * *cap_p : 256;
                kcs_view_case *nv = realloc(v->cases, (size_t)nc * sizeof *nv);
                if (!nv) {
                    rc = kcs_fail(err, KCS_E_NOMEM, "out of memory merging %s", src->path);
                    break;
                }
                v->cases = nv;
                *cap_p = nc;
            }
            kcs_view_case *vc = &v->cases[v->n_cases];
            memset(vc, 0, sizeof *vc);
            vc->rec = *c;
            vc->rec.case_id = v->n_cases;
            for (int i = 0; i < KCS_VIEW_MAX_SOURCES; i++)
                vc->src_idx[i] = vc->src_case_id[i] = -1;
            vc->src_idx[s] = first + j;
            vc->src_case_id[s] = c->case_id;
            vc->first_src = s;
            vc->origin_id = c->case_id;
            vc->origin_seed = src->study_seed;
            vc->origin_ok = src->seed_ok;
            if (origin) { /* a merged dataset: where its inputs came from */
                const kcs_origin_rec *o = &origin[first + j];
                vc->origin_id = o->source_case_id;
                vc->origin_seed = o->study_seed;
                vc->origin_ok = o->seed_ok;
            }
            h->slot[p] = ++v->n_cases;
        }
    }
    free(buf);
    free(origin);
    return rc;
}

static int open_source(kcs_view *v, int s, const char *path, kcs_error *err)
{
    kcs_view_source *src = &v->src[s];
    src->path = strdup(path);
    if (!src->path)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    int rc = kcs_store_open_read(path, &src->r, err);
    if (rc)
        return rc;
    src->info = *kcs_store_reader_info(src->r);
    src->info.command_line = src->info.command_line ? strdup(src->info.command_line) : NULL;
    if (!src->info.complete)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: the dataset is incomplete (its run did not finish); rerun or "
                        "resume it first",
                        path);
    kcs_error e = {0};
    if (kcs_store_read_text(src->r, "/study", &src->study_text, &e) == 0 &&
        kcs_view_study_seed(src->study_text, &src->study_seed, &src->seed_ok, &e) == 0)
        src->seed_ok = 1;
    else
        src->seed_ok = 0;
    return 0;
}

int kcs_view_open(const char *const *paths, int n, kcs_view **v_p, kcs_error *err)
{
    if (n < 1 || n > KCS_VIEW_MAX_SOURCES)
        return kcs_fail(err, KCS_E_INVAL, "%d datasets: kcs reduce merges 1 to %d", n,
                        KCS_VIEW_MAX_SOURCES);
    kcs_view *v = calloc(1, sizeof *v);
    if (!v)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    int rc = 0;
    hmap h = {0};
    int64_t cap = 0;
    v->samples_comparable = 1;
    for (int s = 0; s < n && !rc; s++) {
        v->n_src = s + 1;
        if ((rc = open_source(v, s, paths[s], err)))
            break;
        v->src[s].first_rank = v->n_ranks;
        v->n_ranks += v->src[s].info.n_ranks;
        if (v->src[s].info.max_trials > v->max_trials)
            v->max_trials = v->src[s].info.max_trials;
        if (s == 0)
            v->n_samples = v->src[s].info.n_samples;
        else if (v->src[s].info.n_samples != v->n_samples)
            v->samples_comparable = 0;
        if (v->src[s].info.n_samples > v->n_samples)
            v->n_samples = v->src[s].info.n_samples;
    }
    if (!rc) {
        v->ranks = calloc((size_t)v->n_ranks, sizeof *v->ranks);
        v->rank_src = calloc((size_t)v->n_ranks, sizeof *v->rank_src);
        int T = v->max_trials > 0 ? v->max_trials : 1, ns = v->n_samples > 0 ? v->n_samples : 1;
        int maxr = 1;
        for (int s = 0; s < v->n_src; s++)
            maxr = v->src[s].info.n_ranks > maxr ? v->src[s].info.n_ranks : maxr;
        v->scratch_res = calloc((size_t)maxr * (size_t)T, sizeof *v->scratch_res);
        v->scratch_samples = calloc((size_t)maxr * (size_t)ns, sizeof *v->scratch_samples);
        if (!v->ranks || !v->rank_src || !v->scratch_res || !v->scratch_samples)
            rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    for (int s = 0; s < v->n_src && !rc; s++) {
        kcs_view_source *src = &v->src[s];
        if ((rc = kcs_store_read_ranks(src->r, v->ranks + src->first_rank, err)))
            break;
        for (int r = 0; r < src->info.n_ranks; r++) {
            v->ranks[src->first_rank + r].rank = src->first_rank + r;
            v->rank_src[src->first_rank + r] = s;
        }
        rc = add_source(v, s, &h, &cap, err);
    }
    free(h.slot);
    if (rc) {
        kcs_view_close(v);
        return rc;
    }
    *v_p = v;
    return 0;
}

void kcs_view_close(kcs_view *v)
{
    if (!v)
        return;
    for (int s = 0; s < v->n_src; s++) {
        kcs_store_reader_close(v->src[s].r);
        free(v->src[s].path);
        free(v->src[s].info.command_line);
        free(v->src[s].study_text);
    }
    KCS_FREE(v->ranks, v->rank_src, v->cases, v->scratch_res, v->scratch_samples, v);
}

static void blank_row(kcs_result_rec *x, int64_t case_id, int rank, int trial, kcs_status status)
{
    memset(x, 0, sizeof *x);
    x->case_id = case_id;
    x->rank = rank;
    x->trial = trial;
    KCS_SET_STATUS(x->status, status);
    x->tau = x->eta = x->max_abs = x->max_rel = x->max_ulp = x->mean_ulp = NAN;
    x->backward_err = x->max_scaled = x->effective_acc_bits = NAN;
}

int kcs_view_read_case(kcs_view *v, int64_t c, kcs_result_rec *res, double *samples,
                       int *have_samples_p, kcs_error *err)
{
    const kcs_view_case *vc = &v->cases[c];
    int T = v->max_trials, ns = v->n_samples;
    int have = 0;
    for (int s = 0; s < v->n_src; s++) {
        kcs_view_source *src = &v->src[s];
        int nr = src->info.n_ranks, Ts = src->info.max_trials, r0 = src->first_rank;
        if (vc->src_idx[s] < 0) {
            for (int r = 0; r < nr; r++)
                for (int t = 0; t < T; t++)
                    blank_row(&res[(r0 + r) * T + t], c, r0 + r, t, KCS_ST_ABSENT);
            for (int i = 0; samples && i < nr * ns; i++)
                samples[r0 * ns + i] = NAN;
            continue;
        }
        int rc;
        if (src->reads >= KCS_VIEW_REOPEN) {
            kcs_store_reader_close(src->r);
            src->r = NULL;
            /* verified at the first open: the same file, unchanged, needs
             * no second pass over its data */
            if ((rc = kcs_store_open_read_flags(src->path, KCS_READ_NO_DIGESTS, &src->r, err)))
                return rc;
            const kcs_file_id *a = &src->info.id, *b = &kcs_store_reader_info(src->r)->id;
            if (a->dev != b->dev || a->ino != b->ino || a->size != b->size ||
                a->mtime_ns != b->mtime_ns)
                return kcs_fail(err, KCS_E_INVAL,
                                "%s: the dataset changed while it was being reduced", src->path);
            src->reads = 0;
        }
        src->reads++;
        if ((rc = kcs_store_read_case_results(src->r, vc->src_idx[s], v->scratch_res, err)))
            return rc;
        for (int r = 0; r < nr; r++) {
            for (int t = 0; t < T; t++) {
                kcs_result_rec *x = &res[(r0 + r) * T + t];
                if (t < Ts)
                    *x = v->scratch_res[r * Ts + t];
                else
                    blank_row(x, c, r0 + r, t, KCS_ST_SKIPPED);
                x->case_id = c;
                x->rank = r0 + r;
            }
        }
        if (!samples)
            continue;
        int found = 0;
        if (src->info.n_samples > 0 &&
            (rc = kcs_store_read_samples(src->r, vc->src_case_id[s], v->scratch_samples, &found,
                                         err)))
            return rc;
        /* samples of a dataset that sampled other positions are not comparable */
        int usable = found && src->info.n_samples == ns;
        for (int r = 0; r < nr; r++)
            for (int i = 0; i < ns; i++)
                samples[(r0 + r) * ns + i] = usable ? v->scratch_samples[r * ns + i] : NAN;
        have |= usable;
    }
    *have_samples_p = have;
    return 0;
}
