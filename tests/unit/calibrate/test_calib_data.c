/* The calibration catalogue as data (src/calibrate/calib_catalogue.c):
 * contracts/<ID>/calibration.yaml read strictly, every shipped contract
 * folder holding one, and the contract loader's folder rule
 * (kcs_contract_resolve: an old path contracts/<ID>.yaml and the folder
 * contracts/<ID> name contracts/<ID>/<ID>.yaml). */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "calibrate.h"
#include "unit_helpers.h"

#define CONTRACTS KCS_TEST_SOURCE_DIR "/contracts"
#define OP(o) (1u << (o))

static const char *const good =
    "# Three-state calibration of C-PRC-90 (kcs calibrate): baseline, bad, good.\n"
    "ops: [gemm, batched_gemm]\n"
    "dtype_in: bf16\n"
    "expected: [accumulator-narrower-than-declared, stale-result-replay]\n"
    "bad_cpu: \"k > 64: the running sum is rounded to bf16\"\n"
    "bad_wrap: \"k > 64: the backend's gemm on k-slices of 16\"\n";

static char dir[512];

/* Write text as dir/name and load it as contract C-PRC-90's calibration. */
static int load_text(const char *name, const char *text, kcs_calib_entry *e, kcs_error *err,
                     char *path, size_t len)
{
    CU_ASSERT_FATAL(ut_write(dir, name, text, path, len) == 0);
    memset(err, 0, sizeof *err);
    return kcs_calib_entry_load(path, "C-PRC-90", e, err);
}

/* The file is refused with "path:line:col: field: ..." holding `want`. */
static void refused(const char *name, const char *text, int line, const char *field,
                    const char *want)
{
    kcs_calib_entry e;
    kcs_error err;
    char path[1024], at[1100];
    CU_ASSERT_NOT_EQUAL(load_text(name, text, &e, &err, path, sizeof path), 0);
    snprintf(at, sizeof at, "%s:%d:", path, line);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, at));
    snprintf(at, sizeof at, ": %s: ", field);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, at));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    if (!strstr(err.msg, want) || !strstr(err.msg, path) || !strstr(err.msg, at))
        fprintf(stderr, "\n  %s: %s\n", name, err.msg);
}

static void test_good_file(void)
{
    kcs_calib_entry e;
    kcs_error err;
    char path[1024];
    CU_ASSERT_EQUAL_FATAL(load_text("good.yaml", good, &e, &err, path, sizeof path), 0);
    CU_ASSERT_STRING_EQUAL(e.id, "C-PRC-90");
    CU_ASSERT_EQUAL(e.ops, OP(KCS_OP_GEMM) | OP(KCS_OP_BATCHED_GEMM));
    CU_ASSERT_EQUAL(e.dtype_in, KCS_FMT_BF16);
    CU_ASSERT_STRING_EQUAL(e.expected, "accumulator-narrower-than-declared,stale-result-replay");
    CU_ASSERT_STRING_EQUAL(e.bad_cpu, "k > 64: the running sum is rounded to bf16");
    CU_ASSERT_STRING_EQUAL(e.bad_wrap, "k > 64: the backend's gemm on k-slices of 16");
    kcs_calib_entry_free(&e);
}

/* Each line of `good` replaced (line 2..6), or one added. */
static char *edited(int line, const char *with)
{
    static char buf[2048];
    buf[0] = 0;
    const char *p = good;
    for (int l = 1; *p; l++) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p + 1) : strlen(p);
        if (l == line) {
            if (with)
                strcat(buf, with);
        } else {
            strncat(buf, p, n);
        }
        p += n;
    }
    if (line == 0 && with)
        strcat(buf, with);
    return buf;
}

static void test_refused(void)
{
    refused("unknown_key.yaml", edited(0, "bad_gpu: \"a bad kernel on the GPU\"\n"), 7, "bad_gpu",
            "unknown key");
    refused("missing_key.yaml", edited(6, NULL), 2, "bad_wrap", "missing required key");
    refused("missing_ops.yaml", edited(2, NULL), 2, "ops", "missing required key");
    refused("bad_op.yaml", edited(2, "ops: [gemm, matmul]\n"), 2, "ops[1]", "unknown op 'matmul'");
    refused("twice_op.yaml", edited(2, "ops: [gemm, gemm]\n"), 2, "ops[1]", "listed twice");
    refused("bad_format.yaml", edited(3, "dtype_in: fp31\n"), 3, "dtype_in",
            "unknown format 'fp31'");
    refused("empty_expected.yaml", edited(4, "expected: []\n"), 4, "expected",
            "non-empty list");
    refused("bad_signature.yaml", edited(4, "expected: [\"two words\"]\n"), 4, "expected[0]",
            "not a signature name");
    refused("list_text.yaml", edited(5, "bad_cpu: [a, b]\n"), 5, "bad_cpu", "expected");
}

/* narrow: the narrow-output states, each a map read strictly. */
#define NARROW_GOOD                                                                             \
    "narrow:\n"                                                                                 \
    "  - { state: good-bf16-out, kernel: good, dtype_in: bf16, dtype_out: bf16,\n"             \
    "      verdict: PASS, what: \"fp32 sum, bf16 out\" }\n"                                     \
    "  - { state: bad-bf16-blk256, kernel: blocks256, dtype_in: bf16, dtype_out: bf16,\n"      \
    "      verdict: FAIL, expected: [accumulator-narrower-than-declared], what: \"blocks\" }\n"

static void test_narrow(void)
{
    kcs_calib_entry e;
    kcs_error err;
    char path[1024];
    CU_ASSERT_EQUAL_FATAL(load_text("narrow.yaml", edited(0, NARROW_GOOD), &e, &err, path,
                                    sizeof path), 0);
    CU_ASSERT_EQUAL_FATAL(e.n_narrow, 2);
    CU_ASSERT_STRING_EQUAL(e.narrow[0].state, "good-bf16-out");
    CU_ASSERT_STRING_EQUAL(e.narrow[0].kernel, "good");
    CU_ASSERT_EQUAL(e.narrow[0].dtype_out, KCS_FMT_BF16);
    CU_ASSERT_EQUAL(e.narrow[0].pass, 1);
    CU_ASSERT_STRING_EQUAL(e.narrow[0].expected, "");
    CU_ASSERT_STRING_EQUAL(e.narrow[1].kernel, "blocks256");
    CU_ASSERT_EQUAL(e.narrow[1].pass, 0);
    CU_ASSERT_STRING_EQUAL(e.narrow[1].expected, "accumulator-narrower-than-declared");
    CU_ASSERT_STRING_EQUAL(e.narrow[1].what, "blocks");
    kcs_calib_entry_free(&e);
    /* without narrow: no state */
    CU_ASSERT_EQUAL_FATAL(load_text("plain.yaml", good, &e, &err, path, sizeof path), 0);
    CU_ASSERT_EQUAL(e.n_narrow, 0);
    kcs_calib_entry_free(&e);
    static const char *const head = "narrow:\n  - { state: s1, kernel: good, dtype_in: bf16, "
                                    "dtype_out: bf16, ";
    char text[512];
    snprintf(text, sizeof text, "%sverdict: PASS, what: x, colour: red }\n", head);
    refused("n_key.yaml", edited(0, text), 8, "narrow[0].colour", "unknown key");
    snprintf(text, sizeof text, "%sverdict: FAIL, what: x }\n", head);
    refused("n_noexp.yaml", edited(0, text), 8, "narrow[0].expected", "names its own signature");
    snprintf(text, sizeof text, "%sverdict: PASS, expected: [a], what: x }\n", head);
    refused("n_exp.yaml", edited(0, text), 8, "narrow[0].expected", "expects no signature");
    snprintf(text, sizeof text, "%sverdict: MAYBE, what: x }\n", head);
    refused("n_verdict.yaml", edited(0, text), 8, "narrow[0].verdict", "PASS or FAIL");
    refused("n_kernel.yaml",
            edited(0, "narrow:\n  - { state: s1, kernel: fast, dtype_in: bf16, dtype_out: bf16, "
                      "verdict: PASS, what: x }\n"),
            8, "narrow[0].kernel", "unknown kernel 'fast'");
    refused("n_format.yaml",
            edited(0, "narrow:\n  - { state: s1, kernel: good, dtype_in: bf16, dtype_out: bf17, "
                      "verdict: PASS, what: x }\n"),
            8, "narrow[0].dtype_out", "unknown format 'bf17'");
    refused("n_state.yaml",
            edited(0, "narrow:\n  - { state: good, kernel: good, dtype_in: bf16, dtype_out: bf16, "
                      "verdict: PASS, what: x }\n"),
            8, "narrow[0].state", "one of the three states");
}

static void test_dir_missing_file(void)
{
    char sub[700], path[1024];
    snprintf(sub, sizeof sub, "%s/C-PRC-90", dir);
    CU_ASSERT_FATAL(mkdir(sub, 0755) == 0);
    /* the folder is a contract folder by its YAML's name alone */
    CU_ASSERT_FATAL(ut_write(sub, "C-PRC-90.yaml", "id: C-PRC-90\n", path, sizeof path) == 0);
    kcs_error err = {0};
    CU_ASSERT_NOT_EQUAL(kcs_calib_catalogue_load(dir, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "C-PRC-90/calibration.yaml: missing"));
    /* with one, the directory loads */
    CU_ASSERT_FATAL(ut_write(sub, "calibration.yaml", good, path, sizeof path) == 0);
    int n = 0;
    CU_ASSERT_EQUAL(kcs_calib_catalogue_load(dir, &err), 0);
    const kcs_calib_entry *cat = kcs_calib_catalogue(&n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(cat[0].id, "C-PRC-90");
    /* a directory of flat C-*.yaml files (the layout before folders) says so */
    char flat[700];
    snprintf(flat, sizeof flat, "%s/flat", dir);
    CU_ASSERT_FATAL(mkdir(flat, 0755) == 0);
    CU_ASSERT_FATAL(ut_write(flat, "C-PRC-91.yaml", "id: C-PRC-91\n", path, sizeof path) == 0);
    CU_ASSERT_NOT_EQUAL(kcs_calib_catalogue_load(flat, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "contracts are folders now"));
}

/* The shipped catalogue: one entry per contract folder, its fields as the
 * calibration kernels implement them, its names the contract's own. */
static void test_shipped(void)
{
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_calib_catalogue_load(CONTRACTS, &err), 0);
    kcs_contract **cs = NULL;
    int n = 0, nc = 0;
    CU_ASSERT_EQUAL_FATAL(kcs_calib_load(CONTRACTS, NULL, 0, &cs, &n, &err), 0);
    const kcs_calib_entry *cat = kcs_calib_catalogue(&nc);
    CU_ASSERT_EQUAL(nc, n);
    CU_ASSERT(n >= 16);
    for (int i = 0; i < n; i++) {
        const kcs_calib_entry *e = kcs_calib_find(cs[i]->id);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_PTR_EQUAL(e, &cat[i]);
        CU_ASSERT((e->ops & cs[i]->ops) != 0); /* some calibration op in its scope */
        CU_ASSERT(cs[i]->dtype_in & (1u << e->dtype_in));
        for (const char *p = e->expected; p && *p;) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            int own = 0;
            for (int s = 0; s < cs[i]->n_sigs; s++)
                own |= strlen(cs[i]->sigs[s].name) == len && !strncmp(cs[i]->sigs[s].name, p, len);
            if (!own)
                fprintf(stderr, "\n  %s: expected %.*s is no signature of it\n", e->id, (int)len, p);
            CU_ASSERT(own);
            p = end ? end + 1 : NULL;
        }
    }
    const kcs_calib_entry *e = kcs_calib_find("C-PRC-01");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->ops, OP(KCS_OP_GEMM) | OP(KCS_OP_BATCHED_GEMM));
    CU_ASSERT_EQUAL(e->dtype_in, KCS_FMT_FP32);
    CU_ASSERT_STRING_EQUAL(e->expected, "accumulator-narrower-than-declared");
    CU_ASSERT_STRING_EQUAL(e->bad_cpu,
                           "k > 64: the running sum is rounded to bf16 after every add (fp32 "
                           "declared)");
    e = kcs_calib_find("C-PRC-02");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->ops, OP(KCS_OP_SOFTMAX) | OP(KCS_OP_LAYERNORM));
    CU_ASSERT_STRING_EQUAL(e->expected, "overflow-not-stabilised,variance-cancellation");
    e = kcs_calib_find("C-CMP-01");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->ops, OP(KCS_OP_ATTENTION));
    CU_ASSERT_EQUAL(e->dtype_in, KCS_FMT_BF16);
    CU_ASSERT_PTR_NULL(kcs_calib_find("C-PRC-99"));
    kcs_calib_contracts_free(cs, n);
}

/* A contract is a folder; the path before folders and the folder name it. */
static void test_resolve(void)
{
    static const char *const named[] = {CONTRACTS "/C-PRC-01.yaml", CONTRACTS "/C-PRC-01",
                                        CONTRACTS "/C-PRC-01/"};
    kcs_contract *ref = NULL;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_contract_load(CONTRACTS "/C-PRC-01/C-PRC-01.yaml", &ref, &err), 0);
    for (int i = 0; i < 3; i++) {
        kcs_contract *c = NULL;
        CU_ASSERT_EQUAL_FATAL(kcs_contract_load(named[i], &c, &err), 0);
        CU_ASSERT_STRING_EQUAL(c->id, "C-PRC-01");
        CU_ASSERT_STRING_EQUAL(c->text, ref->text);
        CU_ASSERT_STRING_EQUAL(c->path, named[i]); /* as named: a dataset's path attribute */
        kcs_contract_free(c);
    }
    kcs_contract_free(ref);
    char buf[512];
    CU_ASSERT_STRING_EQUAL(kcs_contract_resolve(CONTRACTS "/C-PRC-01.yaml", buf, sizeof buf),
                           CONTRACTS "/C-PRC-01/C-PRC-01.yaml");
    /* a missing contract stays as named, and the error names it */
    const char *missing = CONTRACTS "/C-PRC-99.yaml";
    CU_ASSERT_PTR_EQUAL(kcs_contract_resolve(missing, buf, sizeof buf), missing);
    kcs_contract *c = NULL;
    CU_ASSERT_NOT_EQUAL(kcs_contract_load(missing, &c, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "C-PRC-99.yaml: cannot open"));
    /* ids name folders in kcs calibrate and kcs grade */
    kcs_contract **cs = NULL;
    int n = 0;
    char *ids[] = {"C-ORD-02", CONTRACTS "/C-PRC-03.yaml"};
    CU_ASSERT_EQUAL_FATAL(kcs_calib_load(CONTRACTS, ids, 2, &cs, &n, &err), 0);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_STRING_EQUAL(cs[0]->path, CONTRACTS "/C-ORD-02/C-ORD-02.yaml");
    CU_ASSERT_STRING_EQUAL(cs[1]->id, "C-PRC-03");
    kcs_calib_contracts_free(cs, n);
}

int main(void)
{
    ut_tmpdir(dir, sizeof dir, "calib-data");
    if (!dir[0])
        return 1;
    static const ut_test tests[] = {
        {"a calibration.yaml loads with its fields", test_good_file},
        {"unknown, missing and misnamed fields are refused at file:line", test_refused},
        {"narrow-output states: loaded, and refused at file:line", test_narrow},
        {"a contract folder without calibration.yaml is an error", test_dir_missing_file},
        {"the shipped catalogue: one entry per contract folder", test_shipped},
        {"old paths and folder paths name the folder's contract", test_resolve},
        {NULL, NULL},
    };
    int rc = ut_run("calib_data", tests);
    ut_rmdir(dir);
    return rc;
}
