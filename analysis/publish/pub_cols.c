/* The tidy tables' columns and their descriptions: the one definition,
 * from which the CSV headers, datapackage.json's schemas and the data
 * dictionary are all written. */
#include "pub_tables.h"

#include <string.h>

const char *const kcs_pub_tables[] = {"measurements", "pairs", "devices", "tolerances",
                                      "sources", NULL};

#define ID(t) {t, "row_id", "integer", "the row's number in this table (0-based); the atlas's rows/" t ".html#r-<row_id> lists the HDF5 rows it was computed from"}

static const kcs_pub_col cols[] = {
    ID("measurements"),
    {"measurements", "device", "string", "the implementation (device label): the reducer's implementation name from the dataset's /provenance/ranks, with @SITE appended when two sites have the same label"},
    {"measurements", "site", "string", "the data file (site) or imported report the row comes from"},
    {"measurements", "imported", "boolean", "true: copied from a report-only real-silicon run (raw HDF5 not kept), not recomputed"},
    {"measurements", "op", "string", "the op (gemm, reduce_sum, ...): /cases.op"},
    {"measurements", "dtype_in", "string", "input format: /cases.dtype_in"},
    {"measurements", "dtype_out", "string", "output format: /cases.dtype_out (empty for imported rows: the report's verdicts table does not record it)"},
    {"measurements", "k", "integer", "reduction length: /cases.k"},
    {"measurements", "distribution", "string", "input distribution: /cases.input_dist"},
    {"measurements", "n_cases", "integer", "cases (shapes) with this key"},
    {"measurements", "n_trials", "integer", "trials over those cases"},
    {"measurements", "max_scaled", "number", "largest divergence from the oracle scaled by (|A||B|)_ij over the trials (the reducer's divergence_points scaled_div, from /results.max_scaled); empty when not measured"},
    {"measurements", "max_abs", "number", "largest absolute divergence from the oracle over the trials (the reducer's divergence_points abs_div, from /results.max_abs)"},
    {"measurements", "max_backward_err", "number", "largest backward error over the trials (the reducer's verdicts max_backward_err)"},
    {"measurements", "max_tau", "number", "largest contract statistic tau over the trials (the reducer's verdicts max_tau)"},
    {"measurements", "max_ulp", "number", "largest distance from the oracle in units in the last place of dtype_out (the reducer's verdicts max_ulp)"},
    {"measurements", "c", "number", "the reducer's c for this implementation against the oracle over its group (op, dtypes, accumulator, distribution): geometric mean of divergence / (k u), baseline_fits c_geomean, scaled metric"},
    {"measurements", "alpha", "number", "exponent of the fit divergence ~ C k^alpha of this implementation against the oracle over its group (baseline_fits, scaled metric)"},
    {"measurements", "alpha_lo", "number", "alpha's 95 % interval, lower end (t quantile)"},
    {"measurements", "alpha_hi", "number", "alpha's 95 % interval, upper end"},
    {"measurements", "eta", "number", "the recommended tolerance of tolerances.json evaluated at this k for the largest output count among the row's cases (kcs reduce --query); empty when tolerances.json has no single recommendation for the key (eta_note says why)"},
    {"measurements", "eta_valid", "boolean", "false when k lies outside the recommendation's validated range (the reducer warns); empty without eta"},
    {"measurements", "eta_note", "string", "why eta is empty (the recommendation withheld, with the reducer's reason), or empty"},
    {"measurements", "power", "number", "detection power at this key; empty: the datasets published carry no detection data (kcs detect datasets are not read by publish yet)"},
    {"measurements", "signature", "string", "the ordering signature class of the implementation on these cases (the reducer's signatures klass; several classes joined by '|')"},
    ID("pairs"),
    {"pairs", "device_a", "string", "first implementation (label as in measurements)"},
    {"pairs", "device_b", "string", "second implementation"},
    {"pairs", "op", "string", "the op: /cases.op"},
    {"pairs", "dtype_in", "string", "input format"},
    {"pairs", "dtype_out", "string", "output format"},
    {"pairs", "k", "integer", "reduction length"},
    {"pairs", "distribution", "string", "input distribution"},
    {"pairs", "n_cases", "integer", "cases with this key that both ran"},
    {"pairs", "n_identical", "integer", "of those, cases whose output digests were equal on every trial"},
    {"pairs", "max_abs_diff", "number", "largest |y_a - y_b| over trial 0's sampled outputs (the reducer's divergence max_abs_diff)"},
    {"pairs", "max_scaled_diff", "number", "the same divided by (|A||B|)_ij at each sample (the reducer's divergence max_scaled_diff); empty when the inputs were not regenerated"},
    ID("devices"),
    {"devices", "device", "string", "the implementation (label as in measurements)"},
    {"devices", "site", "string", "its data file or imported report"},
    {"devices", "kind", "string", "emulated (a profile of src/arith/profile.c), native (a device backend), cpu (the CPU backend's own or BLAS kernels), imported"},
    {"devices", "backend", "string", "backend: /provenance/ranks.backend"},
    {"devices", "model", "string", "device model: /provenance/ranks.model"},
    {"devices", "profile", "string", "emulated profile: /provenance/ranks.profile"},
    {"devices", "dtype_in", "string", "input format the fingerprint is for"},
    {"devices", "block_size", "string", "products summed per step (F): the profile table's F, or the probe's F (text as the probe gives it, a range lo..hi when not pinned down)"},
    {"devices", "acc_bits", "string", "significand bits of the accumulator (profile: output bits; probe: acc_bits)"},
    {"devices", "rounding", "string", "rounding of the accumulator (rne, rz, ...)"},
    {"devices", "step", "string", "where C enters the block sum (c-first, c-last, ...): the profile's or the probe's step"},
    {"devices", "order", "string", "summation order: the probe's order tree when a `kcs probe --order --json` was given; else empty"},
    {"devices", "nearest", "string", "the probe's nearest profile (native devices)"},
    {"devices", "source", "string", "where the fingerprint comes from: the profile table (kcs version), a probe file of the bundle, or why there is none"},
    ID("tolerances"),
    {"tolerances", "op", "string", "the op of the recommendation (tolerances.json)"},
    {"tolerances", "dtype_in", "string", "input format"},
    {"tolerances", "dtype_out", "string", "output format"},
    {"tolerances", "acc", "string", "declared accumulator"},
    {"tolerances", "metric", "string", "scaled (relative to |A||B|) or abs"},
    {"tolerances", "form", "string", "the model's form (the reducer's tolerance_model.csv form; none when withheld)"},
    {"tolerances", "u", "number", "unit roundoff of the accumulator"},
    {"tolerances", "c", "number", "the model's constant c (eta0 = c k^alpha u)"},
    {"tolerances", "alpha", "number", "the model's exponent"},
    {"tolerances", "alpha_lo", "number", "the exponent's interval, lower end"},
    {"tolerances", "alpha_hi", "number", "the exponent's interval, upper end"},
    {"tolerances", "k_min", "number", "smallest k of the validated range"},
    {"tolerances", "k_max", "number", "largest k of the validated range"},
    {"tolerances", "outputs_fitted", "number", "output count N0 the model was fitted at"},
    {"tolerances", "ranks", "integer", "conforming implementations it was fitted on"},
    {"tolerances", "trials", "integer", "trials it was fitted on"},
    {"tolerances", "heldout_trials", "integer", "held-out trials judged"},
    {"tolerances", "heldout_flagged", "integer", "held-out trials flagged (false alarms)"},
    {"tolerances", "heldout_rate", "number", "heldout_flagged / heldout_trials"},
    {"tolerances", "heldout_lo", "number", "95 % Clopper-Pearson interval of the held-out false-alarm rate, lower end"},
    {"tolerances", "heldout_hi", "number", "the same, upper end"},
    {"tolerances", "missing", "string", "why the recommendation is withheld (the reducer's reason), or empty"},
    {"sources", "site", "string", "the site's name: the data file's name without .h5, or the imported report's folder"},
    {"sources", "kind", "string", "dataset (an HDF5 file in data/) or imported (a report-only run in silicon/)"},
    {"sources", "path", "string", "the file in the bundle"},
    {"sources", "study_name", "string", "the study's name (dataset root attribute study_name)"},
    {"sources", "plan_hash", "string", "the plan hash (root attribute plan_hash)"},
    {"sources", "created", "string", "when the dataset was written (root attribute created, UTC)"},
    {"sources", "software_version", "string", "the kcs version that wrote it"},
    {"sources", "git_hash", "string", "the kcs commit that wrote it"},
    {"sources", "n_ranks", "integer", "implementations (ranks) in it"},
    {"sources", "n_cases", "integer", "cases in it"},
    {"sources", "hosts", "string", "host names of its ranks (/provenance/ranks.host)"},
};

const kcs_pub_col *kcs_pub_cols(int *n_p)
{
    *n_p = (int)(sizeof cols / sizeof *cols);
    return cols;
}

int kcs_pub_table_cols(const char *table, int *first_p)
{
    int n = 0, first = -1;
    for (int i = 0; i < (int)(sizeof cols / sizeof *cols); i++)
        if (!strcmp(cols[i].table, table)) {
            if (first < 0)
                first = i;
            n++;
        }
    *first_p = first;
    return n;
}
