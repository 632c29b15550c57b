/* Dispatch of the CPU backend's calibration variants
 * "calib:<CONTRACT-ID>:<baseline|bad|good>" and the narrow-output gemm
 * kernels "calib:<CONTRACT-ID>:<narrow-sum|blocks256>" (cpu/calib.h). */
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "calib.h"

#define OPBIT(o) (1u << (o))
#define GEMMS (OPBIT(KCS_OP_GEMM) | OPBIT(KCS_OP_BATCHED_GEMM))

typedef int (*calib_fn)(const kcs_call *c, const char *id, int state, kcs_error *err);

/* The contracts and the ops their calibration kernels implement. */
static const struct {
    const char *id;
    uint32_t ops;
    calib_fn fn;
} calib_table[] = {
    {"C-PRC-01", GEMMS, kcs_cpu_calib_gemm},
    {"C-PRC-02", OPBIT(KCS_OP_SOFTMAX) | OPBIT(KCS_OP_LAYERNORM), kcs_cpu_calib_rows},
    {"C-PRC-03", GEMMS, kcs_cpu_calib_gemm},
    {"C-PRC-04", OPBIT(KCS_OP_REDUCE_SUM), kcs_cpu_calib_rows},
    {"C-ORD-01", OPBIT(KCS_OP_REDUCE_SUM), kcs_cpu_calib_rows},
    {"C-ORD-02", GEMMS, kcs_cpu_calib_gemm},
    {"C-ORD-03", GEMMS, kcs_cpu_calib_gemm},
    {"C-ORD-04", OPBIT(KCS_OP_ALLREDUCE), kcs_cpu_calib_rows},
    {"C-CMP-01", OPBIT(KCS_OP_ATTENTION), kcs_cpu_calib_rows},
    {"C-CMP-02", GEMMS, kcs_cpu_calib_gemm},
    {"C-CMP-03", GEMMS, kcs_cpu_calib_gemm},
    {"C-EXC-01", GEMMS, kcs_cpu_calib_gemm},
    {"C-EXC-03", GEMMS, kcs_cpu_calib_gemm},
    {"C-EXC-02", OPBIT(KCS_OP_GATHER), kcs_cpu_calib_rows},
    {"C-PRC-05", OPBIT(KCS_OP_ELEMENTWISE), kcs_cpu_calib_elementwise},
    {"C-PRC-06", OPBIT(KCS_OP_SOFTMAX) | OPBIT(KCS_OP_LAYERNORM), kcs_cpu_calib_rows_rn},
    {"C-PRC-07", OPBIT(KCS_OP_ATTENTION), kcs_cpu_calib_attention_rn},
    {"C-PRC-08", OPBIT(KCS_OP_NORM), kcs_cpu_calib_norm},
};

static int parse_state(const char *s, int *state_p)
{
    if (strcmp(s, "baseline") == 0)
        *state_p = KCS_CALIB_BASELINE;
    else if (strcmp(s, "bad") == 0)
        *state_p = KCS_CALIB_BAD;
    else if (strcmp(s, "good") == 0)
        *state_p = KCS_CALIB_GOOD;
    else if (strcmp(s, "narrow-sum") == 0)
        *state_p = KCS_CALIB_NARROW_SUM;
    else if (strcmp(s, "blocks256") == 0)
        *state_p = KCS_CALIB_BLOCKS256;
    else
        return -1;
    return 0;
}

int kcs_cpu_calib(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err)
{
    (void)ctx;
    const char *v = call->variant + strlen("calib:");
    const char *colon = strrchr(v, ':');
    char id[16];
    int state = 0;
    size_t idlen = colon ? (size_t)(colon - v) : 0;
    if (!colon || idlen == 0 || idlen >= sizeof id || parse_state(colon + 1, &state))
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "cpu: calibration variant '%s' is not calib:<CONTRACT-ID>:"
                        "<baseline|bad|good|narrow-sum|blocks256>", call->variant);
    memcpy(id, v, idlen);
    id[idlen] = 0;
    for (size_t i = 0; i < sizeof calib_table / sizeof calib_table[0]; i++) {
        if (strcmp(calib_table[i].id, id) != 0)
            continue;
        if (call->op < 0 || call->op >= KCS_OP_COUNT || !(calib_table[i].ops & OPBIT(call->op)))
            return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s has no calibration kernel for op %s",
                            id, kcs_op_name(call->op));
        if (call->dtype_in == KCS_FMT_FP64)
            return kcs_fail(err, KCS_E_UNSUPPORTED,
                            "cpu: calibration kernels take inputs exact in fp32, not fp64");
        if (state == KCS_CALIB_BASELINE)
            return 0; /* fails everything: the output keeps its poison */
        if (state > KCS_CALIB_GOOD && calib_table[i].fn != kcs_cpu_calib_gemm)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: the narrow-output kernel '%s' is a "
                            "gemm kernel; %s's calibration op is not gemm", colon + 1, id);
        return calib_table[i].fn(call, id, state, err);
    }
    return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: no calibration kernels for contract '%s'", id);
}
