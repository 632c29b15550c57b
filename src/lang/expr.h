/* The small expression language of tolerances (eta) and signatures (when).
 * Grammar (precedence low -> high):
 *   expr  := or
 *   or    := and ( "||" and )*
 *   and   := cmp ( "&&" cmp )*
 *   cmp   := sum ( ("<"|"<="|">"|">="|"=="|"!=") sum )?
 *   sum   := prod ( ("+"|"-") prod )*
 *   prod  := unary ( ("*"|"/") unary )*
 *   unary := ("-"|"!") unary | power
 *   power := atom ( "^" unary )?
 *   atom  := NUMBER | NAME | NAME "(" args ")" | "(" expr ")"
 * Values are numbers or formats (a format-typed name such as dtype_acc, or a
 * format literal such as fp32). Functions: u(fmt) eps(fmt) bits(fmt) take a
 * format; sqrt log2 abs take one number; min max take two or more. Booleans
 * are numbers (0/1). Unknown names, wrong arity and type errors are parse
 * errors with a 1-based column. Nothing else can be executed. */
#ifndef KCS_EXPR_H
#define KCS_EXPR_H

#include "error.h"
#include "format.h"

typedef enum kcs_expr_type { KCS_EXPR_NUMBER = 0, KCS_EXPR_FORMAT } kcs_expr_type;

typedef struct kcs_expr_sym {
    const char *name;
    kcs_expr_type type;
} kcs_expr_sym;

/* A symbol table: the names an expression may use; values are passed at
 * evaluation time in the same order (formats as (double)kcs_format). */
typedef struct kcs_expr_symtab {
    const kcs_expr_sym *syms;
    int n;
} kcs_expr_symtab;

typedef struct kcs_expr kcs_expr;

/* Parse text. On error returns KCS_E_INVAL and err->msg is
 * "col N: message"; *col_p (if not NULL) receives N (1-based). */
int kcs_expr_parse(const char *text, const kcs_expr_symtab *tab, kcs_expr **e_p, int *col_p,
                   kcs_error *err);
/* The result type of a parsed expression. */
kcs_expr_type kcs_expr_result_type(const kcs_expr *e);
/* Evaluate with values[i] bound to tab->syms[i]. */
double kcs_expr_eval(const kcs_expr *e, const double *values);
/* Whether the expression references symbol index i. */
int kcs_expr_uses(const kcs_expr *e, int sym_index);
void kcs_expr_free(kcs_expr *e);

#endif
