/* JSON helpers of `kcs calibrate` and `kcs grade` (calib_print.h). */
#include "calib_print.h"

#include <math.h>
#include <string.h>

void kcs_json_names(FILE *f, const char *list)
{
    fputc('[', f);
    int first = 1;
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        if (n) {
            fputs(first ? "" : ", ", f);
            kcs_json_str(f, name);
            first = 0;
        }
        p = end ? end + 1 : NULL;
    }
    fputc(']', f);
}

void kcs_json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.6g", x);
    else if (isinf(x))
        fputs(x > 0 ? "\"inf\"" : "\"-inf\"", f);
    else
        fputs("null", f);
}

void kcs_json_row_members(FILE *f, const kcs_calib_row *r)
{
    fputs("\"verdict\": ", f);
    kcs_json_str(f, r->verdict);
    fputs(", \"ops\": ", f);
    kcs_json_names(f, r->ops);
    fprintf(f, ", \"trials\": %d, \"failed\": %d, \"errors\": %d, \"max_tau\": ", r->trials,
            r->failed, r->errors);
    kcs_json_num(f, r->max_tau);
    fputs(", \"signatures\": ", f);
    kcs_json_names(f, r->signatures);
    fputs(", \"detail\": ", f);
    kcs_json_str(f, r->detail);
}
