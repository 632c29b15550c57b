/* The profile table of emulated matrix units (shared/PROFILES.md). Each row
 * is data: profile, input format, F, neab, step kind, final rounding, flush,
 * and the source of the numbers. */
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC_FASI "Fasi, Higham, Mikaitis, Pranesh, PeerJ CS 7:e330 (2021)"
#define SRC_KM "Khattak & Mikaitis, arXiv:2512.07004, public model parameters"
#define SRC_FTTN "Li et al., FTTN, arXiv:2403.00232"
#define SRC_DSV3 "DeepSeek-AI, DeepSeek-V3 technical report sec. 3.3 (~14 bits kept)"

#define SRC_MMASIM "Xie, Wang, Yang, Yang, MMA-Sim, arXiv:2511.10909 (commit c785138)"

/* The corner features (profile.h) after the sources: the ones not named
 * keep kcs's original behaviour. docs/profiles.md gives the evidence. */
#define ROW(prof, fmt, f, nb, st, rnd, fl, src, ...) \
    {.profile = prof, .in = fmt, .F = f, .neab = nb, .step = st, .rounding = rnd, \
     .flush = fl, .source = src, __VA_ARGS__}

/* NVIDIA and CDNA3: MMA-Sim's hardware-compared models (random bit
 * patterns) give a zero operand and c = 0 the exponent -126. */
#define ZMIN .zero_exp = KCS_ZEXP_MIN
/* CDNA3: a product reaching 2^128 gives Inf/NaN before alignment (MMA-Sim). */
#define POVF .prod_ovf = KCS_POVF_INF
/* CDNA1/2 pairwise: NaN/Inf through the fp32 arithmetic the model describes. */
#define INFSTEP .inf_path = KCS_INF_STEP
#define NV_F " zero_exp=min: " SRC_MMASIM
#define CDNA3_F " zero_exp=min, prod_ovf=inf: " SRC_MMASIM

static const kcs_profile_params rows[] = {
    ROW("nvidia-v100", KCS_FMT_FP16, 4, 0, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_FASI "; " SRC_KM " (V100 fp16: F=4, neab=0, RZ)" NV_F, ZMIN),

    ROW("nvidia-a100", KCS_FMT_FP16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM "; " SRC_FASI " (A100 fp16: F=8, neab=1, RZ)" NV_F, ZMIN),
    ROW("nvidia-a100", KCS_FMT_BF16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM "; " SRC_FASI " (A100 bf16: F=8, neab=1, RZ)" NV_F, ZMIN),
    ROW("nvidia-a100", KCS_FMT_TF32, 4, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM "; " SRC_FASI " (A100 tf32: F=4, neab=1, RZ)" NV_F, ZMIN),

    ROW("nvidia-h100", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 fp16: F=16, neab=2, RZ)" NV_F, ZMIN),
    ROW("nvidia-h100", KCS_FMT_BF16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 bf16: F=16, neab=2, RZ)" NV_F, ZMIN),
    ROW("nvidia-h100", KCS_FMT_TF32, 8, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 tf32: F=8, neab=2, RZ)" NV_F, ZMIN),
    ROW("nvidia-h100", KCS_FMT_FP8_E4M3, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 fp8: F=32, neab=-10, RZ); " SRC_DSV3 NV_F, ZMIN),
    ROW("nvidia-h100", KCS_FMT_FP8_E5M2, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 fp8: F=32, neab=-10, RZ); " SRC_DSV3 NV_F, ZMIN),

    ROW("nvidia-b200", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 fp16: F=16, neab=2, RZ)" NV_F, ZMIN),
    ROW("nvidia-b200", KCS_FMT_BF16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 bf16: F=16, neab=2, RZ)" NV_F, ZMIN),
    ROW("nvidia-b200", KCS_FMT_TF32, 8, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 tf32: F=8, neab=2, RZ)" NV_F, ZMIN),
    ROW("nvidia-b200", KCS_FMT_FP8_E4M3, 32, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 fp8: F=32, neab=2, RZ)" NV_F, ZMIN),
    ROW("nvidia-b200", KCS_FMT_FP8_E5M2, 32, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 fp8: F=32, neab=2, RZ)" NV_F, ZMIN),

    ROW("amd-mi100", KCS_FMT_FP16, 4, KCS_NEAB_INF, KCS_STEP_GLOBAL, KCS_RNE, false,
        SRC_KM " (CDNA1 fp16: F=4, exact block, RNE); " SRC_FTTN),
    ROW("amd-mi100", KCS_FMT_BF16, 2, KCS_NEAB_INF, KCS_STEP_GLOBAL, KCS_RNE, false,
        SRC_KM " (CDNA1 bf16: F=2, exact block, RNE); " SRC_FTTN),

    ROW("amd-mi250", KCS_FMT_FP16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, true,
        SRC_KM " (CDNA2 fp16: pairwise fp32, F=4, flushes subnormals); " SRC_FTTN
               "; inf_path=step: " SRC_MMASIM, INFSTEP),
    ROW("amd-mi250", KCS_FMT_BF16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, true,
        SRC_KM " (CDNA2 bf16: pairwise fp32, F=4, flushes subnormals); " SRC_FTTN
               "; inf_path=step: " SRC_MMASIM, INFSTEP),

    ROW("amd-mi300", KCS_FMT_FP16, 8, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        SRC_KM " (CDNA3 fp16: F=8, neab=1, late c addition, RNE); " SRC_FTTN
               CDNA3_F, ZMIN, POVF),
    ROW("amd-mi300", KCS_FMT_BF16, 8, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        SRC_KM " (CDNA3 bf16: F=8, neab=1, late c addition, RNE); " SRC_FTTN
               CDNA3_F, ZMIN, POVF),
    ROW("amd-mi300", KCS_FMT_TF32, 4, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        SRC_KM " (CDNA3 tf32: F=4, neab=1, late c addition, RNE); " SRC_FTTN
               CDNA3_F, ZMIN, POVF),
    ROW("amd-mi300", KCS_FMT_FP8_E4M3FNUZ, 16, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        "CDNA3 fp8 (v_mfma_f32_*_fp8_fp8, e4m3fnuz): groups of 16, even and odd products "
        "aligned apart, late c addition, RNE: " SRC_MMASIM,
        ZMIN, POVF, .halves = 2),
    ROW("amd-mi300", KCS_FMT_FP8_E5M2FNUZ, 16, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        "CDNA3 bf8 (v_mfma_f32_*_bf8_bf8, e5m2fnuz): as fp8: " SRC_MMASIM, ZMIN, POVF,
        .halves = 2),

    /* Named variants and the profiles added after the MMA-Sim comparison
     * (docs/profiles.md). */
    ROW("nvidia-ada", KCS_FMT_FP16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        "as nvidia-a100 (mma.m16n8k16 is two k=8 halves on Ampere and Ada): " SRC_MMASIM,
        ZMIN),
    ROW("nvidia-ada", KCS_FMT_BF16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        "as nvidia-a100: " SRC_MMASIM, ZMIN),
    ROW("nvidia-ada", KCS_FMT_TF32, 4, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        "as nvidia-a100: " SRC_MMASIM, ZMIN),
    ROW("nvidia-ada", KCS_FMT_FP8_E4M3, 16, -10, KCS_STEP_GLOBAL, KCS_RZ, false,
        "Ada fp8: mma.m16n8k32 as two k=16 halves, 13 fraction bits kept, output "
        "truncated to 14 bits: " SRC_MMASIM, ZMIN),
    ROW("nvidia-ada", KCS_FMT_FP8_E5M2, 16, -10, KCS_STEP_GLOBAL, KCS_RZ, false,
        "Ada fp8 (as e4m3): " SRC_MMASIM, ZMIN),

    ROW("amd-mi100-pairwise", KCS_FMT_FP16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, false,
        "CDNA1 read as CDNA2 without the flush: fp32 products, pairwise fp32 tree, + c: "
        SRC_MMASIM " (no hardware comparison published for CDNA1)", INFSTEP),
    ROW("amd-mi100-pairwise", KCS_FMT_BF16, 2, 0, KCS_STEP_PAIRWISE, KCS_RNE, false,
        "CDNA1 bf16 (v_mfma_*bf16, pairs): " SRC_MMASIM " (no hardware comparison published)",
        INFSTEP),

    ROW("amd-mi250-pairs", KCS_FMT_BF16, 2, 0, KCS_STEP_PAIRWISE, KCS_RNE, true,
        "CDNA2 bf16 without _1k (v_mfma_f32_*bf16: pairs of products, then + c): " SRC_MMASIM,
        INFSTEP),

    ROW("amd-mi300-k4", KCS_FMT_FP16, 4, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        "CDNA3 k=4 instructions (v_mfma_f32_4x4x4_16b_f16, 16x16x4_4b): groups of 4, "
        "otherwise as amd-mi300: " SRC_MMASIM, ZMIN, POVF),
    ROW("amd-mi300-k4", KCS_FMT_BF16, 4, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        "CDNA3 k=4 instructions (v_mfma_f32_16x16x4_4b_bf16): " SRC_MMASIM, ZMIN, POVF),

    /* fp16 accumulators (mma/wgmma/tcgen05 .f16.f16 forms): the same
     * alignment as the fp32 form, c in fp16, d rounded to fp16 RNE */
#define F16ACC(prof, fmt, f, nb, what) \
    ROW(prof, fmt, f, nb, KCS_STEP_GLOBAL, KCS_RZ, false, \
        what " with an fp16 accumulator (d rounded to fp16, nearest-even): " SRC_MMASIM, ZMIN, \
        .acc_f16 = true)
    F16ACC("nvidia-v100-f16acc", KCS_FMT_FP16, 4, 0, "V100 mma.m8n8k4.f16"),
    F16ACC("nvidia-a100-f16acc", KCS_FMT_FP16, 8, 1, "A100 mma.m16n8k16.f16 (two k=8 halves)"),
    F16ACC("nvidia-ada-f16acc", KCS_FMT_FP16, 8, 1, "Ada mma.m16n8k16.f16 (as Ampere)"),
    F16ACC("nvidia-ada-f16acc", KCS_FMT_FP8_E4M3, 16, -10,
           "Ada mma.m16n8k32.f16.e4m3 (two k=16 halves, 13 fraction bits)"),
    F16ACC("nvidia-ada-f16acc", KCS_FMT_FP8_E5M2, 16, -10, "Ada mma.m16n8k32.f16.e5m2"),
    F16ACC("nvidia-h100-f16acc", KCS_FMT_FP16, 16, 2, "H100 wgmma.m64nNk16.f16"),
    F16ACC("nvidia-h100-f16acc", KCS_FMT_FP8_E4M3, 32, -10,
           "H100 wgmma.m64nNk32.f16.e4m3 (13 fraction bits)"),
    F16ACC("nvidia-h100-f16acc", KCS_FMT_FP8_E5M2, 32, -10, "H100 wgmma.m64nNk32.f16.e5m2"),
    F16ACC("nvidia-b200-f16acc", KCS_FMT_FP16, 16, 2, "B200 tcgen05.mma.f16"),
#undef F16ACC
};

#define N_ROWS ((int)(sizeof rows / sizeof rows[0]))

static const char *const names[] = {
    "nvidia-v100", "nvidia-a100",        "nvidia-h100",     "nvidia-b200",
    "amd-mi100",   "amd-mi250",          "amd-mi300",       "nvidia-ada",
    "amd-mi100-pairwise", "amd-mi250-pairs", "amd-mi300-k4", "nvidia-v100-f16acc",
    "nvidia-a100-f16acc", "nvidia-ada-f16acc", "nvidia-h100-f16acc", "nvidia-b200-f16acc"};
#define N_NAMES ((int)(sizeof names / sizeof names[0]))

int kcs_profile_names(const char *const **names_p, int *n_p)
{
    *names_p = names;
    *n_p = N_NAMES;
    return 0;
}

int kcs_profile_table(const kcs_profile_params **rows_p, int *n_p)
{
    *rows_p = rows;
    *n_p = N_ROWS;
    return 0;
}

const char *kcs_step_kind_name(kcs_step_kind k)
{
    switch (k) {
    case KCS_STEP_GLOBAL: return "global";
    case KCS_STEP_LATE_C: return "late-c";
    case KCS_STEP_PAIRWISE: return "pairwise";
    default: return "unknown";
    }
}

const char *kcs_profile_features(const kcs_profile_params *p, char *buf, int len)
{
    snprintf(buf, (size_t)len, "zero_exp=%s zero_sign=%s prod_ovf=%s inf_path=%s flush_sign=%s",
             p->zero_exp == KCS_ZEXP_MIN ? "min" : "ignore",
             p->zero_sign == KCS_ZSIGN_POSITIVE ? "positive" : "sum",
             p->prod_ovf == KCS_POVF_INF ? "inf" : "exact",
             p->inf_path == KCS_INF_STEP ? "step" : "double",
             p->flush_sign == KCS_FSIGN_POSITIVE ? "positive" : "keep");
    return buf;
}

int kcs_profile_out_bits(const kcs_profile_params *p)
{
    if (p->acc_f16)
        return 11;
    return (p->neab != KCS_NEAB_INF && p->neab < 0) ? 24 + p->neab : 24;
}

int kcs_profile_lookup(const char *name, kcs_format in, const kcs_profile_params **p_p,
                       kcs_error *err)
{
    char list[512];
    size_t len = 0;
    bool known = false;
    list[0] = '\0';
    for (int i = 0; i < N_ROWS; i++) {
        if (name && strcmp(rows[i].profile, name) == 0) {
            known = true;
            if (rows[i].in == in) {
                *p_p = &rows[i];
                return 0;
            }
            int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                             kcs_format_name(rows[i].in));
            if (w > 0 && (size_t)w < sizeof list - len)
                len += (size_t)w;
        }
    }
    if (known)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "profile %s has no %s input (it offers: %s)", name,
                        kcs_format_name(in), list);
    for (int i = 0; i < N_NAMES; i++) {
        int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", names[i]);
        if (w > 0 && (size_t)w < sizeof list - len)
            len += (size_t)w;
    }
    return kcs_fail(err, KCS_E_INVAL, "unknown profile '%s' (known: %s)",
                    name ? name : "(null)", list);
}

int kcs_profile_lookup_mixed(const char *name, kcs_format a, kcs_format b,
                             kcs_profile_params *out, kcs_error *err)
{
    const kcs_profile_params *pa, *pb;
    int rc = kcs_profile_lookup(name, a, &pa, err);
    if (rc == 0)
        rc = kcs_profile_lookup(name, b, &pb, err);
    if (rc)
        return rc;
    if (pa->F != pb->F || pa->neab != pb->neab || pa->step != pb->step ||
        pa->rounding != pb->rounding || pa->flush != pb->flush || pa->halves != pb->halves ||
        pa->zero_exp != pb->zero_exp || pa->zero_sign != pb->zero_sign ||
        pa->prod_ovf != pb->prod_ovf || pa->inf_path != pb->inf_path ||
        pa->flush_sign != pb->flush_sign)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "profile %s computes %s and %s inputs differently: no mixed %s x %s row",
                        name, kcs_format_name(a), kcs_format_name(b), kcs_format_name(a),
                        kcs_format_name(b));
    *out = *pa;
    out->mixed = a != b;
    out->in_b = b;
    return 0;
}

/* "N" or "none" (0) into *v, within [lo, hi]. */
static bool spec_int(const char *s, bool none_ok, long long lo, long long hi, long long *v)
{
    if (none_ok && strcmp(s, "none") == 0) {
        *v = 0;
        return true;
    }
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi)
        return false;
    *v = x;
    return true;
}

int kcs_profile_spec_parse(const char *spec, char *name, kcs_libpath *lp, kcs_error *err)
{
    *lp = (kcs_libpath){0};
    name[0] = '\0';
    if (!spec || strlen(spec) >= KCS_PROFILE_SPEC_MAX)
        return kcs_fail(err, KCS_E_INVAL, "profile '%s': longer than %d characters",
                        spec ? spec : "", KCS_PROFILE_SPEC_MAX - 1);
    char buf[KCS_PROFILE_SPEC_MAX], *save = NULL;
    snprintf(buf, sizeof buf, "%s", spec);
    char *tok = strtok_r(buf, ",", &save);
    if (!tok)
        return kcs_fail(err, KCS_E_INVAL, "profile '%s': no profile name", spec);
    bool found = false;
    for (int i = 0; i < N_NAMES; i++)
        found |= strcmp(names[i], tok) == 0;
    if (!found) {
        char list[512] = "";
        for (int i = 0; i < N_NAMES; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     names[i]);
        return kcs_fail(err, KCS_E_INVAL, "unknown profile '%s' (known: %s)", tok, list);
    }
    snprintf(name, KCS_PROFILE_SPEC_MAX, "%s", tok);
    while ((tok = strtok_r(NULL, ",", &save))) {
        char *eq = strchr(tok, '=');
        long long v = 0;
        if (!eq)
            return kcs_fail(err, KCS_E_INVAL,
                            "profile '%s': '%s' is not key=value (promote=N|none, "
                            "fp8_promote=N|none, splitk=S[:fp32|:unit], c=first|last)",
                            spec, tok);
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(tok, "promote") == 0 || strcmp(tok, "fp8_promote") == 0) {
            if (!spec_int(val, true, 1, 1LL << 30, &v))
                return kcs_fail(err, KCS_E_INVAL,
                                "profile '%s': %s=%s: expected none or an interval in [1, 2^30]",
                                spec, tok, val);
            lp->promote = v;
        } else if (strcmp(tok, "splitk") == 0) {
            char num[KCS_PROFILE_SPEC_MAX];
            snprintf(num, sizeof num, "%s", val);
            char *colon = strchr(num, ':');
            if (colon)
                *colon++ = '\0';
            if (!spec_int(num, false, 1, 4096, &v) ||
                (colon && strcmp(colon, "fp32") != 0 && strcmp(colon, "unit") != 0))
                return kcs_fail(err, KCS_E_INVAL,
                                "profile '%s': splitk=%s: expected a part count in [1, 4096], "
                                "optionally :fp32 or :unit (where the parts are summed)",
                                spec, val);
            lp->splitk = (int)v;
            lp->split_unit = colon && strcmp(colon, "unit") == 0;
        } else if (strcmp(tok, "c") == 0 || strcmp(tok, "c_order") == 0) {
            if (strcmp(val, "first") != 0 && strcmp(val, "last") != 0)
                return kcs_fail(err, KCS_E_INVAL,
                                "profile '%s': %s=%s: expected first or last", spec, tok, val);
            lp->c_last = strcmp(val, "last") == 0;
        } else {
            return kcs_fail(err, KCS_E_INVAL,
                            "profile '%s': unknown key '%s' (promote, fp8_promote, splitk, c)",
                            spec, tok);
        }
    }
    return 0;
}
