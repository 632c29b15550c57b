/* The expression language of eta and `when` (grammar in expr.h).
 *
 * The parser is recursive descent and compiles straight to postfix code;
 * types are checked while parsing, so a parsed expression cannot fail at
 * evaluation time (it yields IEEE results: x/0 = inf, log2(-1) = NaN).
 *
 * Semantics:
 * - Booleans are numbers: comparisons, && || ! give 0 or 1; a value is true
 *   when it is neither 0 nor NaN. && and || evaluate both sides (there are
 *   no side effects).
 * - Formats compare with == and != only; u(f) = 2^-p, eps(f) = 2^(1-p),
 *   bits(f) = p (significand precision incl. the implicit bit) of format f.
 *   A format value v < 0 stands for a "bits:N" accumulator with N = -v
 *   (N-bit significand): u = 2^-N, eps = 2^(1-N), bits = N. A value that is
 *   neither gives NaN.
 * - Limits: KCS_EXPR_MAX_LEN characters, KCS_EXPR_MAX_DEPTH nested
 *   operators/parentheses, KCS_EXPR_MAX_ARGS arguments of min/max. */
#include "expr.h"
#include "grow.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KCS_EXPR_MAX_LEN 4096
#define KCS_EXPR_MAX_DEPTH 200
#define KCS_EXPR_MAX_ARGS 32
#define KCS_EXPR_NUM_MAX 64 /* longest number token */

typedef enum op {
    OP_NUM, OP_SYM, OP_NEG, OP_NOT, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR,
    OP_U, OP_EPS, OP_BITS, OP_SQRT, OP_LOG2, OP_ABS, OP_MIN, OP_MAX,
} op;

typedef struct ins {
    op op;
    int arg;    /* OP_SYM: symbol index; OP_MIN/OP_MAX: argument count */
    double num; /* OP_NUM */
} ins;

struct kcs_expr {
    kcs_expr_type type;
    int n;
    int max_stack;
    ins code[];
};

/* ---- lexer -------------------------------------------------------------- */

typedef enum tok_kind {
    T_END, T_NUM, T_NAME, T_LP, T_RP, T_COMMA, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_CARET,
    T_LT, T_LE, T_GT, T_GE, T_EQ, T_NE, T_AND, T_OR, T_NOT,
} tok_kind;

typedef struct tok {
    tok_kind kind;
    int pos; /* 0-based offset */
    int len;
    double num;
} tok;

typedef struct parser {
    const char *s;
    int len;
    tok t; /* current token */
    const kcs_expr_symtab *tab;
    ins *code;
    int n, cap;
    int sp, max_sp;
    int depth;
    int err_col; /* 1-based; 0 = no error */
    char err_msg[160];
} parser;

static bool failf(parser *p, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool failf(parser *p, int pos, const char *fmt, ...)
{
    if (p->err_col)
        return false;
    p->err_col = pos + 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err_msg, sizeof p->err_msg, fmt, ap);
    va_end(ap);
    return false;
}

static bool is_name_start(int c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool is_name_char(int c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static bool lex(parser *p)
{
    int i = p->t.pos + p->t.len;
    while (i < p->len && (p->s[i] == ' ' || p->s[i] == '\t' || p->s[i] == '\n' || p->s[i] == '\r'))
        i++;
    tok t = {.kind = T_END, .pos = i, .len = 0};
    if (i >= p->len) {
        p->t = t;
        return true;
    }
    const char *c = p->s + i;
    if (isdigit((unsigned char)c[0]) || (c[0] == '.' && isdigit((unsigned char)c[1]))) {
        int j = 0;
        while (isdigit((unsigned char)c[j]))
            j++;
        if (c[j] == '.') {
            j++;
            while (isdigit((unsigned char)c[j]))
                j++;
        }
        if (c[j] == 'e' || c[j] == 'E') {
            int e = j + 1;
            if (c[e] == '+' || c[e] == '-')
                e++;
            if (!isdigit((unsigned char)c[e]))
                return failf(p, i, "malformed number");
            while (isdigit((unsigned char)c[e]))
                e++;
            j = e;
        }
        if (is_name_char(c[j]) || c[j] == '.')
            return failf(p, i, "malformed number");
        if (j >= KCS_EXPR_NUM_MAX)
            return failf(p, i, "number too long");
        char buf[KCS_EXPR_NUM_MAX];
        memcpy(buf, c, (size_t)j);
        buf[j] = '\0';
        t.num = strtod(buf, NULL);
        if (!isfinite(t.num))
            return failf(p, i, "number out of range");
        t.kind = T_NUM;
        t.len = j;
        p->t = t;
        return true;
    }
    if (is_name_start(c[0])) {
        int j = 1;
        while (is_name_char(c[j]))
            j++;
        t.kind = T_NAME;
        t.len = j;
        p->t = t;
        return true;
    }
    static const struct { const char *s; tok_kind k; } ops[] = {
        {"<=", T_LE}, {">=", T_GE}, {"==", T_EQ}, {"!=", T_NE}, {"&&", T_AND}, {"||", T_OR},
        {"(", T_LP}, {")", T_RP}, {",", T_COMMA}, {"+", T_PLUS}, {"-", T_MINUS}, {"*", T_STAR},
        {"/", T_SLASH}, {"^", T_CARET}, {"<", T_LT}, {">", T_GT}, {"!", T_NOT},
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t l = strlen(ops[k].s);
        if ((int)l <= p->len - i && !strncmp(c, ops[k].s, l)) {
            t.kind = ops[k].k;
            t.len = (int)l;
            p->t = t;
            return true;
        }
    }
    if (c[0] == '=')
        return failf(p, i, "unexpected '=' (use '==' to compare)");
    if (c[0] == '&' || c[0] == '|')
        return failf(p, i, "unexpected '%c' (use '%c%c')", c[0], c[0], c[0]);
    if (isprint((unsigned char)c[0]))
        return failf(p, i, "unexpected character '%c'", c[0]);
    return failf(p, i, "unexpected byte 0x%02x", (unsigned char)c[0]);
}

/* ---- code emission ------------------------------------------------------ */

static bool emit(parser *p, op o, int arg, double num, int pops, int pushes)
{
    if (kcs_grow(&p->code, p->n, &p->cap, sizeof *p->code, 16))
        return failf(p, p->t.pos, "out of memory");
    p->code[p->n++] = (ins){o, arg, num};
    p->sp += pushes - pops;
    if (p->sp > p->max_sp)
        p->max_sp = p->sp;
    return true;
}

/* ---- parser ------------------------------------------------------------- */

typedef struct val {
    kcs_expr_type type;
    int pos; /* 0-based start of the operand, for messages */
} val;

static bool parse_or(parser *p, val *v);

static const char *type_name(kcs_expr_type t)
{
    return t == KCS_EXPR_FORMAT ? "a format" : "a number";
}

static const char *tok_text(const parser *p, char *buf, size_t len)
{
    if (p->t.kind == T_END)
        return "end of expression";
    snprintf(buf, len, "'%.*s'", p->t.len > 24 ? 24 : p->t.len, p->s + p->t.pos);
    return buf;
}

static bool want_number(parser *p, val v, const char *what)
{
    if (v.type != KCS_EXPR_NUMBER)
        return failf(p, v.pos, "%s needs a number, got a format", what);
    return true;
}

static bool enter(parser *p)
{
    if (++p->depth > KCS_EXPR_MAX_DEPTH)
        return failf(p, p->t.pos, "expression nested deeper than %d levels", KCS_EXPR_MAX_DEPTH);
    return true;
}

static const struct func {
    const char *name;
    op op;
    kcs_expr_type arg; /* type of every argument */
    int min_args, max_args;
} funcs[] = {
    {"u", OP_U, KCS_EXPR_FORMAT, 1, 1},       {"eps", OP_EPS, KCS_EXPR_FORMAT, 1, 1},
    {"bits", OP_BITS, KCS_EXPR_FORMAT, 1, 1}, {"sqrt", OP_SQRT, KCS_EXPR_NUMBER, 1, 1},
    {"log2", OP_LOG2, KCS_EXPR_NUMBER, 1, 1}, {"abs", OP_ABS, KCS_EXPR_NUMBER, 1, 1},
    {"min", OP_MIN, KCS_EXPR_NUMBER, 2, KCS_EXPR_MAX_ARGS},
    {"max", OP_MAX, KCS_EXPR_NUMBER, 2, KCS_EXPR_MAX_ARGS},
};

static bool parse_call(parser *p, const struct func *f, int name_pos, val *v)
{
    if (!lex(p)) /* consume "(" */
        return false;
    int nargs = 0;
    if (p->t.kind != T_RP) {
        for (;;) {
            val a = {KCS_EXPR_NUMBER, 0};
            if (!parse_or(p, &a))
                return false;
            nargs++;
            if (nargs > f->max_args)
                return failf(p, a.pos, "%s() takes %s%d argument%s", f->name,
                             f->min_args == f->max_args ? "" : "at most ", f->max_args,
                             f->max_args == 1 ? "" : "s");
            if (a.type != f->arg)
                return failf(p, a.pos, "%s() needs %s, got %s", f->name, type_name(f->arg),
                             type_name(a.type));
            if (p->t.kind != T_COMMA)
                break;
            if (!lex(p))
                return false;
        }
    }
    if (p->t.kind != T_RP) {
        char b[40];
        return failf(p, p->t.pos, "expected ',' or ')' in call of %s(), got %s", f->name,
                     tok_text(p, b, sizeof b));
    }
    if (nargs < f->min_args)
        return failf(p, p->t.pos, "%s() takes %s%d argument%s, got %d", f->name,
                     f->min_args == f->max_args ? "" : "at least ", f->min_args,
                     f->min_args == 1 ? "" : "s", nargs);
    if (!lex(p))
        return false;
    if (!emit(p, f->op, nargs, 0, nargs, 1))
        return false;
    *v = (val){KCS_EXPR_NUMBER, name_pos};
    return true;
}

static bool parse_atom(parser *p, val *v)
{
    tok t = p->t;
    char b[40];
    switch (t.kind) {
    case T_NUM:
        if (!emit(p, OP_NUM, 0, t.num, 0, 1))
            return false;
        *v = (val){KCS_EXPR_NUMBER, t.pos};
        return lex(p);
    case T_LP: {
        if (!lex(p))
            return false;
        val in = {KCS_EXPR_NUMBER, 0};
        if (!parse_or(p, &in))
            return false;
        if (p->t.kind != T_RP)
            return failf(p, p->t.pos, "expected ')' to close '(' at column %d, got %s",
                         t.pos + 1, tok_text(p, b, sizeof b));
        *v = (val){in.type, t.pos};
        return lex(p);
    }
    case T_NAME: {
        if (!lex(p))
            return false;
        if (p->t.kind == T_LP) {
            for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
                if ((int)strlen(funcs[i].name) == t.len &&
                    !strncmp(funcs[i].name, p->s + t.pos, (size_t)t.len))
                    return parse_call(p, &funcs[i], t.pos, v);
            return failf(p, t.pos, "unknown function '%.*s'", t.len > 40 ? 40 : t.len,
                         p->s + t.pos);
        }
        for (int i = 0; p->tab && i < p->tab->n; i++) {
            const char *nm = p->tab->syms[i].name;
            if (nm && (int)strlen(nm) == t.len && !strncmp(nm, p->s + t.pos, (size_t)t.len)) {
                if (!emit(p, OP_SYM, i, 0, 0, 1))
                    return false;
                *v = (val){p->tab->syms[i].type, t.pos};
                return true;
            }
        }
        for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
            if ((int)strlen(funcs[i].name) == t.len &&
                !strncmp(funcs[i].name, p->s + t.pos, (size_t)t.len))
                return failf(p, t.pos, "function '%s' needs arguments: %s(...)", funcs[i].name,
                             funcs[i].name);
        return failf(p, t.pos, "unknown name '%.*s'", t.len > 40 ? 40 : t.len, p->s + t.pos);
    }
    default:
        return failf(p, t.pos, "expected a number, a name or '(', got %s",
                     tok_text(p, b, sizeof b));
    }
}

static bool parse_unary(parser *p, val *v);

static bool parse_power(parser *p, val *v)
{
    val a = {KCS_EXPR_NUMBER, 0};
    if (!parse_atom(p, &a))
        return false;
    if (p->t.kind == T_CARET) {
        if (!want_number(p, a, "'^'"))
            return false;
        if (!lex(p))
            return false;
        val b = {KCS_EXPR_NUMBER, 0};
        if (!parse_unary(p, &b) || !want_number(p, b, "'^'"))
            return false;
        if (!emit(p, OP_POW, 0, 0, 2, 1))
            return false;
        a.type = KCS_EXPR_NUMBER;
    }
    *v = a;
    return true;
}

static bool parse_unary(parser *p, val *v)
{
    if (!enter(p))
        return false;
    bool ok;
    if (p->t.kind == T_MINUS || p->t.kind == T_NOT) {
        tok t = p->t;
        val a = {KCS_EXPR_NUMBER, 0};
        ok = lex(p) && parse_unary(p, &a) && want_number(p, a, t.kind == T_MINUS ? "'-'" : "'!'") &&
             emit(p, t.kind == T_MINUS ? OP_NEG : OP_NOT, 0, 0, 1, 1);
        if (ok)
            *v = (val){KCS_EXPR_NUMBER, t.pos};
    } else {
        ok = parse_power(p, v);
    }
    p->depth--;
    return ok;
}

static bool parse_prod(parser *p, val *v)
{
    val a = {KCS_EXPR_NUMBER, 0};
    if (!parse_unary(p, &a))
        return false;
    while (p->t.kind == T_STAR || p->t.kind == T_SLASH) {
        tok t = p->t;
        const char *w = t.kind == T_STAR ? "'*'" : "'/'";
        val b = {KCS_EXPR_NUMBER, 0};
        if (!want_number(p, a, w) || !lex(p) || !parse_unary(p, &b) || !want_number(p, b, w) ||
            !emit(p, t.kind == T_STAR ? OP_MUL : OP_DIV, 0, 0, 2, 1))
            return false;
    }
    *v = a;
    return true;
}

static bool parse_sum(parser *p, val *v)
{
    val a = {KCS_EXPR_NUMBER, 0};
    if (!parse_prod(p, &a))
        return false;
    while (p->t.kind == T_PLUS || p->t.kind == T_MINUS) {
        tok t = p->t;
        const char *w = t.kind == T_PLUS ? "'+'" : "'-'";
        val b = {KCS_EXPR_NUMBER, 0};
        if (!want_number(p, a, w) || !lex(p) || !parse_prod(p, &b) || !want_number(p, b, w) ||
            !emit(p, t.kind == T_PLUS ? OP_ADD : OP_SUB, 0, 0, 2, 1))
            return false;
    }
    *v = a;
    return true;
}

static bool is_cmp(tok_kind k)
{
    return k == T_LT || k == T_LE || k == T_GT || k == T_GE || k == T_EQ || k == T_NE;
}

static bool parse_cmp(parser *p, val *v)
{
    val a = {KCS_EXPR_NUMBER, 0};
    if (!parse_sum(p, &a))
        return false;
    if (is_cmp(p->t.kind)) {
        tok t = p->t;
        char w[8];
        snprintf(w, sizeof w, "'%.*s'", t.len, p->s + t.pos);
        bool eq = t.kind == T_EQ || t.kind == T_NE;
        val b = {KCS_EXPR_NUMBER, 0};
        if (!eq && !want_number(p, a, w))
            return false;
        if (!lex(p) || !parse_sum(p, &b))
            return false;
        if (!eq && !want_number(p, b, w))
            return false;
        if (eq && a.type != b.type)
            return failf(p, b.pos, "%s compares %s with %s", w, type_name(a.type),
                         type_name(b.type));
        static const op ops[] = {[T_LT] = OP_LT, [T_LE] = OP_LE, [T_GT] = OP_GT,
                                 [T_GE] = OP_GE, [T_EQ] = OP_EQ, [T_NE] = OP_NE};
        if (!emit(p, ops[t.kind], 0, 0, 2, 1))
            return false;
        if (is_cmp(p->t.kind))
            return failf(p, p->t.pos, "comparisons cannot be chained; use '&&'");
        a.type = KCS_EXPR_NUMBER;
    }
    *v = a;
    return true;
}

static bool parse_and(parser *p, val *v)
{
    val a = {KCS_EXPR_NUMBER, 0};
    if (!parse_cmp(p, &a))
        return false;
    while (p->t.kind == T_AND) {
        val b = {KCS_EXPR_NUMBER, 0};
        if (!want_number(p, a, "'&&'") || !lex(p) || !parse_cmp(p, &b) ||
            !want_number(p, b, "'&&'") || !emit(p, OP_AND, 0, 0, 2, 1))
            return false;
    }
    *v = a;
    return true;
}

static bool parse_or(parser *p, val *v)
{
    if (!enter(p))
        return false;
    val a = {KCS_EXPR_NUMBER, 0};
    bool ok = parse_and(p, &a);
    while (ok && p->t.kind == T_OR) {
        val b = {KCS_EXPR_NUMBER, 0};
        ok = want_number(p, a, "'||'") && lex(p) && parse_and(p, &b) &&
             want_number(p, b, "'||'") && emit(p, OP_OR, 0, 0, 2, 1);
    }
    p->depth--;
    if (ok)
        *v = a;
    return ok;
}

int kcs_expr_parse(const char *text, const kcs_expr_symtab *tab, kcs_expr **e_p, int *col_p,
                   kcs_error *err)
{
    if (!text)
        text = "";
    size_t len = strnlen(text, KCS_EXPR_MAX_LEN + 1);
    if (len > KCS_EXPR_MAX_LEN) {
        if (col_p)
            *col_p = KCS_EXPR_MAX_LEN + 1;
        return kcs_fail(err, KCS_E_INVAL, "col %d: expression longer than %d characters",
                        KCS_EXPR_MAX_LEN + 1, KCS_EXPR_MAX_LEN);
    }
    parser p = {.s = text, .len = (int)len, .tab = tab};
    val v = {KCS_EXPR_NUMBER, 0};
    bool ok = lex(&p);
    if (ok && p.t.kind == T_END)
        ok = failf(&p, p.t.pos, "empty expression");
    ok = ok && parse_or(&p, &v);
    if (ok && p.t.kind != T_END) {
        char b[40];
        ok = failf(&p, p.t.pos, "unexpected %s", tok_text(&p, b, sizeof b));
    }
    if (!ok) {
        free(p.code);
        if (col_p)
            *col_p = p.err_col;
        return kcs_fail(err, KCS_E_INVAL, "col %d: %s", p.err_col, p.err_msg);
    }
    kcs_expr *e = malloc(sizeof *e + (size_t)p.n * sizeof(ins));
    if (!e) {
        free(p.code);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory parsing an expression");
    }
    e->type = v.type;
    e->n = p.n;
    e->max_stack = p.max_sp;
    memcpy(e->code, p.code, (size_t)p.n * sizeof(ins));
    free(p.code);
    *e_p = e;
    return 0;
}

kcs_expr_type kcs_expr_result_type(const kcs_expr *e)
{
    return e->type;
}

/* ---- evaluation --------------------------------------------------------- */

static bool truthy(double x)
{
    return x != 0.0 && !isnan(x);
}

/* Significand precision of a format value, or 0 when it is none. */
static int format_prec(double v)
{
    if (isnan(v))
        return 0;
    if (v < 0) {
        if (v < -1024 || v != floor(v))
            return 0;
        return (int)-v; /* bits:N */
    }
    if (v >= KCS_FMT_COUNT || v != floor(v))
        return 0;
    const kcs_format_info *fi = kcs_format_get((kcs_format)(int)v);
    return fi ? fi->p : 0;
}

double kcs_expr_eval(const kcs_expr *e, const double *values)
{
    double local[64];
    double *st = local;
    if (e->max_stack > (int)(sizeof local / sizeof local[0])) {
        st = malloc((size_t)e->max_stack * sizeof *st);
        if (!st)
            return NAN;
    }
    int sp = 0;
    for (int i = 0; i < e->n; i++) {
        const ins *c = &e->code[i];
        double a, b;
        switch (c->op) {
        case OP_NUM: st[sp++] = c->num; break;
        case OP_SYM: st[sp++] = values ? values[c->arg] : NAN; break;
        case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
        case OP_NOT: st[sp - 1] = truthy(st[sp - 1]) ? 0.0 : 1.0; break;
        case OP_U:
        case OP_EPS:
        case OP_BITS: {
            int prec = format_prec(st[sp - 1]);
            if (!prec)
                st[sp - 1] = NAN;
            else if (c->op == OP_U)
                st[sp - 1] = ldexp(1.0, -prec);
            else if (c->op == OP_EPS)
                st[sp - 1] = ldexp(1.0, 1 - prec);
            else
                st[sp - 1] = prec;
            break;
        }
        case OP_SQRT: st[sp - 1] = sqrt(st[sp - 1]); break;
        case OP_LOG2: st[sp - 1] = log2(st[sp - 1]); break;
        case OP_ABS: st[sp - 1] = fabs(st[sp - 1]); break;
        case OP_MIN:
        case OP_MAX: {
            double r = st[sp - c->arg];
            for (int j = sp - c->arg + 1; j < sp; j++) {
                /* NaN wins: a NaN argument is a fault worth seeing */
                if (isnan(st[j]) || isnan(r))
                    r = NAN;
                else if (c->op == OP_MIN ? st[j] < r : st[j] > r)
                    r = st[j];
            }
            sp -= c->arg;
            st[sp++] = r;
            break;
        }
        default:
            b = st[--sp];
            a = st[sp - 1];
            switch (c->op) {
            case OP_ADD: a = a + b; break;
            case OP_SUB: a = a - b; break;
            case OP_MUL: a = a * b; break;
            case OP_DIV: a = a / b; break;
            case OP_POW: a = pow(a, b); break;
            case OP_LT: a = a < b; break;
            case OP_LE: a = a <= b; break;
            case OP_GT: a = a > b; break;
            case OP_GE: a = a >= b; break;
            case OP_EQ: a = a == b; break;
            case OP_NE: a = a != b; break;
            case OP_AND: a = truthy(a) && truthy(b); break;
            case OP_OR: a = truthy(a) || truthy(b); break;
            default: a = NAN; break;
            }
            st[sp - 1] = a;
            break;
        }
    }
    double r = sp == 1 ? st[0] : NAN;
    if (st != local)
        free(st);
    return r;
}

int kcs_expr_is_condition(const kcs_expr *e)
{
    if (e->n == 0)
        return 0;
    switch (e->code[e->n - 1].op) {
    case OP_NOT: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
    case OP_EQ: case OP_NE: case OP_AND: case OP_OR:
        return 1;
    default:
        return 0;
    }
}

int kcs_expr_uses(const kcs_expr *e, int sym_index)
{
    for (int i = 0; i < e->n; i++)
        if (e->code[i].op == OP_SYM && e->code[i].arg == sym_index)
            return 1;
    return 0;
}

void kcs_expr_free(kcs_expr *e)
{
    free(e);
}
