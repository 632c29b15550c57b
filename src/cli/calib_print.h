/* Printing shared by `kcs calibrate` and `kcs grade` (calib_print.c). */
#ifndef KCS_CLI_CALIB_PRINT_H
#define KCS_CLI_CALIB_PRINT_H

#include <stdio.h>

#include "calibrate.h"

/* A JSON string literal (quotes, escapes) of s. */
#include "json.h" /* kcs_json_str */
/* A JSON array of the names of a comma-separated list. */
void kcs_json_names(FILE *f, const char *list);
/* A JSON number, or "inf" / null for non-finite values. */
void kcs_json_num(FILE *f, double x);
/* The fields of an outcome-like row as JSON members (no braces):
 * "verdict", "ops", "trials", "failed", "errors", "max_tau", "signatures",
 * "detail". */
void kcs_json_row_members(FILE *f, const kcs_calib_row *r);

#endif
