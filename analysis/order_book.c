/* The summation trees of /provenance/order, read back (order_book.h). The
 * text is what probe_order_record.c writes: one record per rank, one probe
 * per reduction, whose strings hold no escapes but \" and \\. */
#include "order_book.h"

#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5out.h"
#include "order_describe.h"

/* The JSON string value after "key": in [p, end); malloc'd, or NULL. */
static char *str_after(const char *p, const char *end, const char *key)
{
    char pat[48];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *q = strstr(p, pat);
    if (!q || q >= end)
        return NULL;
    q += strlen(pat);
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    for (; s && *q && *q != '"'; q++) {
        if (*q == '\\' && q[1])
            q++;
        if (n + 2 > cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                return NULL;
            }
            s = t;
        }
        s[n++] = *q;
    }
    if (s)
        s[n] = '\0';
    return s;
}

static long num_after(const char *p, const char *end, const char *key)
{
    char pat[48];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *q = strstr(p, pat);
    return q && q < end ? strtol(q + strlen(pat), NULL, 10) : -1;
}

/* An output list "[0,1,2,5]" at q as ranges "0-2,5"; *end_p after ']'. */
static char *ranges(const char *q, const char **end_p)
{
    size_t cap = 64, len = 0;
    char *s = calloc(1, cap);
    long first = -1, last = -2;
    for (;;) {
        while (*q == ' ' || *q == ',')
            q++;
        int done = *q == ']' || !*q;
        long x = done ? -1 : strtol(q, (char **)&q, 10);
        if (!done && x == last + 1) {
            last = x;
            continue;
        }
        if (first >= 0 && s) {
            char part[48];
            int l = first == last ? snprintf(part, sizeof part, "%s%ld", len ? "," : "", first)
                                  : snprintf(part, sizeof part, "%s%ld-%ld", len ? "," : "",
                                             first, last);
            if (len + (size_t)l + 1 > cap) {
                char *t = realloc(s, cap = 2 * (len + (size_t)l + 1));
                if (!t) {
                    free(s);
                    s = NULL;
                }
                s = t;
            }
            if (s) {
                memcpy(s + len, part, (size_t)l + 1);
                len += (size_t)l;
            }
        }
        if (done)
            break;
        first = last = x;
    }
    *end_p = *q ? q + 1 : q;
    return s;
}

/* The trees of one probe: "{"outputs": [...], "KEY": "..."}" entries. */
static int trees_of(const char *p, const char *end, const char *key, char ***trees_p,
                    char ***outs_p)
{
    char pat[40];
    snprintf(pat, sizeof pat, ", \"%s\": \"", key);
    int n = 0;
    char **tr = NULL, **ou = NULL;
    const char *q = p;
    while ((q = strstr(q, "{\"outputs\": [")) && q < end) {
        const char *after;
        char *o = ranges(q + 13, &after);
        if (strncmp(after, pat, strlen(pat)) != 0) {
            free(o);
            q = after;
            continue;
        }
        char *t = str_after(after, end, key);
        char **nt = realloc(tr, (size_t)(n + 1) * sizeof *nt);
        if (nt)
            tr = nt;
        char **no = nt ? realloc(ou, (size_t)(n + 1) * sizeof *no) : NULL;
        if (no)
            ou = no;
        if (!t || !o || !nt || !no) {
            free(t);
            free(o);
            break;
        }
        tr[n] = t;
        ou[n++] = o;
        q = after;
    }
    *trees_p = tr;
    *outs_p = ou;
    return n;
}

static char *joined(char **t, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(t[i]) + 3;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(s, " | ");
        strcat(s, t[i]);
    }
    return s;
}

static int parse(const char *text, int src, int first_rank, kcs_order_book *b)
{
    const char *r = text;
    while ((r = strstr(r, "{\"rank\": "))) {
        const char *rend = strstr(r + 1, "{\"rank\": ");
        if (!rend)
            rend = r + strlen(r);
        int rank = (int)num_after(r, rend, "rank");
        char *be = str_after(r, rend, "backend"), *pr = str_after(r, rend, "profile");
        char *va = str_after(r, rend, "variant"), *sc = str_after(r, rend, "schedule");
        char impl[96];
        int own = va && !strcmp(va, "own") && !(pr && pr[0]);
        snprintf(impl, sizeof impl, "%s %s%s%s", be ? be : "?", pr && pr[0] ? pr : va ? va : "?",
                 own ? " " : "", own && sc ? sc : "");
        free(be);
        free(pr);
        free(va);
        free(sc);
        const char *p = r;
        while ((p = strstr(p, "{\"op\": ")) && p < rend) {
            const char *pend = strstr(p + 1, "{\"op\": ");
            if (!pend || pend > rend)
                pend = rend;
            kcs_order_rec *nr = realloc(b->r, (size_t)(b->n + 1) * sizeof *nr);
            if (!nr)
                return KCS_E_NOMEM;
            b->r = nr;
            kcs_order_rec *w = &b->r[b->n++];
            memset(w, 0, sizeof *w);
            w->rank = first_rank + rank;
            w->src = src;
            snprintf(w->impl, sizeof w->impl, "%s", impl);
            char *op = str_after(p, pend, "op"), *dt = str_after(p, pend, "dtype_in");
            snprintf(w->op, sizeof w->op, "%s", op ? op : "?");
            snprintf(w->dtype, sizeof w->dtype, "%s", dt ? dt : "?");
            free(op);
            free(dt);
            w->k = num_after(p, pend, "k");
            w->m = num_after(p, pend, "m");
            w->n = num_after(p, pend, "n");
            snprintf(w->key, sizeof w->key, "%s %s k %ld (%ldx%ld)", w->op, w->dtype, w->k, w->m,
                     w->n);
            w->error = str_after(p, pend, "error");
            w->ntrees = trees_of(p, pend, "tree", &w->trees, &w->outputs);
            w->joined = joined(w->trees, w->ntrees);
            const char *cv = strstr(p, "\"call_varies\": true");
            w->call_varies = cv && cv < pend;
            w->nother = trees_of(p, pend, "other_tree", &w->other, &w->other_outputs);
            w->other_error = str_after(p, pend, "other_call_error");
            if (!w->joined)
                return KCS_E_NOMEM;
            p = pend;
        }
        r = rend;
    }
    return 0;
}

int kcs_order_book_load(const kcs_view *v, kcs_order_book *b, kcs_error *err)
{
    memset(b, 0, sizeof *b);
    b->sources = v->n_src;
    for (int i = 0; i < v->n_src; i++) {
        const char *path = v->src[i].path;
        htri_t has = 0;
        H5E_BEGIN_TRY
        {
            hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
            if (file >= 0) {
                has = H5Lexists(file, "/provenance", H5P_DEFAULT) > 0 &&
                      H5Lexists(file, "/provenance/order", H5P_DEFAULT) > 0;
                H5Fclose(file);
            }
        }
        H5E_END_TRY;
        if (has <= 0)
            continue;
        b->sources_with++;
        char *text = NULL;
        kcs_error e = {0};
        if (kcs_h5in_text(path, "/provenance/order", &text, &e)) {
            if (!b->unreadable) {
                size_t n = strlen(path) + strlen(e.msg) + 48;
                if ((b->unreadable = malloc(n)))
                    snprintf(b->unreadable, n, "`%s`: /provenance/order unreadable: %s", path,
                             e.msg);
            }
            continue;
        }
        int rc = parse(text, i, v->src[i].first_rank, b);
        free(text);
        if (rc) {
            kcs_order_book_free(b);
            return kcs_fail(err, KCS_E_NOMEM, "reduce: out of memory reading /provenance/order");
        }
    }
    return 0;
}

static void free_list(char **l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

void kcs_order_book_free(kcs_order_book *b)
{
    for (int i = 0; i < b->n; i++) {
        kcs_order_rec *w = &b->r[i];
        free_list(w->trees, w->ntrees);
        free_list(w->outputs, w->ntrees);
        free_list(w->other, w->nother);
        free_list(w->other_outputs, w->nother);
        free(w->joined);
        free(w->error);
        free(w->other_error);
    }
    free(b->r);
    free(b->unreadable);
    memset(b, 0, sizeof *b);
}

const kcs_order_rec *kcs_order_book_find(const kcs_order_book *b, int rank, const char *op,
                                         const char *dtype, long k)
{
    for (int i = 0; i < b->n; i++)
        if (b->r[i].rank == rank && b->r[i].k == k && !strcmp(b->r[i].op, op) &&
            !strcmp(b->r[i].dtype, dtype))
            return &b->r[i];
    return NULL;
}

/* ---- sentences ------------------------------------------------------------ */

typedef struct sb {
    char *s;
    size_t len, cap;
    int oom;
} sb;

static void put(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sb *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (b->len + (size_t)n + 1 > b->cap &&
                  !(b->s = realloc(b->s, b->cap = 2 * (b->len + (size_t)n + 1))))) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static char *done(sb *b)
{
    if (b->oom) {
        free(b->s);
        return NULL;
    }
    return b->s ? b->s : calloc(1, 1);
}

/* "NAME" for one tree, "N trees by output position: outputs A in NAME, …" */
static void trees_phrase(sb *b, char **trees, char **outs, int n)
{
    enum { SHOW = 3 };
    if (n == 1) {
        char *d = kcs_otree_describe_text(trees[0]);
        put(b, "%s", d ? d : "?");
        free(d);
        return;
    }
    put(b, "%d trees by output position: ", n);
    for (int i = 0; i < n && i < SHOW; i++) {
        char *d = kcs_otree_describe_text(trees[i]);
        put(b, "%soutputs %s in %s", i ? ", " : "", outs[i], d ? d : "?");
        free(d);
    }
    if (n > SHOW)
        put(b, ", …");
}

static void rec_phrase(sb *b, const kcs_order_rec *w)
{
    trees_phrase(b, w->trees, w->outputs, w->ntrees);
    if (w->call_varies) {
        put(b, ", and ");
        if (w->nother)
            put(b, "in ");
        if (w->nother)
            trees_phrase(b, w->other, w->other_outputs, w->nother);
        else
            put(b, "in no one tree (%s)", w->other_error ? w->other_error : "not recovered");
        put(b, " on another call: its order changes between calls");
    }
}

char *kcs_order_book_name(const kcs_order_book *b, int rank, const char *op, const char *dtype,
                          long k)
{
    sb s = {0};
    if (!b || b->sources_with == 0) {
        put(&s, "order not recorded; run with record_order: true");
        return done(&s);
    }
    const kcs_order_rec *w = kcs_order_book_find(b, rank, op, dtype, k);
    if (!w) {
        put(&s, "rank %d's order of %s %s k %ld not recorded (record_order probes gemm, dot, "
                "reduce_sum, layernorm and allreduce with k <= 4096%s)",
            rank, op, dtype, k, b->unreadable ? "; " : "");
        if (b->unreadable)
            put(&s, "%s", b->unreadable);
        return done(&s);
    }
    if (w->error) {
        put(&s, "rank %d's order not recovered: %s", rank, w->error);
        return done(&s);
    }
    put(&s, "rank %d summed%s in ", rank, !strcmp(op, "allreduce") ? " the contributions" : "");
    rec_phrase(&s, w);
    /* the other ranks: those that differ named, the same ones counted */
    int named = 0, more = 0, same = 0;
    char same_list[256] = "";
    for (int i = 0; i < b->n; i++) {
        const kcs_order_rec *x = &b->r[i];
        if (x->rank == rank || x->k != k || strcmp(x->op, op) || strcmp(x->dtype, dtype) ||
            x->error)
            continue;
        if (!strcmp(x->joined, w->joined) && x->call_varies == w->call_varies) {
            size_t l = strlen(same_list);
            if (l + 16 < sizeof same_list)
                snprintf(same_list + l, sizeof same_list - l, "%s%d", same++ ? ", " : "",
                         x->rank);
            continue;
        }
        /* ranks that share x's order are named with the first of them */
        int earlier = 0;
        for (int j = 0; j < i && !earlier; j++) {
            const kcs_order_rec *y = &b->r[j];
            earlier = y->rank != rank && y->k == k && !strcmp(y->op, op) &&
                      !strcmp(y->dtype, dtype) && !y->error && !strcmp(y->joined, x->joined) &&
                      y->call_varies == x->call_varies;
        }
        if (earlier)
            continue;
        if (named >= 3) {
            more++;
            continue;
        }
        char list[256] = "";
        int cnt = 0;
        for (int j = i; j < b->n; j++) {
            const kcs_order_rec *y = &b->r[j];
            size_t l = strlen(list);
            if (y->rank != rank && y->k == k && !strcmp(y->op, op) && !strcmp(y->dtype, dtype) &&
                !y->error && !strcmp(y->joined, x->joined) && y->call_varies == x->call_varies &&
                l + 16 < sizeof list)
                snprintf(list + l, sizeof list - l, "%s%d", cnt++ ? ", " : "", y->rank);
        }
        put(&s, "; rank%s %s", cnt > 1 ? "s" : "", list);
        put(&s, " in ");
        rec_phrase(&s, x);
        named++;
    }
    if (more)
        put(&s, "; %d more rank%s otherwise", more, more > 1 ? "s" : "");
    if (same)
        put(&s, "; rank%s %s in the same order", same > 1 ? "s" : "", same_list);
    if (w->m * w->n > 1)
        put(&s, " (probed on %ld×%ld outputs)", w->m, w->n);
    return done(&s);
}

char *kcs_order_book_rank(const kcs_order_book *b, int rank)
{
    sb s = {0};
    int any = 0;
    for (int i = 0; b && i < b->n; i++) {
        const kcs_order_rec *w = &b->r[i];
        if (w->rank != rank)
            continue;
        put(&s, "%s%s %s k %ld: ", any++ ? "; " : "", w->op, w->dtype, w->k);
        if (w->error)
            put(&s, "not recovered (%s)", w->error);
        else
            rec_phrase(&s, w);
    }
    if (!any) {
        free(s.s);
        return NULL;
    }
    return done(&s);
}
