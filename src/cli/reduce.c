#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reduce.h"

int kcs_cmd_reduce(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "reduce", "DATASET.h5 [-o REPORT_DIR]",
        "Read a finished dataset back from disk, case by case, and write /analysis/verdicts\n"
        "and /analysis/divergence into it plus a Markdown report (verdict table, violations\n"
        "with their signatures, cross-rank divergence per case).",
        "The /analysis group is derived data: reducing again replaces it, and replaces\n"
        "REPORT_DIR/report.md. Nothing else in the dataset is modified.\n"
        "Default REPORT_DIR: DATASET without .h5, plus -report."};
    const char *out_dir = NULL;
    int quiet = 0;
    const kcs_opt opts[] = {
        {'o', "output", KCS_OPT_STR, &out_dir, "DIR", "report directory"},
        {'q', "quiet", KCS_OPT_FLAG, &quiet, NULL, "no summary line"},
        {0},
    };
    int npos = 0;
    int rc = kcs_cli_parse(&doc, opts, argc, argv, &npos);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (npos < 1) {
        fprintf(stderr, "kcs reduce: need a DATASET.h5 (see kcs reduce --help)\n");
        return 2;
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
    kcs_reduce_opts o = {(const char *const *)argv, npos, out_dir, quiet};
    kcs_error err = {0};
    rc = kcs_reduce_run(&o, &err);
    if (rc) {
        fprintf(stderr, "kcs reduce: %s\n", err.msg);
        return kcs_exit_status(rc);
    }
    return 0;
}
