/* The one place that knows which backends exist (built by CMake's
 * KCS_HAVE_<X> definitions), which ones KCS_BACKENDS excludes, and how each
 * is reached: cpu and plugin are part of libkcs; the vendor backends are
 * modules (libkcs_backend_<name>.so, each linking its vendor runtime) that
 * are dlopened on first use, so neither libkcs nor kcs has a vendor library
 * among its NEEDED entries, and commands that touch no device load none. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "freivalds_device.h"
#include "study.h"

extern const kcs_backend_ops kcs_backend_cpu;
#ifdef KCS_HAVE_PLUGIN
extern const kcs_backend_ops kcs_backend_plugin;
#endif

typedef struct entry {
    const char *name;
    const kcs_backend_ops *builtin; /* NULL: a module */
    int tried;                      /* module: dlopen attempted */
    const kcs_backend_ops *ops;     /* module: its table once loaded */
    char why[512];                  /* module: the load failure */
} entry;

static entry table[] = {
    {"cpu", &kcs_backend_cpu, 0, NULL, ""},
#ifdef KCS_HAVE_OPENCL
    {"opencl", NULL, 0, NULL, ""},
#endif
#ifdef KCS_HAVE_CUDA
    {"cuda", NULL, 0, NULL, ""},
#endif
#ifdef KCS_HAVE_HIP
    {"hip", NULL, 0, NULL, ""},
#endif
#ifdef KCS_HAVE_LEVEL_ZERO
    {"level_zero", NULL, 0, NULL, ""},
#endif
#ifdef KCS_HAVE_PLUGIN
    {"plugin", &kcs_backend_plugin, 0, NULL, ""},
#endif
};

#define N_TABLE ((int)(sizeof table / sizeof table[0]))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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

/* Every backend kcs has, built here or not: the study language's list
 * (a study written for a GPU cluster still loads where some are not built). */
int kcs_backend_known(const char *name)
{
    return kcs_study_backend_known(name);
}

int kcs_backend_count(void)
{
    return N_TABLE;
}

const char *kcs_backend_name(int i)
{
    return i >= 0 && i < N_TABLE ? table[i].name : NULL;
}

static entry *lookup(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < N_TABLE; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

/* The modules' folder: $KCS_BACKEND_DIR, else kcs/ next to the library
 * holding this code (build tree: build/lib/libkcs.so -> build/lib/kcs/;
 * installed: <libdir>/libkcs.so -> <libdir>/kcs/), so an installed tree
 * can be moved. */
static void module_dir(char *buf, size_t len)
{
    const char *env = getenv("KCS_BACKEND_DIR");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return;
    }
    Dl_info di;
    char real[PATH_MAX];
    if (dladdr((void *)&kcs_backend_count, &di) && di.dli_fname &&
        realpath(di.dli_fname, real)) {
        char *slash = strrchr(real, '/');
        if (slash)
            *slash = 0;
        snprintf(buf, len, "%s/kcs", real);
        return;
    }
    snprintf(buf, len, "kcs");
}

int kcs_backend_module_path(const char *name, char *buf, size_t len)
{
    entry *e = lookup(name);
    if (!e || e->builtin)
        return 0;
    char dir[PATH_MAX];
    module_dir(dir, sizeof dir);
    snprintf(buf, len, "%s/libkcs_backend_%s.so", dir, name);
    return 1;
}

/* dlopen a module once (under the lock); its ops table is the symbol
 * kcs_backend_<name>, checked for the ABI and the name. */
static void load(entry *e)
{
    pthread_mutex_lock(&lock);
    if (!e->tried) {
        e->tried = 1;
        char path[PATH_MAX + 64];
        kcs_backend_module_path(e->name, path, sizeof path);
        dlerror();
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *msg = dlerror();
            snprintf(e->why, sizeof e->why, "cannot load %s: %s", path,
                     msg ? msg : "dlopen failed");
        } else {
            char sym[64];
            snprintf(sym, sizeof sym, "kcs_backend_%s", e->name);
            const kcs_backend_ops *o = (const kcs_backend_ops *)dlsym(h, sym);
            if (!o) {
                snprintf(e->why, sizeof e->why, "%s has no symbol %s", path, sym);
                dlclose(h);
            } else if (o->abi != KCS_BACKEND_ABI || !o->name || strcmp(o->name, e->name) != 0) {
                snprintf(e->why, sizeof e->why,
                         "%s is backend ABI %d (%s), this kcs needs ABI %d (%s): a module of "
                         "another kcs build",
                         path, o->abi, o->name ? o->name : "?", KCS_BACKEND_ABI, e->name);
                dlclose(h);
            } else {
                e->ops = o; /* the handle stays open for the process's life */
            }
        }
    }
    pthread_mutex_unlock(&lock);
}

static const kcs_backend_ops *get(entry *e)
{
    if (e->builtin)
        return e->builtin;
    load(e);
    return e->ops;
}

const char *kcs_backend_why(const char *name)
{
    static __thread char buf[600];
    entry *e = lookup(name);
    if (!e)
        return "not compiled in";
    if (kcs_backend_excluded(name))
        return "excluded by KCS_BACKENDS";
    if (get(e))
        return NULL;
    snprintf(buf, sizeof buf, "unavailable: %s", e->why);
    return buf;
}

const kcs_backend_ops *const *kcs_backends_all(void)
{
    static const kcs_backend_ops *active[N_TABLE + 1];
    size_t n = 0;
    for (int i = 0; i < N_TABLE; i++) {
        if (kcs_backend_excluded(table[i].name))
            continue;
        const kcs_backend_ops *o = get(&table[i]);
        if (o)
            active[n++] = o;
    }
    active[n] = NULL;
    return active;
}

const kcs_backend_ops *kcs_backend_find(const char *name)
{
    entry *e = lookup(name);
    if (!e || kcs_backend_excluded(name))
        return NULL;
    return get(e);
}

void kcs_backends_describe(char *buf, size_t len, int probe)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < N_TABLE && used < len; i++) {
        const char *bn = table[i].name, *why = kcs_backend_why(bn);
        char state[600] = "";
        if (why) {
            snprintf(state, sizeof state, ": %s", why);
        } else if (probe) {
            const kcs_backend_ops *o = get(&table[i]);
            kcs_device_info info[KCS_MAX_DEVICES];
            int count = 0;
            kcs_error e = {0};
            if (o->discover(info, KCS_MAX_DEVICES, &count, &e) != 0)
                snprintf(state, sizeof state, ": unavailable: %s", e.msg);
            else
                snprintf(state, sizeof state, ": %d device%s", count, count == 1 ? "" : "s");
        }
        used += (size_t)snprintf(buf + used, len - used, "%s%s%s", i ? "; " : "", bn, state);
    }
}

/* The device Freivalds verifier is a slot of the backend's ops table. */
kcs_fv_device_fn kcs_freivalds_device(const char *backend)
{
    const kcs_backend_ops *o = kcs_backend_find(backend);
    return o ? o->freivalds : NULL;
}
