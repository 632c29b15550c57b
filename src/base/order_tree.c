/* Summation trees: storage, canonical text, parsing, subtree sizes
 * (order_tree.h). The recovery algorithm is order_recover.c. */
#include "order_tree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kcs_otree_init(kcs_otree *t, int n, kcs_error *err)
{
    memset(t, 0, sizeof *t);
    t->root = -1;
    if (n < 1)
        return kcs_fail(err, KCS_E_INVAL, "order tree: %d leaves (need >= 1)", n);
    t->n = n;
    t->cap = 2 * n;
    t->kid0 = calloc((size_t)t->cap, sizeof *t->kid0);
    t->nkid = calloc((size_t)t->cap, sizeof *t->nkid);
    t->kids = calloc((size_t)t->cap, sizeof *t->kids);
    if (!t->kid0 || !t->nkid || !t->kids) {
        kcs_otree_free(t);
        return kcs_fail(err, KCS_E_NOMEM, "order tree: out of memory (%d leaves)", n);
    }
    t->nodes = n;
    if (n == 1)
        t->root = 0;
    return 0;
}

void kcs_otree_free(kcs_otree *t)
{
    free(t->kid0);
    free(t->nkid);
    free(t->kids);
    memset(t, 0, sizeof *t);
    t->root = -1;
}

int kcs_otree_node(kcs_otree *t, const int *kids, int c)
{
    if (c < 2 || t->nodes >= t->cap || t->nkids + c > t->cap)
        return -1;
    int v = t->nodes++;
    t->kid0[v] = t->nkids;
    t->nkid[v] = c;
    memcpy(t->kids + t->nkids, kids, (size_t)c * sizeof *kids);
    t->nkids += c;
    t->root = v;
    return v;
}

/* ---- canonical text -------------------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *x, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, x, n);
    b->len += n;
    b->s[b->len] = '\0';
}

/* Smallest leaf under every node (post-order: children precede parents in
 * index order except for leaves, so one recursive pass). */
static int min_leaf(const kcs_otree *t, int v, int *mn)
{
    if (v < t->n)
        return mn[v] = v;
    int m = t->n;
    for (int c = 0; c < t->nkid[v]; c++) {
        int x = min_leaf(t, t->kids[t->kid0[v] + c], mn);
        if (x < m)
            m = x;
    }
    return mn[v] = m;
}

static void put_node(const kcs_otree *t, int v, const int *mn, int *tmp, sbuf *b)
{
    char num[16];
    if (v < t->n) {
        int l = snprintf(num, sizeof num, "%d", v);
        sb_put(b, num, (size_t)l);
        return;
    }
    int c = t->nkid[v], *k = tmp + t->kid0[v];
    memcpy(k, t->kids + t->kid0[v], (size_t)c * sizeof *k);
    for (int i = 1; i < c; i++) { /* insertion sort by smallest leaf */
        int x = k[i], j = i - 1;
        while (j >= 0 && mn[k[j]] > mn[x]) {
            k[j + 1] = k[j];
            j--;
        }
        k[j + 1] = x;
    }
    sb_put(b, "(", 1);
    for (int i = 0; i < c; i++) {
        if (i)
            sb_put(b, ",", 1);
        put_node(t, k[i], mn, tmp, b);
    }
    sb_put(b, ")", 1);
}

char *kcs_otree_str(const kcs_otree *t)
{
    if (t->root < 0)
        return NULL;
    int *mn = malloc((size_t)t->nodes * sizeof *mn);
    int *tmp = malloc((size_t)(t->nkids ? t->nkids : 1) * sizeof *tmp);
    sbuf b = {0};
    if (mn && tmp) {
        min_leaf(t, t->root, mn);
        put_node(t, t->root, mn, tmp, &b);
    } else {
        b.oom = 1;
    }
    free(mn);
    free(tmp);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- parsing ------------------------------------------------------------- */

typedef struct parser {
    const char *s, *p;
    kcs_otree *t;
    int *seen;
    int depth;
    kcs_error *err;
} parser;

static void skip_ws(parser *P)
{
    while (*P->p && isspace((unsigned char)*P->p))
        P->p++;
}

static int parse_node(parser *P, int *v_p)
{
    skip_ws(P);
    long off = (long)(P->p - P->s);
    if (isdigit((unsigned char)*P->p)) {
        char *end;
        long x = strtol(P->p, &end, 10);
        if (x < 0 || x >= P->t->n)
            return kcs_fail(P->err, KCS_E_INVAL, "order tree, offset %ld: leaf %ld outside 0..%d",
                            off, x, P->t->n - 1);
        if (P->seen[x]++)
            return kcs_fail(P->err, KCS_E_INVAL, "order tree, offset %ld: leaf %ld twice", off, x);
        P->p = end;
        *v_p = (int)x;
        return 0;
    }
    if (*P->p != '(')
        return kcs_fail(P->err, KCS_E_INVAL, "order tree, offset %ld: expected a leaf or '(', "
                        "found %s", off, *P->p ? "another character" : "the end");
    if (++P->depth > 100000)
        return kcs_fail(P->err, KCS_E_INVAL, "order tree, offset %ld: nested too deep", off);
    P->p++;
    int cap = 8, c = 0, *k = malloc((size_t)cap * sizeof *k);
    if (!k)
        return kcs_fail(P->err, KCS_E_NOMEM, "order tree: out of memory");
    for (;;) {
        int v, rc;
        if (c == cap) {
            int *nk = realloc(k, (size_t)(cap *= 2) * sizeof *k);
            if (!nk) {
                free(k);
                return kcs_fail(P->err, KCS_E_NOMEM, "order tree: out of memory");
            }
            k = nk;
        }
        if ((rc = parse_node(P, &v))) {
            free(k);
            return rc;
        }
        k[c++] = v;
        skip_ws(P);
        if (*P->p == ',') {
            P->p++;
            continue;
        }
        if (*P->p == ')') {
            P->p++;
            break;
        }
        free(k);
        return kcs_fail(P->err, KCS_E_INVAL, "order tree, offset %ld: expected ',' or ')'",
                        (long)(P->p - P->s));
    }
    P->depth--;
    if (c < 2) {
        free(k);
        return kcs_fail(P->err, KCS_E_INVAL, "order tree, offset %ld: a node of one child", off);
    }
    int v = kcs_otree_node(P->t, k, c);
    free(k);
    if (v < 0)
        return kcs_fail(P->err, KCS_E_INVAL, "order tree, offset %ld: more nodes than a tree of "
                        "%d leaves has", off, P->t->n);
    *v_p = v;
    return 0;
}

int kcs_otree_parse(const char *text, kcs_otree *t, kcs_error *err)
{
    /* n = 1 + the largest leaf number */
    long mx = -1;
    for (const char *q = text; *q;) {
        if (isdigit((unsigned char)*q)) {
            char *end;
            long x = strtol(q, &end, 10);
            if (x > mx)
                mx = x;
            q = end;
        } else {
            q++;
        }
    }
    if (mx < 0 || mx > 100000000)
        return kcs_fail(err, KCS_E_INVAL, "order tree: %s", mx < 0 ? "no leaves" : "too many leaves");
    int rc = kcs_otree_init(t, (int)mx + 1, err);
    if (rc)
        return rc;
    parser P = {text, text, t, calloc((size_t)mx + 1, sizeof(int)), 0, err};
    if (!P.seen) {
        kcs_otree_free(t);
        return kcs_fail(err, KCS_E_NOMEM, "order tree: out of memory");
    }
    int root;
    rc = parse_node(&P, &root);
    if (!rc) {
        skip_ws(&P);
        if (*P.p)
            rc = kcs_fail(err, KCS_E_INVAL, "order tree, offset %ld: text after the tree",
                          (long)(P.p - text));
    }
    for (long i = 0; !rc && i <= mx; i++)
        if (!P.seen[i])
            rc = kcs_fail(err, KCS_E_INVAL, "order tree: leaf %ld missing", i);
    free(P.seen);
    if (rc) {
        kcs_otree_free(t);
        return rc;
    }
    t->root = root;
    return 0;
}

/* ---- subtree sizes ---------------------------------------------------------- */

int kcs_otree_index(const kcs_otree *t, int *parent, int *size)
{
    for (int v = 0; v < t->nodes; v++) {
        parent[v] = -1;
        size[v] = v < t->n ? 1 : 0;
    }
    /* internal nodes are created after their children: one ascending pass */
    for (int v = t->n; v < t->nodes; v++)
        for (int c = 0; c < t->nkid[v]; c++) {
            int k = t->kids[t->kid0[v] + c];
            parent[k] = v;
            size[v] += size[k];
        }
    return 0;
}

int kcs_otree_lca_size(const int *parent, const int *size, int i, int j)
{
    /* sizes grow strictly up the tree: climb the smaller side */
    int a = i, b = j;
    while (a != b) {
        if (size[a] <= size[b] && parent[a] >= 0)
            a = parent[a];
        else if (parent[b] >= 0)
            b = parent[b];
        else
            a = parent[a];
        if (a < 0)
            return -1;
    }
    return size[a];
}

int kcs_otree_max_fanin(const kcs_otree *t)
{
    int m = 0;
    for (int v = t->n; v < t->nodes; v++)
        if (t->nkid[v] > m)
            m = t->nkid[v];
    return m;
}
