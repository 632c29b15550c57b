/* kcs probe, second part: the corner features of src/arith/profile.h
 * (zero_exp, zero_sign, prod_ovf, inf_path, flush_sign) measured through
 * the backend's gemm, each by vectors built to reach that corner alone
 * (docs/profiles.md gives the corners). A feature is measured only where
 * the first part (kcs_probe_run) found a structure it applies to and the
 * input format can reach the corner; elsewhere it is KCS_PROBE_NA. */
#ifndef KCS_PROBE_FEATURES_H
#define KCS_PROBE_FEATURES_H

#include "probe.h"

typedef enum kcs_probe_feature {
    KCS_PF_ZERO_EXP = 0,
    KCS_PF_ZERO_SIGN,
    KCS_PF_PROD_OVF,
    KCS_PF_INF_PATH,
    KCS_PF_FLUSH_SIGN,
    KCS_PF_COUNT
} kcs_probe_feature;

typedef struct kcs_probe_features {
    kcs_probe_status st[KCS_PF_COUNT]; /* EXACT, NA or INCONSISTENT */
    int value[KCS_PF_COUNT];           /* the feature's enum value when EXACT */
    long calls;
} kcs_probe_features;

/* Measure the features of the path whose structure `base` describes (a
 * kcs_probe_run result for the same backend, context and input format). */
int kcs_probe_features_run(const kcs_backend_ops *ops, kcs_backend_ctx *ctx,
                           const kcs_probe_result *base, kcs_probe_features *f_p,
                           kcs_error *err);
/* "zero_exp", ...; and a value's name ("min", "sum", ...; "n/a", "inconsistent"). */
const char *kcs_probe_feature_name(kcs_probe_feature f);
const char *kcs_probe_feature_value_str(const kcs_probe_features *f, kcs_probe_feature which);
/* The row's value of a feature (to compare with a measurement). */
int kcs_probe_feature_of_row(const kcs_profile_params *p, kcs_probe_feature which);

#endif
