/* Names for summation trees (order_tree.h): what the reducer and the
 * violation messages print instead of a tree of thousands of characters.
 *
 * kcs_otree_describe names a tree when its shape is a known one:
 *   "one term", "sequential"            ((0,1),2),3 ...
 *   "ring order (s,s+1,…,s-1)"          a chain over the leaves in a cyclic
 *                                       rotation of index order (a ring
 *                                       reduce-scatter's segment)
 *   "sequential in the order (…)"       a chain in any other order (an
 *                                       atomic or arrival order)
 *   "pairwise"                          every node halves a contiguous
 *                                       range (sizes differ by at most 1)
 *   "blocked:B" / "blocked:B = splitk:S" sequential blocks of B contiguous
 *                                       terms (the last may be shorter),
 *                                       blocks added in order; splitk:S
 *                                       when S <= B parts of ceil(n/S) give
 *                                       the same blocks
 *   "blocked:B, pairwise inside"        blocks summed pairwise
 *   "fused:F"                           block FMAs of F terms, the
 *                                       accumulator carried into each
 *                                       next block (a node of F + 1
 *                                       children)
 * and otherwise prints the tree cut to KCS_OTREE_SHOWN characters with its
 * length and hash ("tree ((((0,32),…  (8191 characters, hash 1a2b3c4d)").
 * Long orders are cut likewise. */
#ifndef KCS_ORDER_DESCRIBE_H
#define KCS_ORDER_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "order_tree.h"

#define KCS_OTREE_SHOWN 40

/* The name of t (malloc'd; NULL when out of memory). */
char *kcs_otree_describe(const kcs_otree *t);
/* The same from the canonical text; text that does not parse is printed
 * cut, as an unknown tree. */
char *kcs_otree_describe_text(const char *text);
/* How tree a differs from tree b, for a message: "NAME_A vs NAME_B", with,
 * when the names are equal or both cut (carry a hash), the first differing
 * character of the texts. "the same tree" when equal. malloc'd. */
char *kcs_otree_describe_diff(const char *a, const char *b);
/* FNV-1a of the text (the hash the names print, 8 hex digits). */
uint32_t kcs_otree_hash(const char *text);

#endif
