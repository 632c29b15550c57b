/* kcs exec: one op, one backend, inputs from raw little-endian float64
 * files (shared/PROFILES.md). */
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "blas_info.h"
#include "format_fast.h"
#include "order_expect.h"
#include "probe_order.h"
#include "tensor.h"

static const kcs_cmd_doc doc = {
    "exec", "OP --backend B [--profile P] [--dtype-in F] -m M -n N -k K --a A.f64 ... --out D.f64",
    "Run one op on one backend with inputs from raw little-endian float64 files\n"
    "(row-major) and write the output the same way.",
    "gemm: D = C + A·B with A (m×k), B (k×n), optional C (m×n); D holds fp32 values.\n"
    "Other ops take their inputs as --a, --b, --c in the order of src/arith/op.h:\n"
    "  reduce_sum  -m M -k K --a X (m×k)               -> m sums\n"
    "  dot         -k K --a X --b Y (k each)           -> 1 value\n"
    "  softmax     -m M -k K --a X                     -> m×k (row-wise)\n"
    "  layernorm   -m M -k K --a X [--b GAMMA] [--c BETA] (k each) -> m×k\n"
    "  rmsnorm     -m M -k K --a X [--b GAMMA]         -> m×k\n"
    "  attention   [--batch B] -m M -n N -k K --a Q (m×k) --b K (n×k) --c V (n×k) -> m×k\n"
    "              (--variant native|own: unfused; fused: online softmax, attrs block=N)\n"
    "  gather      -m M -k K -n N --a TABLE (m×k) --b IDX (n integers) -> n×k\n"
    "              (--attrs oob=raise|clamp|zero; indices may be any integer)\n"
    "  allreduce   [-m P] -k K --a X (P×k, row r: rank r's contribution) -> k sums over\n"
    "              ranks (P <= 1: one process, y = x; --variant native: fp64 then one\n"
    "              rounding; own: --schedule over the ranks, atomic = arrival order)\n"
    "  elementwise -m M -k K --a X                     -> m×k, y = f(x) elementwise\n"
    "              (--attrs fn=exp|tanh|silu|gelu_tanh|rsqrt, default exp)\n"
    "  norm        -m M -k K --a X (m×k)               -> m 2-norms ||x_i||_2\n"
    "An input value that the input format cannot represent exactly is an error naming\n"
    "the file and element index (exit 2). Without --profile the backend's native variant\n"
    "runs. --out is refused if it exists and is not empty, unless --force.\n\n"
    "gemm --order TREES.json: no backend runs; each output is predicted from the summation\n"
    "tree that `kcs probe --order --op gemm --json` recovered for its position (same m, n,\n"
    "k; no C), with --leaf arithmetic: fma32 (default; fp32 fma per product, other adds\n"
    "rounded to fp32), fp64, or profile (nodes of > 2 children: --profile's block FMA).\n"
    "docs/order.md."};

/* Read exactly n doubles from path; each must be exact in fmt, or, when
 * integer is set, an integer (of any magnitude: gather indices, where
 * out-of-range values are the kernel's business). */
static int read_input(const char *path, size_t n, kcs_format fmt, int integer, double **x_p,
                      kcs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) /* a missing input file is bad input; a failing disk is not */
        return kcs_fail(err, errno == EIO ? KCS_E_IO : KCS_E_INVAL, "%s: cannot open: %s", path,
                        strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || (size_t)st.st_size != n * sizeof(double)) {
        fclose(f);
        return kcs_fail(err, KCS_E_INVAL, "%s: holds %lld bytes; the shape needs %zu float64 (%zu bytes)",
                        path, (long long)st.st_size, n, n * sizeof(double));
    }
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x) {
        fclose(f);
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(x, sizeof *x, n, f);
    fclose(f);
    if (got != n) {
        free(x);
        return kcs_fail(err, KCS_E_IO, "%s: short read", path);
    }
    for (size_t i = 0; i < n; i++) {
        if (integer && !(x[i] == floor(x[i]) && isfinite(x[i]))) {
            kcs_fail(err, KCS_E_INVAL, "%s: element %zu (%.17g) is not an integer index", path,
                     i, x[i]);
            free(x);
            return err->code;
        }
        if (!integer && !kcs_format_exact(fmt, x[i])) {
            kcs_fail(err, KCS_E_INVAL, "%s: element %zu (%.17g) is not exactly representable in %s",
                     path, i, x[i], kcs_format_name(fmt));
            free(x);
            return err->code;
        }
    }
    *x_p = x;
    return 0;
}

static int write_output(const char *path, const double *x, size_t n, int force, kcs_error *err)
{
    struct stat st;
    if (!force && stat(path, &st) == 0 && st.st_size > 0)
        return kcs_fail(err, KCS_E_EXISTS, "%s: exists and is not empty; refusing to overwrite "
                        "(use --force)", path);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create", tmp);
    size_t w = fwrite(x, sizeof *x, n, f);
    int bad = fclose(f) != 0 || w != n;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return kcs_fail(err, KCS_E_IO, "%s: write failed", path);
    }
    return 0;
}

/* exec gemm --order: the output predicted from probed trees. */
static int exec_order(const kcs_call *call, const char *forder, const char *leafname,
                      const char *profile, const char *fo, int force, kcs_error *err)
{
    if (!forder)
        return kcs_fail(err, KCS_E_INVAL, "--leaf belongs to --order FILE");
    if (call->op != KCS_OP_GEMM)
        return kcs_fail(err, KCS_E_INVAL, "--order predicts gemm only, not %s",
                        kcs_op_name(call->op));
    if (call->in[2])
        return kcs_fail(err, KCS_E_INVAL, "--order: the trees were probed without C; leave "
                        "--c out");
    kcs_order_leaf leaf = call->dtype_in == KCS_FMT_FP64 ? KCS_ORDER_LEAF_FP64
                                                         : KCS_ORDER_LEAF_FMA32;
    const kcs_profile_params *prof = NULL;
    if (leafname) {
        if (strcmp(leafname, "fma32") == 0)
            leaf = KCS_ORDER_LEAF_FMA32;
        else if (strcmp(leafname, "fp64") == 0)
            leaf = KCS_ORDER_LEAF_FP64;
        else if (strcmp(leafname, "profile") == 0)
            leaf = KCS_ORDER_LEAF_PROFILE;
        else
            return kcs_fail(err, KCS_E_INVAL, "--leaf '%s': fma32, fp64 or profile", leafname);
    }
    if (leaf == KCS_ORDER_LEAF_PROFILE) {
        int rc;
        if (!profile)
            return kcs_fail(err, KCS_E_INVAL, "--leaf profile needs --profile P");
        char pname[KCS_PROFILE_SPEC_MAX];
        kcs_libpath lp;
        if ((rc = kcs_profile_spec_parse(profile, pname, &lp, err)))
            return rc;
        if (lp.promote || lp.splitk > 1 || lp.c_last)
            return kcs_fail(err, KCS_E_INVAL, "--leaf profile: '%s' has a library path; the "
                            "trees' leaves are one instruction (give the profile name alone)",
                            profile);
        if ((rc = kcs_profile_lookup(pname, call->dtype_in, &prof, err)))
            return rc == KCS_E_UNSUPPORTED ? (err->code = KCS_E_INVAL) : rc;
    }
    kcs_order_file f;
    int rc = kcs_order_file_read(forder, &f, err);
    if (rc)
        return rc;
    if (f.op != KCS_OP_GEMM || f.k != call->k || f.m != call->m || f.n != call->n)
        rc = kcs_fail(err, KCS_E_INVAL, "%s: trees of %s k %lld m %lld n %lld; this call is gemm "
                      "k %lld m %lld n %lld (the trees are per output position: probe this "
                      "shape)", forder, kcs_op_name(f.op), (long long)f.k, (long long)f.m,
                      (long long)f.n, (long long)call->k, (long long)call->m,
                      (long long)call->n);
    size_t len = (size_t)(call->m * call->n);
    double *D = rc ? NULL : malloc(len * sizeof *D);
    if (!rc && !D)
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
    if (!rc)
        rc = kcs_order_predict_gemm(&f, leaf, prof, call->in[0], call->in[1], D, err);
    if (!rc)
        kcs_format_round_n(call->dtype_out, D, D, len);
    if (!rc)
        rc = write_output(fo, D, len, force, err);
    free(D);
    kcs_order_file_free(&f);
    return rc;
}

int kcs_cmd_exec(int argc, char **argv)
{
    const char *backend = "cpu", *profile = NULL, *din = "fp32", *dout = "fp32", *dacc = "fp32";
    const char *variant = NULL, *sched = "sequential", *attrs = "", *options = NULL;
    const char *fa = NULL, *fb = NULL, *fc = NULL, *fo = NULL, *forder = NULL, *leafname = NULL;
    long long m = 0, n = 0, k = 0, batch = 0, device = 0, seed = 0, threads = 0;
    int force = 0;
    const kcs_opt opts[] = {
        {0, "backend", KCS_OPT_STR, &backend, "NAME", "backend (default cpu)"},
        {0, "device", KCS_OPT_INT, &device, "I", "device index (default 0)"},
        {0, "profile", KCS_OPT_STR, &profile, "NAME", "emulated silicon profile (cpu)"},
        {0, "variant", KCS_OPT_STR, &variant, "V", "native | own | calibration variant"},
        {0, "schedule", KCS_OPT_STR, &sched, "S", "own: sequential pairwise blocked:B splitk:S atomic"},
        {0, "acc", KCS_OPT_STR, &dacc, "F", "own: accumulator format or bits:N (default fp32)"},
        {0, "dtype-in", KCS_OPT_STR, &din, "F", "input format (default fp32)"},
        {0, "dtype-out", KCS_OPT_STR, &dout, "F", "output format (default fp32)"},
        {0, "options", KCS_OPT_STR, &options, "OPTS", "backend build options"},
        {0, "attrs", KCS_OPT_STR, &attrs, "K=V;..", "op attributes, e.g. oob=raise"},
        {0, "seed", KCS_OPT_INT, &seed, "N", "seed of random schedules"},
        {'m', "m", KCS_OPT_INT, &m, "M", "rows"},
        {'n', "n", KCS_OPT_INT, &n, "N", "columns"},
        {'k', "k", KCS_OPT_INT, &k, "K", "reduction length"},
        {0, "batch", KCS_OPT_INT, &batch, "B", "batch count"},
        {0, "a", KCS_OPT_STR, &fa, "FILE", "first input"},
        {0, "b", KCS_OPT_STR, &fb, "FILE", "second input"},
        {0, "c", KCS_OPT_STR, &fc, "FILE", "third input (gemm: C, optional)"},
        {0, "out", KCS_OPT_STR, &fo, "FILE", "output file (float64)"},
        {0, "force", KCS_OPT_FLAG, &force, NULL, "overwrite a non-empty --out"},
        {0, "order", KCS_OPT_STR, &forder, "FILE", "gemm: predict from probed trees (JSON)"},
        {0, "leaf", KCS_OPT_STR, &leafname, "L", "--order: fma32 | fp64 | profile"},
        {0, "threads", KCS_OPT_INT, &threads, "N",
         "BLAS threads of the cpu native kernels (a rank's /provenance/ranks blas_threads)"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    kcs_error err = {0};
    kcs_call call = {0};
    double *in[3] = {0};
    double *out = NULL;
    kcs_backend_ctx *ctx = NULL;
    const kcs_backend_ops *ops = NULL;
    char msg[256] = "";
    if (npos != 1) {
        rc = kcs_fail(&err, KCS_E_INVAL, "need exactly one OP (gemm, softmax, ...)");
        goto out;
    }
    /* OpenBLAS's bits depend on its thread count: --threads reproduces a
     * rank's native output (its count is in /provenance/ranks) */
    if (threads != 0 && (threads < 1 || threads > 4096 || kcs_blas_set_threads((int)threads))) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--threads %lld: the BLAS cannot run with that many "
                      "threads", threads);
        goto out;
    }
    if (kcs_op_parse(argv[0], &call.op)) {
        rc = kcs_fail(&err, KCS_E_INVAL, "unknown op '%s'", argv[0]);
        goto out;
    }
    if (kcs_format_parse(din, &call.dtype_in) || kcs_format_parse(dout, &call.dtype_out)) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--dtype-in/--dtype-out: unknown format '%s'",
                      kcs_format_parse(din, &call.dtype_in) ? din : dout);
        goto out;
    }
    if (kcs_acc_parse(dacc, &call.acc) || kcs_schedule_parse(sched, &call.schedule)) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--acc '%s' or --schedule '%s' not understood", dacc, sched);
        goto out;
    }
    if (!fo) {
        rc = kcs_fail(&err, KCS_E_INVAL, "--out FILE is required");
        goto out;
    }
    call.variant = variant ? variant : "native";
    call.profile = profile;
    call.attrs = attrs;
    call.m = m;
    call.n = n;
    call.k = k;
    call.batch = batch;
    call.seed = (uint64_t)seed;
    call.msg = msg;
    call.msg_len = sizeof msg;
    const char *files[3] = {fa, fb, fc};
    for (int i = 0; i < kcs_op_n_inputs(call.op) && i < 3; i++) {
        /* gemm's C and the norms' gamma / beta may be left out. */
        int optional = ((call.op == KCS_OP_GEMM || call.op == KCS_OP_BATCHED_GEMM) && i == 2) ||
                       ((call.op == KCS_OP_LAYERNORM || call.op == KCS_OP_RMSNORM) && i >= 1);
        if (!files[i]) {
            if (optional)
                continue;
            rc = kcs_fail(&err, KCS_E_INVAL, "%s needs --%c FILE", argv[0], "abc"[i]);
            goto out;
        }
        size_t len = kcs_op_in_len(&call, i);
        kcs_format f = call.dtype_in;
        if (call.op == KCS_OP_GEMM && i == 2)
            f = KCS_FMT_FP32; /* C is an fp32 accumulator input */
        int integer = call.op == KCS_OP_GATHER && i == 1; /* indices */
        if ((rc = read_input(files[i], len, f, integer, &in[i], &err)))
            goto out;
        call.in[i] = in[i];
        call.in_len[i] = len;
    }
    if (forder || leafname) {
        rc = exec_order(&call, forder, leafname, profile, fo, force, &err);
        goto out;
    }
    if ((rc = kcs_cli_open_backend(backend, (int)device, profile, options, &ops, &ctx, &err)))
        goto out;
    call.out_len = kcs_op_out_len(&call);
    kcs_tensor t;
    if ((rc = kcs_tensor_alloc(&t, call.out_len, call.dtype_out, &err)))
        goto out;
    call.out = t.data;
    rc = ops->run(ctx, &call, &err);
    if (rc == KCS_E_RAISED && msg[0])
        kcs_fail(&err, rc, "%s raised: %s", argv[0], msg);
    if (rc == 0 && !kcs_tensor_guards_ok(&t))
        rc = kcs_fail(&err, KCS_E_INTERNAL, "%s wrote outside its output", backend);
    if (rc == 0)
        rc = write_output(fo, call.out, call.out_len, force, &err);
    out = t.base;
out:
    if (ctx)
        ops->close(ctx);
    free(out);
    for (int i = 0; i < 3; i++)
        free(in[i]);
    if (rc) {
        fprintf(stderr, "kcs exec: %s\n", err.msg);
        return kcs_exit_status(rc);
    }
    return 0;
}
