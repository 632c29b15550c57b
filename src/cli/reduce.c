#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "ci_report.h"
#include "cli.h"
#include "h5out.h"
#include "reduce.h"
#include "tolerances.h"

int kcs_cmd_reduce(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "reduce", "DATASET.h5 [MORE.h5 ...] [-o REPORT_DIR] [--tolerances FILE] [--json]\n"
        "       kcs reduce --tolerances FILE --query op=OP,dtype_in=D,k=K,outputs=N[,...]",
        "Read finished datasets back from disk, case by case, and write the analysis into\n"
        "REPORT_DIR: analysis.h5 (/analysis), CSV tables, figures and a Markdown report:\n"
        "per-(case, rank) verdicts,\n"
        "cross-rank divergence, divergence baselines (fits of divergence ~ n^alpha against the\n"
        "oracle and between ranks, linear-in-n tolerances eta = c_q n u for comparison,\n"
        "torch's default tolerance), ordering signatures. Several\n"
        "datasets are merged first (cases matched by contract, op, dtypes, shape, inputs and\n"
        "seed; refused with exit status 2 when their input digests differ; ranks of dataset 2\n"
        "follow those of dataset 1) into REPORT_DIR/merged.h5, itself a kcs dataset. A\n"
        "dataset of `kcs detect` gives its detection tables and curves.\n"
        "Every report directory gets tolerances.json: per (op, dtypes, accumulator) a tolerance\n"
        "model fitted on the conforming ranks (c n^alpha u or a per-n envelope, validity range,\n"
        "false-alarm target, outputs rule, torch assert_close pairs) with its held-out\n"
        "false-alarm rate. --tolerances FILE judges the dataset's trials with such a file\n"
        "(report section, judged.csv, judged_cases.csv); trials it judges outside a\n"
        "recommendation's scope (k outside its validity range, an absolute metric on other\n"
        "inputs) get a warning on stderr that states the scope. --query (no dataset) prints\n"
        "one recommendation of FILE evaluated at k for N outputs as JSON: eta, scale_free\n"
        "(relative to |A||B|), valid and its scope (op, dtypes, acc, metric, inputs, k range,\n"
        "N and N0, input scale); outside that scope also a warning on stderr. Query items:\n"
        "op, dtype_in, k, outputs (required), dtype_out, acc (to choose), inputs (checked).",
        "Datasets are only read, never written: each is verified first (its end of file,\n"
        "HDF5 checksums and the content digest of every raw group: a mismatch is exit 2\n"
        "naming the group; a dataset from before digests is read with a warning that it is\n"
        "unverified). REPORT_DIR is built as REPORT_DIR.partial-<pid> and replaces an\n"
        "earlier report in one rename only when complete; a failed reduce leaves the\n"
        "earlier report untouched. A non-empty REPORT_DIR that is not a kcs report is\n"
        "refused. analysis.h5 records every input's path and content digests.\n"
        "Figures: analysis/plot.py run by /usr/bin/python3 (KCS_PYTHON) with h5py and\n"
        "matplotlib, when there; the report does not need them.\n"
        "Default REPORT_DIR: the first DATASET without .h5, plus -report.\n"
        "--json prints one JSON object on stdout: a summary per dataset x contract x rank\n"
        "(verdicts of /results as `kcs run` recorded them) and, with --tolerances, the\n"
        "judgement (key `judged`: rank, implementation, trials and flagged per rank);\n"
        "--junit FILE writes the summary as JUnit XML.\n\n"
        "exit status: 0 done; 2 bad input (a file that is not a kcs dataset, datasets that\n"
        "cannot be merged); 1 I/O or internal failure; with --fail-on, 5 some trial is a\n"
        "violation or under-specified (violation), 6 some trial errored or a rank was\n"
        "unavailable (error), 5 before 6."};
    const char *out_dir = NULL, *merged = NULL, *plot_script = NULL;
    const char *tolerances = NULL, *false_alarm = NULL, *query = NULL;
    int quiet = 0, no_plots = 0, no_recompute = 0, json = 0;
    const char *junit = NULL, *fail_on_s = NULL;
    unsigned fail_on = 0;
    long long recompute_max = 0;
    const kcs_opt opts[] = {
        {'o', "output", KCS_OPT_STR, &out_dir, "DIR", "report directory"},
        {0, "merged", KCS_OPT_STR, &merged, "FILE", "merged dataset (default DIR/merged.h5)"},
        {0, "no-plots", KCS_OPT_FLAG, &no_plots, NULL, "do not run analysis/plot.py"},
        {0, "plot-script", KCS_OPT_STR, &plot_script, "FILE", "the plotting script to run"},
        {0, "no-recompute", KCS_OPT_FLAG, &no_recompute, NULL,
         "do not regenerate inputs (no |A||B| at the samples, no torch check)"},
        {0, "recompute-max", KCS_OPT_INT, &recompute_max, "N",
         "largest case (multiply-adds) whose inputs are regenerated (default 4e10)"},
        {0, "tolerances", KCS_OPT_STR, &tolerances, "FILE",
         "judge every trial with this tolerances.json"},
        {0, "query", KCS_OPT_STR, &query, "SPEC",
         "with --tolerances and no dataset: one tolerance and its scope as JSON"},
        {0, "false-alarm", KCS_OPT_STR, &false_alarm, "P",
         "false-alarm target per trial of the recommended tolerances (default 0.01)"},
        {'q', "quiet", KCS_OPT_FLAG, &quiet, NULL, "no summary line"},
        {0, "json", KCS_OPT_FLAG, &json, NULL,
         "one JSON object on stdout (the summary; with --tolerances also `judged`)"},
        {0, "junit", KCS_OPT_STR, &junit, "FILE", "write a JUnit XML report"},
        {0, "fail-on", KCS_OPT_STR, &fail_on_s, "WHAT",
         "violation, error or violation,error: exit 5 / 6 when the datasets have them"},
        {0},
    };
    char cmdline[2048];
    int npos = 0, rc = 0;
    if (kcs_cli_parse_recorded(&doc, opts, argc, argv, &npos, &rc, cmdline, sizeof cmdline))
        return rc;
    if (fail_on_s && kcs_ci_parse_fail_on(fail_on_s, &fail_on)) {
        fprintf(stderr, "kcs reduce: --fail-on %s: expected violation, error or "
                "violation,error\n", fail_on_s);
        return 2;
    }
    if (query) {
        if (!tolerances || npos > 0) {
            fprintf(stderr, "kcs reduce: --query needs --tolerances FILE and no dataset\n");
            return 2;
        }
        kcs_toljudge *tj = NULL;
        kcs_error qerr = {0};
        int qrc = kcs_toljudge_open(tolerances, NULL, 0, &tj, &qerr);
        if (!qrc)
            qrc = kcs_toljudge_query(tj, query, stdout, stderr, &qerr);
        kcs_toljudge_free(tj);
        if (qrc)
            fprintf(stderr, "kcs reduce: %s\n", qerr.msg);
        return qrc ? kcs_exit_status(qrc) : 0;
    }
    if (json)
        quiet = 1; /* stdout is the JSON document */
    if (npos < 1) {
        fprintf(stderr, "kcs reduce: need a DATASET.h5 (see kcs reduce --help)\n");
        return 2;
    }
    double p = 0.0;
    if (false_alarm) {
        char *end = NULL;
        p = strtod(false_alarm, &end);
        if (!end || *end || !(p > 0.0 && p < 0.5)) {
            fprintf(stderr, "kcs reduce: --false-alarm: '%s' is not a probability in (0, 0.5)\n",
                    false_alarm);
            return 2;
        }
    }
    char dflt[4096];
    if (!out_dir) {
        snprintf(dflt, sizeof dflt, "%s", argv[0]);
        size_t len = strlen(dflt);
        if (len > 3 && strcmp(dflt + len - 3, ".h5") == 0)
            dflt[len - 3] = 0;
        strncat(dflt, "-report", sizeof dflt - strlen(dflt) - 1);
        out_dir = dflt;
    }
    char *judged = NULL;
    kcs_reduce_opts o = {
        .inputs = (const char *const *)argv,
        .n_inputs = npos,
        .out_dir = out_dir,
        .merged_path = merged,
        .quiet = quiet,
        .no_plots = no_plots,
        .no_recompute = no_recompute,
        .recompute_max = (double)recompute_max,
        .plot_script = plot_script,
        .tolerances = tolerances,
        .json = json,
        .judged_json = json ? &judged : NULL,
        .false_alarm = p,
    };
    kcs_error err = {0};
    kcs_cli_catch_hdf5_crashes("kcs reduce");
    rc = kcs_reduce_run(&o, &err);
    if (rc) {
        fprintf(stderr, "kcs reduce: %s\n", err.msg);
        free(judged);
        /* A damaged file HDF5 failed to close stays in its tables, and its
         * exit handler crashed closing it again (found by
         * test_reduce_corrupt): leave without running exit handlers. */
        fflush(NULL);
        _exit(kcs_exit_status(rc));
    }
    if (!json && !junit && !fail_on)
        return 0;
    kcs_ci ci = {0};
    for (int i = 0; i < npos && !rc; i++)
        rc = kcs_ci_add_dataset(&ci, argv[i], &err);
    if (!rc && json)
        kcs_ci_json(&ci, stdout, cmdline, judged);
    if (!rc && junit)
        rc = kcs_ci_junit(&ci, junit, "kcs reduce", &err);
    int status = rc ? kcs_exit_status(rc) : kcs_ci_status(&ci, fail_on);
    if (rc)
        fprintf(stderr, "kcs reduce: %s\n", err.msg);
    kcs_ci_free(&ci);
    free(judged);
    return status;
}
