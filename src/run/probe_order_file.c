/* Reading back the trees of `kcs probe --order --json` and predicting a
 * gemm's output bits from them (probe_order.h). The reader knows the one
 * layout the probe prints; anything else is refused naming the field. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order_expect.h"
#include "order_tree.h"
#include "probe_order.h"

static char *slurp(const char *path, kcs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        kcs_fail(err, errno == EIO ? KCS_E_IO : KCS_E_INVAL, "%s: cannot open: %s", path,
                 strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    for (;;) {
        if (!s) {
            fclose(f);
            kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
            return NULL;
        }
        len += fread(s + len, 1, cap - len - 1, f);
        if (len < cap - 1)
            break;
        char *t = realloc(s, cap *= 2);
        if (!t)
            free(s);
        s = t;
    }
    fclose(f);
    s[len] = '\0';
    return s;
}

/* The value after "key": in s (first occurrence at or after from), or NULL. */
static const char *after_key(const char *s, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(s, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

static int read_int(const char *path, const char *s, const char *key, int64_t *v, kcs_error *err)
{
    const char *p = after_key(s, key);
    char *end;
    long long x = p ? strtoll(p, &end, 10) : 0;
    if (!p || end == p || x < 1)
        return kcs_fail(err, KCS_E_INVAL, "%s: field \"%s\": missing or not a positive integer",
                        path, key);
    *v = x;
    return 0;
}

int kcs_order_file_read(const char *path, kcs_order_file *f, kcs_error *err)
{
    memset(f, 0, sizeof *f);
    char *s = slurp(path, err);
    if (!s)
        return err->code;
    int rc = 0;
    const char *p = after_key(s, "op");
    char op[32] = "";
    if (!p || sscanf(p, "\"%31[a-z_]\"", op) != 1 || kcs_op_parse(op, &f->op))
        rc = kcs_fail(err, KCS_E_INVAL, "%s: field \"op\": missing or unknown (is it the --json "
                      "output of kcs probe --order?)", path);
    if (!rc)
        rc = read_int(path, s, "k", &f->k, err);
    if (!rc)
        rc = read_int(path, s, "m", &f->m, err);
    if (!rc)
        rc = read_int(path, s, "n", &f->n, err);
    if (!rc && (f->k > (1 << 20) || f->m * f->n > (1 << 16)))
        rc = kcs_fail(err, KCS_E_INVAL, "%s: k %lld, m %lld, n %lld: beyond what the probe makes",
                      path, (long long)f->k, (long long)f->m, (long long)f->n);
    int nout = (int)(f->m * f->n);
    char *seen = rc ? NULL : calloc((size_t)nout, 1);
    if (!rc && !seen)
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    const char *q = rc ? NULL : after_key(s, "trees");
    if (!rc && (!q || *q != '['))
        rc = kcs_fail(err, KCS_E_INVAL, "%s: field \"trees\": missing", path);
    kcs_order_result *r = &f->r;
    r->noutputs = nout;
    while (!rc) {
        const char *o = strstr(q, "{\"outputs\":");
        if (!o)
            break;
        int ti = r->ntrees;
        kcs_order_tree *nt = realloc(r->trees, (size_t)(ti + 1) * sizeof *nt);
        if (!nt) {
            rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
            break;
        }
        r->trees = nt;
        memset(&nt[ti], 0, sizeof *nt);
        r->ntrees++;
        kcs_order_tree *T = &nt[ti];
        T->outputs = malloc((size_t)nout * sizeof *T->outputs);
        if (!T->outputs) {
            rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
            break;
        }
        const char *c = strchr(o, '[') + 1;
        while (!rc && *c != ']') {
            char *end;
            long x = strtol(c, &end, 10);
            if (end == c || x < 0 || x >= nout || seen[x])
                rc = kcs_fail(err, KCS_E_INVAL, "%s: trees[%d].outputs: bad entry near '%.12s' "
                              "(an index outside 0..%d, or an output listed twice)", path, ti, c,
                              nout - 1);
            else {
                seen[x] = 1;
                T->outputs[T->nout++] = (int)x;
            }
            c = end;
            while (*c == ',' || isspace((unsigned char)*c))
                c++;
        }
        const char *tr = rc ? NULL : after_key(c, "tree");
        const char *e = tr && *tr == '"' ? strchr(tr + 1, '"') : NULL;
        if (!rc && !e)
            rc = kcs_fail(err, KCS_E_INVAL, "%s: trees[%d].tree: missing", path, ti);
        if (rc)
            break;
        T->tree = malloc((size_t)(e - tr));
        if (!T->tree) {
            rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
            break;
        }
        memcpy(T->tree, tr + 1, (size_t)(e - tr - 1));
        T->tree[e - tr - 1] = '\0';
        q = e + 1;
    }
    for (int i = 0; !rc && i < nout; i++)
        if (!seen[i])
            rc = kcs_fail(err, KCS_E_INVAL, "%s: trees: output %d has no tree", path, i);
    free(seen);
    free(s);
    if (rc)
        kcs_order_file_free(f);
    return rc;
}

void kcs_order_file_free(kcs_order_file *f)
{
    kcs_order_result_free(&f->r);
}

int kcs_order_predict_gemm(const kcs_order_file *f, int leaf, const kcs_profile_params *prof,
                           const double *A, const double *B, double *D, kcs_error *err)
{
    int64_t m = f->m, n = f->n, k = f->k;
    double *b = malloc((size_t)k * sizeof *b);
    if (!b)
        return kcs_fail(err, KCS_E_NOMEM, "exec --order: out of memory");
    int rc = 0;
    for (int t = 0; !rc && t < f->r.ntrees; t++) {
        kcs_otree tree;
        if ((rc = kcs_otree_parse(f->r.trees[t].tree, &tree, err))) {
            kcs_error_prefix(err, "trees[%d].tree", t);
            break;
        }
        if (tree.n != k) {
            rc = kcs_fail(err, KCS_E_INVAL, "trees[%d].tree: %d leaves, k is %lld", t, tree.n,
                          (long long)k);
            kcs_otree_free(&tree);
            break;
        }
        for (int a = 0; a < f->r.trees[t].nout; a++) {
            int o = f->r.trees[t].outputs[a];
            int64_t i = o / n, j = o % n;
            for (int64_t p = 0; p < k; p++)
                b[p] = B[p * n + j];
            D[o] = kcs_order_eval(&tree, (kcs_order_leaf)leaf, prof, A + i * k, b);
        }
        kcs_otree_free(&tree);
    }
    (void)m;
    free(b);
    return rc;
}
