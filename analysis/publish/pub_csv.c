/* CSV for kcs publish (pub_csv.h). */
#include "pub_csv.h"

#include <stdlib.h>
#include <string.h>

static int needs_quotes(const char *s)
{
    size_t n = strlen(s);
    if (n && (s[0] == ' ' || s[n - 1] == ' '))
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

void kcs_csv_cell(FILE *f, const char *s)
{
    if (!needs_quotes(s)) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void kcs_csv_escape(const char *s, char *buf, size_t len)
{
    if (!len)
        return;
    size_t o = 0;
    int q = needs_quotes(s);
#define PUT(ch)                                                                                    \
    do {                                                                                           \
        if (o + 1 < len)                                                                           \
            buf[o++] = (ch);                                                                       \
    } while (0)
    if (q)
        PUT('"');
    for (; *s; s++) {
        if (q && *s == '"')
            PUT('"');
        PUT(*s);
    }
    if (q)
        PUT('"');
#undef PUT
    buf[o] = '\0';
}

typedef struct cellbuf {
    char *s;
    size_t n, cap;
} cellbuf;

static int cb_put(cellbuf *b, char ch)
{
    if (b->n + 1 >= b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        char *s = realloc(b->s, cap);
        if (!s)
            return -1;
        b->s = s;
        b->cap = cap;
    }
    b->s[b->n++] = ch;
    b->s[b->n] = '\0';
    return 0;
}

static char *cb_take(cellbuf *b)
{
    char *s = b->s ? b->s : strdup("");
    *b = (cellbuf){0};
    return s;
}

/* One record from text[*pos]: cells into *cells_p (*n_p of them). */
static int parse_record(const char *name, const char *text, size_t len, size_t *pos, int *line,
                        char ***cells_p, int *n_p, kcs_error *err)
{
    char **cells = NULL;
    int n = 0, cap = 0, start_line = *line;
    size_t i = *pos;
    cellbuf b = {0};
    for (;;) {
        if (i < len && text[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    free(b.s);
                    for (int j = 0; j < n; j++)
                        free(cells[j]);
                    free(cells);
                    return kcs_fail(err, KCS_E_INVAL, "%s:%d: unterminated quoted cell", name,
                                    start_line);
                }
                if (text[i] == '"') {
                    if (i + 1 < len && text[i + 1] == '"') {
                        if (cb_put(&b, '"'))
                            goto nomem;
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                if (text[i] == '\n')
                    (*line)++;
                if (cb_put(&b, text[i++]))
                    goto nomem;
            }
        }
        while (i < len && text[i] != ',' && text[i] != '\n') {
            if (!(text[i] == '\r' && (i + 1 >= len || text[i + 1] == '\n')) &&
                cb_put(&b, text[i]))
                goto nomem;
            i++;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **c = realloc(cells, (size_t)cap * sizeof *c);
            if (!c)
                goto nomem;
            cells = c;
        }
        cells[n++] = cb_take(&b);
        if (!cells[n - 1])
            goto nomem;
        if (i < len && text[i] == ',') {
            i++;
            continue;
        }
        if (i < len)
            i++; /* the newline */
        (*line)++;
        break;
    }
    *pos = i;
    *cells_p = cells;
    *n_p = n;
    return 0;
nomem:
    free(b.s);
    for (int j = 0; j < n; j++)
        free(cells[j]);
    free(cells);
    return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", name);
}

int kcs_csv_parse(const char *name, const char *text, size_t len, kcs_csv *c, kcs_error *err)
{
    memset(c, 0, sizeof *c);
    size_t pos = 0;
    int line = 1, rc, cap = 0;
    if (len == 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: empty (no header)", name);
    if ((rc = parse_record(name, text, len, &pos, &line, &c->header, &c->n_cols, err)))
        return rc;
    while (pos < len) {
        char **cells;
        int n, at = line;
        if ((rc = parse_record(name, text, len, &pos, &line, &cells, &n, err)))
            goto fail;
        if (n == 1 && !cells[0][0]) { /* a blank line */
            free(cells[0]);
            free(cells);
            continue;
        }
        if (n > c->n_cols) {
            for (int j = 0; j < n; j++)
                free(cells[j]);
            free(cells);
            rc = kcs_fail(err, KCS_E_INVAL, "%s:%d: %d cells, the header has %d", name, at, n,
                          c->n_cols);
            goto fail;
        }
        if (n < c->n_cols) {
            char **w = realloc(cells, (size_t)c->n_cols * sizeof *w);
            if (!w)
                goto nomem_cells;
            cells = w;
            for (int j = n; j < c->n_cols; j++)
                if (!(cells[j] = strdup("")))
                    goto nomem_cells;
        }
        if (c->n_rows == cap) {
            cap = cap ? 2 * cap : 64;
            char ***r = realloc(c->rows, (size_t)cap * sizeof *r);
            int *l = realloc(c->line, (size_t)cap * sizeof *l);
            if (r)
                c->rows = r;
            if (l)
                c->line = l;
            if (!r || !l)
                goto nomem_cells;
        }
        c->rows[c->n_rows] = cells;
        c->line[c->n_rows++] = at;
        continue;
    nomem_cells:
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    return 0;
fail:
    kcs_csv_free(c);
    return rc;
}

int kcs_csv_read(const char *path, kcs_csv *c, kcs_error *err)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot read", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
            }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? kcs_fail(err, KCS_E_IO, "%s: read error", path)
                 : kcs_csv_parse(path, text, len, c, err);
    free(text);
    return rc;
}

void kcs_csv_free(kcs_csv *c)
{
    for (int j = 0; j < c->n_cols; j++)
        free(c->header[j]);
    free(c->header);
    for (int i = 0; i < c->n_rows; i++) {
        for (int j = 0; j < c->n_cols; j++)
            free(c->rows[i][j]);
        free(c->rows[i]);
    }
    free(c->rows);
    free(c->line);
    memset(c, 0, sizeof *c);
}

int kcs_csv_col(const kcs_csv *c, const char *name)
{
    for (int j = 0; j < c->n_cols; j++)
        if (!strcmp(c->header[j], name))
            return j;
    return -1;
}
