#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "contract.h"

int kcs_cmd_lint(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {
        "lint", "FILE.yaml... [--json] [--quiet]",
        "Validate contract files. Each error is reported as file:line:col: field: message;\n"
        "valid contracts are printed normalized (all eight parts, canonical names).\n"
        "A contract is a folder, contracts/<ID>/<ID>.yaml; the folder contracts/<ID> and the\n"
        "path contracts/<ID>.yaml name it too.",
        "exit status: 0 all files valid; 2 any file invalid or unreadable."};
    int json = 0, quiet = 0;
    const kcs_opt opts[] = {
        {0, "json", KCS_OPT_FLAG, &json, NULL, "print the normalized contracts as JSON"},
        {'q', "quiet", KCS_OPT_FLAG, &quiet, NULL, "print diagnostics only"},
        {0},
    };
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    if (npos == 0) {
        fprintf(stderr, "kcs lint: need at least one contract file\n");
        return 2;
    }
    int bad = 0, printed = 0;
    if (json && !quiet)
        printf("[");
    for (int i = 0; i < npos; i++) {
        kcs_contract *c;
        kcs_error err = {0};
        if (kcs_contract_load(argv[i], &c, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            bad = 1;
            continue;
        }
        if (!quiet) {
            if (json && printed++)
                printf(",");
            kcs_contract_print(c, stdout, json);
        }
        kcs_contract_free(c);
    }
    if (json && !quiet)
        printf("]\n");
    return bad ? 2 : 0;
}
