/* The public dataset-reading API (include/kcs_dataset.h): a thin layer over
 * the store's reader (store_read.h) with records of its own, so the
 * library's ABI does not follow the internal record layouts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcs_dataset.h"
#include "store_read.h"


struct kcs_dataset {
    kcs_store_reader *r;
    kcs_dataset_info info;
    kcs_case_rec case_rec; /* the last case read: its strings back kcs_dataset_case */
    kcs_result_rec *res;   /* n_ranks * max_trials internal rows ... */
    kcs_dataset_result *rows; /* ... and their public view */
    double *samples;
};

static int api_code(int code)
{
    switch (code) {
    case KCS_E_NOMEM:
        return KCS_DATASET_E_NOMEM;
    case KCS_E_IO:
        return KCS_DATASET_E_IO;
    default:
        return KCS_DATASET_E_INVAL;
    }
}

/* Copy err's message out and map its code. */
static int fail(const kcs_error *err, char *msg, size_t msg_len)
{
    if (msg && msg_len)
        snprintf(msg, msg_len, "%s", err->msg);
    return api_code(err->code);
}

static int fail_with(int code, char *msg, size_t msg_len, const char *text)
{
    if (msg && msg_len)
        snprintf(msg, msg_len, "%s", text);
    return code;
}

int kcs_dataset_api_version(void)
{
    return KCS_DATASET_API_VERSION;
}

int kcs_dataset_open(const char *path, kcs_dataset **ds_p, char *msg, size_t msg_len)
{
    if (!path || !ds_p)
        return fail_with(KCS_DATASET_E_INVAL, msg, msg_len, "kcs_dataset_open: NULL argument");
    kcs_error err = {0};
    kcs_dataset *ds = calloc(1, sizeof *ds);
    if (!ds)
        return fail_with(KCS_DATASET_E_NOMEM, msg, msg_len, "out of memory");
    int rc = kcs_store_open_read(path, &ds->r, &err);
    if (rc) {
        free(ds);
        return fail(&err, msg, msg_len);
    }
    const kcs_store_info *in = kcs_store_reader_info(ds->r);
    size_t rows = (size_t)in->n_ranks * (size_t)(in->max_trials > 0 ? in->max_trials : 1);
    size_t samples = (size_t)in->n_ranks * (size_t)(in->n_samples > 0 ? in->n_samples : 1);
    ds->res = calloc(rows, sizeof *ds->res);
    ds->rows = calloc(rows, sizeof *ds->rows);
    ds->samples = calloc(samples, sizeof *ds->samples);
    if (!ds->res || !ds->rows || !ds->samples) {
        kcs_dataset_close(ds);
        return fail_with(KCS_DATASET_E_NOMEM, msg, msg_len, "out of memory");
    }
    ds->info = (kcs_dataset_info){
        .schema_version = in->schema_version, .n_ranks = in->n_ranks, .n_cases = in->n_cases,
        .max_trials = in->max_trials, .n_samples = in->n_samples, .complete = in->complete,
        .study_name = in->study_name, .software_version = in->software_version,
        .git_hash = in->git_hash, .created = in->created, .plan_hash = in->plan_hash};
    *ds_p = ds;
    return 0;
}

void kcs_dataset_close(kcs_dataset *ds)
{
    if (!ds)
        return;
    if (ds->r)
        kcs_store_reader_close(ds->r);
    free(ds->res);
    free(ds->rows);
    free(ds->samples);
    free(ds);
}

const kcs_dataset_info *kcs_dataset_get_info(const kcs_dataset *ds)
{
    return ds ? &ds->info : NULL;
}

static int check_index(const kcs_dataset *ds, int64_t index, char *msg, size_t msg_len)
{
    if (!ds)
        return fail_with(KCS_DATASET_E_INVAL, msg, msg_len, "NULL dataset");
    if (index < 0 || index >= ds->info.n_cases) {
        if (msg && msg_len)
            snprintf(msg, msg_len, "%s: /cases: row %lld outside [0, %lld)",
                     kcs_store_reader_path(ds->r), (long long)index, (long long)ds->info.n_cases);
        return KCS_DATASET_E_RANGE;
    }
    return 0;
}

int kcs_dataset_get_case(kcs_dataset *ds, int64_t index, kcs_dataset_case *out,
                                 char *msg, size_t msg_len)
{
    int rc = check_index(ds, index, msg, msg_len);
    if (rc)
        return rc;
    if (!out)
        return fail_with(KCS_DATASET_E_INVAL, msg, msg_len, "kcs_dataset_get_case: NULL out");
    kcs_error err = {0};
    if (kcs_store_read_cases(ds->r, index, 1, &ds->case_rec, &err))
        return fail(&err, msg, msg_len);
    const kcs_case_rec *c = &ds->case_rec;
    *out = (kcs_dataset_case){
        .case_id = c->case_id, .contract = c->contract, .op = c->op, .variant = c->variant,
        .dtype_in = c->dtype_in, .dtype_acc = c->dtype_acc, .dtype_out = c->dtype_out,
        .m = c->m, .n = c->n, .k = c->k, .batch = c->batch, .input_dist = c->input_dist,
        .seed = c->seed, .input_digest = c->input_digest, .trials = c->trials};
    return 0;
}

int kcs_dataset_get_results(kcs_dataset *ds, int64_t index,
                                    const kcs_dataset_result **rows_p, int *n_p, char *msg,
                                    size_t msg_len)
{
    int rc = check_index(ds, index, msg, msg_len);
    if (rc)
        return rc;
    if (!rows_p || !n_p)
        return fail_with(KCS_DATASET_E_INVAL, msg, msg_len, "kcs_dataset_get_results: NULL out");
    kcs_error err = {0};
    if (kcs_store_read_case_results(ds->r, index, ds->res, &err))
        return fail(&err, msg, msg_len);
    int n = ds->info.n_ranks * ds->info.max_trials;
    for (int i = 0; i < n; i++) {
        const kcs_result_rec *x = &ds->res[i];
        ds->rows[i] = (kcs_dataset_result){
            .case_id = x->case_id, .rank = x->rank, .trial = x->trial, .status = x->status,
            .verdict = x->verdict, .signature = x->signature, .message = x->message,
            .output_digest = x->output_digest, .tau = x->tau, .eta = x->eta,
            .max_abs = x->max_abs, .max_rel = x->max_rel, .max_ulp = x->max_ulp,
            .mean_ulp = x->mean_ulp, .backward_err = x->backward_err,
            .nan_count = x->nan_count, .inf_count = x->inf_count, .guard_ok = x->guard_ok,
            .time_ns = x->time_ns};
    }
    *rows_p = ds->rows;
    *n_p = n;
    return 0;
}

int kcs_dataset_get_samples(kcs_dataset *ds, int64_t case_id, const double **values_p,
                                    int *n_p, char *msg, size_t msg_len)
{
    if (!ds || !values_p || !n_p)
        return fail_with(KCS_DATASET_E_INVAL, msg, msg_len, "kcs_dataset_get_samples: NULL argument");
    kcs_error err = {0};
    int found = 0;
    if (ds->info.n_samples <= 0) {
        *values_p = ds->samples;
        *n_p = 0;
        return 0;
    }
    if (kcs_store_read_samples(ds->r, case_id, ds->samples, &found, &err))
        return fail(&err, msg, msg_len);
    *values_p = ds->samples;
    *n_p = found ? ds->info.n_ranks * ds->info.n_samples : 0;
    return 0;
}

int kcs_dataset_get_text(kcs_dataset *ds, const char *object, char **text_p, char *msg,
                                 size_t msg_len)
{
    if (!ds || !object || !text_p)
        return fail_with(KCS_DATASET_E_INVAL, msg, msg_len, "kcs_dataset_get_text: NULL argument");
    if (strcmp(object, "/study") != 0 && strncmp(object, "/contracts/", 11) != 0)
        return fail_with(KCS_DATASET_E_INVAL, msg, msg_len,
                         "kcs_dataset_get_text: object must be /study or /contracts/<id>");
    kcs_error err = {0};
    if (kcs_store_read_text(ds->r, object, text_p, &err))
        return fail(&err, msg, msg_len);
    return 0;
}
