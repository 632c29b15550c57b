/* report.md's "Summation orders" section: the trees every rank's
 * implementation used, as `record_order: true` stored them in
 * /provenance/order (src/run/probe_order_record.c), and, per probed
 * reduction, which ranks summed in different trees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order_book.h"
#include "order_describe.h"
#include "report.h"
#include "signatures.h"

#define TREE_SHOWN 72

/* The trees of a probe: each one's name (order_describe.h) and its text,
 * cut. */
static void shown(FILE *f, const kcs_order_rec *w)
{
    for (int t = 0; t < w->ntrees; t++) {
        char *d = kcs_otree_describe_text(w->trees[t]);
        size_t n = strlen(w->trees[t]);
        if (t)
            fprintf(f, " · ");
        if (w->ntrees > 1)
            fprintf(f, "outputs %s: ", w->outputs[t]);
        fprintf(f, "%s", d ? d : "?");
        if (d && strncmp(d, "tree ", 5) != 0) {
            if (n <= TREE_SHOWN)
                fprintf(f, " `%s`", w->trees[t]);
            else
                fprintf(f, " `%.*s…` (%zu characters)", TREE_SHOWN, w->trees[t], n);
        }
        free(d);
    }
    if (w->call_varies)
        fprintf(f, "; another call: %s", w->nother ? "" : "no one tree");
    for (int t = 0; w->call_varies && t < w->nother; t++) {
        char *d = kcs_otree_describe_text(w->other[t]);
        fprintf(f, "%s%s%s%s", t ? " · " : "", w->nother > 1 ? "outputs " : "",
                w->nother > 1 ? w->other_outputs[t] : "", w->nother > 1 ? " " : "");
        fprintf(f, "%s", d ? d : "?");
        free(d);
    }
}

static int same_key(const kcs_order_rec *a, const kcs_order_rec *b)
{
    return !strcmp(a->key, b->key);
}

static int same_order(const kcs_order_rec *a, const kcs_order_rec *b)
{
    return !strcmp(a->joined, b->joined) && a->call_varies == b->call_varies;
}

void kcs_report_orders(FILE *f, const kcs_report_data *d)
{
    const kcs_order_book *b = d->orders;
    if (!b || !b->sources_with)
        return;
    fprintf(f, "## Summation orders\n\nThe study asked for `record_order: true`: every rank "
               "probed the summation tree of its implementation (`kcs probe --order`, "
               "docs/order.md) for each reduction of the plan it serves, on a corner of "
               "the case's shape (at most 8×8 outputs), at two call seeds (an order that "
               "changes between calls is named at both). Leaves are summation indices (for "
               "allreduce, the contributions); a node of more than two children is a fused "
               "multi-term addition; each tree is named by its shape where it has a known one "
               "(sequential, pairwise, blocked:B, splitk:S, fused:F, ring order, a drawn "
               "order). The full trees and the outputs that use each are in "
               "`/provenance/order`.\n\n");
    if (b->unreadable)
        fprintf(f, "%s\n\n", b->unreadable);
    const kcs_order_rec *r = b->r;
    int n = b->n;
    fprintf(f, "| rank | implementation | reduction (probed shape) | trees | order |\n"
               "|---:|---|---|---:|---|\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "| %d | %s | %s | ", r[i].rank, r[i].impl, r[i].key);
        if (r[i].error)
            fprintf(f, "— | not recovered: %s |\n", r[i].error);
        else {
            fprintf(f, "%d | ", r[i].ntrees);
            shown(f, &r[i]);
            fprintf(f, " |\n");
        }
    }
    /* ranks that summed the same reduction differently */
    int said = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].error)
            continue;
        int seen_before = 0;
        for (int j = 0; j < i && !seen_before; j++)
            seen_before = same_key(&r[j], &r[i]);
        if (seen_before)
            continue;
        int differ = 0;
        for (int j = i + 1; j < n; j++)
            differ |= !r[j].error && same_key(&r[j], &r[i]) && !same_order(&r[j], &r[i]);
        if (!differ)
            continue;
        if (!said++)
            fprintf(f, "\nRanks that summed the same reduction in different orders (their "
                       "outputs may differ in the last bits for that reason alone), with the "
                       "reducer's signature of each rank:\n\n");
        fprintf(f, "- %s:", r[i].key);
        int group = 0;
        for (int j = i; j < n; j++) {
            if (r[j].error || !same_key(&r[j], &r[i]))
                continue;
            int firstof = 1;
            for (int q = i; q < j && firstof; q++)
                firstof = r[q].error || !same_key(&r[q], &r[i]) || !same_order(&r[q], &r[j]);
            if (!firstof)
                continue;
            fprintf(f, "%s rank", group++ ? ";" : "");
            int cnt = 0;
            for (int q = j; q < n; q++)
                if (!r[q].error && same_key(&r[q], &r[i]) && same_order(&r[q], &r[j])) {
                    fprintf(f, "%s %d", cnt++ ? "," : "", r[q].rank);
                    int rk = r[q].rank;
                    for (int c = 0; d->sig && rk >= 0 && rk < d->view->n_ranks && c < KCS_SIG_NONE;
                         c++)
                        if (c != KCS_SIG_DETERMINISTIC && c != KCS_SIG_INVARIANT &&
                            d->sig->count[rk * KCS_SIG_N + c] > 0)
                            fprintf(f, " [%s in %lld cases]", kcs_sig_class_names[c],
                                    (long long)d->sig->count[rk * KCS_SIG_N + c]);
                }
            fprintf(f, " (%s) in ", r[j].impl);
            shown(f, &r[j]);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}
