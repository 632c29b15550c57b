/* Field tables of the reducer's /analysis records (reduce.h): the HDF5
 * compound members and the CSV columns, in declaration order. */
#include "reduce.h"

static const kcs_field verdict_fields[] = {
    KCS_FIELD(kcs_verdict_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, rank, KCS_FIELD_I32),
    KCS_FIELD(kcs_verdict_row, contract, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, op, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, dtype_in, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, m, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, n, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_verdict_row, input_dist, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, implementation, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, verdict, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, signature, KCS_FIELD_STR),
    KCS_FIELD(kcs_verdict_row, max_tau, KCS_FIELD_F64),
    KCS_FIELD(kcs_verdict_row, max_backward_err, KCS_FIELD_F64),
    KCS_FIELD(kcs_verdict_row, max_ulp, KCS_FIELD_F64),
    KCS_FIELD(kcs_verdict_row, n_trials, KCS_FIELD_I32),
    KCS_FIELD(kcs_verdict_row, n_within, KCS_FIELD_I32),
    KCS_FIELD(kcs_verdict_row, distinct_digests, KCS_FIELD_I32),
};

KCS_FIELD_TABLE(kcs_verdict_row_fields, verdict_fields)

static const kcs_field divergence_fields[] = {
    KCS_FIELD(kcs_divergence_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_divergence_row, rank_a, KCS_FIELD_I32),
    KCS_FIELD(kcs_divergence_row, rank_b, KCS_FIELD_I32),
    KCS_FIELD(kcs_divergence_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_divergence_row, max_abs_diff, KCS_FIELD_F64),
    KCS_FIELD(kcs_divergence_row, max_rel_diff, KCS_FIELD_F64),
    KCS_FIELD(kcs_divergence_row, identical, KCS_FIELD_I32),
    KCS_FIELD(kcs_divergence_row, max_scaled_diff, KCS_FIELD_F64),
    KCS_FIELD(kcs_divergence_row, max_ulp_diff, KCS_FIELD_F64),
    KCS_FIELD(kcs_divergence_row, frac_differ, KCS_FIELD_F64),
    KCS_FIELD(kcs_divergence_row, n_compared, KCS_FIELD_I32),
    KCS_FIELD(kcs_divergence_row, pattern, KCS_FIELD_STR),
};

KCS_FIELD_TABLE(kcs_divergence_row_fields, divergence_fields)

static const kcs_field point_fields[] = {
    KCS_FIELD(kcs_point_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_point_row, group, KCS_FIELD_I32),
    KCS_FIELD(kcs_point_row, rank_a, KCS_FIELD_I32),
    KCS_FIELD(kcs_point_row, rank_b, KCS_FIELD_I32),
    KCS_FIELD(kcs_point_row, trial, KCS_FIELD_I32),
    KCS_FIELD(kcs_point_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_point_row, abs_div, KCS_FIELD_F64),
    KCS_FIELD(kcs_point_row, scaled_div, KCS_FIELD_F64),
};

KCS_FIELD_TABLE(kcs_point_row_fields, point_fields)

static const kcs_field group_fields[] = {
    KCS_FIELD(kcs_group_row, group, KCS_FIELD_I32),
    KCS_FIELD(kcs_group_row, op, KCS_FIELD_STR),
    KCS_FIELD(kcs_group_row, dtype_in, KCS_FIELD_STR),
    KCS_FIELD(kcs_group_row, dtype_acc, KCS_FIELD_STR),
    KCS_FIELD(kcs_group_row, dtype_out, KCS_FIELD_STR),
    KCS_FIELD(kcs_group_row, input_dist, KCS_FIELD_STR),
    KCS_FIELD(kcs_group_row, u, KCS_FIELD_F64),
    KCS_FIELD(kcs_group_row, n_cases, KCS_FIELD_I64),
    KCS_FIELD(kcs_group_row, k_min, KCS_FIELD_I64),
    KCS_FIELD(kcs_group_row, k_max, KCS_FIELD_I64),
    KCS_FIELD(kcs_group_row, n_k, KCS_FIELD_I32),
    KCS_FIELD(kcs_group_row, n_conforming, KCS_FIELD_I32),
    KCS_FIELD(kcs_group_row, conforming, KCS_FIELD_STR),
};

KCS_FIELD_TABLE(kcs_group_row_fields, group_fields)

static const kcs_field fit_fields[] = {
    KCS_FIELD(kcs_fit_row, group, KCS_FIELD_I32),
    KCS_FIELD(kcs_fit_row, rank_a, KCS_FIELD_I32),
    KCS_FIELD(kcs_fit_row, rank_b, KCS_FIELD_I32),
    KCS_FIELD(kcs_fit_row, impl_a, KCS_FIELD_STR),
    KCS_FIELD(kcs_fit_row, impl_b, KCS_FIELD_STR),
    KCS_FIELD(kcs_fit_row, metric, KCS_FIELD_STR),
    KCS_FIELD(kcs_fit_row, n_points, KCS_FIELD_I64),
    KCS_FIELD(kcs_fit_row, n_zero, KCS_FIELD_I64),
    KCS_FIELD(kcs_fit_row, n_k, KCS_FIELD_I32),
    KCS_FIELD(kcs_fit_row, k_min, KCS_FIELD_I64),
    KCS_FIELD(kcs_fit_row, k_max, KCS_FIELD_I64),
    KCS_FIELD(kcs_fit_row, alpha, KCS_FIELD_F64),
    KCS_FIELD(kcs_fit_row, alpha_se, KCS_FIELD_F64),
    KCS_FIELD(kcs_fit_row, alpha_lo, KCS_FIELD_F64),
    KCS_FIELD(kcs_fit_row, alpha_hi, KCS_FIELD_F64),
    KCS_FIELD(kcs_fit_row, r2, KCS_FIELD_F64),
    KCS_FIELD(kcs_fit_row, c_geomean, KCS_FIELD_F64),
    KCS_FIELD(kcs_fit_row, c_max, KCS_FIELD_F64),
    KCS_FIELD(kcs_fit_row, conforming_a, KCS_FIELD_I32),
    KCS_FIELD(kcs_fit_row, conforming_b, KCS_FIELD_I32),
};

KCS_FIELD_TABLE(kcs_fit_row_fields, fit_fields)

static const kcs_field tol_fields[] = {
    KCS_FIELD(kcs_tol_row, group, KCS_FIELD_I32),
    KCS_FIELD(kcs_tol_row, metric, KCS_FIELD_STR),
    KCS_FIELD(kcs_tol_row, q, KCS_FIELD_F64),
    KCS_FIELD(kcs_tol_row, c_q, KCS_FIELD_F64),
    KCS_FIELD(kcs_tol_row, u, KCS_FIELD_F64),
    KCS_FIELD(kcs_tol_row, eta_kmin, KCS_FIELD_F64),
    KCS_FIELD(kcs_tol_row, eta_kmax, KCS_FIELD_F64),
    KCS_FIELD(kcs_tol_row, n_ref_ranks, KCS_FIELD_I32),
    KCS_FIELD(kcs_tol_row, ref_trials, KCS_FIELD_I64),
    KCS_FIELD(kcs_tol_row, ref_flagged, KCS_FIELD_I64),
    KCS_FIELD(kcs_tol_row, c_heldout, KCS_FIELD_F64),
    KCS_FIELD(kcs_tol_row, heldout_trials, KCS_FIELD_I64),
    KCS_FIELD(kcs_tol_row, heldout_flagged, KCS_FIELD_I64),
    KCS_FIELD(kcs_tol_row, n_bad_ranks, KCS_FIELD_I32),
    KCS_FIELD(kcs_tol_row, bad_trials, KCS_FIELD_I64),
    KCS_FIELD(kcs_tol_row, bad_flagged, KCS_FIELD_I64),
};

KCS_FIELD_TABLE(kcs_tol_row_fields, tol_fields)

static const kcs_field flag_fields[] = {
    KCS_FIELD(kcs_flag_row, group, KCS_FIELD_I32),
    KCS_FIELD(kcs_flag_row, rank, KCS_FIELD_I32),
    KCS_FIELD(kcs_flag_row, impl, KCS_FIELD_STR),
    KCS_FIELD(kcs_flag_row, conforming, KCS_FIELD_I32),
    KCS_FIELD(kcs_flag_row, n_trials, KCS_FIELD_I64),
    KCS_FIELD(kcs_flag_row, flagged_contract, KCS_FIELD_I64),
    KCS_FIELD(kcs_flag_row, torch_trials, KCS_FIELD_I64),
    KCS_FIELD(kcs_flag_row, torch_flagged, KCS_FIELD_I64),
};

KCS_FIELD_TABLE(kcs_flag_row_fields, flag_fields)

static const kcs_field torch_fields[] = {
    KCS_FIELD(kcs_torch_row, group, KCS_FIELD_I32),
    KCS_FIELD(kcs_torch_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_torch_row, rtol, KCS_FIELD_F64),
    KCS_FIELD(kcs_torch_row, atol, KCS_FIELD_F64),
    KCS_FIELD(kcs_torch_row, n_trials, KCS_FIELD_I64),
    KCS_FIELD(kcs_torch_row, torch_flagged, KCS_FIELD_I64),
    KCS_FIELD(kcs_torch_row, elements, KCS_FIELD_I64),
    KCS_FIELD(kcs_torch_row, elements_flagged, KCS_FIELD_I64),
    KCS_FIELD(kcs_torch_row, contract_flagged, KCS_FIELD_I64),
    KCS_FIELD(kcs_torch_row, torch_frac, KCS_FIELD_F64),
    KCS_FIELD(kcs_torch_row, contract_frac, KCS_FIELD_F64),
};

KCS_FIELD_TABLE(kcs_torch_row_fields, torch_fields)

static const kcs_field signature_fields[] = {
    KCS_FIELD(kcs_signature_row, case_id, KCS_FIELD_I64),
    KCS_FIELD(kcs_signature_row, rank, KCS_FIELD_I32),
    KCS_FIELD(kcs_signature_row, impl, KCS_FIELD_STR),
    KCS_FIELD(kcs_signature_row, contract, KCS_FIELD_STR),
    KCS_FIELD(kcs_signature_row, protocol, KCS_FIELD_STR),
    KCS_FIELD(kcs_signature_row, k, KCS_FIELD_I64),
    KCS_FIELD(kcs_signature_row, n_trials, KCS_FIELD_I32),
    KCS_FIELD(kcs_signature_row, distinct_digests, KCS_FIELD_I32),
    KCS_FIELD(kcs_signature_row, bitwise_class, KCS_FIELD_I32),
    KCS_FIELD(kcs_signature_row, n_classes, KCS_FIELD_I32),
    KCS_FIELD(kcs_signature_row, reference_rank, KCS_FIELD_I32),
    KCS_FIELD(kcs_signature_row, max_ulp_spread, KCS_FIELD_F64),
    KCS_FIELD(kcs_signature_row, frac_differ, KCS_FIELD_F64),
    KCS_FIELD(kcs_signature_row, pattern, KCS_FIELD_STR),
    KCS_FIELD(kcs_signature_row, determinism, KCS_FIELD_STR),
    KCS_FIELD(kcs_signature_row, klass, KCS_FIELD_STR),
};

KCS_FIELD_TABLE(kcs_signature_row_fields, signature_fields)

static const kcs_field source_fields[] = {
    KCS_FIELD(kcs_source_row, index, KCS_FIELD_I32),
    KCS_FIELD(kcs_source_row, path, KCS_FIELD_STR),
    KCS_FIELD(kcs_source_row, study_name, KCS_FIELD_STR),
    KCS_FIELD(kcs_source_row, plan_hash, KCS_FIELD_STR),
    KCS_FIELD(kcs_source_row, created, KCS_FIELD_STR),
    KCS_FIELD(kcs_source_row, software_version, KCS_FIELD_STR),
    KCS_FIELD(kcs_source_row, git_hash, KCS_FIELD_STR),
    KCS_FIELD(kcs_source_row, n_ranks, KCS_FIELD_I32),
    KCS_FIELD(kcs_source_row, first_rank, KCS_FIELD_I32),
    KCS_FIELD(kcs_source_row, n_cases, KCS_FIELD_I64),
    KCS_FIELD(kcs_source_row, n_matched, KCS_FIELD_I64),
};

KCS_FIELD_TABLE(kcs_source_row_fields, source_fields)
