/* Writing JSON text: one escaper for every --json output. */
#ifndef KCS_JSON_H
#define KCS_JSON_H

#include <stdio.h>

/* s as a double-quoted string, valid JSON and valid YAML; NULL -> null. */
void kcs_json_str(FILE *f, const char *s);

#endif
