/* Summation trees: the order in which a reduction of n summands was
 * evaluated, as recovered by `kcs probe --order` (FPRev, Xie et al., USENIX
 * ATC 2025) or as a schedule prescribes it (src/run/order_expect.h).
 *
 * A tree has leaves 0..n-1 (the summation indices) and internal nodes with
 * two or more children; a node with more than two children is a fused
 * multi-term addition (a matrix unit's block FMA). Addition is commutative,
 * so the children of a node are unordered: the canonical text sorts them
 * by their smallest leaf. A sequential sum of 4 is "(((0,1),2),3)"; a
 * block-FMA of 4 products followed by another is "((0,1,2,3),4,5,6,7)".
 *
 * kcs_otree_recover rebuilds a tree from a black box that answers, for two
 * leaves i != j, the number of leaves of the smallest subtree holding both
 * (the count of summands that the pair +big, -big swamps, plus 2). It uses
 * divide-by-groups (one pivot against the rest of a subtree, the answers
 * grouping the others by the ancestor where they join it, each group then
 * split and rebuilt the same way), not all n(n-1)/2 pairs: a sequential or
 * random-order sum costs about 2n questions, a balanced tree about
 * (n/2) log2 n. Answers that no tree explains are an error, never a guess. */
#ifndef KCS_ORDER_TREE_H
#define KCS_ORDER_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct kcs_otree {
    int n;      /* leaves 0..n-1 */
    int nodes;  /* used nodes: leaves first (node i is leaf i), then internal */
    int cap;    /* node capacity (2n) */
    int root;   /* node index of the root (-1: empty) */
    int *kid0;  /* first child's index in kids[] (internal nodes) */
    int *nkid;  /* number of children (0 for leaves) */
    int *kids;  /* child node indices */
    int nkids;  /* used entries of kids */
} kcs_otree;

/* An empty tree of n >= 1 leaves (nodes 0..n-1 are the leaves). */
int kcs_otree_init(kcs_otree *t, int n, kcs_error *err);
void kcs_otree_free(kcs_otree *t);
/* Add an internal node over c >= 2 existing nodes; its index, or -1 when
 * full (the caller sized the tree: at most n - 1 internal nodes). */
int kcs_otree_node(kcs_otree *t, const int *kids, int c);

/* Canonical text (children sorted by smallest leaf); malloc'd, or NULL
 * when out of memory. */
char *kcs_otree_str(const kcs_otree *t);
/* Parse the text form ("(((0,1),2),3)"; a lone "0" is a 1-leaf tree):
 * every leaf 0..n-1 exactly once, nodes of >= 2 children. Errors name the
 * character offset. */
int kcs_otree_parse(const char *text, kcs_otree *t, kcs_error *err);
/* Number of leaves under the smallest subtree holding leaves i and j
 * (i == j: 1). parent/size: scratch of t->nodes ints each, filled by
 * kcs_otree_index. */
int kcs_otree_index(const kcs_otree *t, int *parent, int *size);
int kcs_otree_lca_size(const int *parent, const int *size, int i, int j);
/* Largest number of children of any node (2: a binary tree). */
int kcs_otree_max_fanin(const kcs_otree *t);

/* The black box: *size_p = leaves of the smallest subtree holding leaves i
 * and j (2..n). Returns 0 or a KCS_E_* code (err filled). */
typedef int (*kcs_otree_measure_fn)(void *user, int i, int j, int *size_p, kcs_error *err);

/* Rebuild the tree of n leaves from the black box; pivots are drawn from
 * seed. verify > 0: afterwards ask that many random pairs again and check
 * the tree explains them. KCS_E_DEVICE when the answers fit no tree (the
 * message says which). *questions_p: how many times measure was called. */
int kcs_otree_recover(int n, kcs_otree_measure_fn measure, void *user, uint64_t seed,
                      int verify, kcs_otree *t, long *questions_p, kcs_error *err);

#endif
