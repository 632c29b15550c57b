/* The signature confusion matrix of kcs calibrate --cross (calibrate.h,
 * kcs_calib_confusion): which signature each bad implementation's failed
 * trials name first, over every contract that measured it. */
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "stats.h"

void kcs_confusion_free(kcs_confusion *m)
{
    free(m->impl);
    free(m->own);
    free(m->sig);
    free(m->count);
    free(m->failed);
    free(m->top);
    free(m->top_is_own);
    memset(m, 0, sizeof *m);
}

static int find_impl(const kcs_confusion *m, const char *impl)
{
    for (int i = 0; i < m->n_impl; i++)
        if (strcmp(m->impl[i], impl) == 0)
            return i;
    return -1;
}

static int find_sig(const kcs_confusion *m, const char *sig)
{
    for (int j = 0; j < m->n_sig; j++)
        if (strcmp(m->sig[j], sig) == 0)
            return j;
    return -1;
}

int kcs_calib_confusion(const kcs_calib_row *rows, int nr, kcs_contract *const *cs, int n,
                        kcs_confusion *m, kcs_error *err)
{
    memset(m, 0, sizeof *m);
    int cap_i = nr + 1, cap_s = nr * (KCS_MAX_SIGNATURES + 1) + 1;
    m->impl = calloc((size_t)cap_i, sizeof *m->impl);
    m->own = calloc((size_t)cap_i, sizeof *m->own);
    m->sig = calloc((size_t)cap_s, sizeof *m->sig);
    m->failed = calloc((size_t)cap_i, sizeof *m->failed);
    m->top = calloc((size_t)cap_i, sizeof *m->top);
    m->top_is_own = calloc((size_t)cap_i, sizeof *m->top_is_own);
    if (!m->impl || !m->own || !m->sig || !m->failed || !m->top || !m->top_is_own) {
        kcs_confusion_free(m);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for the confusion matrix");
    }
    int n_def = 0;
    const kcs_calib_defect *def = kcs_calib_defects(&n_def);
    /* rows: the implementations in the cross table's order, their own
     * signatures from the catalogue or the defect table */
    for (int k = 0; k < nr; k++) {
        const char *impl = rows[k].implementation;
        int i = find_impl(m, impl);
        if (i < 0) {
            i = m->n_impl++;
            snprintf(m->impl[i], sizeof m->impl[i], "%s", impl);
            for (int c = 0; c < n; c++) {
                char v[40];
                snprintf(v, sizeof v, "calib:%s:bad", cs[c]->id);
                const kcs_calib_entry *e = kcs_calib_find(cs[c]->id);
                if (e && strcmp(v, impl) == 0)
                    snprintf(m->own[i], sizeof m->own[i], "%s%s%s", e->expected,
                             e->family[0] ? "," : "", e->family);
            }
            for (int d = 0; d < n_def; d++)
                if (strcmp(def[d].variant, impl) == 0)
                    snprintf(m->own[i], sizeof m->own[i], "%s", def[d].expected);
        }
        m->failed[i] += rows[k].failed;
        for (int s = 0; s < rows[k].n_sig; s++)
            if (rows[k].sig_first[s] > 0 && find_sig(m, rows[k].sig_name[s]) < 0)
                snprintf(m->sig[m->n_sig++], sizeof m->sig[0], "%s", rows[k].sig_name[s]);
    }
    m->count = calloc((size_t)(m->n_impl * (m->n_sig ? m->n_sig : 1)), sizeof *m->count);
    if (!m->count) {
        kcs_confusion_free(m);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for the confusion matrix");
    }
    for (int k = 0; k < nr; k++) {
        int i = find_impl(m, rows[k].implementation);
        for (int s = 0; s < rows[k].n_sig; s++) {
            int j = find_sig(m, rows[k].sig_name[s]);
            if (j >= 0)
                m->count[i * m->n_sig + j] += rows[k].sig_first[s];
        }
    }
    for (int i = 0; i < m->n_impl; i++) {
        int best = -1;
        for (int j = 0; j < m->n_sig; j++) {
            int32_t c = m->count[i * m->n_sig + j];
            if (c > 0 && (best < 0 || c > m->count[i * m->n_sig + best]))
                best = j;
        }
        m->top[i] = best;
        /* own when every column holding the maximum is an own signature */
        int own = best >= 0;
        for (int j = 0; own && j < m->n_sig; j++)
            if (m->count[i * m->n_sig + j] == m->count[i * m->n_sig + best])
                own = kcs_calib_has_sig(m->own[i], m->sig[j]);
        m->top_is_own[i] = own;
    }
    return 0;
}

int kcs_confusion_print(FILE *f, const kcs_confusion *m, uint64_t seed)
{
    fprintf(f, "signature confusion matrix (seed %llu): each bad implementation (row) against "
               "every signature (column: the legend below), each cell the failed trials whose "
               "primary signature (first match) it is, over every contract that measured the "
               "implementation; **bold**: the row's top\n\n",
            (unsigned long long)seed);
    fprintf(f, "| bad implementation | own signature | failed | top is own |");
    for (int j = 0; j < m->n_sig; j++)
        fprintf(f, " %d |", j + 1);
    fprintf(f, "\n|---|---|---|---|");
    for (int j = 0; j < m->n_sig; j++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    int misses = 0;
    for (int i = 0; i < m->n_impl; i++) {
        misses += m->failed[i] > 0 && !m->top_is_own[i];
        fprintf(f, "| %s | %s | %d | %s |", m->impl[i], m->own[i][0] ? m->own[i] : "-",
                m->failed[i], m->failed[i] == 0 ? "not flagged" : m->top_is_own[i] ? "yes" : "NO");
        for (int j = 0; j < m->n_sig; j++) {
            int32_t c = m->count[i * m->n_sig + j];
            if (c == 0)
                fprintf(f, " |");
            else if (j == m->top[i])
                fprintf(f, " **%d** |", c);
            else
                fprintf(f, " %d |", c);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n| # | signature | primary for other implementations' failed trials | "
               "specificity [95%% CI] |\n|---|---|---|---|\n");
    for (int j = 0; j < m->n_sig; j++) {
        int64_t neg = 0, fp = 0;
        for (int i = 0; i < m->n_impl; i++)
            if (!kcs_calib_has_sig(m->own[i], m->sig[j])) {
                neg += m->failed[i];
                fp += m->count[i * m->n_sig + j];
            }
        double lo = 0, hi = 1;
        if (neg > 0)
            kcs_clopper_pearson(neg - fp, neg, 0.95, &lo, &hi);
        fprintf(f, "| %d | `%s` | %lld of %lld | %.4f [%.4f, %.4f] |\n", j + 1, m->sig[j],
                (long long)fp, (long long)neg, neg ? 1.0 - (double)fp / (double)neg : 1.0, lo,
                hi);
    }
    fprintf(f, "\n| bad implementation | own signature primary | sensitivity [95%% CI] |\n"
               "|---|---|---|\n");
    for (int i = 0; i < m->n_impl; i++) {
        int64_t tp = 0;
        for (int j = 0; j < m->n_sig; j++)
            if (kcs_calib_has_sig(m->own[i], m->sig[j]))
                tp += m->count[i * m->n_sig + j];
        double lo = 0, hi = 1;
        if (m->failed[i] > 0)
            kcs_clopper_pearson(tp, m->failed[i], 0.95, &lo, &hi);
        fprintf(f, "| %s | %lld of %d | %.4f [%.4f, %.4f] |\n", m->impl[i], (long long)tp,
                m->failed[i], m->failed[i] ? (double)tp / m->failed[i] : 0.0, lo, hi);
    }
    fprintf(f, "\n%d bad implementation(s) whose top signature is not their own\n", misses);
    return misses;
}
