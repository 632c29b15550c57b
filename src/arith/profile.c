/* The profile table of emulated matrix units (shared/PROFILES.md). Each row
 * is data: profile, input format, F, neab, step kind, final rounding, flush,
 * and the source of the numbers. */
#include "profile.h"

#include <stdio.h>
#include <string.h>

#define SRC_FASI "Fasi, Higham, Mikaitis, Pranesh, PeerJ CS 7:e330 (2021)"
#define SRC_KM "Khattak & Mikaitis, arXiv:2512.07004, public model parameters"
#define SRC_FTTN "Li et al., FTTN, arXiv:2403.00232"
#define SRC_DSV3 "DeepSeek-AI, DeepSeek-V3 technical report sec. 3.3 (~14 bits kept)"

#define ROW(prof, fmt, f, nb, st, rnd, fl, src) \
    {.profile = prof, .in = fmt, .F = f, .neab = nb, .step = st, .rounding = rnd, \
     .flush = fl, .source = src}

static const kcs_profile_params rows[] = {
    ROW("nvidia-v100", KCS_FMT_FP16, 4, 0, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_FASI "; " SRC_KM " (V100 fp16: F=4, neab=0, RZ)"),

    ROW("nvidia-a100", KCS_FMT_FP16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM "; " SRC_FASI " (A100 fp16: F=8, neab=1, RZ)"),
    ROW("nvidia-a100", KCS_FMT_BF16, 8, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM "; " SRC_FASI " (A100 bf16: F=8, neab=1, RZ)"),
    ROW("nvidia-a100", KCS_FMT_TF32, 4, 1, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM "; " SRC_FASI " (A100 tf32: F=4, neab=1, RZ)"),

    ROW("nvidia-h100", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 fp16: F=16, neab=2, RZ)"),
    ROW("nvidia-h100", KCS_FMT_BF16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 bf16: F=16, neab=2, RZ)"),
    ROW("nvidia-h100", KCS_FMT_TF32, 8, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 tf32: F=8, neab=2, RZ)"),
    ROW("nvidia-h100", KCS_FMT_FP8_E4M3, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 fp8: F=32, neab=-10, RZ); " SRC_DSV3),
    ROW("nvidia-h100", KCS_FMT_FP8_E5M2, 32, -10, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (H100 fp8: F=32, neab=-10, RZ); " SRC_DSV3),

    ROW("nvidia-b200", KCS_FMT_FP16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 fp16: F=16, neab=2, RZ)"),
    ROW("nvidia-b200", KCS_FMT_BF16, 16, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 bf16: F=16, neab=2, RZ)"),
    ROW("nvidia-b200", KCS_FMT_TF32, 8, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 tf32: F=8, neab=2, RZ)"),
    ROW("nvidia-b200", KCS_FMT_FP8_E4M3, 32, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 fp8: F=32, neab=2, RZ)"),
    ROW("nvidia-b200", KCS_FMT_FP8_E5M2, 32, 2, KCS_STEP_GLOBAL, KCS_RZ, false,
        SRC_KM " (B200 fp8: F=32, neab=2, RZ)"),

    ROW("amd-mi100", KCS_FMT_FP16, 4, KCS_NEAB_INF, KCS_STEP_GLOBAL, KCS_RNE, false,
        SRC_KM " (CDNA1 fp16: F=4, exact block, RNE); " SRC_FTTN),
    ROW("amd-mi100", KCS_FMT_BF16, 2, KCS_NEAB_INF, KCS_STEP_GLOBAL, KCS_RNE, false,
        SRC_KM " (CDNA1 bf16: F=2, exact block, RNE); " SRC_FTTN),

    ROW("amd-mi250", KCS_FMT_FP16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, true,
        SRC_KM " (CDNA2 fp16: pairwise fp32, F=4, flushes subnormals); " SRC_FTTN),
    ROW("amd-mi250", KCS_FMT_BF16, 4, 0, KCS_STEP_PAIRWISE, KCS_RNE, true,
        SRC_KM " (CDNA2 bf16: pairwise fp32, F=4, flushes subnormals); " SRC_FTTN),

    ROW("amd-mi300", KCS_FMT_FP16, 8, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        SRC_KM " (CDNA3 fp16: F=8, neab=1, late c addition, RNE); " SRC_FTTN),
    ROW("amd-mi300", KCS_FMT_BF16, 8, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        SRC_KM " (CDNA3 bf16: F=8, neab=1, late c addition, RNE); " SRC_FTTN),
    ROW("amd-mi300", KCS_FMT_TF32, 4, 1, KCS_STEP_LATE_C, KCS_RNE, false,
        SRC_KM " (CDNA3 tf32: F=4, neab=1, late c addition, RNE); " SRC_FTTN),
};

#define N_ROWS ((int)(sizeof rows / sizeof rows[0]))

static const char *const names[] = {"nvidia-v100", "nvidia-a100", "nvidia-h100",
                                    "nvidia-b200", "amd-mi100",   "amd-mi250",
                                    "amd-mi300"};
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

int kcs_profile_out_bits(const kcs_profile_params *p)
{
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
