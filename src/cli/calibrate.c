/* kcs calibrate: the three-state calibration of every contract (DESIGN
 * §3) and the cross matrix of the bad implementations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blas_info.h"
#include "calib_print.h"
#include "calibrate.h"
#include "cli.h"

static const kcs_cmd_doc doc = {
    "calibrate", "[CONTRACT...] [--backend B] [-o CALIB.h5] [--json] [--cross]\n"
    "       kcs calibrate --sweep [CONTRACT...] [--trials N] [--min-k K] [--max-k K] [-o SWEEP.h5]",
    "Run each contract's three built-in implementations (calib:<ID>:baseline|bad|good)\n"
    "through the contract's own measurement protocol and check that the contract\n"
    "separates them: baseline FAIL, bad FAIL with the contract's own signature, good PASS.\n"
    "Then the narrow-output states a contract's calibration.yaml names (narrow:, CPU\n"
    "kernels only): the contract with a bf16 or fp16 dtype_out, good ones PASS, bad ones\n"
    "FAIL with their own signature (rows after the three states).",
    "CONTRACT: an id (C-PRC-01, looked up in the contracts directory) or a YAML path;\n"
    "default: every contract folder (C-*/<ID>.yaml) of the contracts directory\n"
    "(--contracts, $KCS_CONTRACTS, the installed share/kcs/contracts, or the source\n"
    "tree's contracts/), whose calibration.yaml files name each contract's states.\n"
    "On the cpu backend the states are the CPU backend's calibration kernels; on any\n"
    "other backend (or with --wrap) they are wrappers around the backend's native\n"
    "kernels (the bad ones: host-side transformations of inputs, outputs or k-slices).\n"
    "--cross also runs every bad implementation under every contract whose scope holds\n"
    "its op and reports which contracts flag it and with which primary signature (the\n"
    "first name a failed trial matches); on the cpu backend (not --wrap) the defect\n"
    "gemm and reduce_sum kernels too (zeros, a scaled output, one corrupted element,\n"
    "14-bit and fp16 accumulators; outputs rounded to bf16 or 11 bits, inputs truncated or\n"
    "rounded to tf32, a constant output, an added offset, a write past the output), then\n"
    "the signature confusion matrix: every bad implementation against every signature\n"
    "(failed trials per primary signature), each signature's specificity and each\n"
    "implementation's sensitivity with Clopper-Pearson 95% intervals, as markdown.\n"
    "-o writes /calibration (and /calibration_cross) into a new HDF5 file; an existing\n"
    "file is never replaced.\n"
    "--sweep: power curves on the CPU backend: each contract measured by gemm, reduce_sum,\n"
    "dot or norm over its precondition (k = k_min, 4 k_min, ... up to k_max or --max-k; every\n"
    "admitted dtype_in; every distribution it measures), its conforming kernels (fp32 in\n"
    "sequential, pairwise, blocked, split-K order, rounding to nearest or toward zero,\n"
    "fp64, native) against bad ones (bf16/fp16/14/16/18-bit accumulators, the contract's\n"
    "calibration bad kernel); the value contracts of softmax and layernorm over the row\n"
    "length k, attention over its n x k grid (own, fused, native kernels) and C-PRC-04's\n"
    "reduce_sum (DAZ and FTZ kernels too) likewise, each op with its own catalogue (the\n"
    "table's N and K columns), and C-PRC-05's elementwise exp over the element count K\n"
    "(every admitted distribution; accurate and fast-math, polynomial, narrow, FTZ and\n"
    "overflow-mishandling exps); detection and false-alarm rate per (kernel, point) with\n"
    "Clopper-Pearson 95% intervals; -o writes /calibration_sweep. Exit 3 when a bad\n"
    "kernel is detected in fewer than 99% of the trials of a point or a conforming one\n"
    "is flagged.\n\n"
    "exit status: 0 every contract sound (and, with --cross, every bad implementation\n"
    "flagged by its own contract with its own signature, and its top signature in the\n"
    "confusion matrix its own); 3 some contract unsound or a\n"
    "state failed to run; 2 bad input; 1 internal or I/O failure."};

static void print_row(const kcs_calib_row *r, const char *expected)
{
    char sigs[256] = "";
    size_t used = 0;
    for (const char *p = r->signatures; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        int own = expected && kcs_calib_has_sig(expected, name);
        used += (size_t)snprintf(sigs + used, used < sizeof sigs ? sizeof sigs - used : 0,
                                 "%s%s%s", used ? "," : "", name, own ? "*" : "");
        p = end ? end + 1 : NULL;
    }
    char failed[24];
    snprintf(failed, sizeof failed, "%d/%d", r->failed, r->trials);
    const char *sound = r->sound < 0 ? "n/a" : r->sound ? "yes" : "NO";
    printf("%-9s %-17s %-8s %-7s %-7s %-5s %s%s%s\n", r->contract, r->ops[0] ? r->ops : "-",
           r->state, r->verdict, failed, sound, sigs[0] ? sigs : "-",
           r->detail[0] && strcmp(r->verdict, "PASS") && strcmp(r->verdict, "FAIL") ? "  " : "",
           r->detail[0] && strcmp(r->verdict, "PASS") && strcmp(r->verdict, "FAIL") ? r->detail
                                                                                     : "");
}

static void print_table(const kcs_calib_row *rows, int n, const kcs_rank_binding *b, int wrapped)
{
    printf("kcs calibrate: backend %s (%s)%s\n", b->pl.backend, b->info.model,
           wrapped ? ": states are wrappers around the backend's native kernels" : "");
    printf("%-9s %-17s %-8s %-7s %-7s %-5s %s\n", "CONTRACT", "OPS", "STATE", "VERDICT",
           "FAILED", "SOUND", "SIGNATURES (* the contract's own signature for its bad state)");
    for (int i = 0; i < n; i++)
        print_row(&rows[i], strncmp(rows[i].state, "bad", 3) == 0 ? rows[i].expected : NULL);
}

static void short_id(const char *id, char *buf, size_t len)
{
    snprintf(buf, len, "%s", strncmp(id, "C-", 2) == 0 ? id + 2 : id);
}

static void print_cross(kcs_contract *const *cs, int n, const kcs_calib_row *rows, int nr)
{
    printf("\ncross matrix: each bad implementation (row) under every contract whose scope "
           "holds its op (column)\nF flagged, . passes, E error, n not claimed (the contract "
           "binds only kernels declaring a property this one does not declare), blank: op "
           "outside the contract's scope; * own contract, own signature named\n%-14s", "");
    for (int j = 0; j < n; j++) {
        char s[16];
        short_id(cs[j]->id, s, sizeof s);
        printf(" %-7s", s);
    }
    printf("\n");
    int n_def = 0;
    const kcs_calib_defect *def = kcs_calib_defects(&n_def);
    for (int i = 0; i < n + n_def; i++) {
        char impl[40], s[16];
        if (i < n) {
            if (!kcs_calib_find(cs[i]->id))
                continue;
            snprintf(impl, sizeof impl, "calib:%s:bad", cs[i]->id);
            short_id(cs[i]->id, s, sizeof s);
        } else {
            int any = 0;
            snprintf(impl, sizeof impl, "%s", def[i - n].variant);
            for (int k = 0; k < nr; k++)
                any |= strcmp(rows[k].implementation, impl) == 0;
            if (!any)
                continue;
            snprintf(s, sizeof s, "%s", impl + strlen("defect:"));
        }
        printf("bad %-10.10s", s);
        for (int j = 0; j < n; j++) {
            const kcs_calib_row *r = NULL;
            for (int k = 0; k < nr; k++)
                if (strcmp(rows[k].implementation, impl) == 0 &&
                    strcmp(rows[k].contract, cs[j]->id) == 0)
                    r = &rows[k];
            char cell[8] = "";
            if (r)
                snprintf(cell, sizeof cell, "%s%s",
                         strcmp(r->verdict, "FAIL") == 0   ? "F"
                         : strcmp(r->verdict, "PASS") == 0 ? "."
                         : strcmp(r->verdict, "N/A") == 0  ? "-"
                         : strcmp(r->verdict, "NOT-CLAIMED") == 0 ? "n"
                                                           : "E",
                         r->sound == 1 ? "*" : "");
            printf(" %-7s", cell);
        }
        printf("\n");
    }
    printf("\nflagged:\n");
    for (int k = 0; k < nr; k++)
        if (strcmp(rows[k].verdict, "PASS") != 0 && strcmp(rows[k].verdict, "NOT-CLAIMED") != 0)
            printf("  %-20s under %-9s %-5s primary %s; all %s%s\n", rows[k].implementation,
                   rows[k].contract, rows[k].verdict, rows[k].primary[0] ? rows[k].primary : "-",
                   rows[k].signatures[0] ? rows[k].signatures : "-",
                   rows[k].sound == 0 ? "  (own contract: own signature NOT named)" : "");
}

static void print_json(const kcs_calib_row *rows, int n, const kcs_calib_row *narrow, int nn,
                       const kcs_calib_row *cross, int nc, const kcs_rank_binding *b,
                       int wrapped, int unsound, int misses)
{
    printf("{\"backend\": ");
    kcs_json_str(stdout, b->pl.backend);
    printf(", \"device\": ");
    kcs_json_str(stdout, b->info.model);
    printf(", \"wrapper\": %s, \"contracts\": [", wrapped ? "true" : "false");
    for (int i = 0; i + 2 < n; i += 3) {
        printf("%s\n  {\"id\": ", i ? "," : "");
        kcs_json_str(stdout, rows[i].contract);
        printf(", \"sound\": %s, \"expected\": ",
               rows[i].sound < 0 ? "null" : rows[i].sound ? "true" : "false");
        kcs_json_names(stdout, rows[i + 1].expected);
        printf(", \"states\": {");
        for (int st = 0; st < 3; st++) {
            const kcs_calib_row *r = &rows[i + st];
            printf("%s\"%s\": {\"implementation\": ", st ? ", " : "", r->state);
            kcs_json_str(stdout, r->implementation);
            printf(", ");
            kcs_json_row_members(stdout, r);
            printf("}");
        }
        printf("}}");
    }
    printf("\n], \"narrow\": [");
    for (int k = 0; k < nn; k++) {
        printf("%s\n  {\"id\": ", k ? "," : "");
        kcs_json_str(stdout, narrow[k].contract);
        printf(", \"state\": ");
        kcs_json_str(stdout, narrow[k].state);
        printf(", \"implementation\": ");
        kcs_json_str(stdout, narrow[k].implementation);
        printf(", \"sound\": %s, \"expected\": ",
               narrow[k].sound < 0 ? "null" : narrow[k].sound ? "true" : "false");
        kcs_json_names(stdout, narrow[k].expected);
        printf(", ");
        kcs_json_row_members(stdout, &narrow[k]);
        printf("}");
    }
    printf("\n], \"unsound\": %d", unsound);
    if (cross) {
        printf(", \"cross\": [");
        for (int k = 0; k < nc; k++) {
            printf("%s\n  {\"implementation\": ", k ? "," : "");
            kcs_json_str(stdout, cross[k].implementation);
            printf(", \"contract\": ");
            kcs_json_str(stdout, cross[k].contract);
            printf(", \"own\": %s, ", cross[k].sound >= 0 ? "true" : "false");
            kcs_json_row_members(stdout, &cross[k]);
            printf("}");
        }
        printf("\n], \"cross_misses\": %d", misses);
    }
    printf("}\n");
}

int kcs_cmd_calibrate(int argc, char **argv)
{
    const char *backend = "cpu", *out = NULL, *dir = NULL;
    long long device = 0, seed = 20260601, timeout = 120;
    int json = 0, cross = 0, wrap = 0, verbose = 0, sweep = 0;
    long long trials = 20, max_k = 0, min_k = 0;
    const kcs_opt opts[] = {
        {0, "sweep", KCS_OPT_FLAG, &sweep, NULL, "power curves over the preconditions"},
        {0, "trials", KCS_OPT_INT, &trials, "N", "--sweep: trials per point (default 20)"},
        {0, "max-k", KCS_OPT_INT, &max_k, "K", "--sweep: cap on k (default: the precondition's)"},
        {0, "min-k", KCS_OPT_INT, &min_k, "K", "--sweep: skip points below k (default: none)"},
        {0, "backend", KCS_OPT_STR, &backend, "NAME", "backend to calibrate (default cpu)"},
        {0, "device", KCS_OPT_INT, &device, "I", "device index (default 0)"},
        {'o', "output", KCS_OPT_STR, &out, "FILE", "write /calibration to a new HDF5 file"},
        {0, "json", KCS_OPT_FLAG, &json, NULL, "print JSON instead of the table"},
        {0, "cross", KCS_OPT_FLAG, &cross, NULL, "also run the cross matrix of bad implementations"},
        {0, "wrap", KCS_OPT_FLAG, &wrap, NULL, "cpu: use the wrappers around native kernels"},
        {0, "contracts", KCS_OPT_STR, &dir, "DIR", "directory of the contract folders"},
        {0, "seed", KCS_OPT_INT, &seed, "N", "seed of the generated inputs (default 20260601)"},
        {0, "timeout", KCS_OPT_INT, &timeout, "SECONDS", "time limit of one kernel call (120)"},
        {'v', "verbose", KCS_OPT_FLAG, &verbose, NULL, "log kernel failures on stderr"},
        {0},
    };
    char cmdline[2048];
    int npos = 0, rc = 0;
    if (kcs_cli_parse_recorded(&doc, opts, argc, argv, &npos, &rc, cmdline, sizeof cmdline))
        return rc;
    if (out && access(out, F_OK) == 0) {
        fprintf(stderr, "kcs calibrate: %s: exists; refusing to overwrite\n", out);
        return 2;
    }
    char dbuf[4096];
    if (!dir)
        dir = kcs_calib_contracts_dir(dbuf, sizeof dbuf);
    kcs_error err = {0};
    kcs_contract **cs = NULL;
    int n = 0, wrapped = 0, unsound = 0, misses = 0, nc = 0, status = 0, top_misses = 0, nn = 0,
        nunsound = 0;
    kcs_calib_row *rows = NULL, *crows = NULL;
    kcs_rank_binding b;
    int bound = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((rc = kcs_calib_catalogue_load(dir, &err)) ||
        (rc = kcs_calib_load(dir, argv, npos, &cs, &n, &err)))
        goto out;
    /* Calibration's and the sweep's products are small: OpenBLAS's idle
     * threads would only spin in sched_yield beside the kernel (a third of
     * the cross matrix's and the sweep's CPU time). Its last bits can
     * differ from a threaded run's (ARCHITECTURE.md, provenance); both are
     * conforming fp32 sums, and /provenance records the count. */
    kcs_blas_set_threads(1);
    if (sweep) {
        kcs_calib_run srun = {(uint64_t)seed, (double)timeout, verbose};
        status = kcs_calibrate_sweep_cmd(cs, n, &srun, (int)trials, (int64_t)min_k, (int64_t)max_k, out,
                                         cmdline, &rc, &err);
        goto out;
    }
    if ((rc = kcs_calib_bind(backend, (int)device, NULL, wrap, &b, &wrapped, &err)))
        goto out;
    bound = 1;
    rows = calloc((size_t)(3 * n), sizeof *rows);
    if (!rows) {
        rc = kcs_fail(&err, KCS_E_NOMEM, "out of memory");
        goto out;
    }
    kcs_calib_run run = {(uint64_t)seed, (double)timeout, verbose};
    if ((rc = kcs_calib_states(cs, n, &b, wrapped, &run, rows, &unsound, &err)))
        goto out;
    /* the narrow-output states (calibration.yaml narrow:), after the 3 n rows */
    kcs_calib_row *nrows = NULL;
    if ((rc = kcs_calib_narrow_states(cs, n, &b, wrapped, &run, &nrows, &nn, &nunsound, &err)))
        goto out;
    if (nn > 0) {
        kcs_calib_row *all = realloc(rows, (size_t)(3 * n + nn) * sizeof *rows);
        if (!all) {
            free(nrows);
            rc = kcs_fail(&err, KCS_E_NOMEM, "out of memory");
            goto out;
        }
        rows = all;
        memcpy(rows + 3 * n, nrows, (size_t)nn * sizeof *rows);
    }
    free(nrows);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (cross && (rc = kcs_calib_cross(cs, n, &b, wrapped, &run, &crows, &nc, &misses, &err)))
        goto out;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double xsecs = (double)(t0.tv_sec - t1.tv_sec) + 1e-9 * (double)(t0.tv_nsec - t1.tv_nsec);
    if (json) {
        print_json(rows, 3 * n, rows + 3 * n, nn, crows, nc, &b, wrapped, unsound + nunsound,
                   misses);
    } else {
        print_table(rows, 3 * n + nn, &b, wrapped);
        int na = 0;
        for (int i = 0; i < n; i++)
            na += rows[3 * i].sound < 0;
        printf("\n%d contracts: %d sound (baseline FAIL, bad FAIL with its own signature, good "
               "PASS), %d unsound, %d not measured; %.1f s\n",
               n, n - unsound - na, unsound, na, secs);
        if (nn > 0) {
            int nna = 0;
            for (int i = 0; i < nn; i++)
                nna += rows[3 * n + i].sound < 0;
            printf("%d narrow-output states (good PASS, bad FAIL with its own signature): %d "
                   "sound, %d unsound, %d not measured\n",
                   nn, nn - nunsound - nna, nunsound, nna);
        }
        if (cross) {
            print_cross(cs, n, crows, nc);
            printf("\n%d bad implementation(s) not flagged by their own contract with their own "
                   "signature; %.1f s\n\n", misses, xsecs);
            kcs_confusion cm;
            if ((rc = kcs_calib_confusion(crows, nc, cs, n, &cm, &err)))
                goto out;
            top_misses = kcs_confusion_print(stdout, &cm, (uint64_t)seed);
            kcs_confusion_free(&cm);
        }
    }
    if (out && (rc = kcs_store_calibration_write(out, rows, 3 * n + nn, crows, nc, cmdline,
                                                 &err)))
        goto out;
    if (out && !json)
        printf("calibration table written to %s (/calibration%s)\n", out,
               cross ? ", /calibration_cross" : "");
    status = unsound || nunsound || misses || top_misses ? 3 : 0;
out:
    if (rc) {
        fprintf(stderr, "kcs calibrate: %s\n", err.msg);
        status = kcs_exit_status(rc);
    }
    if (bound)
        kcs_binding_close(&b);
    free(rows);
    free(crows);
    kcs_calib_contracts_free(cs, n);
    return status;
}
