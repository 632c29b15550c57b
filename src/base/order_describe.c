/* Names for summation trees (order_describe.h). Every recogniser is
 * structural (leaf ranges and child counts), so it needs nothing but the
 * tree; the walks along chains are loops (a chain of n leaves is n deep). */
#include "order_describe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t kcs_otree_hash(const char *text)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* "tree TEXT" or "tree CUT… (N characters, hash H)" */
static char *unknown(const char *text)
{
    size_t n = strlen(text);
    if (n <= KCS_OTREE_SHOWN)
        return dupf("tree %s", text);
    return dupf("tree %.*s… (%zu characters, hash %08x)", KCS_OTREE_SHOWN, text, n,
                kcs_otree_hash(text));
}

typedef struct shape {
    const kcs_otree *t;
    int *lo, *hi, *size;
} shape;

static int contiguous(const shape *S, int v)
{
    return S->hi[v] - S->lo[v] + 1 == S->size[v];
}

static int kid(const shape *S, int v, int c)
{
    return S->t->kids[S->t->kid0[v] + c];
}

/* A chain adding the leaves of a contiguous range in ascending order. */
static int is_seq(const shape *S, int v)
{
    const kcs_otree *t = S->t;
    if (!contiguous(S, v))
        return 0;
    while (v >= t->n) {
        if (t->nkid[v] != 2)
            return 0;
        int a = kid(S, v, 0), b = kid(S, v, 1);
        if (b == S->hi[v] && b < t->n)
            v = a;
        else if (a == S->hi[v] && a < t->n)
            v = b;
        else
            return 0;
    }
    return 1;
}

/* Every node halves a contiguous range, the lower part of n / 2 terms
 * (acc.c's pairwise sum) or, odd = 1, of (n + 1) / 2 (blockfma.c's). */
static int pairwise_h(const shape *S, int v, int odd)
{
    const kcs_otree *t = S->t;
    if (!contiguous(S, v))
        return 0;
    if (v < t->n)
        return 1;
    if (t->nkid[v] != 2)
        return 0;
    int a = kid(S, v, 0), b = kid(S, v, 1);
    if (S->lo[b] < S->lo[a]) {
        int x = a;
        a = b;
        b = x;
    }
    return S->size[a] == (S->size[v] + odd) / 2 && pairwise_h(S, a, odd) && pairwise_h(S, b, odd);
}

static int is_pairwise(const shape *S, int v)
{
    return pairwise_h(S, v, 0) || pairwise_h(S, v, 1);
}

/* Blocks of a contiguous range each satisfying inner, added in order:
 * block sizes into sz (first block first), their count; 0 when not. */
static int blocks(const shape *S, int (*inner)(const shape *, int), int *sz)
{
    const kcs_otree *t = S->t;
    int v = t->root, nb = 0;
    /* from the top: the last block (any size), then blocks of one size B
     * (>= the last), down to the first block, which starts at leaf 0 (two
     * pairwise blocks are one pairwise node: the size decides) */
    for (;;) {
        int fits = nb == 0 || (nb == 1 ? S->size[v] >= sz[0] : S->size[v] == sz[1]);
        if (nb > 0 && fits && S->lo[v] == 0 && inner(S, v)) {
            sz[nb++] = S->size[v];
            break;
        }
        if (v < t->n || t->nkid[v] != 2)
            return 0;
        int a = kid(S, v, 0), b = kid(S, v, 1);
        int x = S->lo[a] > S->lo[b] ? a : b, y = x == a ? b : a;
        int xs = S->size[x];
        if (!inner(S, x) || S->hi[y] != S->lo[x] - 1 ||
            (nb == 1 && xs < sz[0]) || (nb >= 2 && xs != sz[1]))
            return 0;
        sz[nb++] = xs;
        v = y;
    }
    for (int i = 0; i < nb / 2; i++) { /* first block first */
        int x = sz[i];
        sz[i] = sz[nb - 1 - i];
        sz[nb - 1 - i] = x;
    }
    return nb;
}

/* Equal blocks but the last (no longer): the block size, else 0. */
static int block_size(const int *sz, int nb)
{
    if (nb < 2)
        return 0;
    for (int i = 1; i < nb - 1; i++)
        if (sz[i] != sz[0])
            return 0;
    return sz[nb - 1] <= sz[0] ? sz[0] : 0;
}

/* Fused blocks: each node = (the previous node, a contiguous run of
 * leaves), the bottom node leaves only; F when they are of one size but
 * the last, with some node of more than two children; else 0. */
static int fused(const shape *S, int *sz)
{
    const kcs_otree *t = S->t;
    int v = t->root, nb = 0, wide = 0;
    while (v >= t->n) {
        int inner = -1, leaves = 0, c = t->nkid[v];
        wide |= c > 2;
        for (int i = 0; i < c; i++) {
            int x = kid(S, v, i);
            if (x >= t->n) {
                if (inner >= 0)
                    return 0;
                inner = x;
            } else {
                leaves++;
            }
        }
        /* the leaves are the top of v's range */
        int lo_leaves = inner >= 0 ? S->hi[inner] + 1 : S->lo[v];
        if (!contiguous(S, v) || S->hi[v] - lo_leaves + 1 != leaves)
            return 0;
        sz[nb++] = leaves;
        if (inner < 0)
            break;
        v = inner;
    }
    if (!wide)
        return 0;
    for (int i = 0; i < nb / 2; i++) {
        int x = sz[i];
        sz[i] = sz[nb - 1 - i];
        sz[nb - 1 - i] = x;
    }
    if (nb == 1)
        return sz[0];
    return block_size(sz, nb);
}

/* An order of leaves, cut: "(3,0,1,2)" or "(17,3,5,…)" */
static char *order_text(const int *pi, int n)
{
    enum { SHOW = 12 };
    size_t cap = (size_t)(n < SHOW ? n : SHOW) * 12 + 16;
    char *s = malloc(cap), *p = s;
    if (!s)
        return NULL;
    *p++ = '(';
    for (int i = 0; i < n && i < SHOW; i++)
        p += sprintf(p, "%s%d", i ? "," : "", pi[i]);
    if (n > SHOW)
        p += sprintf(p, ",…");
    sprintf(p, ")");
    return s;
}

/* A chain over the leaves in some order: that order (the bottom pair,
 * unordered, put to suit a rotation or ascending); 0 when not a chain. */
static int chain(const shape *S, int *pi)
{
    const kcs_otree *t = S->t;
    int v = t->root, len = 0, n = t->n;
    while (v >= t->n) {
        if (t->nkid[v] != 2)
            return 0;
        int a = kid(S, v, 0), b = kid(S, v, 1);
        if (a < n && b < n) {
            pi[len++] = a > b ? a : b;
            pi[len++] = a > b ? b : a;
            v = -1;
            break;
        }
        if (a < n) {
            pi[len++] = a;
            v = b;
        } else if (b < n) {
            pi[len++] = b;
            v = a;
        } else {
            return 0;
        }
    }
    if (v >= 0)
        pi[len++] = v;
    for (int i = 0; i < len / 2; i++) {
        int x = pi[i];
        pi[i] = pi[len - 1 - i];
        pi[len - 1 - i] = x;
    }
    if (n >= 3) { /* a rotation decides the bottom pair's order */
        int s = (pi[2] - 2 + n) % n;
        if (pi[1] == s && pi[0] == (s + 1) % n) {
            pi[0] = s;
            pi[1] = (s + 1) % n;
        }
    }
    return len == n;
}

static char *describe(const kcs_otree *t, const char *text)
{
    int n = t->n;
    if (n == 1)
        return dupf("one term");
    shape S = {t, malloc((size_t)t->nodes * sizeof(int)), malloc((size_t)t->nodes * sizeof(int)),
               malloc((size_t)t->nodes * sizeof(int))};
    int *buf = malloc((size_t)n * sizeof(int));
    char *out = NULL;
    if (!S.lo || !S.hi || !S.size || !buf)
        goto done;
    for (int v = 0; v < t->nodes; v++) {
        S.lo[v] = S.hi[v] = v;
        S.size[v] = v < n ? 1 : 0;
        if (v >= n) {
            S.lo[v] = n;
            S.hi[v] = -1;
        }
    }
    for (int v = n; v < t->nodes; v++) /* children precede their parents */
        for (int c = 0; c < t->nkid[v]; c++) {
            int x = kid(&S, v, c);
            S.size[v] += S.size[x];
            if (S.lo[x] < S.lo[v])
                S.lo[v] = S.lo[x];
            if (S.hi[x] > S.hi[v])
                S.hi[v] = S.hi[x];
        }
    if (chain(&S, buf)) {
        int ident = 1, rot = 1;
        for (int i = 0; i < n; i++) {
            ident &= buf[i] == i;
            rot &= buf[i] == (buf[0] + i) % n;
        }
        if (ident) {
            out = dupf("sequential");
        } else {
            char *o = order_text(buf, n);
            if (o && rot && is_pairwise(&S, t->root))
                out = dupf("pairwise = ring order %s", o);
            else if (o && rot)
                out = dupf("ring order %s", o);
            else if (o && n > 12)
                out = dupf("sequential in the order %s (hash %08x)", o, kcs_otree_hash(text));
            else if (o)
                out = dupf("sequential in the order %s", o);
            free(o);
        }
        goto done;
    }
    if (is_pairwise(&S, t->root)) {
        out = dupf("pairwise");
        goto done;
    }
    int nb, B;
    if ((nb = blocks(&S, is_seq, buf)) && (B = block_size(buf, nb)) > 1) {
        int parts = (n + B - 1) / B;
        if (parts <= B && (n + parts - 1) / parts == B)
            out = dupf("blocked:%d = splitk:%d", B, parts);
        else
            out = dupf("blocked:%d", B);
        goto done;
    }
    if ((nb = blocks(&S, is_pairwise, buf)) && (B = block_size(buf, nb)) > 1) {
        out = dupf("blocked:%d, pairwise inside", B);
        goto done;
    }
    if ((B = fused(&S, buf)) > 1) {
        out = B >= n ? dupf("one fused node of %d terms", n) : dupf("fused:%d", B);
        goto done;
    }
    out = unknown(text);
done:
    free(S.lo);
    free(S.hi);
    free(S.size);
    free(buf);
    return out;
}

char *kcs_otree_describe(const kcs_otree *t)
{
    char *text = kcs_otree_str(t);
    if (!text)
        return NULL;
    char *s = describe(t, text);
    free(text);
    return s;
}

char *kcs_otree_describe_text(const char *text)
{
    kcs_otree t;
    kcs_error err = {0};
    if (kcs_otree_parse(text, &t, &err))
        return unknown(text);
    char *canon = kcs_otree_str(&t);
    char *s = canon ? describe(&t, canon) : NULL;
    free(canon);
    kcs_otree_free(&t);
    return s;
}

char *kcs_otree_describe_diff(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return dupf("the same tree");
    char *na = kcs_otree_describe_text(a), *nb = kcs_otree_describe_text(b), *s = NULL;
    if (na && nb) {
        if (strcmp(na, nb) != 0 && !(strstr(na, "hash ") && strstr(nb, "hash "))) {
            s = dupf("%s vs %s", na, nb);
        } else {
            size_t i = 0;
            while (a[i] && a[i] == b[i])
                i++;
            s = dupf("%s vs %s (the texts first differ at character %zu)", na, nb, i);
        }
    }
    free(na);
    free(nb);
    return s;
}
