/* Summation trees (src/base/order_tree.h): text round trip, malformed text
 * refused with the offset named, and the FPRev reconstruction against black
 * boxes that answer from a known tree (random binary and fused trees,
 * chains in both directions, balanced trees): the rebuilt tree must be the
 * known one, in the number of questions the header promises; and against
 * answers that fit no tree, which must be an error, not a tree. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "order_tree.h"
#include "unit_helpers.h"

static void check_roundtrip(const char *text)
{
    kcs_otree t;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_otree_parse(text, &t, &err), 0);
    char *s = kcs_otree_str(&t);
    CU_ASSERT_STRING_EQUAL(s, text);
    free(s);
    kcs_otree_free(&t);
}

static void test_text(void)
{
    check_roundtrip("(((0,1),2),3)");
    check_roundtrip("((0,1),(2,3))");
    check_roundtrip("((0,1,2,3),4,5,6,7)");
    check_roundtrip("0");
    /* children are put in order of their smallest leaf */
    kcs_otree t;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_otree_parse(" (3, (2,(1 ,0)))", &t, &err), 0);
    char *s = kcs_otree_str(&t);
    CU_ASSERT_STRING_EQUAL(s, "(((0,1),2),3)");
    free(s);
    CU_ASSERT_EQUAL(kcs_otree_max_fanin(&t), 2);
    int parent[8], size[8];
    kcs_otree_index(&t, parent, size);
    CU_ASSERT_EQUAL(kcs_otree_lca_size(parent, size, 0, 1), 2);
    CU_ASSERT_EQUAL(kcs_otree_lca_size(parent, size, 1, 2), 3);
    CU_ASSERT_EQUAL(kcs_otree_lca_size(parent, size, 3, 0), 4);
    CU_ASSERT_EQUAL(kcs_otree_lca_size(parent, size, 2, 2), 1);
    kcs_otree_free(&t);
}

static void check_bad(const char *text, const char *needle)
{
    kcs_otree t;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_otree_parse(text, &t, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle));
    if (!strstr(err.msg, needle))
        printf("  '%s': %s\n", text, err.msg);
}

static void test_bad_text(void)
{
    check_bad("((0,1),1)", "leaf 1 twice");
    check_bad("((0,2),3)", "leaf 1 missing");
    check_bad("((0,1)", "offset 6");
    check_bad("((0),1)", "one child");
    check_bad("(0,1) x", "text after the tree");
    check_bad("", "no leaves");
    check_bad("(0,,1)", "offset 3");
}

/* ---- black boxes ---------------------------------------------------------- */

typedef struct box {
    int *parent, *size;
    long asked;
} box;

static int box_measure(void *user, int i, int j, int *size_p, kcs_error *err)
{
    (void)err;
    box *b = user;
    b->asked++;
    *size_p = kcs_otree_lca_size(b->parent, b->size, i, j);
    return 0;
}

static uint64_t rng = 88172645463325252ull;
static int rnd(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

/* A random tree over a random permutation of 0..n-1: merge random groups
 * of 2 (or, with fused set, 2..5) of the current roots until one is left. */
static void random_tree(kcs_otree *t, int n, int fused)
{
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_otree_init(t, n, &err), 0);
    int *roots = malloc((size_t)n * sizeof *roots), nr = n;
    for (int i = 0; i < n; i++)
        roots[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = rnd(i + 1), x = roots[i];
        roots[i] = roots[j];
        roots[j] = x;
    }
    while (nr > 1) {
        int c = fused ? 2 + rnd(4) : 2, k[8];
        if (c > nr)
            c = nr;
        for (int a = 0; a < c; a++) { /* take c random roots */
            int p = rnd(nr);
            k[a] = roots[p];
            roots[p] = roots[--nr];
        }
        roots[nr++] = kcs_otree_node(t, k, c);
    }
    t->root = roots[0];
    free(roots);
}

static long recover_and_compare(const kcs_otree *truth, uint64_t seed, int verify)
{
    int *parent = malloc((size_t)truth->nodes * sizeof *parent);
    int *size = malloc((size_t)truth->nodes * sizeof *size);
    kcs_otree_index(truth, parent, size);
    box b = {parent, size, 0};
    kcs_otree got;
    kcs_error err = {0};
    long q = -1;
    int rc = kcs_otree_recover(truth->n, box_measure, &b, seed, verify, &got, &q, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
        printf("  recover: %s\n", err.msg);
    CU_ASSERT_EQUAL(q, b.asked);
    if (!rc) {
        char *want = kcs_otree_str(truth), *have = kcs_otree_str(&got);
        CU_ASSERT_STRING_EQUAL(have, want);
        free(want);
        free(have);
        kcs_otree_free(&got);
    }
    free(parent);
    free(size);
    return q;
}

static void test_recover_random(void)
{
    int sizes[] = {1, 2, 3, 4, 5, 7, 8, 16, 33, 100, 257};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int fused = 0; fused < 2; fused++)
            for (int rep = 0; rep < 6; rep++) {
                kcs_otree t;
                random_tree(&t, sizes[s], fused);
                recover_and_compare(&t, (uint64_t)rep + 1, rep % 2 ? 8 : 0);
                kcs_otree_free(&t);
            }
}

/* Chains in either direction and balanced trees: the question counts of
 * the header (about 2n for a chain, (n/2) log2 n for a balanced tree). */
static void test_recover_cost(void)
{
    int n = 2048;
    kcs_error err = {0};
    for (int dir = 0; dir < 2; dir++) {
        kcs_otree t;
        CU_ASSERT_EQUAL_FATAL(kcs_otree_init(&t, n, &err), 0);
        int cur = dir ? n - 1 : 0;
        for (int i = 1; i < n; i++) {
            int k[2] = {cur, dir ? n - 1 - i : i};
            cur = kcs_otree_node(&t, k, 2);
        }
        long q = recover_and_compare(&t, 7, 0);
        printf("  chain of %d (%s): %ld questions\n", n, dir ? "descending" : "ascending", q);
        CU_ASSERT(q <= 4L * n); /* n^2/2 = 2M for all pairs */
        kcs_otree_free(&t);
    }
    kcs_otree t;
    CU_ASSERT_EQUAL_FATAL(kcs_otree_init(&t, n, &err), 0);
    int *lvl = malloc((size_t)n * sizeof *lvl), m = n;
    for (int i = 0; i < n; i++)
        lvl[i] = i;
    while (m > 1) {
        for (int i = 0; i < m / 2; i++) {
            int k[2] = {lvl[2 * i], lvl[2 * i + 1]};
            lvl[i] = kcs_otree_node(&t, k, 2);
        }
        m /= 2;
    }
    free(lvl);
    long q = recover_and_compare(&t, 7, 0);
    printf("  balanced tree of %d: %ld questions\n", n, q);
    CU_ASSERT(q <= (long)n * 11 / 2 + n); /* (n/2) log2 n = 11264 */
    kcs_otree_free(&t);
}

/* Answers from no tree: always 2 (everything a cherry), or a tree's answer
 * that changes between questions. */
static int bad_const(void *user, int i, int j, int *size_p, kcs_error *err)
{
    (void)user, (void)i, (void)j, (void)err;
    *size_p = 2;
    return 0;
}

static int bad_flip(void *user, int i, int j, int *size_p, kcs_error *err)
{
    box *b = user;
    int L = kcs_otree_lca_size(b->parent, b->size, i, j);
    (void)err;
    *size_p = (b->asked++ % 2 && L > 2) ? L - 1 : L;
    return 0;
}

static int bad_range(void *user, int i, int j, int *size_p, kcs_error *err)
{
    (void)user, (void)i, (void)j, (void)err;
    *size_p = 1000;
    return 0;
}

static void test_recover_inconsistent(void)
{
    kcs_otree got, truth;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_otree_recover(8, bad_const, NULL, 1, 0, &got, NULL, &err), KCS_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no tree"));
    CU_ASSERT_EQUAL(kcs_otree_recover(8, bad_range, NULL, 1, 0, &got, NULL, &err), KCS_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "outside 2..8"));
    random_tree(&truth, 64, 0);
    int parent[128], size[128];
    kcs_otree_index(&truth, parent, size);
    box b = {parent, size, 0};
    CU_ASSERT_EQUAL(kcs_otree_recover(64, bad_flip, &b, 3, 32, &got, NULL, &err), KCS_E_DEVICE);
    kcs_otree_free(&truth);
}

static const ut_test tests[] = {
    {"text round trip", test_text},
    {"malformed text", test_bad_text},
    {"recover random trees", test_recover_random},
    {"recover cost", test_recover_cost},
    {"inconsistent answers", test_recover_inconsistent},
};

UT_MAIN("order_tree", tests)
