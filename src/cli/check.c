#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "study.h"

int kcs_cmd_check(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "check", "STUDY.yaml [-n RANKS] [-o OUT.h5] [options]",
        "Check a study without running it: placement against the rank count, emulated\n"
        "profiles against the cases' ops and formats, every case against its contract's\n"
        "precondition (shapes, input distributions), the output path, and the backends and\n"
        "devices this node offers; then print the plan (ranks, cases x ranks, work).",
        "`kcs run` makes the same checks (but the devices) before it starts.\n"
        "A backend or device missing on this node is a warning (the node you check on may\n"
        "not be the node you run on); --require-devices makes it a problem.\n\n"
        "exit status: 0 no problem (warnings may be printed); 2 problems (each printed as\n"
        "'problem: FILE[:LINE]: ...') or bad input."};
    long long n = 0;
    const char *out = NULL;
    int force = 0, resume = 0, require = 0, subset = 0;
    const kcs_opt opts[] = {
        {'n', "ranks", KCS_OPT_INT, &n, "N", "ranks of the run (default: one per placement entry)"},
        {'o', "output", KCS_OPT_STR, &out, "FILE", "the output `kcs run -o` would write"},
        {0, "force", KCS_OPT_FLAG, &force, NULL, "the output may be replaced (as kcs run --force)"},
        {0, "resume", KCS_OPT_FLAG, &resume, NULL, "the run continues OUT's journal"},
        {0, "subset", KCS_OPT_FLAG, &subset, NULL, "the run passes --subset (fewer ranks ok)"},
        {0, "require-devices", KCS_OPT_FLAG, &require, NULL,
         "a backend or device missing here is a problem"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (npos != 1 || n < 0 || n > 1000000) {
        fprintf(stderr, "kcs check: need one STUDY file and -n >= 1 (see kcs check --help)\n");
        return 2;
    }
    kcs_study *s = NULL;
    kcs_plan plan = {0};
    kcs_error err = {0};
    if (kcs_study_load(argv[0], &s, &err) || kcs_plan_build(s, &plan, &err)) {
        fprintf(stderr, "kcs check: %s\n", err.msg);
        kcs_study_free(s);
        return 2;
    }
    kcs_check_opts o = {.n_ranks = (int)n, .out_path = out, .force = force, .resume = resume,
                        .devices = 1, .require_devices = require, .report = stdout,
                        .fewer_ranks_ok = subset};
    int problems = kcs_study_check(s, &plan, &o, &err);
    kcs_plan_free(&plan);
    kcs_study_free(s);
    return problems ? 2 : 0;
}
