/* kcs probe: infer a GEMM path's arithmetic (block size, alignment bits,
 * step kind, rounding, subnormals) from feature-targeted vectors and name
 * the nearest emulated profile (src/run/probe.h, shared/PROFILES.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "json.h"
#include "probe.h"
#include "probe_features.h"
#include "probe_order.h"

static const kcs_cmd_doc doc = {
    "probe", "[--backend B] [--device D] [--profile P] [--dtype-in F] [--tile T] [--json]\n"
    "       kcs probe --order --op OP -k K [-m M -n N] [--backend B] [--variant own --schedule S\n"
    "             | --profile P] [--dtype-in F] [--json]",
    "Infer the arithmetic of a backend's gemm from 1×k by k×1 test vectors (Fasi et al.\n"
    "2021; FTTN 2024): block size F, extra alignment bits neab, accumulator bits, step\n"
    "kind (global alignment, late c, pairwise, c added last), rounding of d, subnormal\n"
    "handling, and the widths apart (product alignment, c addend, product sum under a\n"
    "larger c, output; docs/profiles.md); then the nearest profile of the table.",
    "The backend is a black box: only its gemm is called (m = n = 1, k <= 128, C given;\n"
    "--tile T: m = n = T, the vectors in row 0 of A and column 0 of B, zeros elsewhere, for\n"
    "libraries whose 1×1 output does not take the matrix units a tile takes).\n"
    "Each feature is measured by several vectors; when they disagree the feature reads\n"
    "\"inconsistent\". A range (\">=23\", \"1..2\") means the vectors bound the value but\n"
    "cannot pin it. With --profile and no --dtype-in every format the profile offers\n"
    "is probed. Without --profile the backend's native gemm is probed (default fp32).\n\n"
    "--order: recover the summation tree of OP's reduction instead (FPRev, Xie et al.,\n"
    "USENIX ATC 2025; docs/order.md): summand i = +big, j = -big, the others a unit; the\n"
    "output counts the units outside the smallest subtree holding i and j. OP: gemm (every\n"
    "one of the m×n outputs), dot, reduce_sum (m rows), layernorm (the mean's sum, m rows),\n"
    "allreduce (under mpirun: the tree over ranks, per element range; -k is the message\n"
    "length). softmax, rmsnorm and attention sum only positive terms: refused, exit 2.\n"
    "The tree prints as nested parentheses over the summation indices, children sorted by\n"
    "their smallest leaf; a node of more than two children is a fused multi-term addition.\n"
    "Outputs that use different trees are listed by tree (row-major output indices).\n\n"
    "exit status: 0 probed; 2 bad flags or unknown profile/format; 1 backend failure or\n"
    "answers that fit no tree."};

static void print_order(const kcs_order_opts *o, const char *backend, const char *profile,
                        const kcs_order_result *r, int json)
{
    char sb[64];
    const char *what = profile ? profile : strcmp(o->variant, "own") == 0
                                               ? kcs_schedule_str(&o->schedule, sb, sizeof sb)
                                               : o->variant;
    if (json) {
        fputs("{\"op\": ", stdout);
        kcs_json_str(stdout, kcs_op_name(o->op));
        fputs(", \"backend\": ", stdout);
        kcs_json_str(stdout, backend);
        fputs(", \"variant\": ", stdout);
        kcs_json_str(stdout, what);
        fprintf(stdout, ", \"dtype_in\": \"%s\", \"k\": %lld, \"m\": %lld, \"n\": %lld, "
                "\"outputs\": %d, \"calls\": %ld, \"seconds\": %.3f, \"big\": %g, \"unit\": %g, "
                "\"margin_bits\": %d, \"margin_short\": %s,\n \"trees\": [",
                kcs_format_name(o->in), (long long)o->k, (long long)o->m, (long long)o->n,
                r->noutputs, r->calls, r->seconds, r->big, r->unit, r->margin_bits,
                r->margin_short ? "true" : "false");
        for (int t = 0; t < r->ntrees; t++) {
            fputs(t ? ",\n  {\"outputs\": [" : "\n  {\"outputs\": [", stdout);
            for (int i = 0; i < r->trees[t].nout; i++)
                fprintf(stdout, "%s%d", i ? "," : "", r->trees[t].outputs[i]);
            fprintf(stdout, "], \"max_fanin\": %d, \"tree\": ", r->trees[t].max_fanin);
            kcs_json_str(stdout, r->trees[t].tree);
            fputc('}', stdout);
        }
        fputs("]}\n", stdout);
        return;
    }
    printf("kcs probe --order: %s on %s (%s), %s, k %lld", kcs_op_name(o->op), backend, what,
           kcs_format_name(o->in), (long long)o->k);
    if (o->op == KCS_OP_GEMM)
        printf(", %lldx%lld outputs", (long long)o->m, (long long)o->n);
    else if (r->noutputs > 1)
        printf(", %d rows", r->noutputs);
    printf(": %ld calls, %.2f s, %d distinct tree%s\n", r->calls, r->seconds, r->ntrees,
           r->ntrees == 1 ? "" : "s");
    if (r->margin_short)
        printf("warning: summands +-%g against units %g leave %d bits: an accumulator wider "
               "than 27 bits could keep some units at k = %lld, and the tree would be wrong "
               "without a sign\n", r->big, r->unit, r->margin_bits, (long long)o->k);
    for (int t = 0; t < r->ntrees; t++) {
        char *rg = kcs_order_ranges(r->trees[t].outputs, r->trees[t].nout);
        printf("outputs %s%s:\n%s\n", rg ? rg : "?",
               r->trees[t].max_fanin > 2 ? " (fused nodes)" : "", r->trees[t].tree);
        free(rg);
    }
}

static void json_bound(FILE *f, int x)
{
    if (x == KCS_PROBE_INF)
        fputs("\"inf\"", f);
    else if (x == INT_MIN)
        fputs("null", f);
    else
        fprintf(f, "%d", x);
}

static void json_value_ind(FILE *f, const char *ind, const char *key, const kcs_probe_value *v)
{
    char buf[48];
    fprintf(f, "%s\"%s\": {\"text\": \"%s\", \"status\": \"%s\"", ind, key,
            kcs_probe_value_str(v, buf, sizeof buf), kcs_probe_status_name(v->st));
    if (v->st == KCS_PROBE_EXACT || v->st == KCS_PROBE_RANGE) {
        fputs(", \"lo\": ", f);
        json_bound(f, v->lo);
        fputs(", \"hi\": ", f);
        json_bound(f, v->hi);
    }
    fputs("},\n", f);
}

static void json_value(FILE *f, const char *key, const kcs_probe_value *v)
{
    json_value_ind(f, "  ", key, v);
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
    /* widths apart (docs/profiles.md "Widths"): fraction bits below the
     * largest exponent for a product, for c, for the product sum under a
     * larger c; the output width is acc_bits (significand bits) + rounding */
    kcs_probe_value under = kcs_probe_sum_under_c_bits(r);
    fputs("  \"widths\": {\n", f);
    json_value_ind(f, "    ", "product_align_bits", &r->align_bits);
    json_value_ind(f, "    ", "c_addend_bits", &r->c_bits);
    json_value_ind(f, "    ", "sum_under_c_bits", &under);
    json_value_ind(f, "    ", "output_bits", &r->acc_bits);
    fprintf(f, "    \"output_rounding\": \"%s\"},\n", kcs_probe_rounding_str(r));
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
    kcs_probe_value under = kcs_probe_sum_under_c_bits(r);
    char w1[48], w2[48], w3[48], w4[48];
    fprintf(f, "  %-24s product alignment %s, c addend %s, sum under a larger c %s "
               "(fraction bits below the largest exponent); output %s significand bits, %s\n",
            "widths", kcs_probe_value_str(&r->align_bits, w1, 48),
            kcs_probe_value_str(&r->c_bits, w2, 48), kcs_probe_value_str(&under, w3, 48),
            kcs_probe_value_str(&r->acc_bits, w4, 48), kcs_probe_rounding_str(r));
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

/* The profile name of a spec "name[,library path]" (kcs_profile_spec_parse):
 * the table is looked up by name, the backend opened with the whole spec. */
static int spec_name(const char *profile, char *pname, kcs_error *err)
{
    kcs_libpath lp;
    pname[0] = '\0';
    return profile ? kcs_profile_spec_parse(profile, pname, &lp, err) : 0;
}

static int probe_order(const char *backend, int device, const char *profile, const char *din,
                       const char *options, const char *opname, const char *variant,
                       const char *sched, long long k, long long m, long long n,
                       long long seed, int json)
{
    kcs_error err = {0};
    kcs_order_opts o = {.k = k, .m = m, .n = n, .in = KCS_FMT_FP32, .seed = (uint64_t)seed,
                        .verify = 16, .variant = variant ? variant : "native", .progress = 1};
    kcs_backend_ctx *ctx = NULL;
    const kcs_backend_ops *ops = NULL;
    kcs_order_result r = {0};
    int rc = 0;
    if (!opname) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--order needs --op (gemm, dot, reduce_sum, layernorm, "
                      "allreduce)");
        goto out;
    }
    if (kcs_op_parse(opname, &o.op)) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--op: unknown op '%s'", opname);
        goto out;
    }
    if (k < 1) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--order needs -k K (the reduction length)");
        goto out;
    }
    if (din && kcs_format_parse(din, &o.in)) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--dtype-in: unknown format '%s'", din);
        goto out;
    }
    if (strcmp(o.variant, "native") && strcmp(o.variant, "own")) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--variant: '%s' (native or own)", o.variant);
        goto out;
    }
    if (sched && strcmp(o.variant, "own")) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--schedule needs --variant own");
        goto out;
    }
    if (sched && kcs_schedule_parse(sched, &o.schedule)) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--schedule: '%s' (sequential, pairwise, blocked:B, "
                      "splitk:S, atomic)", sched);
        goto out;
    }
    if (profile && strcmp(o.variant, "native")) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--profile and --variant own exclude each other");
        goto out;
    }
    char pname[KCS_PROFILE_SPEC_MAX];
    if ((rc = spec_name(profile, pname, &err)))
        goto out;
    if (profile && !din) { /* the profile's first format */
        const kcs_profile_params *rows;
        int nr = 0;
        kcs_profile_table(&rows, &nr);
        int found = 0;
        for (int i = 0; i < nr && !found; i++)
            if (strcmp(rows[i].profile, pname) == 0) {
                o.in = rows[i].in;
                found = 1;
            }
        if (!found) {
            const kcs_profile_params *row;
            rc = kcs_profile_lookup(pname, KCS_FMT_FP16, &row, &err);
            goto out;
        }
    } else if (profile) {
        const kcs_profile_params *row;
        if (kcs_profile_lookup(pname, o.in, &row, &err)) {
            rc = err.code = KCS_E_INVAL;
            goto out;
        }
    }
    if (o.op == KCS_OP_ALLREDUCE) {
        rc = kcs_order_probe_allreduce(backend, &o, json, &err);
        goto out;
    }
    if ((rc = kcs_cli_open_backend(backend, device, profile, options, &ops, &ctx, &err)))
        goto out;
    if ((rc = kcs_order_probe(ops, ctx, &o, &r, &err)))
        goto out;
    print_order(&o, backend, profile, &r, json);
out:
    kcs_order_result_free(&r);
    if (ctx)
        ops->close(ctx);
    if (rc) {
        fprintf(stderr, "kcs probe: %s\n", err.msg);
        return kcs_exit_status(rc);
    }
    return 0;
}

int kcs_cmd_probe(int argc, char **argv)
{
    const char *backend = "cpu", *profile = NULL, *din = NULL, *options = NULL;
    long long device = 0, tile = 1, k = 0, m = 1, n = 1, seed = 1;
    int json = 0, order = 0;
    const char *opname = NULL, *variant = NULL, *sched = NULL;
    const kcs_opt opts[] = {
        {0, "backend", KCS_OPT_STR, &backend, "NAME", "backend (default cpu)"},
        {0, "device", KCS_OPT_INT, &device, "I", "device index (default 0)"},
        {0, "profile", KCS_OPT_STR, &profile, "NAME", "emulated silicon profile (cpu)"},
        {0, "dtype-in", KCS_OPT_STR, &din, "F", "input format (default fp32, or every format "
                                               "of --profile)"},
        {0, "options", KCS_OPT_STR, &options, "OPTS", "backend build options"},
        {0, "tile", KCS_OPT_INT, &tile, "T", "gemm of T×T outputs, the probe's at (0, 0) (default 1)"},
        {0, "json", KCS_OPT_FLAG, &json, NULL, "print the result as JSON"},
        {0, "order", KCS_OPT_FLAG, &order, NULL, "recover the summation tree of --op"},
        {0, "op", KCS_OPT_STR, &opname, "OP", "--order: gemm dot reduce_sum layernorm allreduce"},
        {'k', "k", KCS_OPT_INT, &k, "K", "--order: reduction length (allreduce: message length)"},
        {'m', "m", KCS_OPT_INT, &m, "M", "--order: gemm rows / reduce_sum rows (default 1)"},
        {'n', "n", KCS_OPT_INT, &n, "N", "--order: gemm columns (default 1)"},
        {0, "variant", KCS_OPT_STR, &variant, "V", "--order: native (default) | own"},
        {0, "schedule", KCS_OPT_STR, &sched, "S", "--order, own: sequential pairwise blocked:B "
                                                 "splitk:S atomic"},
        {0, "seed", KCS_OPT_INT, &seed, "S", "--order: the calls' seed (atomic order) and the "
                                           "pivots' (default 1)"},
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
    if (order)
        return probe_order(backend, (int)device, profile, din, options, opname, variant, sched,
                           k, m, n, seed, json);
    if (opname || variant || sched || k || m != 1 || n != 1 || seed != 1) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--op, -k, -m, -n, --variant, --schedule, --seed belong "
                      "to --order");
        goto out;
    }
    if (tile < 1 || tile > KCS_PROBE_TILE_MAX) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--tile: %lld outside 1..%d", tile, KCS_PROBE_TILE_MAX);
        goto out;
    }
    char pname[KCS_PROFILE_SPEC_MAX];
    if ((rc = spec_name(profile, pname, &err)))
        goto out;
    if (din) {
        if (kcs_format_parse(din, &fmts[0])) {
            rc = kcs_fail(&err, KCS_E_INVAL, "--dtype-in: unknown format '%s'", din);
            goto out;
        }
        nf = 1;
        const kcs_profile_params *row;
        if (profile && kcs_profile_lookup(pname, fmts[0], &row, &err)) {
            rc = err.code = KCS_E_INVAL; /* a format the profile lacks: bad flags */
            goto out;
        }
    } else if (profile) {
        const kcs_profile_params *rows;
        int n = 0;
        kcs_profile_table(&rows, &n);
        for (int i = 0; i < n; i++)
            if (strcmp(rows[i].profile, pname) == 0)
                fmts[nf++] = rows[i].in;
        if (!nf) {
            const kcs_profile_params *row;
            rc = kcs_profile_lookup(pname, KCS_FMT_FP16, &row, &err); /* names the known */
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
