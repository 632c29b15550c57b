/* CSV for kcs publish: RFC 4180 escaping on output, and a reader of the
 * CSV files the reducer writes (and of imported report tables): a whole
 * file as rows of cells. */
#ifndef KCS_PUB_CSV_H
#define KCS_PUB_CSV_H

#include <stdio.h>

#include "error.h"

/* One cell: quoted ("" for ") when it holds a comma, quote, CR or LF, or
 * starts or ends with a space; else as it is. */
void kcs_csv_cell(FILE *f, const char *s);
/* The same into buf (always terminated; truncated to len - 1). */
void kcs_csv_escape(const char *s, char *buf, size_t len);

typedef struct kcs_csv {
    int n_rows;      /* data rows (the header not counted) */
    int n_cols;      /* header's cells */
    char **header;   /* [n_cols] */
    char ***rows;    /* [n_rows][n_cols]: a short row's missing cells are "" */
    int *line;       /* [n_rows]: the line each row starts on (1 = header) */
} kcs_csv;

/* Read path: KCS_E_IO when it cannot be read, KCS_E_INVAL (file:line:
 * message) for an unterminated quote or a row with more cells than the header. */
int kcs_csv_read(const char *path, kcs_csv *c, kcs_error *err);
/* Parse text (len bytes); name is used in messages. */
int kcs_csv_parse(const char *name, const char *text, size_t len, kcs_csv *c, kcs_error *err);
void kcs_csv_free(kcs_csv *c);
/* The column named name, or -1. */
int kcs_csv_col(const kcs_csv *c, const char *name);

#endif
