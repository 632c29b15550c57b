/* kcs publish: the citable bundle of datasets (analysis/publish/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas_info.h"
#include "cli.h"
#include "publish.h"

/* --probe and --silicon may be given several times: taken out of argv
 * before the option table parses the rest. */
static int take_repeated(int *argc, char **argv, const char *name, const char ***out, int *n)
{
    size_t len = strlen(name);
    *out = calloc((size_t)*argc + 1, sizeof **out);
    *n = 0;
    if (!*out)
        return -1;
    int w = 0;
    for (int i = 0; i < *argc; i++) {
        if (!strcmp(argv[i], name)) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "kcs publish: %s needs a value\n", name);
                return -1;
            }
            (*out)[(*n)++] = argv[++i];
        } else if (!strncmp(argv[i], name, len) && argv[i][len] == '=') {
            (*out)[(*n)++] = argv[i] + len + 1;
        } else {
            argv[w++] = argv[i];
        }
    }
    argv[w] = NULL;
    *argc = w;
    return 0;
}

int kcs_cmd_publish(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "publish", "DATASET.h5... [--probe FILE.json]... [--silicon DIR]... -o DIR\n"
        "       kcs publish --verify DIR",
        "Publish datasets as one citable, browsable, checkable bundle DIR (docs/publish.md):\n"
        "data/ (the datasets, verified first, copied), tables/ (tidy CSV: measurements, pairs,\n"
        "devices, tolerances, detection, sources; a data dictionary), tolerances.json (the reducer's),\n"
        "a static HTML atlas (index.html, a page per op, rows/ pages linking every number to\n"
        "its HDF5 rows), datapackage.json (Frictionless Data Package with every file's sha256),\n"
        "CITATION.cff and LICENSE-data.txt (CC-BY-4.0). Several datasets are several sites of\n"
        "one atlas; `kcs detect` datasets among them give the detection curves.\n"
        "--probe FILE.json (`kcs probe --json` or `--order --json` output) gives a native\n"
        "device's fingerprint; --silicon DIR imports a report-only real-silicon run\n"
        "(study-verdicts.csv and probe-*.json, e.g. docs/silicon/nvidia-h200/run1) as its own\n"
        "device columns, labelled imported and not recomputed.",
        "--verify DIR regenerates every table, page and tolerances.json from the bundle's own\n"
        "inputs and compares them byte for byte, checks every file's sha256 against\n"
        "datapackage.json and every internal link of the HTML; each mismatch is named on\n"
        "stderr (file, row, column or line).\n"
        "DIR is built as DIR.partial-<pid> and put in place whole; an earlier bundle is\n"
        "replaced, any other non-empty directory refused. Both run OpenBLAS on one thread,\n"
        "so a bundle verifies whatever OPENBLAS_NUM_THREADS says.\n\n"
        "exit status: 0 done / verified; 1 a mismatch (--verify) or an I/O failure; 2 bad\n"
        "input (a damaged or unsealed dataset, a missing file, not a bundle)."};
    const char *out_dir = NULL, *verify = NULL, *dummy_probe = NULL, *dummy_silicon = NULL;
    int quiet = 0;
    const kcs_opt opts[] = {
        {'o', "output", KCS_OPT_STR, &out_dir, "DIR", "the bundle directory"},
        {0, "probe", KCS_OPT_STR, &dummy_probe, "FILE.json",
         "a native device's `kcs probe --json` (repeatable)"},
        {0, "silicon", KCS_OPT_STR, &dummy_silicon, "DIR",
         "a report-only real-silicon run to import (repeatable)"},
        {0, "verify", KCS_OPT_STR, &verify, "DIR", "recompute and check a bundle"},
        {'q', "quiet", KCS_OPT_FLAG, &quiet, NULL, "no progress lines on stderr"},
        {0},
    };
    const char **probes = NULL, **silicon = NULL;
    int n_probes = 0, n_silicon = 0, npos = 0, rc = 0;
    if (take_repeated(&argc, argv, "--probe", &probes, &n_probes) ||
        take_repeated(&argc, argv, "--silicon", &silicon, &n_silicon)) {
        free(probes);
        free(silicon);
        return 2;
    }
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc)) {
        free(probes);
        free(silicon);
        return rc;
    }
    kcs_error err = {0};
    kcs_cli_catch_hdf5_crashes(verify ? "kcs publish --verify" : "kcs publish");
    /* The reducer's fp64 references go through OpenBLAS, whose results can
     * differ in the last bits with its thread count; a bundle and its
     * --verify must compute the same, so both use one thread. */
    kcs_blas_set_threads(1);
    if (verify) {
        free(probes);
        free(silicon);
        if (npos || out_dir) {
            fprintf(stderr, "kcs publish: --verify DIR takes no dataset and no -o\n");
            return 2;
        }
        int mism = 0;
        rc = kcs_publish_verify(verify, quiet, &mism, &err);
        if (rc) {
            fprintf(stderr, "kcs publish --verify: %s\n", err.msg);
            return kcs_exit_status(rc);
        }
        if (mism) {
            fprintf(stderr, "kcs publish --verify: %s: %d mismatch%s\n", verify, mism,
                    mism > 1 ? "es" : "");
            return 1;
        }
        if (!quiet)
            printf("kcs publish --verify: %s: every table, page and hash matches\n", verify);
        return 0;
    }
    if (npos < 1 || !out_dir) {
        fprintf(stderr, "kcs publish: need DATASET.h5... and -o DIR (see kcs publish --help)\n");
        free(probes);
        free(silicon);
        return 2;
    }
    kcs_publish_opts o = {
        .datasets = (const char *const *)argv,
        .n_datasets = npos,
        .probes = probes,
        .n_probes = n_probes,
        .silicon = silicon,
        .n_silicon = n_silicon,
        .out_dir = out_dir,
        .quiet = quiet,
    };
    rc = kcs_publish_run(&o, &err);
    free(probes);
    free(silicon);
    if (rc) {
        fprintf(stderr, "kcs publish: %s\n", err.msg);
        fflush(NULL);
        _exit(kcs_exit_status(rc));
    }
    if (!quiet)
        printf("kcs publish: %s: %d dataset%s, %d imported run%s -> %s/index.html\n", out_dir,
               npos, npos > 1 ? "s" : "", n_silicon, n_silicon == 1 ? "" : "s", out_dir);
    return 0;
}
