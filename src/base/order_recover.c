/* Rebuilding a summation tree from subtree-size answers (order_tree.h):
 * FPRev's divide-by-groups reconstruction (Xie et al., USENIX ATC 2025),
 * written for kcs.
 *
 * build_set(S): S is the leaf set of one node. Ask pivot p (drawn at
 * random from S) against every other j of S: L(p,j) is the size of the
 * ancestor of p where j joins. Sorted by L, the others fall into groups,
 * one per ancestor on the path from p up to S's node; the ancestor of size
 * L has as children the previous ancestor (or p) and the group's leaves,
 * which form one or more whole subtrees (more: a fused multi-term node).
 * split(G, L) separates them: a pivot q of G against the rest of G; those
 * with L(q,j) < L are q's child, whose tree build_pivot rebuilds from the
 * same answers. A random pivot makes a chain (sequential order, either
 * direction) cost about 2n questions instead of n^2/2. */
#include "order_tree.h"

#include <stdlib.h>
#include <string.h>

typedef struct rec {
    kcs_otree *t;
    kcs_otree_measure_fn measure;
    void *user;
    uint64_t rng;
    long questions, budget;
    int *L;    /* answers against the current pivot, by leaf */
    kcs_error *err;
} rec;

static uint64_t next_rand(rec *R)
{
    R->rng ^= R->rng << 13;
    R->rng ^= R->rng >> 7;
    R->rng ^= R->rng << 17;
    return R->rng;
}

static int ask(rec *R, int i, int j, int *L_p)
{
    if (R->questions >= R->budget)
        return kcs_fail(R->err, KCS_E_DEVICE, "order: %ld questions for %d leaves and no tree "
                        "yet (every pair joining at the top: units that are not counted?)",
                        R->questions, R->t->n);
    R->questions++;
    int rc = R->measure(R->user, i, j, L_p, R->err);
    if (rc)
        return rc;
    if (*L_p < 2 || *L_p > R->t->n)
        return kcs_fail(R->err, KCS_E_DEVICE, "order: leaves %d and %d: subtree of %d leaves "
                        "(outside 2..%d)", i, j, *L_p, R->t->n);
    return 0;
}

static int build_pivot(rec *R, int *S, int ns, int p, int *v_p);

/* S (ns leaves, a node's whole leaf set): its subtree's node in *v_p. */
static int build_set(rec *R, int *S, int ns, int *v_p)
{
    if (ns == 1) {
        *v_p = S[0];
        return 0;
    }
    int p = S[next_rand(R) % (uint64_t)ns];
    for (int a = 0; a < ns; a++) {
        int rc;
        if (S[a] != p && (rc = ask(R, p, S[a], &R->L[S[a]])))
            return rc;
    }
    return build_pivot(R, S, ns, p, v_p);
}

/* G (ng leaves): the children, other than the one on the pivot's side, of a
 * node of size Ln; their nodes are appended to kids[*nk]. */
static int split(rec *R, int *G, int ng, int Ln, int *kids, int *nk)
{
    while (ng > 0) {
        if (ng == 1) {
            kids[(*nk)++] = G[0];
            return 0;
        }
        int qa = (int)(next_rand(R) % (uint64_t)ng), q = G[qa];
        G[qa] = G[0];
        G[0] = q;
        /* partition: q's child first (answers < Ln), the rest after */
        int c = 1;
        for (int a = 1; a < ng; a++) {
            int j = G[a], rc;
            if ((rc = ask(R, q, j, &R->L[j])))
                return rc;
            if (R->L[j] > Ln)
                return kcs_fail(R->err, KCS_E_DEVICE, "order: leaves %d and %d join above the "
                                "node of %d leaves that holds both (answer %d): no tree fits",
                                q, j, Ln, R->L[j]);
            if (R->L[j] < Ln) {
                G[a] = G[c];
                G[c++] = j;
            }
        }
        int v, rc;
        if ((rc = build_pivot(R, G, c, q, &v)))
            return rc;
        kids[(*nk)++] = v;
        G += c;
        ng -= c;
    }
    return 0;
}

static int cmp_by_L(const void *a, const void *b, void *ctx)
{
    const int *L = ctx;
    int x = L[*(const int *)a], y = L[*(const int *)b];
    return (x > y) - (x < y);
}

/* A small merge sort with a context (qsort_r is not portable C17). */
static void sort_by_L(int *a, int n, int *tmp, const int *L)
{
    if (n < 2)
        return;
    int h = n / 2;
    sort_by_L(a, h, tmp, L);
    sort_by_L(a + h, n - h, tmp, L);
    int i = 0, j = h, o = 0;
    while (i < h && j < n)
        tmp[o++] = cmp_by_L(&a[j], &a[i], (void *)L) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[o++] = a[i++];
    while (j < n)
        tmp[o++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

/* S (ns leaves, a node's whole leaf set) with R->L[j] answered against p for
 * every other j of S. */
static int build_pivot(rec *R, int *S, int ns, int p, int *v_p)
{
    if (ns == 1) {
        *v_p = p;
        return 0;
    }
    /* move p out, sort the others by their answer */
    int pa = 0;
    while (S[pa] != p)
        pa++;
    S[pa] = S[0];
    S[0] = p;
    int *O = S + 1, no = ns - 1;
    int *tmp = malloc((size_t)no * sizeof *tmp), *kids = malloc((size_t)ns * sizeof *kids);
    if (!tmp || !kids) {
        free(tmp);
        free(kids);
        return kcs_fail(R->err, KCS_E_NOMEM, "order: out of memory");
    }
    sort_by_L(O, no, tmp, R->L);
    free(tmp);
    if (R->L[O[no - 1]] != ns) {
        int bad = R->L[O[no - 1]];
        free(kids);
        return kcs_fail(R->err, KCS_E_DEVICE, "order: a subtree of %d leaves holding %d: its "
                        "leaves join leaf %d at %d (no tree fits: an exact multi-term sum, which swamps "
                        "nothing, or summands too close to swamp)", ns, p, p, bad);
    }
    int cur = p, cursize = 1, rc = 0;
    for (int a = 0; a < no && !rc;) {
        int Lt = R->L[O[a]], b = a;
        while (b < no && R->L[O[b]] == Lt)
            b++;
        if (cursize + (b - a) != Lt) {
            rc = kcs_fail(R->err, KCS_E_DEVICE, "order: %d leaves join leaf %d in a subtree of "
                          "%d leaves, but %d were below it (the answers fit no tree: a "
                          "summation that is not a tree of rounded additions, e.g. an exact "
                          "multi-term sum, or summands too close to swamp)", b - a, p, Lt,
                          cursize);
            break;
        }
        /* the group's answers are overwritten by split: keep Lt */
        int nk = 0;
        kids[nk++] = cur;
        rc = split(R, O + a, b - a, Lt, kids, &nk);
        if (!rc) {
            cur = kcs_otree_node(R->t, kids, nk);
            if (cur < 0)
                rc = kcs_fail(R->err, KCS_E_INTERNAL, "order: tree full");
        }
        cursize = Lt;
        a = b;
    }
    free(kids);
    if (!rc)
        *v_p = cur;
    return rc;
}

int kcs_otree_recover(int n, kcs_otree_measure_fn measure, void *user, uint64_t seed,
                      int verify, kcs_otree *t, long *questions_p, kcs_error *err)
{
    int rc = kcs_otree_init(t, n, err);
    if (rc)
        return rc;
    rec R = {.t = t, .measure = measure, .user = user,
             .rng = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull,
             .L = calloc((size_t)n, sizeof(int)), .err = err};
    int *S = malloc((size_t)n * sizeof *S);
    if (!R.L || !S) {
        rc = kcs_fail(err, KCS_E_NOMEM, "order: out of memory (%d leaves)", n);
        goto out;
    }
    if (!R.rng)
        R.rng = 1;
    /* a chain costs ~2n, a balanced tree (n/2) log2 n, fused nodes of F
     * children F^2/2 each: 16 n (log2 n + 1) is far beyond any of them */
    R.budget = 16L * n;
    for (int x = n; x > 1; x >>= 1)
        R.budget += 16L * n;
    for (int i = 0; i < n; i++)
        S[i] = i;
    int root;
    if ((rc = build_set(&R, S, n, &root)))
        goto out;
    t->root = root;
    if (verify > 0 && n > 2) {
        int *parent = malloc((size_t)t->nodes * sizeof *parent);
        int *size = malloc((size_t)t->nodes * sizeof *size);
        if (!parent || !size) {
            free(parent);
            free(size);
            rc = kcs_fail(err, KCS_E_NOMEM, "order: out of memory");
            goto out;
        }
        kcs_otree_index(t, parent, size);
        for (int v = 0; v < verify && !rc; v++) {
            int i = (int)(next_rand(&R) % (uint64_t)n), j = (int)(next_rand(&R) % (uint64_t)n);
            if (i == j)
                j = (i + 1) % n;
            int L, want = kcs_otree_lca_size(parent, size, i, j);
            if (!(rc = ask(&R, i, j, &L)) && L != want)
                rc = kcs_fail(err, KCS_E_DEVICE, "order: check of leaves %d and %d: answer %d, "
                              "the recovered tree says %d (the summation is not one fixed tree)",
                              i, j, L, want);
        }
        free(parent);
        free(size);
    }
out:
    if (questions_p)
        *questions_p = R.questions;
    free(R.L);
    free(S);
    if (rc)
        kcs_otree_free(t);
    return rc;
}
