/* Unit tests of backends/kernels_host (kernels_host.h), the host layer the
 * opencl and level_zero backends share, on the CPU alone: no device API is
 * touched. Devices are described here (an opencl-like CPU device, a
 * level_zero-like GPU that asks for the native work-group check, devices
 * without fp64, small ones), so the level_zero options are exercised even
 * where no Level Zero driver exists.
 * Expected plans are derived from the call's shape and from the kernels'
 * signatures and work-size comments in backends/kernels (*.cl):
 *   gemm.cl       gemm_tiled / gemm_vec / gemm_own (A, B, C, D, m, n, k, sa,
 *                 sb, sd, has_c [, kind, param]); tiled: global
 *                 (ceil(n/TS)*RTS, ceil(m/TS)*RTS, batch), local (RTS, RTS, 1),
 *                 RTS = TS/WPT; vec: global (ceil(m/8), ceil(n/VW), batch),
 *                 VW 16 (float acc) or 8 (double acc); own: global (n, m,
 *                 batch); splitk:S = gemm_splitk_part (A, B, W, m, n, k, sa,
 *                 sb, batch, chunk) over (n, m, batch*S), chunk = ceil(k/S)
 *                 (common.cl), then gemm_splitk_sum (W, C, D, m, n, sd, batch,
 *                 splits, has_c) over (n, m, batch)
 *   rows.cl       X [G Bt] Y m k [has_g has_b rms] [kind param]; own one
 *                 work-item per row, native one RWG-wide group per row
 *   attention.cl  attn_scores (Q, K, S, m, n, d, scale, kind, param) over
 *                 (n, m, batch), attn_softmax (S, rows, n, kind, param) over
 *                 rows, attn_pv (P, V, O, m, n, d, kind, param) over (d, m,
 *                 batch); attn_fused (Q, K, V, O, m, n, d, scale, B, kind,
 *                 param, local ql[d], local pl[B]) over (m*AWG, batch), local
 *                 (AWG, 1), with red[AWG] val_t of its own local memory, d <=
 *                 AWG*16 (KCS_ACOLS)
 *   gather.cl     gather_rows (T, idx (long), Y, m, n, k, mode, bad (int))
 *                 over (max(k, 1), n); modes 0 raise, 1 clamp, 2 zero
 *   common.cl     out_t is double when the input storage or the accumulator
 *                 is double; val_t double only for double storage. */
#include "error.h"
#include "format.h"
#include "op.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(KCS_HAVE_OPENCL) || defined(KCS_HAVE_LEVEL_ZERO)
#include "kernels_host.h"

/* ---- devices --------------------------------------------------------------- */
/* As ocl_backend.c fills it for a PoCL CPU device (max_wg >= 256: ts 64). */
static const kcs_kh_device D_OCL = {.name = "opencl", .model = "cpu-test-pocl",
    .fp64_ext = "cl_khr_fp64", .has_fp64 = 1, .max_wg = 4096, .check_native_wg = 0,
    .local_mem = 4194304, .ts = 64, .wpt = 4, .rwg = 64, .awg = 64, .gemm_vec = 1};
/* As l0_backend.c fills it (KCS_L0_TS 64, WPT 4, RWG 64, AWG 64). */
static const kcs_kh_device D_L0 = {.name = "level_zero", .model = "Test Xe GPU",
    .fp64_ext = NULL, .has_fp64 = 1, .max_wg = 1024, .check_native_wg = 1,
    .local_mem = 65536, .ts = 64, .wpt = 4, .rwg = 64, .awg = 64, .gemm_vec = 0};
static const kcs_kh_device D_OCL_NOFP64 = {.name = "opencl", .model = "fp32-only-gpu",
    .fp64_ext = "cl_khr_fp64", .has_fp64 = 0, .max_wg = 256, .local_mem = 32768, .ts = 64,
    .wpt = 4, .rwg = 64, .awg = 64};
static const kcs_kh_device D_L0_NOFP64 = {.name = "level_zero", .model = "Test Arc",
    .fp64_ext = NULL, .has_fp64 = 0, .max_wg = 1024, .check_native_wg = 1,
    .local_mem = 65536, .ts = 64, .wpt = 4, .rwg = 64, .awg = 64};
/* Small: 128 work-items < (64/4)^2 = 256, 1 KiB of local memory. */
static const kcs_kh_device D_L0_SMALL = {.name = "level_zero", .model = "tiny-gpu",
    .has_fp64 = 1, .max_wg = 128, .check_native_wg = 1, .local_mem = 1024, .ts = 64, .wpt = 4,
    .rwg = 64, .awg = 64};
static const kcs_kh_device D_OCL_SMALL = {.name = "opencl", .model = "tiny-gpu",
    .fp64_ext = "cl_khr_fp64", .has_fp64 = 1, .max_wg = 128, .check_native_wg = 0,
    .local_mem = 1024, .ts = 64, .wpt = 4, .rwg = 64, .awg = 64};

/* ---- calls ----------------------------------------------------------------- */
#define POOL (1 << 16)
static const double zeros[POOL];
static double outbuf[POOL];

static kcs_call mk(kcs_op op, int64_t m, int64_t n, int64_t k, int64_t batch)
{
    kcs_call c = {.op = op, .schedule = {KCS_SCHED_SEQUENTIAL, 0}, .dtype_in = KCS_FMT_FP32,
                  .dtype_out = KCS_FMT_FP32, .acc = {KCS_FMT_FP32, 0}, .m = m, .n = n, .k = k,
                  .batch = batch};
    for (int i = 0; i < kcs_op_n_inputs(op); i++) {
        c.in[i] = zeros;
        c.in_len[i] = kcs_op_in_len(&c, i);
    }
    c.out = outbuf;
    c.out_len = kcs_op_out_len(&c);
    return c;
}

/* ---- checks ---------------------------------------------------------------- */
static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* A refusal: rc and err->code are code, the message starts with "<name>:"
 * and holds every string of subs (NULL-terminated); outputs untouched. */
static void refused_at(int line, const kcs_kh_device *dev, const kcs_call *c, int code,
                       const char *const *subs)
{
    kcs_kh_types ty = {-7, -7};
    int variant = -7;
    kcs_error err = {0};
    int rc = kcs_kh_check_call(dev, c, &ty, &variant, &err);
    char pre[32];
    snprintf(pre, sizeof pre, "%s:", dev->name);
    int ok = rc == code && err.code == code && starts(err.msg, pre);
    for (const char *const *s = subs; *s; s++)
        ok = ok && strstr(err.msg, *s) != NULL;
    ok = ok && ty.tin == -7 && ty.tacc == -7 && variant == -7;
    if (!ok)
        fprintf(stderr, "\n  line %d: rc %d (want %d), msg '%s'\n", line, rc, code, err.msg);
    CU_ASSERT(ok);
}
#define REFUSED(dev, c, code, ...) \
    refused_at(__LINE__, dev, c, code, (const char *const[]){__VA_ARGS__, NULL})

static void accepted_at(int line, const kcs_kh_device *dev, const kcs_call *c, int tin,
                        int tacc, int variant)
{
    kcs_kh_types ty = {-7, -7};
    int v = -7;
    kcs_error err = {0};
    int rc = kcs_kh_check_call(dev, c, &ty, &v, &err);
    int ok = rc == 0 && ty.tin == tin && ty.tacc == tacc && v == variant;
    if (!ok)
        fprintf(stderr, "\n  line %d: rc %d '%s' tin %d tacc %d variant %d\n", line, rc,
                err.msg, ty.tin, ty.tacc, v);
    CU_ASSERT(ok);
}
#define ACCEPTED(dev, c, tin, tacc, variant) accepted_at(__LINE__, dev, c, tin, tacc, variant)

/* Check and plan a call that both must accept. */
static int planned(const kcs_kh_device *dev, const kcs_call *c, kcs_kh_types *ty,
                   kcs_kh_plan *p)
{
    int variant = -1;
    kcs_error err = {0};
    int rc = kcs_kh_check_call(dev, c, ty, &variant, &err);
    if (!rc)
        rc = kcs_kh_plan_call(dev, c, ty, variant, p, &err);
    if (rc)
        fprintf(stderr, "\n  unexpected refusal: %s\n", err.msg);
    return rc;
}

#define A_BUF(l, i) ((l)->args[i].kind == KCS_KH_ARG_BUF ? (l)->args[i].v.buf : -100)
#define A_I64(l, i, x) CU_ASSERT((l)->args[i].kind == KCS_KH_ARG_I64 && (l)->args[i].v.i64 == (x))
#define A_I32(l, i, x) CU_ASSERT((l)->args[i].kind == KCS_KH_ARG_I32 && (l)->args[i].v.i32 == (x))
#define A_LOC(l, i, x) \
    CU_ASSERT((l)->args[i].kind == KCS_KH_ARG_LOCAL && (l)->args[i].v.local == (size_t)(x))
#define GLOBAL3(l, a, b, c) \
    CU_ASSERT((l)->global[0] == (size_t)(a) && (l)->global[1] == (size_t)(b) && \
              (l)->global[2] == (size_t)(c))

/* Buffer b stages input `input`, n values. */
static int is_input(const kcs_kh_plan *p, int b, int input, size_t n)
{
    return b >= 0 && b < p->nbufs && p->bufs[b].kind == KCS_KH_BUF_INPUT &&
           p->bufs[b].input == input && p->bufs[b].n == n;
}
static int is_scratch(const kcs_kh_plan *p, int b, size_t n, size_t elem)
{
    return b >= 0 && b < p->nbufs && p->bufs[b].kind == KCS_KH_BUF_SCRATCH &&
           p->bufs[b].n == n && p->bufs[b].elem == elem;
}
static int is_none(const kcs_kh_plan *p, int b)
{
    return b >= 0 && b < p->nbufs && p->bufs[b].kind == KCS_KH_BUF_NONE;
}

/* Invariants of every plan: indices in range, the out buffer holds out_n
 * values of the out type, each buffer that is not NONE is an argument. */
static void plan_sane(const kcs_kh_plan *p, int dbl)
{
    CU_ASSERT(p->nbufs >= 0 && p->nbufs <= KCS_KH_MAX_BUFS);
    CU_ASSERT(p->nlaunch >= 0 && p->nlaunch <= KCS_KH_MAX_LAUNCHES);
    CU_ASSERT(p->flag >= -1 && p->flag < p->nbufs);
    CU_ASSERT(p->out >= -1 && p->out < p->nbufs);
    CU_ASSERT(p->out_dbl == dbl);
    if (p->out >= 0)
        CU_ASSERT(is_scratch(p, p->out, p->out_n, dbl ? sizeof(double) : sizeof(float)));
    int used[KCS_KH_MAX_BUFS] = {0};
    for (int i = 0; i < p->nlaunch; i++) {
        const kcs_kh_launch *l = &p->launch[i];
        CU_ASSERT(l->nargs > 0 && l->nargs <= KCS_KH_MAX_ARGS);
        CU_ASSERT(l->dims >= 1 && l->dims <= 3);
        for (int a = 0; a < l->nargs; a++)
            if (l->args[a].kind == KCS_KH_ARG_BUF) {
                CU_ASSERT(l->args[a].v.buf >= 0 && l->args[a].v.buf < p->nbufs);
                if (l->args[a].v.buf >= 0 && l->args[a].v.buf < p->nbufs)
                    used[l->args[a].v.buf] = 1;
            }
    }
    for (int b = 0; b < p->nbufs; b++) {
        if (p->nlaunch > 0 && p->bufs[b].kind != KCS_KH_BUF_NONE)
            CU_ASSERT(used[b]);
        if (p->bufs[b].kind == KCS_KH_BUF_HOST)
            CU_ASSERT(p->bufs[b].host != NULL && p->bufs[b].elem > 0);
        if (p->bufs[b].kind == KCS_KH_BUF_INPUT)
            CU_ASSERT(p->bufs[b].input >= 0 && p->bufs[b].input < KCS_MAX_INPUTS);
    }
}

/* 1/sqrt(d) to 256 bits (MPFR: exact integer arithmetic, also under
 * valgrind, whose long double is a double). */
static void rsqrt(mpfr_t r, int d)
{
    mpfr_init2(r, 256);
    mpfr_set_si(r, d, MPFR_RNDN);
    mpfr_rec_sqrt(r, r, MPFR_RNDN);
}
/* s is the float nearest to 1/sqrt(d). */
static int nearest_f32(float s, int d)
{
    mpfr_t r;
    rsqrt(r, d);
    float rn = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_clear(r);
    return s == rn;
}
/* s is one of the two doubles around 1/sqrt(d). */
static int faithful_f64(double s, int d)
{
    mpfr_t r;
    rsqrt(r, d);
    int ok = mpfr_cmp_d(r, nextafter(s, -INFINITY)) > 0 &&
             mpfr_cmp_d(r, nextafter(s, INFINITY)) < 0;
    mpfr_clear(r);
    return ok;
}

/* ---- kcs_kh_check_call ------------------------------------------------------ */
static void test_check_refusals(void)
{
    const kcs_kh_device *both[] = {&D_OCL, &D_L0};
    for (int d = 0; d < 2; d++) {
        const kcs_kh_device *dev = both[d];
        kcs_call c = mk(KCS_OP_ALLREDUCE, 0, 0, 8, 0);
        REFUSED(dev, &c, KCS_E_UNSUPPORTED, "allreduce", "not offered");
        c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
        c.variant = "tiled";
        REFUSED(dev, &c, KCS_E_UNSUPPORTED, "gemm", "'tiled'");
        c.variant = "fused"; /* attention only */
        REFUSED(dev, &c, KCS_E_UNSUPPORTED, "'fused'");
        c = mk(KCS_OP_ATTENTION, 2, 3, 4, 1);
        c.variant = "flash";
        REFUSED(dev, &c, KCS_E_UNSUPPORTED, "attention", "'flash'", "fused");
        for (int f = 0; f < 4; f++) {
            c = mk(KCS_OP_GEMM, 2, 3, 4, 1);
            int64_t *dim[] = {&c.m, &c.n, &c.k, &c.batch};
            *dim[f] = -1;
            REFUSED(dev, &c, KCS_E_INVAL, "negative shape");
        }
        c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
        c.dtype_in = KCS_FMT_COUNT;
        REFUSED(dev, &c, KCS_E_UNSUPPORTED, "dtype_in");
        c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
        c.acc = (kcs_acc){KCS_FMT_FP32, 12, 0};
        REFUSED(dev, &c, KCS_E_UNSUPPORTED, "accumulator bits:12 not offered", "cpu backend");
        kcs_format narrow[] = {KCS_FMT_BF16, KCS_FMT_FP16, KCS_FMT_TF32};
        for (int i = 0; i < 3; i++) {
            c.acc = (kcs_acc){narrow[i], 0, 0};
            char want[64];
            snprintf(want, sizeof want, "accumulator %s not offered", kcs_format_name(narrow[i]));
            REFUSED(dev, &c, KCS_E_UNSUPPORTED, want, "fp32 or fp64");
        }
        c = mk(KCS_OP_SOFTMAX, 2, 0, 4, 0);
        c.variant = "own";
        c.schedule = (kcs_schedule){KCS_SCHED_ATOMIC, 0};
        REFUSED(dev, &c, KCS_E_UNSUPPORTED, "atomic");
        c.schedule = (kcs_schedule){KCS_SCHED_BLOCKED, 0};
        REFUSED(dev, &c, KCS_E_INVAL, "schedule");
        c.schedule = (kcs_schedule){KCS_SCHED_SPLITK, -2};
        REFUSED(dev, &c, KCS_E_INVAL, "schedule");
        c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
        c.in[0] = NULL;
        REFUSED(dev, &c, KCS_E_INVAL, "input 0");
        c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
        c.in_len[1] = 4 * 3 - 1; /* B is k x n */
        REFUSED(dev, &c, KCS_E_INVAL, "input 1", "11");
        c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
        c.out_len = 2 * 3 - 1;
        REFUSED(dev, &c, KCS_E_INVAL, "output");
        c.out = NULL;
        REFUSED(dev, &c, KCS_E_INVAL, "output");
    }
}

static void test_check_fp64(void)
{
    kcs_call c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
    c.dtype_in = KCS_FMT_FP64;
    /* the contract's texts (kernels_host.h, kcs_kh_device.fp64_ext) */
    kcs_error err = {0};
    kcs_kh_types ty;
    int v;
    CU_ASSERT(kcs_kh_check_call(&D_OCL_NOFP64, &c, &ty, &v, &err) == KCS_E_UNSUPPORTED);
    CU_ASSERT_STRING_EQUAL(err.msg, "opencl: fp32-only-gpu has no cl_khr_fp64 (fp64 input)");
    CU_ASSERT(kcs_kh_check_call(&D_L0_NOFP64, &c, &ty, &v, &err) == KCS_E_UNSUPPORTED);
    CU_ASSERT_STRING_EQUAL(err.msg, "level_zero: Test Arc has no fp64 (input)");
    c.dtype_in = KCS_FMT_FP32;
    c.acc.fmt = KCS_FMT_FP64;
    REFUSED(&D_OCL_NOFP64, &c, KCS_E_UNSUPPORTED, "fp32-only-gpu has no cl_khr_fp64",
            "accumulator");
    REFUSED(&D_L0_NOFP64, &c, KCS_E_UNSUPPORTED, "Test Arc has no fp64", "accumulator");
    c = mk(KCS_OP_GATHER, 3, 2, 2, 0); /* a copy, but double storage all the same */
    c.dtype_in = KCS_FMT_FP64;
    REFUSED(&D_L0_NOFP64, &c, KCS_E_UNSUPPORTED, "has no fp64 (input)");
    /* fp32 work is fine there; fp64 on the devices that have it */
    c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
    ACCEPTED(&D_OCL_NOFP64, &c, KCS_KH_F32, 0, 0);
    ACCEPTED(&D_L0_NOFP64, &c, KCS_KH_F32, 0, 0);
    c.dtype_in = KCS_FMT_FP64;
    c.acc.fmt = KCS_FMT_FP64;
    ACCEPTED(&D_OCL, &c, KCS_KH_F64, 1, 0);
    ACCEPTED(&D_L0, &c, KCS_KH_F64, 1, 0);
}

static void test_check_native_wg(void)
{
    /* (ts/wpt)^2 = 256 work-items > 128 on the small device */
    kcs_call c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
    REFUSED(&D_L0_SMALL, &c, KCS_E_UNSUPPORTED, "256", "128");
    kcs_call b = mk(KCS_OP_BATCHED_GEMM, 2, 3, 4, 2);
    b.variant = "native";
    REFUSED(&D_L0_SMALL, &b, KCS_E_UNSUPPORTED, "256", "128");
    /* the same device without the check (opencl: tiles follow the device) */
    ACCEPTED(&D_OCL_SMALL, &c, KCS_KH_F32, 0, 0);
    ACCEPTED(&D_OCL_SMALL, &b, KCS_KH_F32, 0, 0);
    /* own, fused and gather are not the native tiles */
    c.variant = "own";
    ACCEPTED(&D_L0_SMALL, &c, KCS_KH_F32, 0, 1);
    kcs_call a = mk(KCS_OP_ATTENTION, 2, 3, 4, 1);
    a.variant = "fused";
    ACCEPTED(&D_L0_SMALL, &a, KCS_KH_F32, 0, 2);
    double idx[2] = {0, 1};
    kcs_call g = mk(KCS_OP_GATHER, 3, 2, 2, 0);
    g.in[1] = idx;
    ACCEPTED(&D_L0_SMALL, &g, KCS_KH_F32, 0, 0);
    /* exactly 256 work-items is enough */
    kcs_kh_device d256 = D_L0_SMALL;
    d256.max_wg = 256;
    c.variant = NULL;
    ACCEPTED(&d256, &c, KCS_KH_F32, 0, 0);
    /* each op is held to its own kernels' group: native rows need rwg = 64
     * (fits 128), attention's streaming kernel awg = 64 */
    kcs_call sm = mk(KCS_OP_SOFTMAX, 2, 0, 5, 0);
    sm.variant = "native";
    ACCEPTED(&D_L0_SMALL, &sm, KCS_KH_F32, 0, 0);
    kcs_kh_device d32 = D_L0_SMALL;
    d32.max_wg = 32; /* < rwg = awg = 64 */
    REFUSED(&d32, &sm, KCS_E_UNSUPPORTED, "native kernels need work groups of 64", "32");
    REFUSED(&d32, &a, KCS_E_UNSUPPORTED, "fused kernels need work groups of 64", "32");
    a.variant = "native";
    REFUSED(&d32, &a, KCS_E_UNSUPPORTED, "native kernels need work groups of 64", "32");
    a.variant = "own"; /* the unfused kernels have no fixed group */
    ACCEPTED(&d32, &a, KCS_KH_F32, 0, 1);
    sm.variant = "own";
    ACCEPTED(&d32, &sm, KCS_KH_F32, 0, 1);
}

static void test_check_types(void)
{
    const struct {
        kcs_format f;
        int tin;
    } st[] = {{KCS_FMT_FP32, KCS_KH_F32}, {KCS_FMT_FP64, KCS_KH_F64},
              {KCS_FMT_FP16, KCS_KH_F16}, {KCS_FMT_BF16, KCS_KH_BF16},
              /* exact in float: staged as float */
              {KCS_FMT_TF32, KCS_KH_F32},   {KCS_FMT_FP8_E4M3, KCS_KH_F32},
              {KCS_FMT_FP8_E5M2, KCS_KH_F32}};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        for (int acc = 0; acc < 2; acc++) {
            kcs_call c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
            c.dtype_in = st[i].f;
            c.acc.fmt = acc ? KCS_FMT_FP64 : KCS_FMT_FP32;
            ACCEPTED(&D_OCL, &c, st[i].tin, acc, 0);
            ACCEPTED(&D_L0, &c, st[i].tin, acc, 0);
        }
    kcs_call c = mk(KCS_OP_SOFTMAX, 2, 0, 5, 0);
    c.variant = "native";
    ACCEPTED(&D_L0, &c, KCS_KH_F32, 0, 0);
    c.variant = "own";
    ACCEPTED(&D_L0, &c, KCS_KH_F32, 0, 1);
    c.schedule = (kcs_schedule){KCS_SCHED_ATOMIC, 0};
    c.variant = NULL; /* native: the schedule is not used */
    ACCEPTED(&D_L0, &c, KCS_KH_F32, 0, 0);
    c = mk(KCS_OP_ATTENTION, 2, 3, 4, 2);
    c.variant = "fused";
    ACCEPTED(&D_OCL, &c, KCS_KH_F32, 0, 2);
    c.variant = "own";
    ACCEPTED(&D_OCL, &c, KCS_KH_F32, 0, 1);
    /* gather copies: no accumulator, so even bits:N passes */
    double idx[2] = {0, 2};
    c = mk(KCS_OP_GATHER, 3, 2, 2, 0);
    c.in[1] = idx;
    c.acc = (kcs_acc){KCS_FMT_FP32, 10, 0};
    ACCEPTED(&D_L0, &c, KCS_KH_F32, 0, 0);
    /* optional inputs absent, empty output */
    c = mk(KCS_OP_GEMM, 2, 3, 4, 0);
    c.in[2] = NULL;
    ACCEPTED(&D_L0, &c, KCS_KH_F32, 0, 0);
    c = mk(KCS_OP_LAYERNORM, 2, 0, 4, 0);
    c.in[1] = c.in[2] = NULL;
    ACCEPTED(&D_L0, &c, KCS_KH_F32, 0, 0);
    c = mk(KCS_OP_GEMM, 0, 3, 4, 0);
    c.out = NULL;
    ACCEPTED(&D_L0, &c, KCS_KH_F32, 0, 0);
}

/* ---- plans: gemm.cl --------------------------------------------------------- */
static void test_plan_gemm_tiled(void)
{
    const int64_t m = 70, n = 130, k = 3;
    kcs_call c = mk(KCS_OP_GEMM, m, n, k, 0);
    kcs_kh_types ty;
    kcs_kh_plan p;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    CU_ASSERT(p.nbufs == 4 && p.nlaunch == 1 && p.flag == -1 && p.late_rc == 0);
    CU_ASSERT(p.out_n == (size_t)(m * n));
    const kcs_kh_launch *l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->file, "gemm.cl");
    CU_ASSERT_STRING_EQUAL(l->name, "gemm_tiled");
    CU_ASSERT_FATAL(l->nargs == 11);
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, m * k));
    CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, k * n));
    CU_ASSERT(is_input(&p, A_BUF(l, 2), 2, m * n));
    CU_ASSERT(A_BUF(l, 3) == p.out);
    A_I64(l, 4, m);
    A_I64(l, 5, n);
    A_I64(l, 6, k);
    A_I64(l, 7, m * k);
    A_I64(l, 8, k * n);
    A_I64(l, 9, m * n);
    A_I32(l, 10, 1);
    /* TS 64, RTS 16: ceil(130/64) = 3 and ceil(70/64) = 2 tiles */
    CU_ASSERT(l->dims == 3);
    GLOBAL3(l, 3 * 16, 2 * 16, 1);
    CU_ASSERT(l->has_local && l->local[0] == 16 && l->local[1] == 16 && l->local[2] == 1);
    kcs_kh_plan_free(&p);
}

static void test_plan_gemm_vec(void)
{
    const int64_t m = 70, n = 130, k = 3;
    for (int acc = 0; acc < 2; acc++) {
        kcs_call c = mk(KCS_OP_GEMM, m, n, k, 0);
        c.in[2] = NULL;
        c.acc.fmt = acc ? KCS_FMT_FP64 : KCS_FMT_FP32;
        kcs_kh_types ty;
        kcs_kh_plan p;
        CU_ASSERT_FATAL(planned(&D_OCL, &c, &ty, &p) == 0);
        plan_sane(&p, acc);
        CU_ASSERT(p.nbufs == 4 && p.nlaunch == 1 && p.out_n == (size_t)(m * n));
        const kcs_kh_launch *l = &p.launch[0];
        CU_ASSERT_STRING_EQUAL(l->name, "gemm_vec");
        CU_ASSERT_FATAL(l->nargs == 11);
        CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, m * k));
        CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, k * n));
        CU_ASSERT(is_none(&p, A_BUF(l, 2))); /* absent C: a NULL handle */
        CU_ASSERT(A_BUF(l, 3) == p.out);
        A_I64(l, 7, m * k);
        A_I64(l, 8, k * n);
        A_I64(l, 9, m * n);
        A_I32(l, 10, 0);
        /* ceil(70/8) = 9; ceil(130/16) = 9 (float acc), ceil(130/8) = 17 */
        GLOBAL3(l, 9, acc ? 17 : 9, 1);
        CU_ASSERT(!l->has_local);
        kcs_kh_plan_free(&p);
    }
}

static void test_plan_gemm_own(void)
{
    const int64_t m = 5, n = 6, k = 7;
    kcs_call c = mk(KCS_OP_GEMM, m, n, k, 0);
    c.variant = "own";
    c.dtype_in = KCS_FMT_BF16;
    c.schedule = (kcs_schedule){KCS_SCHED_BLOCKED, 4};
    kcs_kh_types ty;
    kcs_kh_plan p;
    CU_ASSERT_FATAL(planned(&D_L0_SMALL, &c, &ty, &p) == 0); /* own: no wg check */
    CU_ASSERT(ty.tin == KCS_KH_BF16);
    plan_sane(&p, 0);
    CU_ASSERT(p.nbufs == 4 && p.nlaunch == 1);
    const kcs_kh_launch *l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "gemm_own");
    CU_ASSERT_FATAL(l->nargs == 13);
    CU_ASSERT(is_input(&p, A_BUF(l, 2), 2, m * n));
    CU_ASSERT(A_BUF(l, 3) == p.out);
    A_I64(l, 4, m);
    A_I64(l, 5, n);
    A_I64(l, 6, k);
    A_I32(l, 10, 1);
    A_I32(l, 11, KCS_SCHED_BLOCKED);
    A_I64(l, 12, 4);
    GLOBAL3(l, n, m, 1);
    CU_ASSERT(!l->has_local);
    kcs_kh_plan_free(&p);
}

static void test_plan_batched(void)
{
    const int64_t bt = 3, m = 4, n = 5, k = 6;
    kcs_call c = mk(KCS_OP_BATCHED_GEMM, m, n, k, bt);
    c.in[2] = NULL;
    kcs_kh_types ty;
    kcs_kh_plan p;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    CU_ASSERT(p.nbufs == 4 && p.nlaunch == 1 && p.out_n == (size_t)(bt * m * n));
    const kcs_kh_launch *l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "gemm_tiled");
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, bt * m * k));
    CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, bt * k * n));
    CU_ASSERT(is_none(&p, A_BUF(l, 2)));
    A_I64(l, 7, m * k); /* batch strides */
    A_I64(l, 8, k * n);
    A_I64(l, 9, m * n);
    A_I32(l, 10, 0);
    GLOBAL3(l, 16, 16, bt);
    kcs_kh_plan_free(&p);

    /* own splitk:4, k = 10: chunk ceil(10/4) = 3; fp64 accumulator */
    const int64_t bt2 = 2, m2 = 3, n2 = 5, k2 = 10;
    c = mk(KCS_OP_BATCHED_GEMM, m2, n2, k2, bt2);
    c.variant = "own";
    c.schedule = (kcs_schedule){KCS_SCHED_SPLITK, 4};
    c.acc.fmt = KCS_FMT_FP64;
    CU_ASSERT_FATAL(planned(&D_OCL, &c, &ty, &p) == 0);
    plan_sane(&p, 1);
    CU_ASSERT_FATAL(p.nbufs == 5 && p.nlaunch == 2);
    l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "gemm_splitk_part");
    CU_ASSERT_FATAL(l->nargs == 10);
    int w = A_BUF(l, 2);
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, bt2 * m2 * k2));
    CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, bt2 * k2 * n2));
    CU_ASSERT(is_scratch(&p, w, 4 * bt2 * m2 * n2, sizeof(double))); /* W: S*batch*m*n acc_t */
    A_I64(l, 3, m2);
    A_I64(l, 4, n2);
    A_I64(l, 5, k2);
    A_I64(l, 6, m2 * k2);
    A_I64(l, 7, k2 * n2);
    A_I64(l, 8, bt2);
    A_I64(l, 9, 3);
    GLOBAL3(l, n2, m2, bt2 * 4);
    l = &p.launch[1];
    CU_ASSERT_STRING_EQUAL(l->name, "gemm_splitk_sum");
    CU_ASSERT_FATAL(l->nargs == 9);
    CU_ASSERT(A_BUF(l, 0) == w);
    CU_ASSERT(is_input(&p, A_BUF(l, 1), 2, bt2 * m2 * n2));
    CU_ASSERT(A_BUF(l, 2) == p.out);
    A_I64(l, 3, m2);
    A_I64(l, 4, n2);
    A_I64(l, 5, m2 * n2);
    A_I64(l, 6, bt2);
    A_I64(l, 7, 4);
    A_I32(l, 8, 1);
    GLOBAL3(l, n2, m2, bt2);
    kcs_kh_plan_free(&p);

    /* splitk:16 > k = 10: blocks of ceil(10/16) = 1 term; the partials
     * (splits of chunk terms) cover k with none of them empty */
    c.schedule.param = 16;
    CU_ASSERT_FATAL(planned(&D_OCL, &c, &ty, &p) == 0);
    l = &p.launch[0];
    CU_ASSERT(l->args[9].v.i64 == 1);
    int64_t s = p.launch[1].args[7].v.i64, chunk = l->args[9].v.i64;
    CU_ASSERT(s * chunk >= k2 && (s - 1) * chunk < k2);
    CU_ASSERT(l->global[2] == (size_t)(bt2 * s));
    CU_ASSERT(p.bufs[w].n == (size_t)(s * bt2 * m2 * n2));
    kcs_kh_plan_free(&p);
}

static void test_plan_dot(void)
{
    kcs_call c = mk(KCS_OP_DOT, 0, 0, 9, 0);
    kcs_kh_types ty;
    kcs_kh_plan p;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    CU_ASSERT(p.out_n == 1);
    const kcs_kh_launch *l = &p.launch[0];
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, 9) && is_input(&p, A_BUF(l, 1), 1, 9));
    CU_ASSERT(is_none(&p, A_BUF(l, 2)));
    A_I64(l, 4, 1); /* a 1x9 . 9x1 gemm */
    A_I64(l, 5, 1);
    A_I64(l, 6, 9);
    A_I32(l, 10, 0);
    kcs_kh_plan_free(&p);
}

/* ---- plans: rows.cl --------------------------------------------------------- */
static void test_plan_rows(void)
{
    const int64_t m = 3, k = 10;
    kcs_call c = mk(KCS_OP_SOFTMAX, m, 0, k, 0);
    kcs_kh_types ty;
    kcs_kh_plan p;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    int staged = 0;
    for (int b = 0; b < p.nbufs; b++)
        staged += p.bufs[b].kind != KCS_KH_BUF_NONE;
    CU_ASSERT(staged == 2 && p.nlaunch == 1 && p.out_n == (size_t)(m * k));
    const kcs_kh_launch *l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->file, "rows.cl");
    CU_ASSERT_STRING_EQUAL(l->name, "softmax_native");
    CU_ASSERT_FATAL(l->nargs == 4);
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, m * k));
    CU_ASSERT(A_BUF(l, 1) == p.out);
    A_I64(l, 2, m);
    A_I64(l, 3, k);
    CU_ASSERT(l->dims == 1 && l->global[0] == (size_t)(m * 64));
    CU_ASSERT(l->has_local && l->local[0] == 64);
    kcs_kh_plan_free(&p);

    /* layernorm own with gamma, without beta, fp64 storage */
    c = mk(KCS_OP_LAYERNORM, m, 0, k, 0);
    c.variant = "own";
    c.in[2] = NULL;
    c.dtype_in = KCS_FMT_FP64;
    c.schedule = (kcs_schedule){KCS_SCHED_PAIRWISE, 0};
    CU_ASSERT_FATAL(planned(&D_OCL, &c, &ty, &p) == 0);
    plan_sane(&p, 1);
    l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "norm_own");
    CU_ASSERT_FATAL(l->nargs == 11);
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, m * k));
    CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, k));
    CU_ASSERT(is_none(&p, A_BUF(l, 2)));
    CU_ASSERT(A_BUF(l, 3) == p.out && p.out_n == (size_t)(m * k));
    A_I64(l, 4, m);
    A_I64(l, 5, k);
    A_I32(l, 6, 1);
    A_I32(l, 7, 0);
    A_I32(l, 8, 0);
    A_I32(l, 9, KCS_SCHED_PAIRWISE);
    A_I64(l, 10, 0);
    CU_ASSERT(l->dims == 1 && l->global[0] == (size_t)m && !l->has_local);
    kcs_kh_plan_free(&p);

    /* rmsnorm native: rms = 1, no beta (a stray in[2] is not an input of it) */
    c = mk(KCS_OP_RMSNORM, m, 0, k, 0);
    c.in[2] = zeros;
    c.in_len[2] = (size_t)k;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "norm_native");
    CU_ASSERT_FATAL(l->nargs == 9);
    CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, k) && is_none(&p, A_BUF(l, 2)));
    A_I32(l, 6, 1);
    A_I32(l, 7, 0);
    A_I32(l, 8, 1);
    kcs_kh_plan_free(&p);

    /* reduce_sum own blocked:8: m sums */
    c = mk(KCS_OP_REDUCE_SUM, m, 0, k, 0);
    c.variant = "own";
    c.schedule = (kcs_schedule){KCS_SCHED_BLOCKED, 8};
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "reduce_sum_own");
    CU_ASSERT_FATAL(l->nargs == 6);
    CU_ASSERT(A_BUF(l, 1) == p.out && p.out_n == (size_t)m);
    A_I32(l, 4, KCS_SCHED_BLOCKED);
    A_I64(l, 5, 8);
    kcs_kh_plan_free(&p);
}

/* ---- plans: attention.cl ---------------------------------------------------- */
static void test_plan_attention_unfused(void)
{
    const int64_t bt = 2, m = 3, n = 5, d = 3, rows = bt * m;
    for (int f64 = 0; f64 < 2; f64++) {
        kcs_call c = mk(KCS_OP_ATTENTION, m, n, d, bt);
        c.variant = "own";
        c.schedule = (kcs_schedule){KCS_SCHED_PAIRWISE, 0};
        if (f64)
            c.dtype_in = c.acc.fmt = KCS_FMT_FP64;
        kcs_kh_types ty;
        kcs_kh_plan p;
        CU_ASSERT_FATAL(planned(f64 ? &D_OCL : &D_L0, &c, &ty, &p) == 0);
        plan_sane(&p, f64);
        CU_ASSERT_FATAL(p.nbufs == 5 && p.nlaunch == 3);
        CU_ASSERT(p.out_n == (size_t)(rows * d));
        size_t vs = f64 ? sizeof(double) : sizeof(float);
        const kcs_kh_launch *l = &p.launch[0];
        CU_ASSERT_STRING_EQUAL(l->file, "attention.cl");
        CU_ASSERT_STRING_EQUAL(l->name, "attn_scores");
        CU_ASSERT_FATAL(l->nargs == 9);
        int bs = A_BUF(l, 2);
        CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, rows * d));
        CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, bt * n * d));
        CU_ASSERT(is_scratch(&p, bs, rows * n, vs)); /* S: batch*m*n val_t */
        A_I64(l, 3, m);
        A_I64(l, 4, n);
        A_I64(l, 5, d);
        if (f64) {
            /* within one ulp of 1/sqrt(3): 1.0/sqrt(3.0) (two roundings, as
             * the cpu backend computes it) is one ulp above RN(1/sqrt(3)) */
            CU_ASSERT(l->args[6].kind == KCS_KH_ARG_F64 && faithful_f64(l->args[6].v.f64, 3));
        } else {
            CU_ASSERT(l->args[6].kind == KCS_KH_ARG_F32 && nearest_f32(l->args[6].v.f32, 3));
        }
        A_I32(l, 7, KCS_SCHED_PAIRWISE);
        A_I64(l, 8, 0);
        GLOBAL3(l, n, m, bt);
        CU_ASSERT(!l->has_local);
        l = &p.launch[1];
        CU_ASSERT_STRING_EQUAL(l->name, "attn_softmax");
        CU_ASSERT_FATAL(l->nargs == 5);
        CU_ASSERT(A_BUF(l, 0) == bs);
        A_I64(l, 1, rows);
        A_I64(l, 2, n);
        A_I32(l, 3, KCS_SCHED_PAIRWISE);
        CU_ASSERT(l->dims == 1 && l->global[0] == (size_t)rows);
        l = &p.launch[2];
        CU_ASSERT_STRING_EQUAL(l->name, "attn_pv");
        CU_ASSERT_FATAL(l->nargs == 8);
        CU_ASSERT(A_BUF(l, 0) == bs);
        CU_ASSERT(is_input(&p, A_BUF(l, 1), 2, bt * n * d));
        CU_ASSERT(A_BUF(l, 2) == p.out);
        A_I64(l, 3, m);
        A_I64(l, 4, n);
        A_I64(l, 5, d);
        GLOBAL3(l, d, m, bt);
        kcs_kh_plan_free(&p);
    }
}

static void test_plan_attention_fused(void)
{
    const int64_t bt = 2, m = 3, n = 10, d = 5;
    /* fused, block=4: the call's schedule */
    kcs_call c = mk(KCS_OP_ATTENTION, m, n, d, bt);
    c.variant = "fused";
    c.schedule = (kcs_schedule){KCS_SCHED_BLOCKED, 2};
    c.attrs = "block=4";
    kcs_kh_types ty;
    kcs_kh_plan p;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    CU_ASSERT_FATAL(p.nbufs == 4 && p.nlaunch == 1 && p.late_rc == 0);
    const kcs_kh_launch *l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "attn_fused");
    CU_ASSERT_FATAL(l->nargs == 13);
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, bt * m * d));
    CU_ASSERT(is_input(&p, A_BUF(l, 1), 1, bt * n * d));
    CU_ASSERT(is_input(&p, A_BUF(l, 2), 2, bt * n * d));
    CU_ASSERT(A_BUF(l, 3) == p.out && p.out_n == (size_t)(bt * m * d));
    A_I64(l, 4, m);
    A_I64(l, 5, n);
    A_I64(l, 6, d);
    CU_ASSERT(l->args[7].kind == KCS_KH_ARG_F32 && nearest_f32(l->args[7].v.f32, 5));
    A_I64(l, 8, 4);
    A_I32(l, 9, KCS_SCHED_BLOCKED);
    A_I64(l, 10, 2);
    A_LOC(l, 11, d * sizeof(float));
    A_LOC(l, 12, 4 * sizeof(float));
    CU_ASSERT(l->dims == 2 && l->global[0] == (size_t)(m * 64) && l->global[1] == (size_t)bt);
    CU_ASSERT(l->has_local && l->local[0] == 64 && l->local[1] == 1);
    kcs_kh_plan_free(&p);

    /* native: the same kernel, sequential dots, default block 64 clipped to n */
    c.variant = NULL;
    c.attrs = NULL;
    CU_ASSERT_FATAL(planned(&D_OCL, &c, &ty, &p) == 0);
    l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->name, "attn_fused");
    A_I64(l, 8, n);
    A_I32(l, 9, KCS_SCHED_SEQUENTIAL);
    A_I64(l, 10, 0);
    A_LOC(l, 12, n * sizeof(float));
    kcs_kh_plan_free(&p);

    /* block=0: a late error, after the buffers */
    c.attrs = "block=0";
    CU_ASSERT_FATAL(planned(&D_OCL, &c, &ty, &p) == 0);
    CU_ASSERT(p.late_rc == KCS_E_INVAL && p.nlaunch == 0 && p.nbufs == 4);
    CU_ASSERT(starts(p.late.msg, "opencl") && strstr(p.late.msg, "block=0"));
    kcs_kh_plan_free(&p);
}

static void test_plan_attention_limits(void)
{
    /* local memory: ql[d] + pl[B] + red[AWG] values of 4 bytes in 1024:
     * d + B + 64 <= 256. n = 5: B = 5; d = 187 fits exactly, 188 does not. */
    kcs_error err = {0};
    kcs_kh_types ty;
    kcs_kh_plan p;
    kcs_call c = mk(KCS_OP_ATTENTION, 2, 5, 187, 0);
    c.variant = "fused";
    CU_ASSERT_FATAL(planned(&D_L0_SMALL, &c, &ty, &p) == 0);
    CU_ASSERT(p.late_rc == 0 && p.nlaunch == 1 && kcs_kh_late(&p, &err) == 0);
    kcs_kh_plan_free(&p);
    c = mk(KCS_OP_ATTENTION, 2, 5, 188, 0);
    c.variant = "fused";
    CU_ASSERT_FATAL(planned(&D_L0_SMALL, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    CU_ASSERT(p.late_rc == KCS_E_UNSUPPORTED && p.nlaunch == 0);
    CU_ASSERT(p.nbufs == 4 && p.out >= 0 && p.out_n == 2 * 188); /* buffers still described */
    CU_ASSERT(starts(p.late.msg, "level_zero:") && strstr(p.late.msg, "local memory"));
    CU_ASSERT(kcs_kh_late(&p, &err) == KCS_E_UNSUPPORTED);
    CU_ASSERT(err.code == KCS_E_UNSUPPORTED && strcmp(err.msg, p.late.msg) == 0);
    CU_ASSERT(kcs_kh_late(&p, NULL) == KCS_E_UNSUPPORTED);
    kcs_kh_plan_free(&p);
    /* head dimension: AWG * 16 = 1024 at most */
    c = mk(KCS_OP_ATTENTION, 1, 1, 1024, 0);
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    CU_ASSERT(p.late_rc == 0 && p.nlaunch == 1);
    kcs_kh_plan_free(&p);
    c = mk(KCS_OP_ATTENTION, 1, 1, 1025, 0);
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    CU_ASSERT(p.late_rc == KCS_E_UNSUPPORTED && p.nlaunch == 0);
    CU_ASSERT(starts(p.late.msg, "level_zero:") && strstr(p.late.msg, "1024"));
    kcs_kh_plan_free(&p);
    /* the unfused composition has neither limit */
    c.variant = "own";
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    CU_ASSERT(p.late_rc == 0 && p.nlaunch == 3);
    kcs_kh_plan_free(&p);
    /* empty: nothing to stage, run or read */
    c = mk(KCS_OP_ATTENTION, 0, 4, 8, 2);
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    CU_ASSERT(p.nbufs == 0 && p.nlaunch == 0 && p.out == -1 && p.late_rc == 0);
    kcs_kh_plan_free(&p);
    /* no keys: refused by the plan, which is left untouched */
    c = mk(KCS_OP_ATTENTION, 2, 0, 8, 1);
    int v = -1;
    CU_ASSERT_FATAL(kcs_kh_check_call(&D_L0, &c, &ty, &v, &err) == 0);
    memset(&p, 0x5a, sizeof p);
    CU_ASSERT(kcs_kh_plan_call(&D_L0, &c, &ty, v, &p, &err) == KCS_E_INVAL);
    CU_ASSERT(starts(err.msg, "level_zero") && strstr(err.msg, "n >= 1"));
    CU_ASSERT(p.nbufs == 0x5a5a5a5a);
}

/* ---- plans: gather.cl ------------------------------------------------------- */
static void test_plan_gather(void)
{
    const int64_t m = 4, k = 3;
    const double idx[] = {0, 3, 1, 7, -1, 1e300, -1e300, 1099511627776.0};
    const int64_t n = sizeof idx / sizeof idx[0];
    kcs_call c = mk(KCS_OP_GATHER, m, n, k, 0);
    c.in[1] = idx;
    kcs_kh_types ty;
    kcs_kh_plan p;
    CU_ASSERT_FATAL(planned(&D_OCL, &c, &ty, &p) == 0);
    plan_sane(&p, 0);
    CU_ASSERT(p.nbufs == 4 && p.nlaunch == 1 && p.late_rc == 0);
    const kcs_kh_launch *l = &p.launch[0];
    CU_ASSERT_STRING_EQUAL(l->file, "gather.cl");
    CU_ASSERT_STRING_EQUAL(l->name, "gather_rows");
    CU_ASSERT_FATAL(l->nargs == 8);
    CU_ASSERT(is_input(&p, A_BUF(l, 0), 0, m * k));
    /* idx: n longs from host, holding the indices */
    int bi = A_BUF(l, 1);
    CU_ASSERT_FATAL(bi >= 0 && bi < p.nbufs);
    CU_ASSERT(p.bufs[bi].kind == KCS_KH_BUF_HOST && p.bufs[bi].n == (size_t)n &&
              p.bufs[bi].elem == sizeof(int64_t));
    const int64_t *hi = p.bufs[bi].host;
    CU_ASSERT_FATAL(hi != NULL);
    for (int i = 0; i < 5; i++)
        CU_ASSERT(hi[i] == (int64_t)idx[i]);
    CU_ASSERT(hi[5] >= m && hi[6] < 0); /* huge: out of range on the same side */
    CU_ASSERT(hi[7] == INT64_C(1) << 40);
    CU_ASSERT(A_BUF(l, 2) == p.out && p.out_n == (size_t)(n * k));
    A_I64(l, 3, m);
    A_I64(l, 4, n);
    A_I64(l, 5, k);
    A_I32(l, 6, 0); /* raise by default */
    /* the flag: the kernel's `bad`, one int from host, above every position */
    CU_ASSERT(p.flag == A_BUF(l, 7));
    CU_ASSERT_FATAL(p.flag >= 0 && p.flag < p.nbufs);
    CU_ASSERT(p.bufs[p.flag].kind == KCS_KH_BUF_HOST && p.bufs[p.flag].n == 1 &&
              p.bufs[p.flag].elem == sizeof(int32_t));
    CU_ASSERT(p.bufs[p.flag].host == &p.flag_init);
    CU_ASSERT(p.flag_init >= n);
    kcs_error err = {0};
    CU_ASSERT(kcs_kh_flag_raised(&D_OCL, &c, p.flag_init, &err) == 0);
    CU_ASSERT(l->dims == 2 && l->global[0] == (size_t)k && l->global[1] == (size_t)n);
    kcs_kh_plan_free(&p);
    CU_ASSERT(p.owned == NULL);
    kcs_kh_plan_free(&p); /* twice: harmless */

    const struct {
        const char *attrs;
        int mode;
    } modes[] = {{"oob=raise", 0}, {"oob=clamp", 1}, {"oob=zero", 2}, {"oob=undefined", 1}};
    for (int i = 0; i < 4; i++) {
        c.attrs = modes[i].attrs;
        CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
        A_I32(&p.launch[0], 6, modes[i].mode);
        kcs_kh_plan_free(&p);
    }
    /* fp64 table: double out; k = 0: one work-item per index still */
    c = mk(KCS_OP_GATHER, m, 2, 0, 0);
    c.in[1] = idx;
    c.dtype_in = KCS_FMT_FP64;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    plan_sane(&p, 1);
    CU_ASSERT(p.out_n == 0 && p.launch[0].global[0] == 1 && p.launch[0].global[1] == 2);
    kcs_kh_plan_free(&p);
    /* no indices: the host data holds one element all the same */
    c = mk(KCS_OP_GATHER, m, 0, k, 0);
    c.in[1] = idx;
    CU_ASSERT_FATAL(planned(&D_L0, &c, &ty, &p) == 0);
    CU_ASSERT(p.bufs[A_BUF(&p.launch[0], 1)].host != NULL);
    kcs_kh_plan_free(&p);
}

static void plan_refused(const kcs_call *c, const char *sub)
{
    kcs_kh_types ty;
    int v = -1;
    kcs_error err = {0};
    kcs_kh_plan p;
    CU_ASSERT_FATAL(kcs_kh_check_call(&D_L0, c, &ty, &v, &err) == 0);
    memset(&p, 0x5a, sizeof p);
    int rc = kcs_kh_plan_call(&D_L0, c, &ty, v, &p, &err);
    CU_ASSERT(rc == KCS_E_INVAL && err.code == KCS_E_INVAL);
    CU_ASSERT(starts(err.msg, "level_zero") && strstr(err.msg, sub));
    CU_ASSERT(p.nbufs == 0x5a5a5a5a); /* untouched */
}

static void test_gather_refusals(void)
{
    double idx[] = {0, 2.5, 1};
    kcs_call c = mk(KCS_OP_GATHER, 4, 3, 2, 0);
    c.in[1] = idx;
    plan_refused(&c, "2.5");
    idx[1] = NAN;
    plan_refused(&c, "integer");
    idx[1] = INFINITY;
    plan_refused(&c, "integer");
    idx[1] = 1;
    c.attrs = "oob=wrap";
    plan_refused(&c, "oob=wrap");
    c.attrs = "oob=clamp";
    c.m = 0;
    c.in_len[0] = 0;
    plan_refused(&c, "clamp");
}

static void test_flag_raised(void)
{
    const double idx[] = {0, 3, 1, 7, -1};
    char msg[128] = "untouched";
    kcs_call c = mk(KCS_OP_GATHER, 4, 5, 3, 0);
    c.in[1] = idx;
    c.msg = msg;
    c.msg_len = sizeof msg;
    kcs_error err = {0};
    CU_ASSERT(kcs_kh_flag_raised(&D_OCL, &c, INT32_MAX, &err) == 0);
    CU_ASSERT_STRING_EQUAL(msg, "untouched");
    CU_ASSERT(kcs_kh_flag_raised(&D_OCL, &c, 3, &err) == KCS_E_RAISED);
    CU_ASSERT(err.code == KCS_E_RAISED && starts(err.msg, "opencl"));
    CU_ASSERT(strstr(msg, "7") && strstr(msg, "position 3") && strstr(msg, "[0, 4)"));
    CU_ASSERT(strstr(err.msg, msg) != NULL);
    CU_ASSERT(kcs_kh_flag_raised(&D_L0, &c, 4, &err) == KCS_E_RAISED);
    CU_ASSERT(starts(err.msg, "level_zero") && strstr(msg, "-1") && strstr(msg, "position 4"));
    c.msg_len = 8; /* truncated, terminated */
    CU_ASSERT(kcs_kh_flag_raised(&D_L0, &c, 0, &err) == KCS_E_RAISED);
    CU_ASSERT(strlen(msg) == 7);
    c.msg = NULL;
    CU_ASSERT(kcs_kh_flag_raised(&D_L0, &c, 1, &err) == KCS_E_RAISED);
    /* a position the kernel cannot have written (n = 5 indices): a device
     * fault, not an out-of-range index, and no read past the indices */
    CU_ASSERT(kcs_kh_flag_raised(&D_OCL, &c, 5, &err) == KCS_E_DEVICE);
    CU_ASSERT(starts(err.msg, "opencl") && strstr(err.msg, "position 5"));
    CU_ASSERT(kcs_kh_flag_raised(&D_L0, &c, -2, &err) == KCS_E_DEVICE);
}

/* ---- arguments, kcs_kh_run --------------------------------------------------- */
static void test_arg_value(void)
{
    const void *v = NULL;
    kcs_kh_arg a = {KCS_KH_ARG_I32, {.i32 = -5}};
    CU_ASSERT(kcs_kh_arg_value(&a, &v) == 4 && *(const int32_t *)v == -5);
    a = (kcs_kh_arg){KCS_KH_ARG_I64, {.i64 = INT64_C(1) << 40}};
    CU_ASSERT(kcs_kh_arg_value(&a, &v) == 8 && *(const int64_t *)v == INT64_C(1) << 40);
    a = (kcs_kh_arg){KCS_KH_ARG_F32, {.f32 = 0.25f}};
    CU_ASSERT(kcs_kh_arg_value(&a, &v) == 4 && *(const float *)v == 0.25f);
    a = (kcs_kh_arg){KCS_KH_ARG_F64, {.f64 = -0.125}};
    CU_ASSERT(kcs_kh_arg_value(&a, &v) == 8 && *(const double *)v == -0.125);
    a = (kcs_kh_arg){KCS_KH_ARG_LOCAL, {.local = 96}};
    CU_ASSERT(kcs_kh_arg_value(&a, &v) == 96 && v == NULL);
}

static int exec_calls, exec_rc;
static int mock_exec(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_kh_types *ty,
                     const kcs_kh_plan *plan, kcs_error *err)
{
    (void)ctx;
    (void)err;
    exec_calls++;
    CU_ASSERT(ty->tin == KCS_KH_F32 && plan->nlaunch >= 1);
    if (c->op == KCS_OP_GATHER) /* the flag's host data lives in this plan */
        CU_ASSERT(plan->flag >= 0 && plan->bufs[plan->flag].host == &plan->flag_init);
    return exec_rc ? kcs_fail(err, exec_rc, "mock: failed") : 0;
}

static void test_run(void)
{
    kcs_error err = {0};
    double idx[] = {2, 0};
    kcs_call c = mk(KCS_OP_GATHER, 3, 2, 2, 0);
    c.in[1] = idx;
    exec_calls = exec_rc = 0;
    CU_ASSERT(kcs_kh_run(&D_L0, NULL, &c, mock_exec, &err) == 0 && exec_calls == 1);
    exec_rc = KCS_E_DEVICE;
    CU_ASSERT(kcs_kh_run(&D_L0, NULL, &c, mock_exec, &err) == KCS_E_DEVICE && exec_calls == 2);
    c.attrs = "oob=wrap"; /* plan refuses: no execution */
    CU_ASSERT(kcs_kh_run(&D_L0, NULL, &c, mock_exec, &err) == KCS_E_INVAL && exec_calls == 2);
    kcs_call g = mk(KCS_OP_GEMM, 2, 3, 4, 0);
    g.variant = "bogus"; /* check refuses: no execution */
    CU_ASSERT(kcs_kh_run(&D_OCL, NULL, &g, mock_exec, &err) == KCS_E_UNSUPPORTED);
    CU_ASSERT(exec_calls == 2 && starts(err.msg, "opencl:"));
    exec_rc = 0;
    g.variant = NULL;
    CU_ASSERT(kcs_kh_run(&D_OCL, NULL, &g, mock_exec, &err) == 0 && exec_calls == 3);
}
#endif

int main(void)
{
#if !defined(KCS_HAVE_OPENCL) && !defined(KCS_HAVE_LEVEL_ZERO)
    printf("test_kernels_host: neither the opencl nor the level_zero backend is built, so "
           "kernels_host is not in libkcs; nothing to test\n");
    return 0;
#else
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("kernels_host", NULL, NULL);
    CU_add_test(s, "check_refusals", test_check_refusals);
    CU_add_test(s, "check_fp64", test_check_fp64);
    CU_add_test(s, "check_native_wg", test_check_native_wg);
    CU_add_test(s, "check_types", test_check_types);
    CU_add_test(s, "plan_gemm_tiled", test_plan_gemm_tiled);
    CU_add_test(s, "plan_gemm_vec", test_plan_gemm_vec);
    CU_add_test(s, "plan_gemm_own", test_plan_gemm_own);
    CU_add_test(s, "plan_batched", test_plan_batched);
    CU_add_test(s, "plan_dot", test_plan_dot);
    CU_add_test(s, "plan_rows", test_plan_rows);
    CU_add_test(s, "plan_attention_unfused", test_plan_attention_unfused);
    CU_add_test(s, "plan_attention_fused", test_plan_attention_fused);
    CU_add_test(s, "plan_attention_limits", test_plan_attention_limits);
    CU_add_test(s, "plan_gather", test_plan_gather);
    CU_add_test(s, "gather_refusals", test_gather_refusals);
    CU_add_test(s, "flag_raised", test_flag_raised);
    CU_add_test(s, "arg_value", test_arg_value);
    CU_add_test(s, "run", test_run);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return f != 0;
#endif
}
