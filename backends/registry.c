/* The one place that knows which backends exist (compiled in by CMake's
 * KCS_HAVE_<X> definitions) and which ones KCS_BACKENDS excludes. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

extern const kcs_backend_ops kcs_backend_cpu;
#ifdef KCS_HAVE_OPENCL
extern const kcs_backend_ops kcs_backend_opencl;
#endif
#ifdef KCS_HAVE_CUDA
extern const kcs_backend_ops kcs_backend_cuda;
#endif
#ifdef KCS_HAVE_HIP
extern const kcs_backend_ops kcs_backend_hip;
#endif
#ifdef KCS_HAVE_LEVEL_ZERO
extern const kcs_backend_ops kcs_backend_level_zero;
#endif
#ifdef KCS_HAVE_PLUGIN
extern const kcs_backend_ops kcs_backend_plugin;
#endif

static const kcs_backend_ops *const compiled[] = {
    &kcs_backend_cpu,
#ifdef KCS_HAVE_OPENCL
    &kcs_backend_opencl,
#endif
#ifdef KCS_HAVE_CUDA
    &kcs_backend_cuda,
#endif
#ifdef KCS_HAVE_HIP
    &kcs_backend_hip,
#endif
#ifdef KCS_HAVE_LEVEL_ZERO
    &kcs_backend_level_zero,
#endif
#ifdef KCS_HAVE_PLUGIN
    &kcs_backend_plugin,
#endif
    NULL,
};

#define N_COMPILED (sizeof compiled / sizeof compiled[0])

/* KCS_BACKENDS: comma-separated. "-x" entries exclude x; plain entries
 * select (only those listed run). Empty/unset: all compiled in. */
static int listed(const char *list, const char *name, int negated)
{
    size_t nl = strlen(name);
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int neg = len > 0 && p[0] == '-';
        const char *w = neg ? p + 1 : p;
        size_t wl = neg ? len - 1 : len;
        if (neg == negated && wl == nl && strncmp(w, name, nl) == 0)
            return 1;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

static int has_selection(const char *list)
{
    const char *p = list;
    while (*p) {
        while (*p == ',')
            p++;
        if (*p && *p != '-')
            return 1;
        while (*p && *p != ',')
            p++;
    }
    return 0;
}

int kcs_backend_excluded(const char *name)
{
    const char *env = getenv("KCS_BACKENDS");
    if (!env || !*env)
        return 0;
    if (listed(env, name, 1))
        return 1;
    if (has_selection(env) && !listed(env, name, 0))
        return 1;
    return 0;
}

const kcs_backend_ops *const *kcs_backends_all(void)
{
    static const kcs_backend_ops *active[N_COMPILED];
    size_t n = 0;
    for (size_t i = 0; compiled[i]; i++)
        if (!kcs_backend_excluded(compiled[i]->name))
            active[n++] = compiled[i];
    active[n] = NULL;
    return active;
}

const kcs_backend_ops *kcs_backend_find(const char *name)
{
    for (size_t i = 0; compiled[i]; i++)
        if (strcmp(compiled[i]->name, name) == 0)
            return kcs_backend_excluded(name) ? NULL : compiled[i];
    return NULL;
}
