/* Spooled tables and CSV output (spool.h). */
#include "spool.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int kcs_spool_open(kcs_spool *s, const char *name, const kcs_field *f, int nf, size_t rec,
                   kcs_error *err)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->fields = f;
    s->nf = nf;
    s->rec = rec;
    s->f = tmpfile();
    if (!s->f)
        return kcs_fail(err, KCS_E_IO, "cannot create a temporary file for /analysis/%s", name);
    return 0;
}

int kcs_spool_put(kcs_spool *s, const void *rows, int64_t n, kcs_error *err)
{
    if (n <= 0)
        return 0;
    if (fseek(s->f, 0, SEEK_END) != 0 || fwrite(rows, s->rec, (size_t)n, s->f) != (size_t)n)
        return kcs_fail(err, KCS_E_IO, "/analysis/%s: cannot write the temporary file (disk full?)",
                        s->name);
    s->n += n;
    return 0;
}

int kcs_spool_get(kcs_spool *s, int64_t first, int64_t n, void *buf, kcs_error *err)
{
    if (first < 0 || n < 0 || first + n > s->n)
        return kcs_fail(err, KCS_E_INTERNAL, "/analysis/%s: rows out of range", s->name);
    if (n == 0)
        return 0;
    if (fseek(s->f, (long)(first * (int64_t)s->rec), SEEK_SET) != 0 ||
        fread(buf, s->rec, (size_t)n, s->f) != (size_t)n)
        return kcs_fail(err, KCS_E_IO, "/analysis/%s: cannot read the temporary file", s->name);
    return 0;
}

static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
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

void kcs_csv_header(FILE *f, const kcs_field *fields, int nf)
{
    for (int i = 0; i < nf; i++)
        fprintf(f, "%s%s", i ? "," : "", fields[i].name);
    fputc('\n', f);
}

void kcs_csv_row(FILE *f, const kcs_field *fields, int nf, const void *rec)
{
    const char *p = rec;
    for (int i = 0; i < nf; i++) {
        const void *v = p + fields[i].offset;
        if (i)
            fputc(',', f);
        switch (fields[i].kind) {
        case KCS_FIELD_I32: fprintf(f, "%" PRId32, *(const int32_t *)v); break;
        case KCS_FIELD_I64: fprintf(f, "%" PRId64, *(const int64_t *)v); break;
        case KCS_FIELD_U64: fprintf(f, "%" PRIu64, *(const uint64_t *)v); break;
        case KCS_FIELD_F64: {
            double d = *(const double *)v;
            if (isnan(d))
                fputs("nan", f);
            else
                fprintf(f, "%.17g", d);
            break;
        }
        case KCS_FIELD_STR: {
            char buf[512];
            size_t n = fields[i].size < sizeof buf ? fields[i].size : sizeof buf - 1;
            memcpy(buf, v, n);
            buf[n] = 0;
            buf[sizeof buf - 1] = 0;
            csv_str(f, buf);
            break;
        }
        }
    }
    fputc('\n', f);
}

static FILE *csv_open(const char *dir, const char *name, char *path, size_t len, kcs_error *err)
{
    snprintf(path, len, "%s/%s.csv", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        kcs_fail(err, KCS_E_IO, "%s: cannot create", path);
    return f;
}

int kcs_spool_flush(kcs_spool *s, kcs_h5out *o, const char *dir, kcs_error *err)
{
    enum { CHUNK = 4096 };
    char *buf = malloc(CHUNK * s->rec);
    char obj[128], path[4096];
    snprintf(obj, sizeof obj, "/analysis/%s", s->name);
    if (!buf)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory writing %s", obj);
    kcs_h5table *t = NULL;
    FILE *csv = NULL;
    int rc = 0;
    if (o && (rc = kcs_h5table_open(o, obj, s->fields, s->nf, s->rec, &t, err)))
        goto out;
    if (dir && !(csv = csv_open(dir, s->name, path, sizeof path, err))) {
        rc = err->code;
        goto out;
    }
    if (csv)
        kcs_csv_header(csv, s->fields, s->nf);
    for (int64_t first = 0; first < s->n; first += CHUNK) {
        int64_t n = s->n - first < CHUNK ? s->n - first : CHUNK;
        if ((rc = kcs_spool_get(s, first, n, buf, err)))
            goto out;
        if (t && (rc = kcs_h5table_append(t, buf, n, err)))
            goto out;
        for (int64_t i = 0; csv && i < n; i++)
            kcs_csv_row(csv, s->fields, s->nf, buf + i * (int64_t)s->rec);
    }
out:
    if (t) {
        int r2 = kcs_h5table_close(t, err);
        rc = rc ? rc : r2;
    }
    if (csv && fclose(csv) != 0 && !rc)
        rc = kcs_fail(err, KCS_E_IO, "%s: cannot write", path);
    free(buf);
    return rc;
}

void kcs_spool_close(kcs_spool *s)
{
    if (s->f)
        fclose(s->f);
    s->f = NULL;
}

int kcs_table_write(kcs_h5out *o, const char *dir, const char *name, const kcs_field *f, int nf,
                    size_t rec, const void *rows, int64_t n, kcs_error *err)
{
    char obj[128], path[4096];
    snprintf(obj, sizeof obj, "/analysis/%s", name);
    int rc = 0;
    if (o) {
        kcs_h5table *t = NULL;
        if ((rc = kcs_h5table_open(o, obj, f, nf, rec, &t, err)))
            return rc;
        rc = kcs_h5table_append(t, rows, n, err);
        int r2 = kcs_h5table_close(t, err);
        if (rc || (rc = r2))
            return rc;
    }
    if (dir) {
        FILE *csv = csv_open(dir, name, path, sizeof path, err);
        if (!csv)
            return err->code;
        kcs_csv_header(csv, f, nf);
        for (int64_t i = 0; i < n; i++)
            kcs_csv_row(csv, f, nf, (const char *)rows + i * (int64_t)rec);
        if (fclose(csv) != 0)
            return kcs_fail(err, KCS_E_IO, "%s: cannot write", path);
    }
    return 0;
}
