#include <H5public.h>
#include <stdio.h>

#include "backend.h"
#include "build_info.h"
#include "cli.h"

int kcs_cmd_version(int argc, char **argv)
{
    static const kcs_cmd_doc doc = {"version", "", "Print the version and build provenance.",
                                    NULL};
    const kcs_opt opts[] = {{0}};
    int npos = 0, rc = 0;
    if (kcs_cli_parse(&doc, opts, argc, argv, &npos, &rc))
        return rc;
    printf("kcs %s (git %s)\n", KCS_VERSION, KCS_GIT_HASH);
    printf("compiler: %s, %s\n", KCS_COMPILER, KCS_BUILD_TYPE);
    printf("HDF5: %s (parallel), MPI: %s\n", KCS_HDF5_VERSION, KCS_MPI_VERSION);
    printf("BLAS: %s\n", KCS_BLAS);
    /* names only: no backend module (vendor runtime) is loaded here */
    printf("backends compiled in:");
    for (int i = 0; i < kcs_backend_count(); i++) {
        char path[1024];
        printf(" %s%s", kcs_backend_name(i),
               kcs_backend_module_path(kcs_backend_name(i), path, sizeof path) ? " (module)" : "");
    }
    printf("\n");
    return 0;
}
