/* kcs reduce: stream a dataset case by case into /analysis and a report. */
#include "reduce.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ensure_dir(const char *dir, kcs_error *err)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    return kcs_fail(err, KCS_E_IO, "%s: cannot create the report directory", dir);
}

static int reduce_one(const char *path, const char *out_dir, int quiet, kcs_error *err)
{
    kcs_store_reader *r = NULL;
    int rc = kcs_store_open_read(path, &r, err);
    if (rc)
        return rc;
    /* A copy of the header: the reader is closed before /analysis is
     * written (HDF5 opens a file once per process). */
    kcs_store_info info = *kcs_store_reader_info(r);
    const kcs_store_info *in = &info;
    char *cmdline = info.command_line ? strdup(info.command_line) : NULL;
    info.command_line = cmdline;
    kcs_rank_rec *ranks = NULL;
    kcs_case_rec cs;
    kcs_result_rec *res = NULL;
    double *samples = NULL;
    kcs_verdict_row *vrows = NULL;
    kcs_divergence_row *drows = NULL;
    kcs_store_analysis *an = NULL;
    if (!in->complete) {
        rc = kcs_fail(err, KCS_E_INVAL, "%s: the dataset is incomplete (its run did not finish); "
                      "rerun or resume it first", path);
        goto out;
    }
    int nr = in->n_ranks, T = in->max_trials, ns = in->n_samples;
    int64_t npairs = (int64_t)nr * (nr - 1) / 2;
    ranks = calloc((size_t)nr, sizeof *ranks);
    res = calloc((size_t)nr * (size_t)T, sizeof *res);
    samples = calloc((size_t)nr * (size_t)(ns > 0 ? ns : 1), sizeof *samples);
    vrows = calloc((size_t)(in->n_cases * nr), sizeof *vrows);
    drows = calloc((size_t)(in->n_cases * (npairs ? npairs : 1)), sizeof *drows);
    if (!ranks || !res || !samples || !vrows || !drows) {
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory reducing %lld cases", path,
                      (long long)in->n_cases);
        goto out;
    }
    if ((rc = kcs_store_read_ranks(r, ranks, err)))
        goto out;
    for (int64_t c = 0; c < in->n_cases; c++) {
        int found = 0;
        if ((rc = kcs_store_read_cases(r, c, 1, &cs, err)) ||
            (rc = kcs_store_read_case_results(r, c, res, err)) ||
            (rc = kcs_store_read_samples(r, cs.case_id, samples, &found, err)))
            goto out;
        kcs_reduce_verdicts(&cs, res, ranks, nr, T, vrows + c * nr);
        kcs_reduce_divergence(&cs, res, found ? samples : NULL, nr, T, ns, drows + c * npairs);
    }
    kcs_store_reader_close(r);
    r = NULL;

    int nf;
    const kcs_field *f;
    if ((rc = kcs_store_analysis_open(path, 0, &an, err)))
        goto out;
    f = kcs_verdict_row_fields(&nf);
    if ((rc = kcs_store_analysis_write_table(an, "verdicts", f, nf, sizeof *vrows, vrows,
                                             in->n_cases * nr, err)))
        goto out;
    f = kcs_divergence_row_fields(&nf);
    if ((rc = kcs_store_analysis_write_table(an, "divergence", f, nf, sizeof *drows, drows,
                                             in->n_cases * npairs, err)))
        goto out;
    rc = kcs_store_analysis_close(an, err);
    an = NULL;
    if (rc)
        goto out;

    if ((rc = ensure_dir(out_dir, err)))
        goto out;
    char report[4096];
    snprintf(report, sizeof report, "%s/report.md", out_dir);
    kcs_report_data d = {
        .dataset = path, .info = in, .ranks = ranks, .verdicts = vrows,
        .n_verdicts = in->n_cases * nr, .div = drows, .n_div = in->n_cases * npairs,
    };
    if ((rc = kcs_report_write(report, &d, err)))
        goto out;
    if (!quiet)
        printf("kcs reduce: %s: %lld cases x %d ranks -> /analysis/{verdicts,divergence}, %s\n",
               path, (long long)d.info->n_cases, nr, report);
out:
    if (an) {
        kcs_error ignore = {0};
        kcs_store_analysis_close(an, &ignore);
    }
    if (r)
        kcs_store_reader_close(r);
    free(ranks);
    free(res);
    free(samples);
    free(vrows);
    free(drows);
    free(cmdline);
    return rc;
}

int kcs_reduce_run(const kcs_reduce_opts *o, kcs_error *err)
{
    if (o->n_inputs != 1)
        return kcs_fail(err, KCS_E_INVAL,
                        "merging %d datasets is not supported by this version of kcs reduce; "
                        "reduce them one at a time", o->n_inputs);
    return reduce_one(o->inputs[0], o->out_dir, o->quiet, err);
}
