/* datapackage.json (Frictionless Data Package), CITATION.cff and the data
 * licence of a bundle. */
#define _GNU_SOURCE
#include "publish.h"
#include "pub_csv.h"
#include "pub_hash.h"
#include "pub_tables.h"
#include "pub_walk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build_info.h"
#include "json.h"

static const char licence_text[] =
    "The data in this bundle (data/, tables/, silicon/, probes/, tolerances.json and the HTML\n"
    "atlas) is licensed under the Creative Commons Attribution 4.0 International licence\n"
    "(CC-BY-4.0): https://creativecommons.org/licenses/by/4.0/\n"
    "You may share and adapt it for any purpose, giving appropriate credit: cite it with\n"
    "CITATION.cff (authors: kcs contributors).\n";

static const char *ext_format(const char *p, const char **media)
{
    const char *dot = strrchr(p, '.');
    const char *e = dot ? dot + 1 : "";
    static const struct {
        const char *ext, *format, *media;
    } t[] = {{"csv", "csv", "text/csv"},         {"json", "json", "application/json"},
             {"h5", "hdf5", "application/x-hdf5"}, {"html", "html", "text/html"},
             {"md", "md", "text/markdown"},      {"txt", "txt", "text/plain"},
             {"cff", "cff", "application/x-yaml"}, {"yaml", "yaml", "application/x-yaml"},
             {"png", "png", "image/png"},        {"err", "txt", "text/plain"}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(e, t[i].ext)) {
            *media = t[i].media;
            return t[i].format;
        }
    *media = "application/octet-stream";
    return e[0] ? e : "bin";
}

/* A resource name: lowercase letters, digits, '-', '.', '_'. */
static void res_name(const char *p, char *buf, size_t len)
{
    size_t n = 0;
    for (; *p && n + 1 < len; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        buf[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                           c == '-'
                       ? c
                       : '-';
    }
    buf[n] = '\0';
}

/* Frictionless type of a column from its values (integer, number, string). */
static const char *infer_type(const kcs_csv *c, int j)
{
    int is_int = 1, is_num = 1, any = 0;
    for (int i = 0; i < c->n_rows && (is_int || is_num); i++) {
        const char *s = c->rows[i][j];
        if (!s[0])
            continue;
        any = 1;
        char *end;
        strtoll(s, &end, 10);
        if (*end)
            is_int = 0;
        strtod(s, &end);
        if (*end)
            is_num = 0;
    }
    return !any ? "string" : is_int ? "integer" : is_num ? "number" : "string";
}

static void schema(FILE *f, const char *path, const char *root)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char table[64];
    snprintf(table, sizeof table, "%.*s", (int)strcspn(base, "."), base);
    int first, n = !strncmp(path, "tables/", 7) ? kcs_pub_table_cols(table, &first) : 0, nc;
    fputs(",\n   \"dialect\": {\"delimiter\": \",\", \"header\": true},\n   \"schema\": {\"fields\": [", f);
    if (n > 0) {
        const kcs_pub_col *c = kcs_pub_cols(&nc);
        for (int i = 0; i < n; i++) {
            fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
            kcs_json_str(f, c[first + i].name);
            fprintf(f, ", \"type\": \"%s\", \"description\": ", c[first + i].type);
            kcs_json_str(f, c[first + i].description);
            fputs("}", f);
        }
    } else {
        char full[4400];
        snprintf(full, sizeof full, "%s/%s", root, path);
        kcs_csv c;
        kcs_error e = {0};
        if (kcs_csv_read(full, &c, &e) == 0) {
            for (int j = 0; j < c.n_cols; j++) {
                fputs(j ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
                kcs_json_str(f, c.header[j]);
                fprintf(f, ", \"type\": \"%s\"}", infer_type(&c, j));
            }
            kcs_csv_free(&c);
        }
    }
    fputs("],\n    \"missingValues\": [\"\", \"nan\"]}", f);
}

int kcs_pub_package(const char *root, kcs_error *err)
{
    char p[4400], date[16], when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    FILE *f;
    snprintf(p, sizeof p, "%s/LICENSE-data.txt", root);
    if (!(f = fopen(p, "w")) || fputs(licence_text, f) < 0 || fclose(f))
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", p);
    snprintf(p, sizeof p, "%s/CITATION.cff", root);
    if (!(f = fopen(p, "w")))
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", p);
    fprintf(f,
            "cff-version: 1.2.0\n"
            "message: \"If you use this dataset, please cite it as below.\"\n"
            "type: dataset\n"
            "title: \"kcs atlas: cross-vendor baseline divergence of ML kernels\"\n"
            "authors:\n"
            "  - name: \"kcs contributors\"\n"
            "version: \"%s\"\n"
            "date-released: \"%s\"\n"
            "license: CC-BY-4.0\n"
            "keywords: [\"floating point\", \"matrix units\", \"kernel contracts\", \"tolerances\"]\n",
            KCS_VERSION, date);
    if (fclose(f))
        return kcs_fail(err, KCS_E_IO, "%s: write error", p);
    kcs_pub_files files;
    int rc = kcs_pub_walk(root, "", &files, err);
    if (rc)
        return rc;
    snprintf(p, sizeof p, "%s/datapackage.json", root);
    if (!(f = fopen(p, "w"))) {
        kcs_pub_files_free(&files);
        return kcs_fail(err, KCS_E_IO, "%s: cannot write", p);
    }
    fprintf(f, "{\n \"profile\": \"data-package\",\n \"name\": \"kcs-atlas\",\n"
               " \"title\": \"kcs atlas: cross-vendor baseline divergence of ML kernels\",\n"
               " \"version\": \"%s\",\n \"created\": \"%s\",\n"
               " \"contributors\": [{\"title\": \"kcs contributors\", \"role\": \"author\"}],\n"
               " \"licenses\": [{\"name\": \"CC-BY-4.0\", \"title\": \"Creative Commons Attribution "
               "4.0\", \"path\": \"https://creativecommons.org/licenses/by/4.0/\"}],\n"
               " \"resources\": [",
            KCS_VERSION, when);
    int first = 1;
    for (int i = 0; i < files.n && !rc; i++) {
        const char *path = files.path[i];
        if (!strcmp(path, "datapackage.json"))
            continue;
        char full[4400], hex[65], name[512];
        int64_t bytes = 0;
        snprintf(full, sizeof full, "%s/%s", root, path);
        if ((rc = kcs_sha256_file(full, hex, &bytes, err)))
            break;
        const char *media, *format = ext_format(path, &media);
        res_name(path, name, sizeof name);
        fputs(first ? "\n  {\"name\": " : ",\n  {\"name\": ", f);
        first = 0;
        kcs_json_str(f, name);
        fputs(", \"path\": ", f);
        kcs_json_str(f, path);
        fprintf(f, ", \"format\": \"%s\", \"mediatype\": \"%s\", \"bytes\": %" PRId64
                   ", \"hash\": \"sha256:%s\"",
                format, media, bytes, hex);
        if (!strcmp(format, "csv")) {
            fputs(", \"profile\": \"tabular-data-resource\", \"encoding\": \"utf-8\"", f);
            schema(f, path, root);
        }
        fputs("}", f);
    }
    fputs("\n ]\n}\n", f);
    kcs_pub_files_free(&files);
    if (fclose(f) && !rc)
        rc = kcs_fail(err, KCS_E_IO, "%s: write error", p);
    return rc;
}
