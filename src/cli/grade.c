/* kcs grade: a kernel author's plugin library (include/kcs_plugin.h) run
 * through every contract whose scope holds an op it offers, each with the
 * contract's own measurement protocol; one verdict line per contract
 * (DESIGN §4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_print.h"
#include "calibrate.h"
#include "ci_report.h"
#include "cli.h"
#include "worker_host.h"
#include "precondition.h"

static const kcs_cmd_doc doc = {
    "grade", "LIB.so [CONTRACT...] [--shape MxNxK]... [--json]\n"
    "       kcs grade --backend cpu [--variant own|fused] [--acc A] [--schedule S] [--profile P] "
    "[CONTRACT...]",
    "Grade a plugin library: every contract whose scope holds an op the library offers\n"
    "runs through its own measurement protocol (shapes, held-out shapes, inputs, trials,\n"
    "guards) on the library; one verdict line per contract.",
    "CONTRACT: an id or a YAML path (default: every contract folder of the contracts\n"
    "directory, see kcs calibrate --help). A path without '/' is searched by the dynamic loader;\n"
    "write ./lib.so for a file in the current directory.\n"
    "PASS: every trial within tolerance; FAIL: some trial violates the contract (the\n"
    "matched signatures say how); ERROR: the library failed a call; NOT-CLAIMED: the\n"
    "contract binds only kernels that declare a property (C-ORD-03: batch_invariant,\n"
    "C-PRC-06: round_to_nearest; declared by a plugin's kcs_plugin_declares) and this one\n"
    "does not (not a failure).\n\n"
    "The library runs in a worker process (kcs-worker, protocol include/kcs_worker.h):\n"
    "its output goes to the worker log, never to kcs's stdout; a call that crashes the\n"
    "worker, exits it, closes its channel or passes --timeout is an ERROR with the\n"
    "reason, and a fresh worker takes the next call. Limits: --worker-mem, --worker-cpu\n"
    "(or KCS_WORKER_MEM, KCS_WORKER_CPU, KCS_WORKER_LOG in the environment). The worker\n"
    "runs in a box (PID, IPC and mount namespaces, Landlock or read-only mounts, a\n"
    "cgroup, where the kernel allows them: docs/isolation.md); the line 'worker box'\n"
    "says which layers held. Results are written after every process of the box is gone.\n\n"
    "--junit FILE writes JUnit XML: one test case per contract (failure: FAIL, error:\n"
    "ERROR).\n\n"
    "Every input format the contract's precondition admits is graded (formats the\n"
    "library does not offer are skipped and named).\n"
    "--shape MxNxK[xBATCH] (repeatable, or comma-separated): run each contract's protocol\n"
    "at these shapes instead of its own; a shape outside a graded contract's\n"
    "precondition is refused (exit 2, naming the range).\n"
    "--backend cpu: grade the CPU backend's kernels instead of a library (--variant\n"
    "native|own|fused (attention's online softmax), --acc fp32|bf16|fp16|bits:N[:rz],\n"
    "--schedule, --profile), e.g. its own GEMM with a bf16 accumulator.\n\n"
    "exit status: 0 every graded contract PASS; 3 some FAIL or ERROR; 2 bad input (the\n"
    "library cannot be loaded, no contract applies); 1 internal failure."};

/* The ops the plugin offers: the describe() arch field lists them. */
static uint32_t offered_ops(const kcs_rank_binding *b)
{
    uint32_t ops = 0;
    char list[sizeof b->info.arch];
    snprintf(list, sizeof list, "%s", b->info.arch);
    char *save = NULL;
    for (char *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        kcs_op op;
        if (kcs_op_parse(t, &op) == 0)
            ops |= 1u << op;
    }
    return ops;
}

int kcs_cmd_grade(int argc, char **argv)
{
    const char *dir = NULL;
    long long seed = 20260601, timeout = 120;
    const char *wmem = NULL, *wcpu = NULL, *wlog = NULL, *junit = NULL;
    int json = 0, verbose = 0;
    const char *shape_opt = NULL, *backend = NULL, *variant = NULL, *acc = NULL,
               *schedule = NULL, *profile = NULL, *only_ops = NULL;
    kcs_shape shapes[KCS_MAX_SHAPES];
    int n_shapes = 0;
    /* --shape may repeat: collect every value before the table parser
     * (which keeps the last) sees them. */
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            v = argv[i + 1];
        else if (!strncmp(argv[i], "--shape=", 8))
            v = argv[i] + 8;
        if (!v)
            continue;
        char buf[512];
        snprintf(buf, sizeof buf, "%s", v);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (n_shapes == KCS_MAX_SHAPES) {
                fprintf(stderr, "kcs grade: --shape: at most %d shapes\n", KCS_MAX_SHAPES);
                return 2;
            }
            if (kcs_shape_parse_text(t, &shapes[n_shapes])) {
                fprintf(stderr, "kcs grade: --shape: '%s' is not MxNxK or MxNxKxBATCH "
                        "(positive integers)\n", t);
                return 2;
            }
            n_shapes++;
        }
    }
    const kcs_opt opts[] = {
        {0, "shape", KCS_OPT_STR, &shape_opt, "MxNxK", "grade at this shape (repeatable)"},
        {0, "ops", KCS_OPT_STR, &only_ops, "OP,...", "grade only these ops (default: all offered)"},
        {0, "backend", KCS_OPT_STR, &backend, "cpu", "grade the CPU backend's kernels"},
        {0, "variant", KCS_OPT_STR, &variant, "V", "with --backend: native | own (default native)"},
        {0, "acc", KCS_OPT_STR, &acc, "A", "with --backend: accumulator of own kernels"},
        {0, "schedule", KCS_OPT_STR, &schedule, "S", "with --backend: reduction schedule of own"},
        {0, "profile", KCS_OPT_STR, &profile, "P", "with --backend: emulated matrix-unit profile"},
        {0, "json", KCS_OPT_FLAG, &json, NULL, "print JSON instead of verdict lines"},
        {0, "contracts", KCS_OPT_STR, &dir, "DIR", "directory of the contract folders"},
        {0, "seed", KCS_OPT_INT, &seed, "N", "seed of the generated inputs (default 20260601)"},
        {0, "timeout", KCS_OPT_INT, &timeout, "SECONDS", "time limit of one kernel call (120)"},
        {'v', "verbose", KCS_OPT_FLAG, &verbose, NULL, "log kernel failures on stderr"},
        {0, "junit", KCS_OPT_STR, &junit, "FILE", "write a JUnit XML report (one test case per contract)"},
        {0, "worker-mem", KCS_OPT_STR, &wmem, "MIB",
         "address-space limit of the worker (default 16384 or half the memory; 0: none)"},
        {0, "worker-cpu", KCS_OPT_STR, &wcpu, "SECONDS",
         "CPU-time limit of one worker (default 3600; 0: none)"},
        {0, "worker-log", KCS_OPT_STR, &wlog, "FILE",
         "the worker's stdout/stderr (default $TMPDIR/kcs-worker-PID.log)"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if ((wmem && setenv("KCS_WORKER_MEM", wmem, 1)) || (wcpu && setenv("KCS_WORKER_CPU", wcpu, 1)) ||
        (wlog && setenv("KCS_WORKER_LOG", wlog, 1))) {
        fprintf(stderr, "kcs grade: cannot set the worker's limits\n");
        return 1;
    }
    /* The worker must not read this process (the references it holds). */
    kcs_worker_protect_grader();
    if (!backend && npos < 1) {
        fprintf(stderr, "kcs grade: need a plugin library (see kcs grade --help)\n");
        return 2;
    }
    if (backend && strcmp(backend, "cpu") != 0) {
        fprintf(stderr, "kcs grade: --backend: only cpu (other backends: kcs calibrate)\n");
        return 2;
    }
    if (!backend && (variant || acc || schedule || profile)) {
        fprintf(stderr, "kcs grade: --variant/--acc/--schedule/--profile need --backend cpu\n");
        return 2;
    }
    const char *lib = backend ? "cpu" : argv[0];
    int first_contract = backend ? 0 : 1;
    char dbuf[4096];
    if (!dir)
        dir = kcs_calib_contracts_dir(dbuf, sizeof dbuf);
    kcs_error err = {0};
    kcs_contract **cs = NULL;
    int n = 0, status = 0, graded = 0, passed = 0, unclaimed = 0, bound = 0;
    kcs_rank_binding b;
    kcs_calib_row *rows = NULL;
    if ((rc = kcs_calib_catalogue_load(dir, &err)) ||
        (rc = kcs_calib_load(dir, argv + first_contract, npos - first_contract, &cs, &n, &err)))
        goto out;
    if (backend)
        rc = kcs_grade_bind_cpu(variant, acc, schedule, profile, &b, &err);
    else
        rc = kcs_calib_bind("plugin", 0, lib, 0, &b, NULL, &err);
    if (rc) {
        char why[KCS_ERRMSG_MAX]; /* a library that does not load is bad input */
        snprintf(why, sizeof why, "%s", err.msg);
        rc = kcs_fail(&err, KCS_E_INVAL, "%s", why);
        goto out;
    }
    bound = 1;
    uint32_t offered = backend ? (1u << KCS_OP_COUNT) - 1 : offered_ops(&b);
    if (only_ops) {
        uint32_t want = 0;
        char list[256];
        snprintf(list, sizeof list, "%s", only_ops);
        char *save = NULL;
        for (char *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
            kcs_op op;
            if (kcs_op_parse(t, &op)) {
                rc = kcs_fail(&err, KCS_E_INVAL, "--ops: unknown op '%s'", t);
                goto out;
            }
            want |= 1u << op;
        }
        offered &= want;
    }
    rows = calloc((size_t)n + 1, sizeof *rows);
    if (!rows) {
        rc = kcs_fail(&err, KCS_E_NOMEM, "out of memory");
        goto out;
    }
    kcs_calib_run run = {(uint64_t)seed, (double)timeout, verbose};
    /* Refuse shapes outside the precondition of a contract that would run. */
    for (int i = 0; i < n && n_shapes; i++) {
        uint32_t ops = kcs_calib_ops(cs[i], offered);
        if (!ops)
            continue;
        for (int j = 0; j < n_shapes; j++) {
            if ((rc = kcs_precondition_shape(cs[i], &shapes[j], &err)))
                goto out;
            /* per-op preconditions (precondition.per_op): the shape runs
             * for the ops that admit it; refused when none does */
            int admitted = 0;
            kcs_error oe = {0};
            for (int op = 0; op < KCS_OP_COUNT && !admitted; op++)
                if (ops & (1u << op))
                    admitted = kcs_precondition_op_shape(cs[i], (kcs_op)op, &shapes[j], &oe) == 0;
            if (!admitted) {
                rc = kcs_fail(&err, KCS_E_INVAL, "%s", oe.msg);
                goto out;
            }
        }
    }
    kcs_calib_scope scope = {.shapes = shapes, .n_shapes = n_shapes, .all_dtypes = 1};
    char boxline[2048] = "";
    kcs_box_report box;
    if (!backend && kcs_box_last_report(&box))
        kcs_box_describe(&box, boxline, sizeof boxline);
    if (!json) {
        printf("kcs grade: %s (%s %s, ops %s)\n", lib, backend ? "backend" : "plugin",
               b.info.model, b.info.arch);
        if (boxline[0])
            printf("kcs grade: worker box: %s\n", boxline);
    }
    for (int i = 0; i < n; i++) {
        uint32_t ops = kcs_calib_ops(cs[i], offered);
        if (!ops)
            continue;
        kcs_calib_outcome o;
        if ((rc = kcs_calib_measure_scoped(cs[i], ops, &b, &run, &scope, &o, &err)))
            goto out;
        kcs_calib_row *r = &rows[graded++];
        snprintf(r->backend, sizeof r->backend, "plugin");
        snprintf(r->contract, sizeof r->contract, "%s", cs[i]->id);
        snprintf(r->implementation, sizeof r->implementation, "%s", b.info.model);
        snprintf(r->ops, sizeof r->ops, "%s", o.ops);
        snprintf(r->verdict, sizeof r->verdict, "%s", o.verdict);
        snprintf(r->signatures, sizeof r->signatures, "%s", o.signatures);
        snprintf(r->detail, sizeof r->detail, "%s", o.detail);
        snprintf(r->failed_dtypes, sizeof r->failed_dtypes, "%s", o.failed_dtypes);
        snprintf(r->semantics, sizeof r->semantics, "%s", o.semantics);
        r->trials = o.trials;
        r->failed = o.failed;
        r->errors = o.errors;
        r->max_tau = o.max_tau;
        passed += strcmp(o.verdict, "PASS") == 0;
        unclaimed += strcmp(o.verdict, "NOT-CLAIMED") == 0;
        if (!json) {
            /* which input formats failed, under which semantics */
            char ctx[256] = "";
            size_t cu = 0;
            if (o.failed_dtypes[0])
                cu += (size_t)snprintf(ctx + cu, sizeof ctx - cu, "  [dtype_in %s failed]",
                                       o.failed_dtypes);
            if (o.semantics[0] && cu < sizeof ctx)
                snprintf(ctx + cu, sizeof ctx - cu, "  [semantics %s]", o.semantics);
            printf("%-9s %-13s %-5s %3d/%-3d trials failed  %s%s%s%s\n", r->contract, r->ops,
                   r->verdict, r->failed, r->trials, r->signatures[0] ? r->signatures : "", ctx,
                   r->detail[0] ? "  " : "", r->detail);
            fflush(stdout);
        }
    }
    if (graded == 0) {
        rc = kcs_fail(&err, KCS_E_INVAL, "%s: no contract's scope holds an op the library "
                      "offers (%s)", lib, b.info.arch);
        goto out;
    }
    /* Every process of the worker's box is gone before a verdict, a JSON
     * document or a JUnit file is written (the box's keeper is reaped and
     * with it everything the kernel started). */
    kcs_binding_close(&b);
    bound = 0;
    if (json) {
        printf("{\"library\": ");
        kcs_json_str(stdout, lib);
        printf(", \"plugin\": ");
        kcs_json_str(stdout, b.info.model);
        printf(", \"ops\": ");
        kcs_json_names(stdout, b.info.arch);
        printf(", \"uuid\": ");
        kcs_json_str(stdout, b.info.uuid);
        if (boxline[0]) {
            printf(", \"box\": ");
            kcs_json_str(stdout, boxline);
        }
        printf(", \"contracts\": [");
        for (int i = 0; i < graded; i++) {
            printf("%s\n  {\"id\": ", i ? "," : "");
            kcs_json_str(stdout, rows[i].contract);
            printf(", ");
            kcs_json_row_members(stdout, &rows[i]);
            printf(", \"failed_dtypes\": ");
            kcs_json_names(stdout, rows[i].failed_dtypes);
            printf(", \"semantics\": ");
            kcs_json_str(stdout, rows[i].semantics);
            printf("}");
        }
        printf("\n], \"graded\": %d, \"passed\": %d, \"not_claimed\": %d}\n", graded, passed,
               unclaimed);
    } else {
        printf("%d contract(s) graded: %d PASS, %d FAIL or ERROR%s", graded, passed,
               graded - passed - unclaimed, unclaimed ? ", " : "\n");
        if (unclaimed)
            printf("%d NOT-CLAIMED (the kernel does not declare what the contract binds)\n",
                   unclaimed);
    }
    if (junit) {
        kcs_ci ci = {0};
        ci.rows = calloc((size_t)graded, sizeof *ci.rows);
        if (!ci.rows) {
            rc = kcs_fail(&err, KCS_E_NOMEM, "out of memory");
            goto out;
        }
        ci.n = ci.cap = graded;
        for (int i = 0; i < graded; i++) {
            kcs_ci_row *c = &ci.rows[i];
            const kcs_calib_row *r = &rows[i];
            c->rank = -1;
            snprintf(c->contract, sizeof c->contract, "%s", r->contract);
            snprintf(c->implementation, sizeof c->implementation, "%s (%s)", lib, b.info.model);
            c->trials = r->trials;
            c->violations = r->failed;
            c->errors = r->errors;
            c->not_claimed = strcmp(r->verdict, "NOT-CLAIMED") == 0 ? r->trials - r->errors : 0;
            c->within = r->trials - r->failed - r->errors - c->not_claimed;
            c->max_tau = r->max_tau;
            snprintf(c->signatures, sizeof c->signatures, "%s", r->signatures);
            snprintf(c->message, sizeof c->message, "%s", r->detail);
        }
        rc = kcs_ci_junit(&ci, junit, "kcs grade", &err);
        kcs_ci_free(&ci);
        if (rc)
            goto out;
    }
    status = passed + unclaimed == graded ? 0 : 3;
out:
    if (rc) {
        fprintf(stderr, "kcs grade: %s\n", err.msg);
        status = kcs_exit_status(rc);
    }
    if (bound)
        kcs_binding_close(&b);
    free(rows);
    kcs_calib_contracts_free(cs, n);
    return status;
}
