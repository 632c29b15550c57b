/* kcs probe: infer a GEMM path's arithmetic (block size, alignment bits,
 * step kind, rounding, subnormals) from feature-targeted vectors and name
 * the nearest emulated profile (src/run/probe.h, shared/PROFILES.md). */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "json.h"
#include "probe.h"
#include "probe_features.h"

static const kcs_cmd_doc doc = {
    "probe", "[--backend B] [--device D] [--profile P] [--dtype-in F] [--tile T] [--json]",
    "Infer the arithmetic of a backend's gemm from 1×k by k×1 test vectors (Fasi et al.\n"
    "2021; FTTN 2024): block size F, extra alignment bits neab, accumulator bits, step\n"
    "kind (global alignment, late c, pairwise, c added last), rounding of d, subnormal\n"
    "handling; then the nearest profile of the emulated-silicon table.",
    "The backend is a black box: only its gemm is called (m = n = 1, k <= 128, C given;\n"
    "--tile T: m = n = T, the vectors in row 0 of A and column 0 of B, zeros elsewhere, for\n"
    "libraries whose 1×1 output does not take the matrix units a tile takes).\n"
    "Each feature is measured by several vectors; when they disagree the feature reads\n"
    "\"inconsistent\". A range (\">=23\", \"1..2\") means the vectors bound the value but\n"
    "cannot pin it. With --profile and no --dtype-in every format the profile offers\n"
    "is probed. Without --profile the backend's native gemm is probed (default fp32).\n\n"
    "exit status: 0 probed; 2 bad flags or unknown profile/format; 1 backend failure."};

static void json_bound(FILE *f, int x)
{
    if (x == KCS_PROBE_INF)
        fputs("\"inf\"", f);
    else if (x == INT_MIN)
        fputs("null", f);
    else
        fprintf(f, "%d", x);
}

static void json_value(FILE *f, const char *key, const kcs_probe_value *v)
{
    char buf[48];
    fprintf(f, "  \"%s\": {\"text\": \"%s\", \"status\": \"%s\"", key,
            kcs_probe_value_str(v, buf, sizeof buf), kcs_probe_status_name(v->st));
    if (v->st == KCS_PROBE_EXACT || v->st == KCS_PROBE_RANGE) {
        fputs(", \"lo\": ", f);
        json_bound(f, v->lo);
        fputs(", \"hi\": ", f);
        json_bound(f, v->hi);
    }
    fputs("},\n", f);
}

static void print_json(FILE *f, const char *backend, int device, const char *profile,
                       const kcs_probe_features *pf,
                       const kcs_device_info *info, const kcs_probe_result *r)
{
    fputs("{\n  \"backend\": ", f);
    kcs_json_str(f, backend);
    fprintf(f, ", \"device\": %d, \"model\": ", device);
    kcs_json_str(f, info->model);
    fputs(", \"profile\": ", f);
    if (profile)
        kcs_json_str(f, profile);
    else
        fputs("null", f);
    fprintf(f, ", \"dtype_in\": \"%s\", \"calls\": %ld, \"tile\": %d,\n", kcs_format_name(r->in),
            r->calls, r->tile);
    json_value(f, "acc_bits", &r->acc_bits);
    json_value(f, "F", &r->F);
    json_value(f, "neab", &r->neab);
    fprintf(f, "  \"step\": \"%s\", \"step_status\": \"%s\", \"late_extra_bits\": ",
            kcs_probe_step_name(r->step), kcs_probe_status_name(r->step_st));
    if (r->late_extra_bits >= 0)
        fprintf(f, "%d,\n", r->late_extra_bits);
    else
        fputs("null,\n", f);
    fprintf(f, "  \"rounding\": \"%s\", \"rounding_status\": \"%s\", \"rounding_modes\": %u,\n",
            kcs_probe_rounding_str(r), kcs_probe_status_name(r->rounding_st), r->round_modes);
    fprintf(f, "  \"subnormals\": {\"inputs\": \"%s\", \"products\": \"%s\", \"c\": \"%s\", "
               "\"results\": \"%s\"},\n",
            kcs_probe_sub_name(r->sub_inputs), kcs_probe_sub_name(r->sub_products),
            kcs_probe_sub_name(r->sub_c), kcs_probe_sub_name(r->sub_results));
    fprintf(f, "  \"flush\": %s, \"flush_status\": \"%s\",\n", r->flush ? "true" : "false",
            kcs_probe_status_name(r->flush_st));
    if (r->nearest) {
        fputs("  \"nearest\": {\"profile\": ", f);
        kcs_json_str(f, r->nearest->profile);
        fprintf(f, ", \"dtype_in\": \"%s\", \"differences\": %d, \"differing\": ",
                kcs_format_name(r->nearest->in), r->nearest_diffs);
        kcs_json_str(f, r->nearest_diff);
        fprintf(f, ", \"equally_near\": %d, \"cross_format\": %s},\n", r->nearest_ties,
                r->nearest_cross_format ? "true" : "false");
    } else {
        fputs("  \"nearest\": null,\n", f);
    }
    fputs("  \"notes\": ", f);
    kcs_json_str(f, r->notes);
    fputs(",\n  \"features\": {", f);
    for (int i = 0; i < KCS_PF_COUNT; i++)
        fprintf(f, "%s\"%s\": \"%s\"", i ? ", " : "", kcs_probe_feature_name((kcs_probe_feature)i),
                kcs_probe_feature_value_str(pf, (kcs_probe_feature)i));
    fputs("}\n}", f);
}

static void print_text(FILE *f, const char *backend, int device, const char *profile,
                       const kcs_probe_features *pf, const kcs_device_info *info,
                       const kcs_probe_result *r)
{
    char a[48], b[48], c[48];
    fprintf(f, "kcs probe: backend %s, device %d (%s)%s%s, input %s: %ld gemm calls", backend,
            device, info->model[0] ? info->model : "?", profile ? ", profile " : "",
            profile ? profile : "", kcs_format_name(r->in), r->calls);
    if (r->tile > 1)
        fprintf(f, " (%dx%d tiles)", r->tile, r->tile);
    fputc('\n', f);
    fprintf(f, "  %-24s %s\n", "accumulator bits of d", kcs_probe_value_str(&r->acc_bits, a, 48));
    fprintf(f, "  %-24s %s\n", "block size F", kcs_probe_value_str(&r->F, b, 48));
    fprintf(f, "  %-24s %s\n", "neab", kcs_probe_value_str(&r->neab, c, 48));
    fprintf(f, "  %-24s %s%s\n", "step", kcs_probe_step_name(r->step),
            r->step_st == KCS_PROBE_INCONSISTENT ? " (inconsistent)" : "");
    if (r->late_extra_bits >= 0)
        fprintf(f, "  %-24s %d\n", "c-dominating extra bits", r->late_extra_bits);
    fprintf(f, "  %-24s %s\n", "rounding of d", kcs_probe_rounding_str(r));
    fprintf(f, "  %-24s inputs %s, products %s, c %s, results %s: flush %s\n", "subnormals",
            kcs_probe_sub_name(r->sub_inputs), kcs_probe_sub_name(r->sub_products),
            kcs_probe_sub_name(r->sub_c), kcs_probe_sub_name(r->sub_results),
            r->flush_st == KCS_PROBE_EXACT ? (r->flush ? "yes" : "no")
                                           : kcs_probe_status_name(r->flush_st));
    if (r->nearest) {
        fprintf(f, "  %-24s %s (%s)", "nearest profile", r->nearest->profile,
                kcs_format_name(r->nearest->in));
        if (r->nearest_diffs)
            fprintf(f, ": %d differing (%s)", r->nearest_diffs, r->nearest_diff);
        else
            fputs(": identical parameters", f);
        if (r->nearest_ties)
            fprintf(f, "; %d other row%s as near", r->nearest_ties, r->nearest_ties > 1 ? "s" : "");
        if (r->nearest_cross_format)
            fprintf(f, "; no profile offers %s", kcs_format_name(r->in));
        fputc('\n', f);
    }
    fprintf(f, "  %-24s", "corner features");
    for (int i = 0; i < KCS_PF_COUNT; i++)
        fprintf(f, " %s=%s", kcs_probe_feature_name((kcs_probe_feature)i),
                kcs_probe_feature_value_str(pf, (kcs_probe_feature)i));
    fprintf(f, " (%ld calls)\n", pf->calls);
    if (r->notes[0])
        fprintf(f, "  %-24s %s\n", "notes", r->notes);
}

int kcs_cmd_probe(int argc, char **argv)
{
    const char *backend = "cpu", *profile = NULL, *din = NULL, *options = NULL;
    long long device = 0, tile = 1;
    int json = 0;
    const kcs_opt opts[] = {
        {0, "backend", KCS_OPT_STR, &backend, "NAME", "backend (default cpu)"},
        {0, "device", KCS_OPT_INT, &device, "I", "device index (default 0)"},
        {0, "profile", KCS_OPT_STR, &profile, "NAME", "emulated silicon profile (cpu)"},
        {0, "dtype-in", KCS_OPT_STR, &din, "F", "input format (default fp32, or every format "
                                               "of --profile)"},
        {0, "options", KCS_OPT_STR, &options, "OPTS", "backend build options"},
        {0, "tile", KCS_OPT_INT, &tile, "T", "gemm of T×T outputs, the probe's at (0, 0) (default 1)"},
        {0, "json", KCS_OPT_FLAG, &json, NULL, "print the result as JSON"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    kcs_error err = {0};
    kcs_backend_ctx *ctx = NULL;
    const kcs_backend_ops *ops = NULL;
    kcs_format fmts[KCS_FMT_COUNT];
    int nf = 0;
    if (npos != 0) {
        rc = kcs_fail(&err, KCS_E_INVAL, "unexpected argument '%s'", argv[0]);
        goto out;
    }
    if (tile < 1 || tile > KCS_PROBE_TILE_MAX) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--tile: %lld outside 1..%d", tile, KCS_PROBE_TILE_MAX);
        goto out;
    }
    if (din) {
        if (kcs_format_parse(din, &fmts[0])) {
            rc = kcs_fail(&err, KCS_E_INVAL, "--dtype-in: unknown format '%s'", din);
            goto out;
        }
        nf = 1;
        const kcs_profile_params *row;
        if (profile && kcs_profile_lookup(profile, fmts[0], &row, &err)) {
            rc = err.code = KCS_E_INVAL; /* a format the profile lacks: bad flags */
            goto out;
        }
    } else if (profile) {
        const kcs_profile_params *rows;
        int n = 0;
        kcs_profile_table(&rows, &n);
        for (int i = 0; i < n; i++)
            if (strcmp(rows[i].profile, profile) == 0)
                fmts[nf++] = rows[i].in;
        if (!nf) {
            const kcs_profile_params *row;
            rc = kcs_profile_lookup(profile, KCS_FMT_FP16, &row, &err); /* names the known */
            goto out;
        }
    } else {
        fmts[nf++] = KCS_FMT_FP32;
    }
    if ((rc = kcs_cli_open_backend(backend, (int)device, profile, options, &ops, &ctx, &err)))
        goto out;
    kcs_device_info info;
    memset(&info, 0, sizeof info);
    if (ops->describe(ctx, &info, &err))
        memset(&info, 0, sizeof info);
    if (json && nf > 1)
        fputs("[\n", stdout);
    for (int i = 0; i < nf; i++) {
        kcs_probe_result r;
        if ((rc = kcs_probe_run_tile(ops, ctx, fmts[i], (int)tile, &r, &err))) {
            kcs_error_prefix(&err, "%s", kcs_format_name(fmts[i]));
            goto out;
        }
        kcs_probe_features pf;
        if ((rc = kcs_probe_features_run(ops, ctx, &r, &pf, &err))) {
            kcs_error_prefix(&err, "%s", kcs_format_name(fmts[i]));
            goto out;
        }
        if (json) {
            print_json(stdout, backend, (int)device, profile, &pf, &info, &r);
            fputs(i + 1 < nf ? ",\n" : "\n", stdout);
        } else {
            print_text(stdout, backend, (int)device, profile, &pf, &info, &r);
        }
    }
    if (json && nf > 1)
        fputs("]\n", stdout);
out:
    if (ctx)
        ops->close(ctx);
    if (rc) {
        fprintf(stderr, "kcs probe: %s\n", err.msg);
        return kcs_exit_status(rc);
    }
    return 0;
}
