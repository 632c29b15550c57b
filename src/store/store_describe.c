/* The dataset describes itself: every field of /results, /cases and
 * /provenance/ranks carries two attributes on its table, "<field>.description"
 * and "<field>.units", and /samples says what its columns hold and where they
 * sit in the output. The texts live here, next to nothing else, so that the
 * README's dataset section and h5py users read the same words.
 *
 * Units: "1" is a dimensionless ratio; "none" marks identifiers, labels and
 * digests; "count", "ns" and "ULP of dtype_out" are what they say; "output"
 * is the unit of the op's output values (whatever the inputs' unit makes it). */
#include "store_describe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_h5.h"

/* clang-format off */
static const kcs_field_doc result_docs[] = {
    {"case_id", "none", "the case this row belongs to (a case_id of /cases)"},
    {"rank", "none", "MPI rank that ran the trial (a row of /provenance/ranks: the implementation and device)"},
    {"trial", "none", "trial index within the case, 0-based; each trial has fresh inputs"},
    {"status", "none", "how the kernel call ended: ok | raised (the kernel raised on purpose) | error | "
                       "timeout | crashed | unsupported | unavailable (no device) | skipped (slot beyond "
                       "the case's trials)"},
    {"output_digest", "none", "XXH3-64 of the output encoded in dtype_out (0 when there is no output)"},
    {"tau", "1", "measured quantity / eta, the largest over the contract's tolerance clauses; "
                 "> 1 fails (inf: nothing to measure)"},
    {"eta", "1", "the first tolerance clause's eta evaluated for this case (units of the clause's "
                 "structure: 1 for backward_error and pointwise_relative, output for "
                 "pointwise_absolute, ULP of dtype_out for ulp)"},
    {"max_abs", "output", "max |y - y_ref| over the outputs"},
    {"max_rel", "1", "max |y - y_ref| / |y_ref| over outputs with y_ref != 0"},
    {"max_ulp", "ULP of dtype_out", "max distance between y and y_ref in units in the last place of dtype_out"},
    {"mean_ulp", "ULP of dtype_out", "mean of the same distance over the outputs"},
    {"backward_err", "1", "normwise backward error ||y - y_ref||_F / scale (gemm: ||A||_F ||B||_F)"},
    {"max_scaled", "1", "componentwise error max |y - y_ref| / (|A||B|)_ij (the op's magnitude reference)"},
    {"effective_acc_bits", "bits", "gemm, dot, reduce_sum: the width of the sequential p-bit "
                                   "accumulator that errs as much on these inputs (simulated); "
                                   "other ops -log2(rms_scaled / sqrt(k)); capped at 64"},
    {"nan_count", "count", "NaN values in the output"},
    {"inf_count", "count", "infinite values in the output"},
    {"guard_ok", "none", "1: the guard regions around the output were intact after the call; 0: the "
                         "kernel wrote outside its output"},
    {"time_ns", "ns", "wall time of the kernel call (the first, timed call of the trial)"},
    {"verdict", "none", "within_tolerance | violation (a signature matched) | under_specified (fails, "
                        "no signature explains it) | error | unavailable | not_claimed (the "
                        "contract binds only kernels that declare a property, precondition."
                        "declares, and this one does not: measured, not judged)"},
    {"signature", "none", "names of the matched signatures, comma-separated; for an error, the reason"},
    {"message", "none",
     "the whole reason of a status other than ok (\"\" when ok; raised: the kernel's own "
     "reason for refusing the call)"},
};

static const kcs_field_doc case_docs[] = {
    {"case_id", "none", "case number in plan order (rows of /results are [case, rank, trial])"},
    {"contract", "none", "id of the contract the case checks (its text: /contracts/<id>)"},
    {"op", "none", "the op called: gemm, batched_gemm, reduce_sum, dot, softmax, layernorm, "
                   "rmsnorm, attention, gather, allreduce, elementwise, norm"},
    {"variant", "none", "implementation variant; per-rank: each rank's own, in /provenance/ranks"},
    {"dtype_in", "none", "format of the inputs (fp64, fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2)"},
    {"dtype_acc", "none", "accumulator the kernel declares (the contract's dtype_acc)"},
    {"dtype_out", "none", "format of the output"},
    {"m", "count", "rows of the output (gemm: A is m x k); 0 when unused"},
    {"n", "count", "columns of the output (gemm: B is k x n); 0 when unused"},
    {"k", "count", "reduction length"},
    {"batch", "count", "batch count (batched ops); 0 when unused"},
    {"input_dist", "none", "distribution of the generated inputs (normal, uniform_pm1, ...)"},
    {"seed", "none", "Philox key of the case's inputs (derived from the study seed and the case)"},
    {"input_digest", "none", "XXH3 digest of every trial's inputs, agreed by all ranks"},
    {"trials", "count", "trials of this case (rows beyond it are status skipped)"},
};

static const kcs_field_doc rank_docs[] = {
    {"rank", "none", "MPI rank of the process (rows of /results name it)"},
    {"host", "none", "host name of the node"},
    {"backend", "none", "backend: cpu, opencl, cuda, hip, level_zero, plugin"},
    {"device", "none", "device index within the backend"},
    {"vendor", "none", "device vendor"},
    {"model", "none", "device model (plugin: the plugin's name)"},
    {"arch", "none", "architecture or build options (plugin: the ops it offers)"},
    {"driver", "none", "driver version"},
    {"runtime", "none", "runtime version"},
    {"uuid", "none", "device UUID (plugin: XXH3-128 of the library file)"},
    {"profile", "none", "emulated silicon profile (cpu backend), or empty"},
    {"variant", "none", "the implementation this rank ran: variant, schedule and accumulator"},
    {"status", "none", "ok | unavailable (the device did not open) | error"},
    {"blas", "none", "the BLAS library the rank called: path (config, core)"},
    {"why", "none", "why the rank is unavailable, in full (\"\" when ok)"},
    {"blas_threads", "count", "the BLAS library's thread count (OpenBLAS's bits depend on it; kcs exec --threads N)"},
};
/* clang-format on */

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

const kcs_field_doc *kcs_store_field_docs(const char *table, int *n_p)
{
    if (!strcmp(table, "results")) {
        *n_p = N_OF(result_docs);
        return result_docs;
    }
    if (!strcmp(table, "cases")) {
        *n_p = N_OF(case_docs);
        return case_docs;
    }
    if (!strcmp(table, "ranks")) {
        *n_p = N_OF(rank_docs);
        return rank_docs;
    }
    *n_p = 0;
    return NULL;
}

const kcs_field_doc *kcs_store_field_doc(const char *table, const char *field)
{
    int n;
    const kcs_field_doc *d = kcs_store_field_docs(table, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(d[i].name, field))
            return &d[i];
    return NULL;
}

int kcs_store_describe(hid_t dset, const char *table, const kcs_field *f, int n,
                       const char **missing_p)
{
    for (int i = 0; i < n; i++) {
        const kcs_field_doc *d = kcs_store_field_doc(table, f[i].name);
        if (!d) {
            if (missing_p)
                *missing_p = f[i].name;
            return -2;
        }
        char name[96];
        snprintf(name, sizeof name, "%s.description", f[i].name);
        if (kcs_h5_put_str(dset, name, d->description) < 0)
            return -1;
        snprintf(name, sizeof name, "%s.units", f[i].name);
        if (kcs_h5_put_str(dset, name, d->units) < 0)
            return -1;
    }
    return 0;
}

const char *const kcs_store_samples_description =
    "/samples is float64 [n_cases, n_ranks, n_samples]: [i, r] holds rank r's output values of "
    "trial 0 of the case in row i of /cases, at fixed positions, NaN where the rank produced no "
    "output";
const char *const kcs_store_samples_positions =
    "column j holds the output element at flat row-major index floor(j * N / n_samples), N the "
    "number of output elements (gemm m*n, batched_gemm batch*m*n, attention batch*m*k, "
    "reduce_sum m, norm m, dot 1, softmax/layernorm/rmsnorm/elementwise m*k, gather n*k, allreduce k)";

int kcs_store_describe_samples(hid_t samples)
{
    if (kcs_h5_put_str(samples, "description", kcs_store_samples_description) < 0 ||
        kcs_h5_put_str(samples, "units", "output") < 0 ||
        kcs_h5_put_str(samples, "positions", kcs_store_samples_positions) < 0)
        return -1;
    return 0;
}

int kcs_store_describe_held_out(hid_t cases, const kcs_plan *plan)
{
    int64_t n = 0;
    for (int64_t i = 0; i < plan->n_cases; i++)
        n += plan->cases[i].held_out != 0;
    if (kcs_h5_put_i64(cases, "held_out_count", n) < 0 ||
        kcs_h5_put_str(cases, "held_out.description",
                       "held_out_cases lists the case_ids whose shape is one of the contract's "
                       "held-out classes (measured with the contract's own shapes; a study "
                       "that names its shapes has none)") < 0)
        return -1;
    if (n > KCS_HELD_OUT_ATTR_MAX)
        return kcs_h5_put_str(cases, "held_out_cases_omitted",
                              "more held-out cases than an attribute holds: see the plan") < 0
                   ? -1
                   : 0;
    int64_t *ids = malloc(sizeof *ids * (size_t)(n ? n : 1));
    if (!ids)
        return -1;
    int64_t j = 0;
    for (int64_t i = 0; i < plan->n_cases; i++)
        if (plan->cases[i].held_out)
            ids[j++] = plan->cases[i].id;
    hsize_t dim = (hsize_t)n;
    hid_t sp = n ? H5Screate_simple(1, &dim, NULL) : H5Screate(H5S_NULL);
    hid_t a = sp >= 0 ? H5Acreate2(cases, "held_out_cases", H5T_NATIVE_INT64, sp, H5P_DEFAULT,
                                   H5P_DEFAULT)
                      : -1;
    int rc = a >= 0 && (n == 0 || H5Awrite(a, H5T_NATIVE_INT64, ids) >= 0) ? 0 : -1;
    if (a >= 0 && H5Aclose(a) < 0)
        rc = -1;
    if (sp >= 0)
        H5Sclose(sp);
    free(ids);
    return rc;
}
