/* The names of the input distributions (contract.h): kcs_dist_name and
 * kcs_dist_parse, in a file of their own with no dependencies, so that the
 * dataset reader's validation (src/store/store_validate.c) and its fuzz
 * target link them alone. */
#include <string.h>

#include "contract.h"

static const char *const dist_names[KCS_DIST_COUNT] = {
    [KCS_DIST_NORMAL] = "normal", [KCS_DIST_UNIFORM_PM1] = "uniform_pm1",
    [KCS_DIST_WIDE_RANGE] = "wide_range", [KCS_DIST_CANCELLATION] = "cancellation",
    [KCS_DIST_LARGE] = "large", [KCS_DIST_OFFSET] = "offset",
    [KCS_DIST_SUBNORMAL] = "subnormal", [KCS_DIST_POSITIVE] = "positive",
    [KCS_DIST_EXACT] = "exact", [KCS_DIST_SPREAD] = "spread",
};

const char *kcs_dist_name(kcs_dist d)
{
    return (d >= 0 && d < KCS_DIST_COUNT) ? dist_names[d] : "?";
}

int kcs_dist_parse(const char *name, kcs_dist *d_p)
{
    for (int i = 0; name && i < KCS_DIST_COUNT; i++)
        if (!strcmp(name, dist_names[i])) {
            *d_p = (kcs_dist)i;
            return 0;
        }
    return KCS_E_INVAL;
}

