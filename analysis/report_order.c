/* report.md's "Summation orders" section: the trees every rank's
 * implementation used, as `record_order: true` stored them in
 * /provenance/order (src/run/probe_order_record.c), and, per probed
 * reduction, which ranks summed in different trees. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5out.h"
#include "report.h"
#include "signatures.h"

#define TREE_SHOWN 72

/* The JSON string value after "key": in [p, end) (no escapes but \" and
 * \\ occur in what the probe writes); malloc'd, or NULL. */
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

typedef struct probe_row {
    int rank;
    char impl[96];
    char key[96];   /* op dtype k mxn */
    char *trees;    /* the trees, " | "-joined (outputs listed when > 1) */
    int ntrees;
    char *error;
} probe_row;

/* One record per probe of one rank, in text order. */
static int parse(const char *text, probe_row **rows_p)
{
    int n = 0, cap = 0;
    probe_row *rows = NULL;
    const char *r = text;
    while ((r = strstr(r, "{\"rank\": "))) {
        const char *rend = strstr(r + 1, "{\"rank\": ");
        if (!rend)
            rend = r + strlen(r);
        int rank = (int)num_after(r, rend, "rank");
        char *be = str_after(r, rend, "backend"), *pr = str_after(r, rend, "profile");
        char *va = str_after(r, rend, "variant"), *sc = str_after(r, rend, "schedule");
        char impl[96];
        snprintf(impl, sizeof impl, "%s %s%s%s", be ? be : "?",
                 pr && pr[0] ? pr : va ? va : "?",
                 va && !strcmp(va, "own") && !(pr && pr[0]) ? " " : "",
                 va && !strcmp(va, "own") && !(pr && pr[0]) && sc ? sc : "");
        free(be);
        free(pr);
        free(va);
        free(sc);
        const char *p = r;
        while ((p = strstr(p, "{\"op\": ")) && p < rend) {
            const char *pend = strstr(p + 1, "{\"op\": ");
            if (!pend || pend > rend)
                pend = rend;
            if (n == cap) {
                probe_row *t = realloc(rows, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *t);
                if (!t)
                    break;
                rows = t;
            }
            probe_row *w = &rows[n++];
            memset(w, 0, sizeof *w);
            w->rank = rank;
            snprintf(w->impl, sizeof w->impl, "%s", impl);
            char *op = str_after(p, pend, "op"), *dt = str_after(p, pend, "dtype_in");
            snprintf(w->key, sizeof w->key, "%s %s k %ld (%ldx%ld)", op ? op : "?", dt ? dt : "?",
                     num_after(p, pend, "k"), num_after(p, pend, "m"), num_after(p, pend, "n"));
            free(op);
            free(dt);
            w->error = str_after(p, pend, "error");
            size_t len = 1;
            w->trees = calloc(1, 1);
            const char *t = p;
            while (w->trees && (t = strstr(t, "\"tree\": \"")) && t < pend) {
                char *tr = str_after(t, pend, "tree");
                if (!tr)
                    break;
                char *nt = realloc(w->trees, len + strlen(tr) + 4);
                if (!nt) {
                    free(tr);
                    break;
                }
                w->trees = nt;
                if (w->ntrees++)
                    strcat(w->trees, " | ");
                strcat(w->trees, tr);
                len = strlen(w->trees) + 1;
                free(tr);
                t += 9;
            }
            p = pend;
        }
        r = rend;
    }
    *rows_p = rows;
    return n;
}

static void shown(FILE *f, const char *tree)
{
    size_t n = strlen(tree);
    if (n <= TREE_SHOWN)
        fprintf(f, "`%s`", tree);
    else
        fprintf(f, "`%.*s…` (%zu characters)", TREE_SHOWN, tree, n);
}

/* The section for one dataset; nothing when it has no /provenance/order. */
static void one(FILE *f, const char *path, int first, const kcs_report_data *d)
{
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
        return;
    char *text = NULL;
    kcs_error err = {0};
    if (first)
        fprintf(f, "## Summation orders\n\nThe study asked for `record_order: true`: every rank "
                   "probed the summation tree of its implementation (`kcs probe --order`, "
                   "docs/order.md) for each reduction of the plan it serves, on a corner of "
                   "the case's shape (at most 8×8 outputs). Leaves are summation indices; a "
                   "node of more than two children is a fused multi-term addition. The full "
                   "trees and the outputs that use each are in `/provenance/order`.\n\n");
    if (kcs_h5in_text(path, "/provenance/order", &text, &err)) {
        fprintf(f, "`%s`: /provenance/order unreadable: %s\n\n", path, err.msg);
        return;
    }
    probe_row *rows = NULL;
    int n = parse(text, &rows);
    fprintf(f, "| rank | implementation | reduction (probed shape) | trees | tree |\n"
               "|---:|---|---|---:|---|\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "| %d | %s | %s | ", rows[i].rank, rows[i].impl, rows[i].key);
        if (rows[i].error)
            fprintf(f, "— | not recovered: %s |\n", rows[i].error);
        else {
            fprintf(f, "%d | ", rows[i].ntrees);
            shown(f, rows[i].trees);
            fprintf(f, " |\n");
        }
    }
    /* ranks that summed the same reduction differently */
    int said = 0;
    for (int i = 0; i < n; i++) {
        if (rows[i].error)
            continue;
        int seen_before = 0;
        for (int j = 0; j < i && !seen_before; j++)
            seen_before = !strcmp(rows[j].key, rows[i].key);
        if (seen_before)
            continue;
        int differ = 0;
        for (int j = i + 1; j < n; j++)
            differ |= !rows[j].error && !strcmp(rows[j].key, rows[i].key) &&
                      strcmp(rows[j].trees, rows[i].trees) != 0;
        if (!differ)
            continue;
        if (!said++)
            fprintf(f, "\nRanks that summed the same reduction in different orders (their "
                       "outputs may differ in the last bits for that reason alone):\n\n");
        fprintf(f, "- %s:", rows[i].key);
        int group = 0;
        for (int j = i; j < n; j++) {
            if (rows[j].error || strcmp(rows[j].key, rows[i].key))
                continue;
            int firstof = 1;
            for (int q = i; q < j && firstof; q++)
                firstof = rows[q].error || strcmp(rows[q].key, rows[i].key) ||
                          strcmp(rows[q].trees, rows[j].trees);
            if (!firstof)
                continue;
            fprintf(f, "%s rank%s", group++ ? ";" : "", "");
            int cnt = 0;
            for (int q = j; q < n; q++)
                if (!rows[q].error && !strcmp(rows[q].key, rows[i].key) &&
                    !strcmp(rows[q].trees, rows[j].trees)) {
                    fprintf(f, "%s %d", cnt++ ? "," : "", rows[q].rank);
                    /* the reducer's signature of that rank (one dataset: same ranks) */
                    int rk = rows[q].rank;
                    if (d && d->sig && d->view->n_src == 1 && rk >= 0 && rk < d->view->n_ranks &&
                        d->sig->count[rk * KCS_SIG_N + KCS_SIG_SCHEDULE] > 0)
                        fprintf(f, " [%s in %lld cases]", kcs_sig_class_names[KCS_SIG_SCHEDULE],
                                (long long)d->sig->count[rk * KCS_SIG_N + KCS_SIG_SCHEDULE]);
                }
            fprintf(f, " (%s) in ", rows[j].impl);
            shown(f, rows[j].trees);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        free(rows[i].trees);
        free(rows[i].error);
    }
    free(rows);
    free(text);
}

void kcs_report_orders(FILE *f, const kcs_report_data *d)
{
    int first = 1;
    for (int i = 0; i < d->view->n_src; i++) {
        long before = ftell(f);
        one(f, d->view->src[i].path, first, d);
        if (ftell(f) != before)
            first = 0;
    }
}
