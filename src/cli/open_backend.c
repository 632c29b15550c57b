/* kcs exec and kcs probe open one backend by name (cli.h). */
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "error.h"

int kcs_cli_open_backend(const char *backend, int device, const char *profile,
                         const char *options, const kcs_backend_ops **ops_p,
                         kcs_backend_ctx **ctx_p, kcs_error *err)
{
    const kcs_backend_ops *ops = kcs_backend_find(backend);
    *ops_p = ops;
    if (!ops) {
        const char *why = kcs_backend_why(backend);
        return kcs_fail(err, strncmp(why, "unavailable", 11) == 0 ? KCS_E_NODEV : KCS_E_INVAL,
                        "--backend: '%s' is %s", backend, why);
    }
    kcs_backend_config cfg = {.profile = profile, .options = options};
    return ops->open(device, &cfg, ctx_p, err);
}
