/* The contract language's variables (symbols.h). */
#include "symbols.h"

static kcs_expr_sym syms[KCS_SYM_COUNT] = {
    [KCS_SYM_M] = {"m", KCS_EXPR_NUMBER},
    [KCS_SYM_N] = {"n", KCS_EXPR_NUMBER},
    [KCS_SYM_K] = {"k", KCS_EXPR_NUMBER},
    [KCS_SYM_BATCH] = {"batch", KCS_EXPR_NUMBER},
    [KCS_SYM_DTYPE_IN] = {"dtype_in", KCS_EXPR_FORMAT},
    [KCS_SYM_DTYPE_ACC] = {"dtype_acc", KCS_EXPR_FORMAT},
    [KCS_SYM_DTYPE_OUT] = {"dtype_out", KCS_EXPR_FORMAT},
    [KCS_SYM_TAU] = {"tau", KCS_EXPR_NUMBER},
    [KCS_SYM_ETA] = {"eta", KCS_EXPR_NUMBER},
    [KCS_SYM_MAX_ABS] = {"max_abs", KCS_EXPR_NUMBER},
    [KCS_SYM_MAX_REL] = {"max_rel", KCS_EXPR_NUMBER},
    [KCS_SYM_MAX_ULP] = {"max_ulp", KCS_EXPR_NUMBER},
    [KCS_SYM_MEAN_ULP] = {"mean_ulp", KCS_EXPR_NUMBER},
    [KCS_SYM_BACKWARD_ERR] = {"backward_err", KCS_EXPR_NUMBER},
    [KCS_SYM_MAX_SCALED] = {"max_scaled", KCS_EXPR_NUMBER},
    [KCS_SYM_RMS_SCALED] = {"rms_scaled", KCS_EXPR_NUMBER},
    [KCS_SYM_EFFECTIVE_ACC_BITS] = {"effective_acc_bits", KCS_EXPR_NUMBER},
    [KCS_SYM_NAN_COUNT] = {"nan_count", KCS_EXPR_NUMBER},
    [KCS_SYM_INF_COUNT] = {"inf_count", KCS_EXPR_NUMBER},
    [KCS_SYM_SENTINEL_COUNT] = {"sentinel_count", KCS_EXPR_NUMBER},
    [KCS_SYM_GUARD_OK] = {"guard_ok", KCS_EXPR_NUMBER},
    [KCS_SYM_MISMATCH_NONFINITE] = {"mismatch_nonfinite", KCS_EXPR_NUMBER},
    [KCS_SYM_RAISED] = {"raised", KCS_EXPR_NUMBER},
    [KCS_SYM_OOB_COUNT] = {"oob_count", KCS_EXPR_NUMBER},
    [KCS_SYM_NAN_REF_COUNT] = {"nan_ref_count", KCS_EXPR_NUMBER},
    [KCS_SYM_DISTINCT_DIGESTS] = {"distinct_digests", KCS_EXPR_NUMBER},
    [KCS_SYM_SPREAD_ULP] = {"spread_ulp", KCS_EXPR_NUMBER},
    [KCS_SYM_ROWSUM_ERR] = {"rowsum_err", KCS_EXPR_NUMBER},
    [KCS_SYM_HELD_OUT] = {"held_out", KCS_EXPR_NUMBER},
    [KCS_SYM_BAD_FRAC] = {"bad_frac", KCS_EXPR_NUMBER},
    [KCS_SYM_REPLAYED] = {"replayed", KCS_EXPR_NUMBER},
    [KCS_SYM_TRIAL] = {"trial", KCS_EXPR_NUMBER},
    [KCS_SYM_EXACT_INPUTS] = {"exact_inputs", KCS_EXPR_NUMBER},
    [KCS_SYM_INPUT_BITS] = {"input_bits", KCS_EXPR_NUMBER},
    [KCS_SYM_ZERO_FRAC] = {"zero_frac", KCS_EXPR_NUMBER},
    [KCS_SYM_REF_CORR] = {"ref_corr", KCS_EXPR_NUMBER},
    [KCS_SYM_PEAK_SHARE] = {"peak_share", KCS_EXPR_NUMBER},
    [KCS_SYM_SCALE_FIT] = {"scale_fit", KCS_EXPR_NUMBER},
    [KCS_SYM_EDGE_SHARE] = {"edge_share", KCS_EXPR_NUMBER},
    [KCS_SYM_REF_SCALE] = {"ref_scale", KCS_EXPR_NUMBER},
    [KCS_SYM_MIXED_SIGNS] = {"mixed_signs", KCS_EXPR_NUMBER},
    [KCS_SYM_P_BITS] = {"p_bits", KCS_EXPR_NUMBER},
    [KCS_SYM_CANCEL_BITS] = {"cancel_bits", KCS_EXPR_NUMBER},
    [KCS_SYM_ROW_SCALE_FIT] = {"row_scale_fit", KCS_EXPR_NUMBER},
    [KCS_SYM_INPUT_RZ] = {"input_rz", KCS_EXPR_NUMBER},
    [KCS_SYM_OUT_BITS] = {"out_bits", KCS_EXPR_NUMBER},
    [KCS_SYM_OUT_RZ] = {"out_rz", KCS_EXPR_NUMBER},
    [KCS_SYM_CONST_OUTPUT] = {"const_output", KCS_EXPR_NUMBER},
    [KCS_SYM_OFFSET_SHARE] = {"offset_share", KCS_EXPR_NUMBER},
    [KCS_SYM_INF_REF_COUNT] = {"inf_ref_count", KCS_EXPR_NUMBER},
    [KCS_SYM_INF_ZEROED] = {"inf_zeroed", KCS_EXPR_NUMBER},
    [KCS_SYM_NAN_ZEROED] = {"nan_zeroed", KCS_EXPR_NUMBER},
    [KCS_SYM_GUARD_BEFORE] = {"guard_before", KCS_EXPR_NUMBER},
    [KCS_SYM_OOB_RAISE] = {"oob_raise", KCS_EXPR_NUMBER},
};

const kcs_expr_symtab *kcs_verdict_symtab(void)
{
    static kcs_expr_symtab tab;
    if (!tab.syms) {
        for (int f = 0; f < KCS_FMT_COUNT; f++)
            syms[KCS_SYM_FMT_FIRST + f] =
                (kcs_expr_sym){kcs_format_name((kcs_format)f), KCS_EXPR_FORMAT};
        tab.syms = syms;
        tab.n = KCS_SYM_COUNT;
    }
    return &tab;
}
