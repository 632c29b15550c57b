/* The GPU backends compiled in (KCS_HAVE_CUDA, KCS_HAVE_HIP,
 * KCS_HAVE_LEVEL_ZERO) on any machine: every ops-table slot is filled, and
 * each backend gives the one answer this machine calls for. Where the
 * machine has no such GPU, discover() and open() fail cleanly with
 * KCS_E_NODEV and "<backend>: no device|no driver (...)", leaving their
 * outputs untouched; where it has one, discover() counts it and open(0)
 * works. Which applies is decided apart from the backend under test:
 * KCS_TEST_GPUS (comma-separated backends expected to have a device, or
 * "none") when set, else the device nodes (/dev/nvidia<N> for cuda,
 * /dev/kfd for hip; level_zero only when named). A no-device answer on a
 * machine with the GPU fails, and so does a device found where none is
 * expected. Also the vendor-neutral host helpers the CUDA and HIP
 * backends share (backends/cuda/gpu_run.h). A hung runtime init is caught
 * by ctest's TIMEOUT. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

#if defined(KCS_HAVE_CUDA) || defined(KCS_HAVE_HIP)
#include "gpu_run.h"
#endif

/* The GPU backends built: modules, loaded through the registry. */
static const char *const gpu_names[] = {
#ifdef KCS_HAVE_CUDA
    "cuda",
#endif
#ifdef KCS_HAVE_HIP
    "hip",
#endif
#ifdef KCS_HAVE_LEVEL_ZERO
    "level_zero",
#endif
    NULL,
};
static const kcs_backend_ops *gpu_backends[4];

#define COUNT_SENTINEL (-7)

static void test_tables(void)
{
    /* every module built loads here (its runtime is where it was linked) */
    for (int i = 0; gpu_names[i]; i++) {
        const kcs_backend_ops *o = kcs_backend_find(gpu_names[i]);
        if (!o)
            printf("\n  %s: %s", gpu_names[i], kcs_backend_why(gpu_names[i]));
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        CU_ASSERT_PTR_NULL(kcs_backend_why(gpu_names[i]));
        CU_ASSERT_STRING_EQUAL(o->name, gpu_names[i]);
        char path[1024];
        CU_ASSERT(kcs_backend_module_path(gpu_names[i], path, sizeof path));
    }
    for (const kcs_backend_ops *const *b = gpu_backends; *b; b++) {
        const kcs_backend_ops *o = *b;
        CU_ASSERT_EQUAL(o->abi, KCS_BACKEND_ABI);
        CU_ASSERT_PTR_NOT_NULL(o->name);
        CU_ASSERT_PTR_NOT_NULL(o->discover);
        CU_ASSERT_PTR_NOT_NULL(o->open);
        CU_ASSERT_PTR_NOT_NULL(o->run);
        CU_ASSERT_PTR_NOT_NULL(o->describe);
        CU_ASSERT_PTR_NOT_NULL(o->close);
        /* the device Freivalds verifier: CUDA and HIP have one */
        int gpu = strcmp(o->name, "cuda") == 0 || strcmp(o->name, "hip") == 0;
        CU_ASSERT_EQUAL(o->freivalds != NULL, gpu);
    }
}

/* "name: ..." and a no-device / no-driver reason */
static int nodev_message(const char *name, const char *msg)
{
    size_t nl = strlen(name);
    return strncmp(msg, name, nl) == 0 && msg[nl] == ':' &&
           (strstr(msg, "no device") != NULL || strstr(msg, "no driver") != NULL);
}

/* Whether this machine is expected to have a device of backend `name`,
 * and why (see the top of the file). */
static int expect_device(const char *name, char *why, size_t len)
{
    const char *env = getenv("KCS_TEST_GPUS");
    if (env) {
        char list[256];
        snprintf(list, sizeof list, "%s", env);
        int listed = 0;
        char *save = NULL;
        for (char *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
            listed |= strcmp(t, name) == 0;
        snprintf(why, len, "KCS_TEST_GPUS=%s", env);
        return listed;
    }
    if (strcmp(name, "hip") == 0) {
        snprintf(why, len, "/dev/kfd %s", access("/dev/kfd", F_OK) == 0 ? "present" : "absent");
        return access("/dev/kfd", F_OK) == 0;
    }
    if (strcmp(name, "cuda") == 0) {
        int found = 0;
        DIR *d = opendir("/dev");
        struct dirent *de;
        while (d && (de = readdir(d)))
            found |= strncmp(de->d_name, "nvidia", 6) == 0 && de->d_name[6] >= '0' &&
                     de->d_name[6] <= '9';
        if (d)
            closedir(d);
        snprintf(why, len, "/dev/nvidia<N> %s", found ? "present" : "absent");
        return found;
    }
    snprintf(why, len, "not named in KCS_TEST_GPUS");
    return 0;
}

static void check_backend(const kcs_backend_ops *o)
{
    char why[300];
    int want = expect_device(o->name, why, sizeof why);
    printf("\n  %s: expecting %s (%s)", o->name, want ? "a device" : "no device", why);
    kcs_device_info info[KCS_MAX_DEVICES];
    memset(info, 0, sizeof info);
    kcs_error err = {0};
    int count = COUNT_SENTINEL;
    int rc = o->discover(info, KCS_MAX_DEVICES, &count, &err);
    printf("\n  %s: discover -> %s%s%s", o->name, rc ? kcs_strerror(rc) : "ok",
           rc ? ": " : "", rc ? err.msg : "");
    if (!want) {
        /* the clean, specific failure: NODEV with its reason, nothing set */
        CU_ASSERT_EQUAL(rc, KCS_E_NODEV);
        CU_ASSERT_EQUAL(err.code, KCS_E_NODEV);
        CU_ASSERT(nodev_message(o->name, err.msg));
        CU_ASSERT_EQUAL(count, COUNT_SENTINEL); /* outputs only on success */
    } else {
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT(count >= 1);
        for (int i = 0; i < count && i < KCS_MAX_DEVICES; i++) {
            CU_ASSERT_STRING_EQUAL(info[i].backend, o->name);
            CU_ASSERT_EQUAL(info[i].index, i);
        }
    }

    /* device 0: NODEV exactly where no device is expected */
    kcs_backend_ctx *ctx = NULL;
    kcs_error e0 = {0};
    int rc0 = o->open(0, NULL, &ctx, &e0);
    if (!want) {
        CU_ASSERT_EQUAL(rc0, KCS_E_NODEV);
        CU_ASSERT_EQUAL(e0.code, KCS_E_NODEV);
        CU_ASSERT(nodev_message(o->name, e0.msg));
        CU_ASSERT_PTR_NULL(ctx); /* not set on failure */
        printf("\n  %s: open(0) -> %s", o->name, e0.msg);
    } else {
        CU_ASSERT_EQUAL(rc0, 0);
        if (rc0 == 0) {
            kcs_device_info d;
            kcs_error e1 = {0};
            CU_ASSERT_EQUAL(o->describe(ctx, &d, &e1), 0);
            CU_ASSERT_STRING_EQUAL(d.backend, o->name);
            CU_ASSERT_STRING_EQUAL(d.model, info[0].model);
            o->close(ctx);
        } else {
            printf("\n  %s: open(0) -> %s", o->name, e0.msg);
        }
    }

    /* an index past the devices found is never a crash */
    ctx = NULL;
    kcs_error e2 = {0};
    int past = (rc == 0 && count > 0) ? count : 0;
    CU_ASSERT_EQUAL(o->open(past + 3, NULL, &ctx, &e2), KCS_E_NODEV);
    CU_ASSERT(nodev_message(o->name, e2.msg));
    CU_ASSERT_PTR_NULL(ctx);
    kcs_error e3 = {0};
    CU_ASSERT_EQUAL(o->open(-1, NULL, &ctx, &e3), KCS_E_NODEV);
    CU_ASSERT_PTR_NULL(ctx);

    /* discovery is repeatable (runtime init state does not stick badly) */
    kcs_error e4 = {0};
    int count2 = COUNT_SENTINEL;
    int rc2 = o->discover(info, KCS_MAX_DEVICES, &count2, &e4);
    CU_ASSERT_EQUAL(rc2, rc);
    if (rc2 == 0 && rc == 0)
        CU_ASSERT_EQUAL(count2, count);
}

static void test_nodev(void)
{
    int n = 0;
    for (const kcs_backend_ops *const *b = gpu_backends; *b; b++, n++)
        check_backend(*b);
    if (n == 0)
        printf("\n  (no GPU backend compiled in)");
}

#if defined(KCS_HAVE_CUDA) || defined(KCS_HAVE_HIP)
static void test_attr(void)
{
    char v[16];
    kcs_call c;
    memset(&c, 0, sizeof c);
    c.op = KCS_OP_GATHER;
    kcs_error err = {0};
    c.attrs = "oob=clamp;block=16";
    CU_ASSERT_EQUAL(gpu_attr("x", &c, "block", v, sizeof v, &err), 1);
    CU_ASSERT_STRING_EQUAL(v, "16");
    CU_ASSERT_EQUAL(gpu_attr("x", &c, "oob", v, sizeof v, &err), 1);
    CU_ASSERT_STRING_EQUAL(v, "clamp");
    c.attrs = "blocks=3"; /* whole keys only */
    CU_ASSERT_EQUAL(gpu_attr("x", &c, "block", v, sizeof v, &err), 0);
    c.attrs = NULL;
    CU_ASSERT_EQUAL(gpu_attr("x", &c, "oob", v, sizeof v, &err), 0);
    c.attrs = "oob"; /* malformed: an error naming the backend and op */
    CU_ASSERT_EQUAL(gpu_attr("x", &c, "oob", v, sizeof v, &err), KCS_E_INVAL);
    CU_ASSERT(strncmp(err.msg, "x gather: ", 10) == 0);
}

/* The kernels' accumulator descriptions follow the format table. */
static void test_red_init(void)
{
    kcs_call c;
    memset(&c, 0, sizeof c);
    kcs_gpu_red r;
    c.dtype_in = KCS_FMT_BF16;
    c.acc.fmt = KCS_FMT_FP32;
    c.schedule.kind = KCS_SCHED_BLOCKED;
    c.schedule.param = 32;
    gpu_red_init(&c, 0, &r);
    CU_ASSERT_EQUAL(r.tin, KCS_GPU_IN_BF16);
    CU_ASSERT_EQUAL(r.tacc, KCS_GPU_ACC_F32);
    CU_ASSERT_EQUAL(r.sched, (int)KCS_SCHED_BLOCKED);
    CU_ASSERT_EQUAL(r.param, 32);
    gpu_red_init(&c, 1, &r);
    CU_ASSERT_EQUAL(r.sched, KCS_GPU_SCHED_TREE);

    c.dtype_in = KCS_FMT_FP8_E4M3; /* fp8 values are exact in float */
    c.acc.fmt = KCS_FMT_FP16;
    gpu_red_init(&c, 0, &r);
    const kcs_format_info *h = kcs_format_get(KCS_FMT_FP16);
    CU_ASSERT_EQUAL(r.tin, KCS_GPU_IN_F32);
    CU_ASSERT_EQUAL(r.tacc, KCS_GPU_ACC_NARROW);
    CU_ASSERT_EQUAL(r.p, h->p);
    CU_ASSERT_EQUAL(r.emin, h->emin);
    CU_ASSERT_EQUAL(r.maxf, h->max_finite);

    c.dtype_in = KCS_FMT_FP64;
    c.acc.bits = 14; /* bits:14: 14-bit significand, fp32 range */
    gpu_red_init(&c, 0, &r);
    CU_ASSERT_EQUAL(r.tin, KCS_GPU_IN_F64);
    CU_ASSERT_EQUAL(r.tacc, KCS_GPU_ACC_NARROW);
    CU_ASSERT_EQUAL(r.p, 14);
    CU_ASSERT_EQUAL(r.emin, -126);
    /* the largest 14-bit value below 2^128 rounds to itself, 2^128 does not exist */
    CU_ASSERT_EQUAL(kcs_round_bits(r.maxf, 14, KCS_RNE), r.maxf);
    CU_ASSERT(isinf(kcs_round_bits(ldexp(1.0, 128), 14, KCS_RNE)));
    CU_ASSERT(r.maxf < ldexp(1.0, 128) && r.maxf > ldexp(1.0, 127));
    /* outputs of narrow accumulators and fp64 inputs travel as doubles */
    CU_ASSERT(gpu_acc_dbl(&r));
    CU_ASSERT(gpu_wide_dbl(&r));
    CU_ASSERT_EQUAL(gpu_val_size(&r), 8);
    c.acc.bits = 0;
    c.acc.fmt = KCS_FMT_FP32;
    c.dtype_in = KCS_FMT_FP16;
    gpu_red_init(&c, 0, &r);
    CU_ASSERT(!gpu_acc_dbl(&r));
    CU_ASSERT(!gpu_wide_dbl(&r));
    CU_ASSERT_EQUAL(gpu_val_size(&r), 4);
    c.dtype_in = KCS_FMT_FP64; /* fp64 inputs, fp32 accumulator: wide outputs */
    gpu_red_init(&c, 0, &r);
    CU_ASSERT(!gpu_acc_dbl(&r));
    CU_ASSERT(gpu_wide_dbl(&r));
}

/* Calls the backends must refuse before touching a device. */
static void test_check_call(void)
{
    double a[6] = {1, 2, 3, 4, 5, 6}, out[4];
    kcs_call c;
    memset(&c, 0, sizeof c);
    c.op = KCS_OP_GEMM;
    c.m = 2;
    c.n = 2;
    c.k = 3;
    c.in[0] = a;
    c.in_len[0] = 6;
    c.in[1] = a;
    c.in_len[1] = 6;
    c.out = out;
    c.out_len = 4;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(gpu_check_call("x", &c, &err), 0); /* C is optional */
    c.in_len[1] = 5;
    CU_ASSERT_EQUAL(gpu_check_call("x", &c, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "input 1") != NULL);
    c.in_len[1] = 6;
    c.out_len = 3;
    CU_ASSERT_EQUAL(gpu_check_call("x", &c, &err), KCS_E_INVAL);
    c.out_len = 4;
    c.in[0] = NULL;
    CU_ASSERT_EQUAL(gpu_check_call("x", &c, &err), KCS_E_INVAL);
    CU_ASSERT(strstr(err.msg, "input 0") != NULL);
    c.in[0] = a;
    c.k = -1;
    CU_ASSERT_EQUAL(gpu_check_call("x", &c, &err), KCS_E_INVAL);
    /* rmsnorm: gamma optional */
    memset(&c, 0, sizeof c);
    c.op = KCS_OP_RMSNORM;
    c.m = 2;
    c.k = 2;
    c.in[0] = a;
    c.in_len[0] = 4;
    c.out = out;
    c.out_len = 4;
    CU_ASSERT_EQUAL(gpu_check_call("x", &c, &err), 0);
}

static void test_variant(void)
{
    kcs_call c;
    memset(&c, 0, sizeof c);
    kcs_error err = {0};
    int v = -1;
    c.op = KCS_OP_ATTENTION;
    c.variant = "fused";
    CU_ASSERT_EQUAL(gpu_variant("x", &c, &v, &err), 0);
    CU_ASSERT_EQUAL(v, KCS_GPU_FUSED);
    c.variant = NULL; /* the default is native */
    CU_ASSERT_EQUAL(gpu_variant("x", &c, &v, &err), 0);
    CU_ASSERT_EQUAL(v, KCS_GPU_NATIVE);
    c.op = KCS_OP_SOFTMAX; /* fused names attention only */
    c.variant = "fused";
    CU_ASSERT_EQUAL(gpu_variant("x", &c, &v, &err), KCS_E_UNSUPPORTED);
    c.variant = "bad";
    CU_ASSERT_EQUAL(gpu_variant("x", &c, &v, &err), KCS_E_UNSUPPORTED);
    CU_ASSERT(strstr(err.msg, "'bad'") != NULL);
    c.variant = "own";
    CU_ASSERT_EQUAL(gpu_variant("x", &c, &v, &err), 0);
    CU_ASSERT_EQUAL(v, KCS_GPU_OWN);
}
#endif

int main(void)
{
    for (int i = 0, n = 0; gpu_names[i]; i++) {
        const kcs_backend_ops *o = kcs_backend_find(gpu_names[i]);
        if (o)
            gpu_backends[n++] = o;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("gpu_nodev", NULL, NULL);
    if (!s || !CU_add_test(s, "ops tables filled", test_tables) ||
        !CU_add_test(s, "discover/open: the answer this machine calls for", test_nodev)
#if defined(KCS_HAVE_CUDA) || defined(KCS_HAVE_HIP)
        || !CU_add_test(s, "attributes", test_attr) ||
        !CU_add_test(s, "accumulator descriptions", test_red_init) ||
        !CU_add_test(s, "call checks", test_check_call) ||
        !CU_add_test(s, "variants", test_variant)
#endif
    ) {
        CU_cleanup_registry();
        return 1;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    return f != 0;
}
