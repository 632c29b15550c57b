/* Names of summation trees (src/base/order_describe.h): the trees the CPU
 * schedules and the emulated profiles prescribe (src/run/order_expect.c,
 * built from acc.c and the profile table, not from the names) get the name
 * of their schedule; ring segments and drawn orders get their order; a
 * tree of no known shape is cut and carries its length and hash; the
 * difference of two trees names both, and the first differing character
 * when the names read alike. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"
#include "order_describe.h"
#include "order_expect.h"
#include "unit_helpers.h"

static char *sched_text(kcs_schedule_kind kind, int64_t param, int n, uint64_t seed)
{
    kcs_schedule s = {kind, param};
    kcs_otree t;
    kcs_error err = {0};
    if (kcs_order_expect_schedule(&s, n, seed, &t, &err))
        return NULL;
    char *x = kcs_otree_str(&t);
    kcs_otree_free(&t);
    return x;
}

static void check_name(const char *text, const char *want)
{
    char *got = kcs_otree_describe_text(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    if (strcmp(got, want) != 0)
        printf("\n  %.60s: '%s', want '%s'\n", text, got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static void check_sched(kcs_schedule_kind kind, int64_t param, int n, const char *want)
{
    char *t = sched_text(kind, param, n, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    check_name(t, want);
    free(t);
}

static void test_schedules(void)
{
    int ns[] = {8, 64, 4096};
    for (int i = 0; i < 3; i++) {
        int n = ns[i];
        char want[64];
        check_sched(KCS_SCHED_SEQUENTIAL, 0, n, "sequential");
        check_sched(KCS_SCHED_PAIRWISE, 0, n, "pairwise");
        /* blocked:3 at n = 8: blocks 3, 3, 2, which splitk:3 also gives */
        check_sched(KCS_SCHED_BLOCKED, 3, n,
                    n == 8 ? "blocked:3 = splitk:3" : n == 64 ? "blocked:3" : "blocked:3");
        /* splitk:4: blocks of n / 4 (at n = 8 blocks of 2: more parts than
         * terms per part, named blocked only) */
        if (n == 8)
            snprintf(want, sizeof want, "blocked:2");
        else
            snprintf(want, sizeof want, "blocked:%d = splitk:4", n / 4);
        check_sched(KCS_SCHED_SPLITK, 4, n, want);
        /* splitk:3 at 64: blocks 22, 22, 20 */
        if (n == 64)
            check_sched(KCS_SCHED_SPLITK, 3, n, "blocked:22 = splitk:3");
    }
    check_sched(KCS_SCHED_BLOCKED, 64, 4096, "blocked:64 = splitk:64");
    check_sched(KCS_SCHED_BLOCKED, 100, 4096, "blocked:100 = splitk:41");
    check_sched(KCS_SCHED_BLOCKED, 1000, 4096, "blocked:1000"); /* no splitk gives 1000s */
    /* small n where two schedules give one tree: the tree's one name */
    check_sched(KCS_SCHED_PAIRWISE, 0, 2, "sequential");
    check_sched(KCS_SCHED_BLOCKED, 2, 4, "pairwise");
    check_name("0", "one term");
}

/* The atomic schedule's drawn order, as kcs_atomic_order draws it. */
static void test_drawn_orders(void)
{
    uint32_t perm[64];
    kcs_atomic_order(7, 64, perm);
    char *t = sched_text(KCS_SCHED_ATOMIC, 0, 64, 7);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char *got = kcs_otree_describe_text(t);
    /* the first two terms are one addition (a + b = b + a): either way */
    char head[64];
    int a = (int)perm[0], b = (int)perm[1];
    snprintf(head, sizeof head, "sequential in the order (%d,%d,%d,%d,", a < b ? a : b,
             a < b ? b : a, (int)perm[2], (int)perm[3]);
    CU_ASSERT_PTR_NOT_NULL(strstr(got, head));
    CU_ASSERT_PTR_NOT_NULL(strstr(got, ",…) (hash "));
    if (!strstr(got, head))
        printf("\n  '%s' lacks '%s'\n", got, head);
    free(got);
    /* two draws: two orders, and the difference names both */
    char *u = sched_text(KCS_SCHED_ATOMIC, 0, 64, 8);
    char *d = kcs_otree_describe_diff(t, u);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, " vs sequential in the order ("));
    free(d);
    d = kcs_otree_describe_diff(t, t);
    CU_ASSERT_STRING_EQUAL(d, "the same tree");
    free(d);
    free(t);
    free(u);
}

/* A ring reduce-scatter over 4 ranks: segment s is summed from rank s+1
 * around to rank s (src/run/allreduce.h): ((x1 + x2) + x3) + x0 for
 * segment 0, written here by hand. */
static void test_ring(void)
{
    check_name("(0,((1,2),3))", "ring order (1,2,3,0)");
    check_name("(((0,1),2),3)", "sequential");
    check_name("((0,(2,3)),1)", "ring order (2,3,0,1)");
    check_name("((0,1),(2,3))", "pairwise");
    /* a chain in another order: not a ring */
    check_name("(((0,2),1),3)", "sequential in the order (0,2,1,3)");
    /* three terms: (0,(1,2)) is both the pairwise tree and a ring segment */
    check_name("(0,(1,2))", "pairwise = ring order (1,2,0)");
}

/* Emulated matrix units (profiles): block FMAs of F products with the
 * accumulator carried, and pairwise blocks. */
static void test_profiles(void)
{
    const kcs_profile_params *rows;
    int nrows = 0;
    CU_ASSERT_EQUAL_FATAL(kcs_profile_table(&rows, &nrows), 0);
    int seen_global = 0, seen_pair = 0;
    for (int i = 0; i < nrows; i++) {
        const kcs_profile_params *p = &rows[i];
        int ns[] = {8, 64, 4096};
        for (int a = 0; a < 3; a++) {
            kcs_otree t;
            kcs_error err = {0};
            CU_ASSERT_EQUAL_FATAL(kcs_order_expect_profile(p, ns[a], &t, &err), 0);
            char *name = kcs_otree_describe(&t);
            char want[64];
            int n = ns[a], F = p->F;
            if (p->step == KCS_STEP_PAIRWISE) {
                /* blocks of F products summed pairwise, chained: one block
                 * (F >= n) or two of a power of two (n = 2F) are the
                 * pairwise tree of n itself */
                if (F >= n || n == 2 * F)
                    snprintf(want, sizeof want, "pairwise");
                else if (F == 1)
                    snprintf(want, sizeof want, "sequential");
                else if (F == 2) /* pairs, added in order: no splitk of more
                                  * parts than terms per part */
                    snprintf(want, sizeof want, "blocked:2");
                else
                    snprintf(want, sizeof want, "blocked:%d, pairwise inside", F);
                seen_pair++;
            } else {
                if (F >= n)
                    snprintf(want, sizeof want, "one fused node of %d terms", n);
                else if (F == 1)
                    snprintf(want, sizeof want, "sequential");
                else
                    snprintf(want, sizeof want, "fused:%d", F);
                seen_global++;
            }
            if (strcmp(name, want) != 0)
                printf("\n  %s %s n %d: '%s', want '%s'\n", p->profile,
                       kcs_format_name(p->in), n, name, want);
            CU_ASSERT_STRING_EQUAL(name, want);
            free(name);
            kcs_otree_free(&t);
        }
    }
    CU_ASSERT(seen_global > 0);
    CU_ASSERT(seen_pair > 0);
}

/* No known shape: the tree cut, its length and hash; two such trees that
 * are cut alike are told apart by the hash and the first differing
 * character. OpenBLAS sgemm's even/odd accumulators at k = 8 and a longer
 * variant of them. */
static void test_unknown(void)
{
    const char *even_odd = "(((((0,2),4),6),(((1,3),5),7)))";
    /* not parseable as written (a node of one child): printed as is */
    char *got = kcs_otree_describe_text(even_odd);
    CU_ASSERT_STRING_EQUAL(got, "tree (((((0,2),4),6),(((1,3),5),7)))");
    free(got);
    check_name("((((0,2),4),6),(((1,3),5),7))", "tree ((((0,2),4),6),(((1,3),5),7))");
    /* two long unknown trees that share their first 40 characters */
    char a[4096], b[4096];
    int n = 60;
    /* ((((0,2),4),...),(((1,3),...)) over 0..n-1 */
    for (int pass = 0; pass < 2; pass++) {
        char *w = pass ? b : a;
        w += sprintf(w, "(");
        for (int par = 0; par < 2; par++) {
            int first = par, cnt = n / 2;
            for (int i = 1; i < cnt; i++)
                w += sprintf(w, "(");
            w += sprintf(w, "%d", first);
            for (int i = 1; i < cnt; i++)
                w += sprintf(w, ",%d)", first + 2 * i);
            if (!par)
                w += sprintf(w, ",");
        }
        sprintf(w, ")");
    }
    /* b: swap the last two odd leaves' positions in the chain */
    char *s57 = strstr(b, ",57)"), *s59 = strstr(b, ",59)");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s57);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s59);
    s57[2] = '9';
    s59[2] = '7';
    char *na = kcs_otree_describe_text(a), *nb = kcs_otree_describe_text(b);
    CU_ASSERT_PTR_NOT_NULL(strstr(na, "characters, hash "));
    CU_ASSERT_EQUAL(strncmp(na, "tree ", 5), 0);
    CU_ASSERT_STRING_NOT_EQUAL(na, nb); /* the hashes differ */
    char *d = kcs_otree_describe_diff(a, b);
    char want[64];
    snprintf(want, sizeof want, "first differ at character %ld", (long)(s57 + 2 - b));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, want));
    if (!strstr(d, want))
        printf("\n  '%s' lacks '%s'\n", d, want);
    free(na);
    free(nb);
    free(d);
}

static const ut_test tests[] = {
    {"schedules", test_schedules},
    {"drawn orders", test_drawn_orders},
    {"ring segments", test_ring},
    {"profiles", test_profiles},
    {"unknown trees", test_unknown},
};

int main(void)
{
    return ut_run("order_describe", tests);
}
