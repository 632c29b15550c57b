/* kcs reduce on synthetic datasets written here in the schema's layout
 * (serially, with the reducer's HDF5 writer and the store's record types):
 *   - fits recover the exponents the data were generated with (rank r's
 *     divergence is C k^alpha_r times log-normal noise), the violating rank
 *     is flagged on every trial and the others on none;
 *   - `test_reduce_memory --write PATH MIB` writes a dataset of about MIB
 *     MiB for tests/integration/test_reduce_memory.sh, which measures that
 *     kcs reduce's peak memory does not grow with the file. */
#define _POSIX_C_SOURCE 200809L

#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5out.h"
#include "reduce.h"
#include "store.h"
#include "unit_helpers.h"

enum { NR = 6, T = 4, MN = 64 };
static const double alpha[NR] = {1.0, 0.5, 0.75, 0.5, 1.0, 1.0};
#define BAD_RANK (NR - 1)

static double gauss(unsigned long long *s)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        u[i] = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static int64_t k_of(int64_t c)
{
    return (int64_t)64 << (c % 7); /* 64 ... 4096 */
}

/* A complete schema-1 dataset: n_cases gemm cases of contract C-SYN (not
 * stored in /contracts, so the reducer does not try to regenerate
 * inputs), NR ranks, T trials, ns samples per rank. */
static int synth_write(const char *path, int64_t n_cases, int ns, kcs_error *err)
{
    kcs_h5out *o = NULL;
    int rc = kcs_h5out_create(path, &o, err);
    if (rc)
        return rc;
    int nf;
    const kcs_field *f;
    kcs_h5table *t = NULL;
    unsigned long long seed = 12345;
    double *samples = malloc((size_t)NR * (size_t)ns * sizeof *samples);
    kcs_result_rec *res = calloc(NR * T, sizeof *res);
    kcs_rank_rec ranks[NR];
    memset(ranks, 0, sizeof ranks);
    if (!samples || !res) {
        rc = kcs_fail(err, KCS_E_NOMEM, "oom");
        goto out;
    }
    const char *sattrs[][2] = {{"schema", "kcs"},         {"software", "kcs"},
                               {"software_version", "0"}, {"git_hash", "synthetic"},
                               {"created", "2026-01-01T00:00:00Z"},
                               {"command_line", "test_reduce_memory"},
                               {"study_name", "synthetic"}, {"plan_hash", "0"}};
    for (size_t i = 0; i < sizeof sattrs / sizeof sattrs[0] && !rc; i++)
        rc = kcs_h5out_attr_str(o, "/", sattrs[i][0], sattrs[i][1], err);
    if (rc || (rc = kcs_h5out_attr_i32(o, "/", "schema_version", KCS_SCHEMA_VERSION, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "n_ranks", NR, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "n_cases", n_cases, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "max_trials", T, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "n_samples", ns, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/", "complete", 1, err)) ||
        (rc = kcs_h5out_group(o, "/provenance", err)) ||
        (rc = kcs_h5out_group(o, "/contracts", err)) ||
        (rc = kcs_h5out_group(o, "/samples", err)) ||
        (rc = kcs_h5out_text(o, "/study", "name: synthetic\nseed: 1\n", err)))
        goto out;
    for (int r = 0; r < NR; r++) {
        ranks[r].rank = r;
        snprintf(ranks[r].variant, sizeof ranks[r].variant, "synthetic alpha=%.2f%s", alpha[r],
                 r == BAD_RANK ? " bad" : "");
        snprintf(ranks[r].status, sizeof ranks[r].status, "ok");
    }
    f = kcs_store_rank_fields(&nf);
    if ((rc = kcs_h5table_open(o, "/provenance/ranks", f, nf, sizeof(kcs_rank_rec), &t, err)) ||
        (rc = kcs_h5table_append(t, ranks, NR, err)) || (rc = kcs_h5table_close(t, err)))
        goto out;
    t = NULL;
    f = kcs_store_case_fields(&nf);
    if ((rc = kcs_h5table_open(o, "/cases", f, nf, sizeof(kcs_case_rec), &t, err)))
        goto out;
    for (int64_t c = 0; c < n_cases && !rc; c++) {
        kcs_case_rec cs = {0};
        cs.case_id = c;
        snprintf(cs.contract, sizeof cs.contract, "C-SYN");
        snprintf(cs.op, sizeof cs.op, "gemm");
        snprintf(cs.variant, sizeof cs.variant, "per-rank");
        snprintf(cs.dtype_in, sizeof cs.dtype_in, "fp32");
        snprintf(cs.dtype_acc, sizeof cs.dtype_acc, "fp32");
        snprintf(cs.dtype_out, sizeof cs.dtype_out, "fp32");
        cs.m = cs.n = MN;
        cs.k = k_of(c);
        snprintf(cs.input_dist, sizeof cs.input_dist, "normal");
        cs.seed = (uint64_t)c * 7919u + 1;
        cs.input_digest = (uint64_t)c * 104729u + 3;
        cs.trials = T;
        rc = kcs_h5table_append(t, &cs, 1, err);
    }
    if (rc || (rc = kcs_h5table_close(t, err)))
        goto out;
    t = NULL;
    f = kcs_store_result_fields(&nf);
    if ((rc = kcs_h5table_open(o, "/results", f, nf, sizeof(kcs_result_rec), &t, err)))
        goto out;
    const double u = 0x1p-24;
    for (int64_t c = 0; c < n_cases && !rc; c++) {
        double k = (double)k_of(c);
        for (int r = 0; r < NR; r++)
            for (int tr = 0; tr < T; tr++) {
                kcs_result_rec *x = &res[r * T + tr];
                memset(x, 0, sizeof *x);
                x->case_id = c;
                x->rank = r;
                x->trial = tr;
                snprintf(x->status, sizeof x->status, "ok");
                double d = (r == BAD_RANK ? 1e4 : 1.0) * 0.1 * u * pow(k, alpha[r]) *
                           exp(0.2 * gauss(&seed)) * sqrt(64.0);
                x->max_abs = d;
                x->max_scaled = d / (0.64 * k);
                x->backward_err = d / (k * MN);
                x->eta = 2 * k * u;
                x->tau = x->backward_err / x->eta;
                x->output_digest = (uint64_t)(r == 1 ? 0 : r) * 1000003u + (uint64_t)c * 31u +
                                   (uint64_t)tr;
                x->guard_ok = 1;
                snprintf(x->verdict, sizeof x->verdict, "%s",
                         r == BAD_RANK ? "violation" : "within_tolerance");
            }
        rc = kcs_h5table_append(t, res, NR * T, err);
        for (int r = 0; r < NR; r++)
            for (int j = 0; j < ns; j++)
                samples[r * ns + j] = (double)(float)(sqrt(k) * sin(j + 0.1 * (double)c) +
                                                      (r == 1 ? 0.0 : r * 1e-6 * j));
        char obj[64];
        snprintf(obj, sizeof obj, "/samples/%lld", (long long)c);
        if (!rc)
            rc = kcs_h5out_matrix(o, obj, NR, ns, samples, err);
    }
    if (!rc)
        rc = kcs_h5table_close(t, err);
    t = NULL;
out:
    if (t)
        kcs_h5table_close(t, err);
    free(samples);
    free(res);
    if (rc) {
        kcs_h5out_abort(o);
        return rc;
    }
    return kcs_h5out_close(o, err);
}

static char dir[256];

static void test_synthetic_fits(void)
{
    char path[512], out[512];
    snprintf(path, sizeof path, "%s/syn.h5", dir);
    snprintf(out, sizeof out, "%s/rep", dir);
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(synth_write(path, 70, 256, &err), 0);
    const char *inputs[] = {path};
    kcs_reduce_opts o = {.inputs = inputs, .n_inputs = 1, .out_dir = out, .quiet = 1,
                         .no_plots = 1};
    int rc = kcs_reduce_run(&o, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char apath[600]; /* the analysis is a file of its own in the report directory */
    snprintf(apath, sizeof apath, "%s/analysis.h5", out);
    kcs_fit_row *fits = NULL;
    int64_t n = 0;
    int nf;
    const kcs_field *f = kcs_fit_row_fields(&nf);
    CU_ASSERT_EQUAL_FATAL(kcs_h5in_table(apath, "/analysis/baseline_fits", f, nf, sizeof *fits, 0,
                                         (void **)&fits, &n, &err),
                          0);
    int seen = 0;
    for (int64_t i = 0; i < n; i++) {
        const kcs_fit_row *x = &fits[i];
        if (x->rank_b != -1 || x->rank_a < 0 || strcmp(x->metric, "abs"))
            continue;
        seen++;
        /* 70 cases x 4 trials = 280 points, noise sd 0.2 in log: the
         * generating exponent lies within 4 standard errors */
        CU_ASSERT_EQUAL(x->n_points, 70 * T);
        CU_ASSERT_TRUE(fabs(x->alpha - alpha[x->rank_a]) < 4 * x->alpha_se);
        CU_ASSERT_TRUE(x->alpha_se > 0.0 && x->alpha_se < 0.05);
        CU_ASSERT_EQUAL(x->conforming_a, x->rank_a != BAD_RANK);
    }
    CU_ASSERT_EQUAL(seen, NR);
    free(fits);
    kcs_flag_row *fl = NULL;
    f = kcs_flag_row_fields(&nf);
    CU_ASSERT_EQUAL_FATAL(kcs_h5in_table(apath, "/analysis/tolerance_flags", f, nf, sizeof *fl, 0,
                                         (void **)&fl, &n, &err),
                          0);
    CU_ASSERT_EQUAL(n, NR);
    /* no legacy c n u flags in the table (issue 46) */
    for (int i = 0; i < nf; i++)
        CU_ASSERT_PTR_NULL(strstr(f[i].name, "flagged_abs"));
    for (int64_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(fl[i].n_trials, 70 * T);
        /* the contract's verdicts: the bad rank violates on every trial */
        CU_ASSERT_EQUAL(fl[i].flagged_contract, fl[i].rank == BAD_RANK ? 70 * T : 0);
        CU_ASSERT_EQUAL(fl[i].conforming, fl[i].rank != BAD_RANK);
    }
    free(fl);
    kcs_verdict_row *v = NULL;
    f = kcs_verdict_row_fields(&nf);
    CU_ASSERT_EQUAL(kcs_h5in_table(apath, "/analysis/verdicts", f, nf, sizeof *v, 0, (void **)&v,
                                   &n, &err),
                    0);
    CU_ASSERT_EQUAL(n, 70 * NR);
    free(v);
    /* inputs of contract C-SYN cannot be regenerated: said, not failed */
    char rp[600];
    snprintf(rp, sizeof rp, "%s/report.md", out);
    FILE *r = fopen(rp, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    char line[4096];
    int said = 0;
    while (fgets(line, sizeof line, r))
        said |= strstr(line, "0 cases recomputed, 70 not") != NULL;
    fclose(r);
    CU_ASSERT_TRUE(said);
}

static const ut_test tests[] = {
    {"fits recover the generating exponents", test_synthetic_fits},
};

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--write") == 0) {
        /* one case: NR x ns samples + NR x T result rows */
        double mib = atof(argv[3]);
        int ns = 4096;
        double per_case = NR * (double)ns * 8.0 + NR * T * (double)sizeof(kcs_result_rec);
        int64_t n = (int64_t)(mib * 1048576.0 / per_case) + 1;
        kcs_error err = {0};
        if (synth_write(argv[2], n, ns, &err)) {
            fprintf(stderr, "test_reduce_memory: %s\n", err.msg);
            return 1;
        }
        printf("%lld cases\n", (long long)n);
        return 0;
    }
    snprintf(dir, sizeof dir, "/tmp/kcs_test_reduce_memory.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    unsigned f = (unsigned)ut_run("reduce_synthetic", tests);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return f != 0;
}
