/* Private to the contract loader (contract.c, contract_measure.c,
 * contract_tolerance.c; helpers in contract_parse.c): the
 * loading state and the helpers both halves use. Not part of the API. */
#ifndef KCS_CONTRACT_LOAD_H
#define KCS_CONTRACT_LOAD_H

#include "contract.h"
#include "yamlx.h"

typedef struct kcs_contract_loader {
    kcs_yctx *y;
    kcs_contract *c;
    const kcs_expr_symtab *tab;
    bool shapes_ok, pre_ok; /* parts the cross-checks depend on parsed cleanly */
    bool tol_ok;            /* the tolerance parsed cleanly */
    struct fy_node *mag_node; /* oracle.magnitude, where given */
} loader;

/* Record an error at an explicit position (same format and cap as
 * kcs_yaml_error). */
void kcs_contract_error_at(kcs_yctx *y, int line, int col, const char *field, const char *fmt,
                           ...) __attribute__((format(printf, 5, 6)));
/* File position of column ecol (1-based) of the expression in scalar n. */
void kcs_contract_expr_pos(kcs_yctx *y, struct fy_node *n, const char *text, int ecol,
                           int *line_p, int *col_p);
/* Parse the number-typed expression in scalar n (text kept in *text_p). */
bool kcs_contract_expr(loader *L, struct fy_node *n, const char *field, kcs_expr **e_p,
                       char **text_p);
/* Index of the keyword among names[0..count), or -1 (recorded). */
int kcs_contract_keyword(loader *L, struct fy_node *n, const char *field,
                         const char *const *names, int count);
/* Child mapping of map with only the allowed keys, or NULL (recorded). */
struct fy_node *kcs_contract_section(loader *L, struct fy_node *map, const char *key,
                                     bool required, const char *parent,
                                     const char *const *allowed);
/* Items of a list field (a sequence, or one scalar standing for a list of
 * one) into items[0..max): the count, or -1 (recorded). */
int kcs_contract_list_items(loader *L, struct fy_node *n, const char *field,
                            struct fy_node **items, int max);
/* A name through a kcs_*_parse function (what: "format", "op", ...). */
bool kcs_contract_parse_name(loader *L, struct fy_node *n, const char *field, const char *what,
                             int (*parse)(const char *, void *), void *out);
/* The measured shapes: measurement.shapes then measurement.held_out, with
 * the node and field name of shape i (i < c->n_shapes + c->n_held_out). */
const kcs_shape *kcs_contract_measured_shape(loader *L, struct fy_node *root, int i,
                                             struct fy_node **node_p, char *field, size_t len);
/* check(L, shape, its node, its field path) for every measured shape,
 * held-out ones too, once the shapes and the precondition have loaded. */
typedef void (*kcs_shape_check_fn)(loader *L, const kcs_shape *s, struct fy_node *n,
                                   const char *field);
void kcs_contract_check_measured_shapes(loader *L, struct fy_node *root, kcs_shape_check_fn check);

/* A [lo, hi] integer range, 1 <= lo <= hi (contract_parse.c). */
bool kcs_contract_load_range(loader *L, struct fy_node *n, const char *field, int64_t *lo_p,
                             int64_t *hi_p);

/* contract_per_op.c: precondition.per_op (after the contract-wide
 * precondition), and the measured shapes against it */
void kcs_contract_load_per_op(loader *L, struct fy_node *precondition);
void kcs_contract_check_per_op(loader *L, struct fy_node *root);

/* contract_tolerance.c */
void kcs_contract_load_tolerance(loader *L, struct fy_node *root);
void kcs_contract_check_eta(loader *L, struct fy_node *root);
void kcs_contract_free_tolerance(kcs_contract *c);

/* contract_shape_class.c: precondition.shape.multiple_of (after the
 * ranges), and the measured shapes against it */
void kcs_contract_load_shape_class(loader *L, struct fy_node *shape);
void kcs_contract_check_shape_class(loader *L, const kcs_shape *s, struct fy_node *n, const char *f);

/* contract_measure.c */
void kcs_contract_load_measurement(loader *L, struct fy_node *root);
void kcs_contract_check_measurement(loader *L, struct fy_node *root);

#endif
