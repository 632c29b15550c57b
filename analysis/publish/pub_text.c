/* Small helpers of the tidy tables (pub_tables.h): growing texts, numbers
 * as the CSVs write them, freeing an atlas, reading a whole file. */
#define _GNU_SOURCE
#include "pub_tables.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kcs_pub_text_add(kcs_pub_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (t->n + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->n + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(t->s, cap);
        if (!p) {
            free(s);
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->n, s, (size_t)n + 1);
    t->n += (size_t)n;
    free(s);
}

const char *kcs_pub_num(double x, char *buf)
{
    if (isnan(x))
        buf[0] = '\0';
    else
        snprintf(buf, 32, "%.17g", x);
    return buf;
}

void kcs_pub_atlas_free(kcs_pub_atlas *a)
{
    for (int64_t i = 0; i < a->n_meas; i++)
        free(a->meas[i].refs.s);
    for (int64_t i = 0; i < a->n_pairs; i++)
        free(a->pairs[i].refs.s);
    for (int i = 0; i < a->n_tols; i++)
        free(a->tols[i].refs.s);
    free(a->devs);
    free(a->meas);
    free(a->pairs);
    free(a->fps);
    free(a->tols);
    free(a->srcs);
    free(a->dets);
    memset(a, 0, sizeof *a);
}

/* A whole file as a NUL-terminated string (NULL if unreadable); its
 * length in *len_p when given. */
char *kcs_pub_slurp(const char *path, size_t *len_p)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    char buf[65536];
    size_t got;
    while (m && (got = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, got, m);
    fclose(f);
    if (m)
        fclose(m);
    if (len_p)
        *len_p = len;
    return s;
}
