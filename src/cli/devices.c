#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "json.h"

int kcs_cmd_devices(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "devices", "[--json]",
        "List every backend compiled in and each device it finds (vendor, model, arch,\n"
        "driver, runtime, UUID). A backend whose vendor runtime, driver or device is\n"
        "missing on this node is listed as 'unavailable: <reason>'; that is not an error.",
        "KCS_BACKENDS=-hip,-cuda excludes backends (their runtimes are not initialised);\n"
        "KCS_BACKENDS=cpu,opencl selects only those."};
    int json = 0;
    const kcs_opt opts[] = {{0, "json", KCS_OPT_FLAG, &json, NULL, "print JSON"}, {0}};
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (json)
        printf("[");
    int first = 1;
    for (int i = 0; i < kcs_backend_count(); i++) {
        const char *name = kcs_backend_name(i);
        if (kcs_backend_excluded(name))
            continue;
        kcs_device_info info[KCS_MAX_DEVICES];
        int count = 0;
        kcs_error err = {0};
        /* a module that does not load (vendor runtime missing) is unavailable */
        const kcs_backend_ops *ops = kcs_backend_find(name);
        const char *why = ops ? NULL : kcs_backend_why(name);
        const char *pre = "unavailable: ";
        if (why && strncmp(why, pre, strlen(pre)) == 0)
            why += strlen(pre);
        int drc = ops ? ops->discover(info, KCS_MAX_DEVICES, &count, &err)
                      : kcs_fail(&err, KCS_E_NODEV, "%s", why);
        if (json) {
            printf("%s\n  {\"backend\": ", first ? "" : ",");
            kcs_json_str(stdout, name);
            printf(", \"status\": \"%s\", \"message\": ",
                   drc == 0 ? "ok" : drc == KCS_E_NODEV ? "unavailable" : "error");
            kcs_json_str(stdout, drc ? err.msg : "");
            printf(", \"devices\": [");
            first = 0;
            for (int d = 0; drc == 0 && d < count && d < KCS_MAX_DEVICES; d++) {
                const char *keys[] = {"vendor", "model", "arch", "driver", "runtime", "uuid"};
                const char *vals[] = {info[d].vendor, info[d].model, info[d].arch,
                                      info[d].driver, info[d].runtime, info[d].uuid};
                printf("%s{\"index\": %d", d ? ", " : "", info[d].index);
                for (int j = 0; j < 6; j++) {
                    printf(", \"%s\": ", keys[j]);
                    kcs_json_str(stdout, vals[j]);
                }
                printf("}");
            }
            printf("]}");
            continue;
        }
        if (drc != 0) {
            printf("%-11s %s: %s\n", name, drc == KCS_E_NODEV ? "unavailable" : "error", err.msg);
            continue;
        }
        if (count == 0)
            printf("%-11s unavailable: no device\n", name);
        for (int d = 0; d < count && d < KCS_MAX_DEVICES; d++)
            printf("%-11s %d  %s | %s | arch %s | driver %s | runtime %s | uuid %s\n", name,
                   info[d].index, info[d].vendor, info[d].model, info[d].arch, info[d].driver,
                   info[d].runtime, info[d].uuid);
    }
    if (json)
        printf("\n]\n");
    return 0;
}
