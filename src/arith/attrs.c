/* Op attributes "key=value;key=value" (see attrs.h). */
#include "attrs.h"

#include <string.h>

#include "error.h"

typedef struct span {
    const char *p;
    size_t n;
} span;

static span trim(const char *p, size_t n)
{
    while (n && *p == ' ') {
        p++;
        n--;
    }
    while (n && p[n - 1] == ' ')
        n--;
    return (span){p, n};
}

static int key_ok(span k)
{
    if (k.n == 0)
        return 0;
    for (size_t i = 0; i < k.n; i++) {
        char c = k.p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

static int value_ok(span v)
{
    if (v.n == 0)
        return 0;
    for (size_t i = 0; i < v.n; i++)
        if (v.p[i] == '=' || (unsigned char)v.p[i] < 0x20)
            return 0;
    return 1;
}

/* Walk every segment; on each well-formed pair call back with key/value.
 * Returns 0 or KCS_E_INVAL. */
static int walk(const char *attrs, const char *want, span *found_p, int *count_p)
{
    *count_p = 0;
    if (!attrs)
        return 0;
    const char *p = attrs;
    while (*p) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        span seg = trim(p, n);
        if (seg.n) {
            const char *eq = memchr(seg.p, '=', seg.n);
            if (!eq)
                return KCS_E_INVAL;
            span k = trim(seg.p, (size_t)(eq - seg.p));
            span v = trim(eq + 1, seg.n - (size_t)(eq + 1 - seg.p));
            if (!key_ok(k) || !value_ok(v))
                return KCS_E_INVAL;
            /* duplicate keys: compare with every later segment's key */
            for (const char *q = end; q && *q;) {
                q++;
                const char *e2 = strchr(q, ';');
                size_t n2 = e2 ? (size_t)(e2 - q) : strlen(q);
                span s2 = trim(q, n2);
                const char *eq2 = s2.n ? memchr(s2.p, '=', s2.n) : NULL;
                if (eq2) {
                    span k2 = trim(s2.p, (size_t)(eq2 - s2.p));
                    if (k2.n == k.n && memcmp(k2.p, k.p, k.n) == 0)
                        return KCS_E_INVAL;
                }
                q = e2;
            }
            if (want && strlen(want) == k.n && memcmp(want, k.p, k.n) == 0) {
                *found_p = v;
                (*count_p)++;
            }
        }
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

int kcs_attrs_check(const char *attrs)
{
    span v;
    int count;
    return walk(attrs, NULL, &v, &count);
}

int kcs_attrs_get(const char *attrs, const char *key, char *buf, size_t len)
{
    span v = {0};
    int count;
    int rc = walk(attrs, key, &v, &count);
    if (rc)
        return rc;
    if (!count)
        return 0;
    if (v.n >= len)
        return KCS_E_INVAL;
    memcpy(buf, v.p, v.n);
    buf[v.n] = 0;
    return 1;
}
