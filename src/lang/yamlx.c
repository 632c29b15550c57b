/* Strict YAML reading on libfyaml 0.7.x (see yamlx.h).
 *
 * Positions: libfyaml 0.7.12 has no public fy_node_get_start_mark(), so a
 * node's position is the start mark of its scalar token; a collection takes
 * the position of its first scalar descendant; a node without any token (an
 * empty value "k:", an empty "{}") takes the position of the key it is the
 * value of, walking up until something has a position (else 1:1).
 *
 * Strictness: one document per file, the root is a mapping, duplicate keys
 * are syntax errors (libfyaml), anchors/aliases are rejected (they would let
 * a small file expand into a huge one and make positions ambiguous), the
 * text and every scalar value must be well-formed UTF-8 without NULs.
 * Typed reading of the parsed tree is in yamlx_read.c. */
#include "yamlx.h"
#include "yamlx_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KCS_YAML_MAX_BYTES (16u << 20) /* refuse files larger than 16 MiB */
#define KCS_YAML_MAX_WALK 256          /* nesting checked by the alias walk */

/* ---- positions ---------------------------------------------------------- */

static bool node_mark(struct fy_node *n, int *line_p, int *col_p)
{
    struct fy_token *t = fy_node_get_scalar_token(n);
    const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
    if (!m)
        return false;
    *line_p = m->line + 1;
    *col_p = m->column + 1;
    return true;
}

/* First token at or below n (document order), iteratively bounded. */
static bool down_mark(struct fy_node *n, int *line_p, int *col_p, int depth)
{
    if (!n || depth > KCS_YAML_MAX_WALK)
        return false;
    switch (fy_node_get_type(n)) {
    case FYNT_SCALAR:
        return node_mark(n, line_p, col_p);
    case FYNT_SEQUENCE: {
        void *it = NULL;
        struct fy_node *c;
        while ((c = fy_node_sequence_iterate(n, &it)))
            if (down_mark(c, line_p, col_p, depth + 1))
                return true;
        return false;
    }
    case FYNT_MAPPING: {
        void *it = NULL;
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(n, &it))) {
            if (down_mark(fy_node_pair_key(p), line_p, col_p, depth + 1) ||
                down_mark(fy_node_pair_value(p), line_p, col_p, depth + 1))
                return true;
        }
        return false;
    }
    }
    return false;
}

void kcs_yaml_pos(struct fy_node *n, int *line_p, int *col_p)
{
    int line = 1, col = 1;
    for (struct fy_node *cur = n; cur; cur = fy_node_get_parent(cur)) {
        if (down_mark(cur, &line, &col, 0))
            break;
        struct fy_node *p = fy_node_get_parent(cur);
        if (p && fy_node_get_type(p) == FYNT_MAPPING) {
            void *it = NULL;
            struct fy_node_pair *pr;
            bool found = false;
            while ((pr = fy_node_mapping_iterate(p, &it))) {
                if (fy_node_pair_value(pr) == cur) {
                    found = node_mark(fy_node_pair_key(pr), &line, &col);
                    break;
                }
            }
            if (found)
                break;
        }
    }
    *line_p = line;
    *col_p = col;
}

/* ---- errors ------------------------------------------------------------- */

static void add_error_v(kcs_yctx *y, int line, int col, const char *field, const char *fmt,
                        va_list ap)
{
    char msg[200];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int slot = y->n_errors;
    if (slot >= KCS_YAML_MAX_ERRORS) {
        /* Keep the count honest: the last slot says that more were dropped. */
        snprintf(y->errors[KCS_YAML_MAX_ERRORS - 1], sizeof y->errors[0],
                 "%s: too many errors, further errors omitted", y->path ? y->path : "<input>");
        return;
    }
    const char *path = y->path ? y->path : "<input>";
    if (field && *field)
        snprintf(y->errors[slot], sizeof y->errors[0], "%s:%d:%d: %s: %s", path, line, col, field,
                 msg);
    else
        snprintf(y->errors[slot], sizeof y->errors[0], "%s:%d:%d: %s", path, line, col, msg);
    y->n_errors++;
}

static void add_error(kcs_yctx *y, int line, int col, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void add_error(kcs_yctx *y, int line, int col, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_error_v(y, line, col, field, fmt, ap);
    va_end(ap);
}

void kcs_yaml_error(kcs_yctx *y, struct fy_node *node, const char *field, const char *fmt, ...)
{
    int line = 1, col = 1;
    if (!node && y->doc)
        node = fy_document_root(y->doc);
    if (node)
        kcs_yaml_pos(node, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    add_error_v(y, line, col, field, fmt, ap);
    va_end(ap);
}

/* line * 2^20 + col of a recorded "path:line:col: ..." message; messages
 * without a position sort last. */
static long error_key(const kcs_yctx *y, const char *msg)
{
    const char *path = y->path ? y->path : "<input>";
    size_t pl = strlen(path);
    if (strncmp(msg, path, pl) || msg[pl] != ':')
        return LONG_MAX;
    char *end;
    long line = strtol(msg + pl + 1, &end, 10);
    if (*end != ':' || line < 1)
        return LONG_MAX;
    long col = strtol(end + 1, &end, 10);
    if (*end != ':' || col < 1)
        return LONG_MAX;
    return line * (1L << 20) + (col < (1L << 20) ? col : (1L << 20) - 1);
}

int kcs_yaml_finish(kcs_yctx *y, kcs_error *err)
{
    if (y->n_errors == 0)
        return 0;
    /* Document order (stable insertion sort; at most 16 entries). */
    for (int i = 1; i < y->n_errors; i++) {
        char tmp[sizeof y->errors[0]];
        long key = error_key(y, y->errors[i]);
        int j = i;
        while (j > 0 && error_key(y, y->errors[j - 1]) > key)
            j--;
        if (j == i)
            continue;
        memcpy(tmp, y->errors[i], sizeof tmp);
        memmove(y->errors[j + 1], y->errors[j], (size_t)(i - j) * sizeof y->errors[0]);
        memcpy(y->errors[j], tmp, sizeof tmp);
    }
    char buf[KCS_ERRMSG_MAX];
    size_t used = 0;
    buf[0] = '\0';
    int shown = 0;
    for (int i = 0; i < y->n_errors; i++) {
        size_t len = strlen(y->errors[i]);
        size_t need = len + (i ? 1 : 0);
        if (used + need + 32 >= sizeof buf)
            break;
        if (i)
            buf[used++] = '\n';
        memcpy(buf + used, y->errors[i], len + 1);
        used += len;
        shown++;
    }
    if (shown < y->n_errors)
        snprintf(buf + used, sizeof buf - used, "%s(%d more errors)", shown ? "\n" : "",
                 y->n_errors - shown);
    return kcs_fail(err, KCS_E_INVAL, "%s", buf);
}

/* ---- opening ------------------------------------------------------------ */

/* Count the documents of the stream (stops at 2); *line_p is the line of
 * the second one. Syntax errors are left to the document builder, which
 * reports them with positions. */
static int count_documents(const char *text, size_t len, int *line_p)
{
    struct fy_parser *fyp;
    struct fy_diag *diag;
    if (kcs_yaml_events_open(text, len, &fyp, &diag))
        return -1;
    int docs = 0;
    if (fyp) {
        struct fy_event *ev;
        while (docs < 2 && (ev = fy_parser_parse(fyp))) {
            if (ev->type == FYET_DOCUMENT_START) {
                const struct fy_mark *m = fy_event_start_mark(ev);
                if (++docs == 2 && m)
                    *line_p = m->line + 1;
            }
            fy_parser_event_free(fyp, ev);
        }
    }
    kcs_yaml_events_close(fyp, diag);
    return docs;
}

/* Offset of the first byte that is not well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or -1. Checked
 * before libfyaml sees the text: 0.7.12 loops forever on some malformed
 * bytes in a directive line (found by fuzzing, e.g. "%\xff\n"). */
static long bad_utf8(const unsigned char *s, size_t len)
{
    /* lead bytes first..last take n continuation bytes, the first of them in
     * [lo, hi] after the lead lo_at / hi_at (else [0x80, 0xBF]) */
    static const struct {
        unsigned char first, last, n, lo_at, lo, hi_at, hi;
    } leads[] = {{0xC2, 0xDF, 1, 0, 0x80, 0, 0xBF},
                 {0xE0, 0xEF, 2, 0xE0, 0xA0, 0xED, 0x9F},
                 {0xF0, 0xF4, 3, 0xF0, 0x90, 0xF4, 0x8F}};
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int r = -1;
        for (int k = 0; k < 3; k++)
            if (c >= leads[k].first && c <= leads[k].last)
                r = k;
        if (r < 0)
            return (long)i;
        size_t n = leads[r].n;
        unsigned char lo = c == leads[r].lo_at ? leads[r].lo : 0x80;
        unsigned char hi = c == leads[r].hi_at ? leads[r].hi : 0xBF;
        if (i + n >= len)
            return (long)i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return (long)i;
        for (size_t k = 2; k <= n; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                return (long)i;
        i += n + 1;
    }
    return -1;
}

/* Reject aliases anywhere in the tree, and scalars whose value is not
 * well-formed UTF-8 or holds a NUL (a "\0" escape would cut C strings
 * short; libfyaml 0.7.12 can hand back uninitialised bytes for some
 * mis-indented block scalars, found by fuzzing). Bounded recursion. */
static bool check_tree(kcs_yctx *y, struct fy_node *n, int depth)
{
    if (!n)
        return false;
    if (depth > KCS_YAML_MAX_WALK) {
        kcs_yaml_error(y, n, NULL, "nesting deeper than %d levels", KCS_YAML_MAX_WALK);
        return true;
    }
    if (fy_node_is_alias(n)) {
        kcs_yaml_error(y, n, NULL, "anchors and aliases are not supported (*%s)",
                       fy_node_get_scalar0(n) ? fy_node_get_scalar0(n) : "?");
        return true;
    }
    if (fy_node_get_type(n) == FYNT_SCALAR) {
        size_t len = 0;
        const char *s = fy_node_get_scalar(n, &len);
        if (s && memchr(s, '\0', len)) {
            kcs_yaml_error(y, n, NULL, "a scalar contains a NUL character");
            return true;
        }
        if (s && bad_utf8((const unsigned char *)s, len) >= 0) {
            kcs_yaml_error(y, n, NULL, "a scalar's value is not valid UTF-8");
            return true;
        }
        return false;
    }
    void *it = NULL;
    if (fy_node_get_type(n) == FYNT_SEQUENCE) {
        struct fy_node *c;
        while ((c = fy_node_sequence_iterate(n, &it)))
            if (check_tree(y, c, depth + 1))
                return true;
    } else if (fy_node_get_type(n) == FYNT_MAPPING) {
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(n, &it)))
            if (check_tree(y, fy_node_pair_key(p), depth + 1) ||
                check_tree(y, fy_node_pair_value(p), depth + 1))
                return true;
    }
    return false;
}

/* Parse y->text (already set, owned) into y->doc. */
static int parse_text(kcs_yctx *y, kcs_error *err)
{
    size_t len = strlen(y->text);
    long bad = bad_utf8((const unsigned char *)y->text, len);
    if (bad >= 0) {
        int line = 1, col = 1;
        for (long i = 0; i < bad; i++) {
            unsigned char ch = (unsigned char)y->text[i];
            if (ch == '\n') {
                line++;
                col = 1;
            } else if ((ch & 0xC0) != 0x80) {
                col++;
            }
        }
        add_error(y, line, col, NULL, "invalid UTF-8 (byte 0x%02x)", (unsigned char)y->text[bad]);
        return kcs_yaml_finish(y, err);
    }
    /* Size limits first, in one linear pass: the tree builder is quadratic
     * in the keys of a mapping and heavy per node (yamlx_limits.h). */
    kcs_yaml_limit_hit hit;
    int over = kcs_yaml_prescan(y->text, len, &hit);
    if (over < 0)
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory reading YAML", y->path);
    if (over) {
        add_error(y, hit.line, hit.col, NULL, "%s (kcs's limit; see contracts/README.md)",
                  hit.msg);
        return kcs_yaml_finish(y, err);
    }
    struct fy_diag *diag = kcs_yaml_quiet_diag();
    if (!diag)
        return kcs_fail(err, KCS_E_NOMEM, "%s: cannot create YAML diagnostics", y->path);
    struct fy_parse_cfg cfg = KCS_YAML_PARSE_CFG(diag);
    y->doc = fy_document_build_from_string(&cfg, y->text, len);
    if (!y->doc || fy_diag_got_error(diag)) {
        void *it = NULL;
        struct fy_diag_error *e;
        while ((e = fy_diag_errors_iterate(diag, &it)))
            if (e->type >= FYET_ERROR)
                add_error(y, e->line > 0 ? e->line : 1, e->column > 0 ? e->column : 1, NULL,
                          "YAML syntax error: %s", e->msg ? e->msg : "?");
        if (y->doc) {
            fy_document_destroy(y->doc);
            y->doc = NULL;
        }
        fy_diag_destroy(diag);
        if (y->n_errors == 0) {
            /* No document and no error: the stream is empty. */
            add_error(y, 1, 1, NULL, "empty document (expected a mapping)");
        }
        return kcs_yaml_finish(y, err);
    }
    fy_diag_destroy(diag);

    struct fy_node *root = fy_document_root(y->doc);
    if (!root || (fy_node_get_type(root) == FYNT_SCALAR && !fy_node_get_scalar_token(root))) {
        add_error(y, 1, 1, NULL, "empty document (expected a mapping)");
        return kcs_yaml_finish(y, err);
    }
    if (fy_node_get_type(root) != FYNT_MAPPING) {
        kcs_yaml_error(y, root, NULL, "the document root must be a mapping");
        return kcs_yaml_finish(y, err);
    }
    int line2 = 1;
    if (count_documents(y->text, len, &line2) > 1) {
        add_error(y, line2, 1, NULL, "only one YAML document per file is allowed");
        return kcs_yaml_finish(y, err);
    }
    if (check_tree(y, root, 0))
        return kcs_yaml_finish(y, err);
    return 0;
}

/* On failure the context is released; closing it again is harmless. */
static int open_common(kcs_yctx *y, kcs_error *err)
{
    int rc = parse_text(y, err);
    if (rc)
        kcs_yaml_close(y);
    return rc;
}

int kcs_yaml_open_string(kcs_yctx *y, const char *path, const char *text, kcs_error *err)
{
    memset(y, 0, sizeof *y);
    if (!path)
        path = "<string>";
    char *p = strdup(path);
    char *t = text ? strdup(text) : NULL;
    if (!p || (text && !t)) {
        free(p);
        free(t);
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    }
    if (!t) {
        free(p);
        return kcs_fail(err, KCS_E_INVAL, "%s: no text", path);
    }
    y->path = p;
    y->text = t;
    return open_common(y, err);
}

int kcs_yaml_open(kcs_yctx *y, const char *path, kcs_error *err)
{
    memset(y, 0, sizeof *y);
    /* O_NONBLOCK: a FIFO must not block the open; only regular files are read */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return kcs_fail(err, errno == EIO || errno == ENOMEM ? KCS_E_IO : KCS_E_INVAL,
                        "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return kcs_fail(err, KCS_E_INVAL, "%s: not a regular file", path);
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return kcs_fail(err, KCS_E_NOMEM, "%s: cannot open: %s", path, strerror(errno));
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (cap - len < 4096) {
            size_t ncap = cap ? cap * 2 : 8192;
            if (ncap > KCS_YAML_MAX_BYTES + 4096u) {
                rc = kcs_fail(err, KCS_E_INVAL, "%s: file larger than %u bytes", path,
                              KCS_YAML_MAX_BYTES);
                goto out_free;
            }
            char *nb = realloc(buf, ncap);
            if (!nb) {
                rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
                goto out_free;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        rc = kcs_fail(err, KCS_E_IO, "%s: read error", path);
        goto out_free;
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        rc = kcs_fail(err, KCS_E_INVAL, "%s: file contains NUL bytes", path);
        goto out_free;
    }
    fclose(f);
    char *p = strdup(path);
    if (!p) {
        free(buf);
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    }
    y->path = p;
    y->text = buf;
    return open_common(y, err);
out_free:
    free(buf);
    fclose(f);
    return rc;
}

void kcs_yaml_close(kcs_yctx *y)
{
    if (!y)
        return;
    if (y->doc)
        fy_document_destroy(y->doc);
    free(y->text);
    free((char *)y->path);
    memset(y, 0, sizeof *y);
}

struct fy_node *kcs_yaml_root(kcs_yctx *y)
{
    return y->doc ? fy_document_root(y->doc) : NULL;
}
