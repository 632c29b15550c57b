/* Machine-readable results for CI (ci_report.h). */
#include "ci_report.h"
#include "grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "store_read.h"

int kcs_ci_parse_fail_on(const char *s, unsigned *mask_p)
{
    unsigned m = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "violation") == 0)
            m |= KCS_FAIL_ON_VIOLATION;
        else if (strcmp(t, "error") == 0)
            m |= KCS_FAIL_ON_ERROR;
        else
            return -1;
    }
    if (!m || strlen(s) >= sizeof buf)
        return -1;
    *mask_p = m;
    return 0;
}

static kcs_ci_row *row_for(kcs_ci *ci, int ds, const char *contract, int rank,
                           const kcs_rank_rec *rr)
{
    for (int i = ci->n - 1; i >= 0; i--) {
        kcs_ci_row *r = &ci->rows[i];
        if (r->dataset == ds && r->rank == rank && strcmp(r->contract, contract) == 0)
            return r;
    }
    if (kcs_grow(&ci->rows, ci->n, &ci->cap, sizeof *ci->rows, 16))
        return NULL;
    kcs_ci_row *r = &ci->rows[ci->n++];
    memset(r, 0, sizeof *r);
    r->dataset = ds;
    r->rank = rank;
    r->max_tau = NAN;
    snprintf(r->contract, sizeof r->contract, "%s", contract);
    if (rr)
        snprintf(r->implementation, sizeof r->implementation, "%s%s%s%s", rr->variant,
                 rr->model[0] ? " (" : "", rr->model, rr->model[0] ? ")" : "");
    return r;
}

/* Add a comma-separated list of names to a set, without duplicates. */
static void add_names(char *set, size_t len, const char *list)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(t), used = strlen(set);
        int seen = 0;
        for (const char *p = set; (p = strstr(p, t)) != NULL; p += n)
            seen |= (p == set || p[-1] == ',') && (p[n] == ',' || p[n] == 0);
        if (!seen && used + n + 2 < len)
            snprintf(set + used, len - used, "%s%s", used ? "," : "", t);
    }
}

int kcs_ci_add_dataset(kcs_ci *ci, const char *path, kcs_error *err)
{
    kcs_store_reader *rd = NULL;
    int rc = kcs_store_open_read(path, &rd, err);
    if (rc)
        return rc;
    const kcs_store_info *in = kcs_store_reader_info(rd);
    int ds = ci->n_datasets++;
    if (ds < 8)
        snprintf(ci->datasets[ds], sizeof ci->datasets[ds], "%s", path);
    size_t per_case = (size_t)in->n_ranks * (size_t)in->max_trials;
    kcs_rank_rec *ranks = calloc((size_t)in->n_ranks + 1, sizeof *ranks);
    kcs_result_rec *res = calloc(per_case + 1, sizeof *res);
    kcs_case_rec cs;
    if (!ranks || !res) {
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory reading %s", path);
        goto out;
    }
    if ((rc = kcs_store_read_ranks(rd, ranks, err)))
        goto out;
    for (int64_t c = 0; c < in->n_cases; c++) {
        if ((rc = kcs_store_read_cases(rd, c, 1, &cs, err)) ||
            (rc = kcs_store_read_case_results(rd, c, res, err)))
            goto out;
        for (size_t i = 0; i < per_case; i++) {
            const kcs_result_rec *x = &res[i];
            if (strcmp(x->status, "skipped") == 0)
                continue;
            int rank = (int)(i / (size_t)in->max_trials);
            kcs_ci_row *r = row_for(ci, ds, cs.contract, rank, &ranks[rank]);
            if (!r) {
                rc = kcs_fail(err, KCS_E_NOMEM, "out of memory summarising %s", path);
                goto out;
            }
            r->trials++;
            if (!strcmp(x->verdict, "within_tolerance")) {
                r->within++;
            } else if (!strcmp(x->verdict, "not_claimed")) {
                r->not_claimed++;
            } else if (!strcmp(x->verdict, "violation") || !strcmp(x->verdict, "under_specified")) {
                if (x->verdict[0] == 'v')
                    r->violations++;
                else
                    r->under++;
                add_names(r->signatures, sizeof r->signatures, x->signature);
            } else if (!strcmp(x->verdict, "unavailable") || !strcmp(x->status, "unavailable")) {
                r->unavailable++;
                if (!r->message[0])
                    snprintf(r->message, sizeof r->message, "%s",
                             x->message[0] ? x->message : ranks[rank].why);
            } else {
                r->errors++;
                if (!r->message[0])
                    snprintf(r->message, sizeof r->message, "%s: %s", x->status,
                             x->message[0] ? x->message : x->signature);
            }
            if (!isnan(x->tau) && !(x->tau <= r->max_tau))
                r->max_tau = x->tau;
        }
    }
out:
    free(ranks);
    free(res);
    kcs_store_reader_close(rd);
    return rc;
}

static const char *row_verdict(const kcs_ci_row *r)
{
    if (r->errors || r->unavailable)
        return "ERROR";
    if (r->violations || r->under)
        return "FAIL";
    if (r->not_claimed && !r->within)
        return "NOT_CLAIMED";
    return "PASS";
}

void kcs_ci_json(const kcs_ci *ci, FILE *f, const char *command, const char *extra)
{
    int tot[7] = {0};
    for (int i = 0; i < ci->n; i++) {
        const kcs_ci_row *r = &ci->rows[i];
        tot[0] += r->trials;
        tot[1] += r->within;
        tot[2] += r->violations;
        tot[3] += r->under;
        tot[4] += r->errors;
        tot[5] += r->unavailable;
        tot[6] += r->not_claimed;
    }
    fprintf(f, "{\"command\": ");
    kcs_json_str(f, command);
    fprintf(f, ", \"datasets\": [");
    for (int d = 0; d < ci->n_datasets && d < 8; d++) {
        fprintf(f, "%s", d ? ", " : "");
        kcs_json_str(f, ci->datasets[d]);
    }
    fprintf(f, "],\n \"totals\": {\"trials\": %d, \"within_tolerance\": %d, \"violation\": %d, "
               "\"under_specified\": %d, \"error\": %d, \"unavailable\": %d, "
               "\"not_claimed\": %d},\n \"results\": [",
            tot[0], tot[1], tot[2], tot[3], tot[4], tot[5], tot[6]);
    for (int i = 0; i < ci->n; i++) {
        const kcs_ci_row *r = &ci->rows[i];
        fprintf(f, "%s\n  {\"dataset\": %d, \"contract\": ", i ? "," : "", r->dataset);
        kcs_json_str(f, r->contract);
        fprintf(f, ", \"rank\": %d, \"implementation\": ", r->rank);
        kcs_json_str(f, r->implementation);
        fprintf(f, ", \"verdict\": \"%s\", \"trials\": %d, \"within_tolerance\": %d, "
                   "\"violation\": %d, \"under_specified\": %d, \"error\": %d, "
                   "\"unavailable\": %d, \"not_claimed\": %d, \"max_tau\": ",
                row_verdict(r), r->trials, r->within, r->violations, r->under, r->errors,
                r->unavailable, r->not_claimed);
        if (isnan(r->max_tau) || isinf(r->max_tau))
            fprintf(f, "null");
        else
            fprintf(f, "%.17g", r->max_tau);
        fprintf(f, ", \"signatures\": ");
        kcs_json_str(f, r->signatures);
        fprintf(f, ", \"message\": ");
        kcs_json_str(f, r->message);
        fprintf(f, "}");
    }
    fprintf(f, "\n]");
    if (extra && *extra)
        fprintf(f, ",\n %s", extra);
    fprintf(f, "}\n");
}

static void xml_str(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p < 0x20 && *p != '\n' && *p != '\t')
                fputc('?', f); /* not allowed in XML 1.0 */
            else
                fputc(*p, f);
        }
    }
}

int kcs_ci_junit(const kcs_ci *ci, const char *path, const char *suite, kcs_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot write the JUnit report", path);
    int failures = 0, errors = 0;
    for (int i = 0; i < ci->n; i++) {
        const char *v = row_verdict(&ci->rows[i]);
        failures += v[0] == 'F';
        errors += v[0] == 'E';
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
               "  <testsuite name=\"");
    xml_str(f, suite);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\">\n", ci->n, failures, errors);
    for (int i = 0; i < ci->n; i++) {
        const kcs_ci_row *r = &ci->rows[i];
        char name[400];
        if (r->rank >= 0)
            snprintf(name, sizeof name, "rank %d: %s", r->rank, r->implementation);
        else
            snprintf(name, sizeof name, "%s", r->implementation);
        fprintf(f, "    <testcase classname=\"");
        xml_str(f, r->contract);
        fprintf(f, "\" name=\"");
        xml_str(f, name);
        fprintf(f, "\">");
        const char *v = row_verdict(r);
        char msg[160];
        if (v[0] == 'E') {
            snprintf(msg, sizeof msg, "%d of %d trials errored, %d unavailable", r->errors,
                     r->trials, r->unavailable);
            fprintf(f, "\n      <error type=\"error\" message=\"");
            xml_str(f, msg);
            fprintf(f, "\">");
            xml_str(f, r->message);
            fprintf(f, "</error>\n    ");
        } else if (v[0] == 'F') {
            snprintf(msg, sizeof msg, "%d of %d trials violate %s (%d under-specified)",
                     r->violations, r->trials, r->contract, r->under);
            fprintf(f, "\n      <failure type=\"violation\" message=\"");
            xml_str(f, msg);
            fprintf(f, "\">");
            xml_str(f, r->signatures);
            fprintf(f, "</failure>\n    ");
        } else if (v[0] == 'N') {
            snprintf(msg, sizeof msg, "not claimed: the kernel does not declare what %s binds "
                     "(%d trials measured, not judged)", r->contract, r->not_claimed);
            fprintf(f, "\n      <skipped message=\"");
            xml_str(f, msg);
            fprintf(f, "\"/>\n    ");
        }
        fprintf(f, "</testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    if (fclose(f) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot write the JUnit report", path);
    return 0;
}

int kcs_ci_status(const kcs_ci *ci, unsigned fail_on)
{
    int viol = 0, errs = 0;
    for (int i = 0; i < ci->n; i++) {
        viol |= ci->rows[i].violations + ci->rows[i].under > 0;
        errs |= ci->rows[i].errors + ci->rows[i].unavailable > 0;
    }
    if ((fail_on & KCS_FAIL_ON_VIOLATION) && viol)
        return KCS_EXIT_VIOLATION;
    if ((fail_on & KCS_FAIL_ON_ERROR) && errs)
        return KCS_EXIT_KERNEL_ERROR;
    return 0;
}

void kcs_ci_free(kcs_ci *ci)
{
    free(ci->rows);
    memset(ci, 0, sizeof *ci);
}
