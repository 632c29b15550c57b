/* The names of kcs_status (store.h): the one list of what /results.status
 * and /provenance/ranks.status may hold. */
#include <string.h>

#include "store.h"

static const char *const status_names[KCS_ST_COUNT] = {
    [KCS_ST_OK] = "ok",
    [KCS_ST_RAISED] = "raised",
    [KCS_ST_ERROR] = "error",
    [KCS_ST_UNSUPPORTED] = "unsupported",
    [KCS_ST_TIMEOUT] = "timeout",
    [KCS_ST_CRASHED] = "crashed",
    [KCS_ST_UNAVAILABLE] = "unavailable",
    [KCS_ST_SKIPPED] = "skipped",
    [KCS_ST_ABSENT] = "absent",
};

const char *kcs_status_name(kcs_status s)
{
    return (s >= 0 && s < KCS_ST_COUNT) ? status_names[s] : "?";
}

kcs_status kcs_status_of(const char *text)
{
    for (int i = 0; text && i < KCS_ST_COUNT; i++)
        if (strcmp(text, status_names[i]) == 0)
            return (kcs_status)i;
    return KCS_ST_UNKNOWN;
}
