#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "detect.h"

static int parse_pos(const char *s, const char *name, double *v_p)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v > 0.0)) {
        fprintf(stderr, "kcs detect: --%s: '%s' is not a positive number\n", name, s);
        return 2;
    }
    *v_p = v;
    return 0;
}

int kcs_cmd_detect(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "detect", "STUDY.yaml -o DET.h5",
        "Detection curves by error injection (serial, no MPI). For every gemm case of the\n"
        "study, the output of its first placement (the conforming implementation, e.g. cpu\n"
        "native) is corrupted by single-element, dense and one-row errors of magnitude m x eta\n"
        "(eta the contract's tolerance; m log-spaced from --min to --max; each also stated\n"
        "relative to the row's largest |y|), by bf16-coerced inputs and by a stale row, and\n"
        "judged by the full oracle verdict, the output digest, torch.testing.assert_close's\n"
        "defaults and Freivalds checks (rigorous, probabilistic, and the paper harness's fixed\n"
        "tolerance). Magnitude 0: every placement's own output, for false alarms on conforming\n"
        "implementations (--inputs N: N input sets, more conforming outputs).",
        "kcs reduce DET.h5 -o DIR renders the detection tables and curves."};
    const char *out = NULL, *smin = NULL, *smax = NULL;
    long long trials = 200, mags = 13, inputs = 0, probes = 10;
    int force = 0, quiet = 0;
    const kcs_opt opts[] = {
        {'o', "output", KCS_OPT_STR, &out, "FILE", "detection dataset to write"},
        {0, "trials", KCS_OPT_INT, &trials, "N", "injections per magnitude and kind (200)"},
        {0, "magnitudes", KCS_OPT_INT, &mags, "N", "number of magnitudes (13)"},
        {0, "min", KCS_OPT_STR, &smin, "X", "smallest magnitude, x eta (0.01)"},
        {0, "max", KCS_OPT_STR, &smax, "X", "largest magnitude, x eta (100)"},
        {0, "inputs", KCS_OPT_INT, &inputs, "N", "input sets per case (min(trials, 4))"},
        {0, "probes", KCS_OPT_INT, &probes, "K", "Freivalds probe vectors (10)"},
        {'f', "force", KCS_OPT_FLAG, &force, NULL, "replace an existing output"},
        {'q', "quiet", KCS_OPT_FLAG, &quiet, NULL, "no progress or summary"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (npos != 1 || !out) {
        fprintf(stderr, "kcs detect: need one STUDY.yaml and -o DET.h5 (see kcs detect --help)\n");
        return 2;
    }
    kcs_detect_opts o = {
        .study = argv[0],
        .out = out,
        .trials = (int)trials,
        .n_magnitudes = (int)mags,
        .mag_min = 0.01,
        .mag_max = 100.0,
        .inputs = (int)inputs,
        .probes = (int)probes,
        .force = force,
        .quiet = quiet,
    };
    if ((smin && parse_pos(smin, "min", &o.mag_min)) ||
        (smax && parse_pos(smax, "max", &o.mag_max)))
        return 2;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "kcs detect %s -o %s --trials %lld --magnitudes %lld --min %g "
             "--max %g --probes %lld",
             argv[0], out, trials, mags, o.mag_min, o.mag_max, probes);
    o.command_line = cmd;
    kcs_error err = {0};
    rc = kcs_detect_run(&o, &err);
    if (rc) {
        fprintf(stderr, "kcs detect: %s\n", err.msg);
        return kcs_exit_status(rc);
    }
    return 0;
}
