/* Schema validation of the rows a reader hands out (store_read.h): every
 * enumerated text is one kcs writes, every count and shape within what a
 * plan can hold, every row where its position says. A row that fails is
 * bad input (KCS_E_INVAL) naming the file, the table, the row and the
 * field: the reducer never turns a value no writer produces into a
 * report. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "contract.h"
#include "format.h"
#include "op.h"
#include "store.h"
#include "store_read.h"

#define KCS_MAX_DIM ((int64_t)INT32_MAX)  /* m, n, k, batch */
#define KCS_MAX_WORK ((double)(1ull << 53)) /* m n k max(batch, 1) */

/* /results.verdict: the names of kcs_verdict_kind (src/judge/verdict.c),
 * and "" for a row that was not judged (skipped, absent). */
static const char *const verdicts[] = {"",      "within_tolerance", "violation", "under_specified",
                                       "error", "unavailable",      "not_claimed"};

int kcs_store_verdict_known(const char *v)
{
    for (size_t i = 0; i < sizeof verdicts / sizeof *verdicts; i++)
        if (!strcmp(v, verdicts[i]))
            return 1;
    return 0;
}

#define BAD(table, row, field, ...)                                                                \
    do {                                                                                           \
        char what_[512];                                                                           \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                                \
        return kcs_fail(err, KCS_E_INVAL, "%s: %s: row %" PRId64 ": field %s: %s", path, table,    \
                        (int64_t)(row), field, what_);                                             \
    } while (0)

int kcs_store_validate_results(const char *path, const kcs_result_rec *rows, int64_t first,
                               int64_t n, int n_ranks, int max_trials, kcs_error *err)
{
    for (int64_t j = 0; j < n; j++) {
        const kcs_result_rec *x = &rows[j];
        int64_t i = first + j;
        if (kcs_status_of(x->status) == KCS_ST_UNKNOWN)
            BAD("/results", i, "status", "\"%.16s\" is not a status kcs writes", x->status);
        if (!kcs_store_verdict_known(x->verdict))
            BAD("/results", i, "verdict", "\"%.24s\" is not a verdict kcs writes", x->verdict);
        if (x->guard_ok != 0 && x->guard_ok != 1)
            BAD("/results", i, "guard_ok", "%d (kcs writes 0 or 1)", (int)x->guard_ok);
        if (x->nan_count < 0 || x->inf_count < 0)
            BAD("/results", i, x->nan_count < 0 ? "nan_count" : "inf_count", "negative");
        if (max_trials > 0 && n_ranks > 0) {
            int64_t rank = i / max_trials % n_ranks, trial = i % max_trials;
            if (x->rank != rank)
                BAD("/results", i, "rank", "%d, but the row's position is rank %" PRId64,
                    (int)x->rank, rank);
            if (x->trial != trial)
                BAD("/results", i, "trial", "%d, but the row's position is trial %" PRId64,
                    (int)x->trial, trial);
        }
    }
    return 0;
}

int kcs_store_validate_cases(const char *path, const kcs_case_rec *rows, int64_t first, int64_t n,
                             int max_trials, kcs_error *err)
{
    for (int64_t j = 0; j < n; j++) {
        const kcs_case_rec *c = &rows[j];
        int64_t i = first + j;
        kcs_op op;
        kcs_format fmt;
        kcs_dist dist;
        if (kcs_op_parse(c->op, &op) != 0)
            BAD("/cases", i, "op", "\"%.32s\" is not an op kcs knows", c->op);
        if (kcs_format_parse(c->dtype_in, &fmt) != 0)
            BAD("/cases", i, "dtype_in", "\"%.16s\" is not a number format", c->dtype_in);
        if (kcs_format_parse(c->dtype_out, &fmt) != 0)
            BAD("/cases", i, "dtype_out", "\"%.16s\" is not a number format", c->dtype_out);
        if (kcs_dist_parse(c->input_dist, &dist) != 0)
            BAD("/cases", i, "input_dist", "\"%.32s\" is not an input distribution",
                c->input_dist);
        const int64_t dims[4] = {c->m, c->n, c->k, c->batch};
        const char *names[4] = {"m", "n", "k", "batch"};
        double work = 1.0;
        for (int d = 0; d < 4; d++) {
            if (dims[d] < 0 || dims[d] > KCS_MAX_DIM)
                BAD("/cases", i, names[d], "%" PRId64 " is outside [0, %" PRId64 "]", dims[d],
                    KCS_MAX_DIM);
            work *= dims[d] > 1 ? (double)dims[d] : 1.0;
        }
        if (work > KCS_MAX_WORK)
            BAD("/cases", i, "m", "a shape of %.3g multiply-adds (m n k batch) is more than "
                "kcs plans (%.3g)", work, KCS_MAX_WORK);
        if (c->trials < 0 || (max_trials >= 0 && c->trials > max_trials))
            BAD("/cases", i, "trials", "%d is outside [0, %d] (the table's max_trials)",
                (int)c->trials, max_trials);
    }
    return 0;
}
