/* Shared by the plugin backend's two modes: plugin_backend.c (helpers and
 * the in-process table) and plugin_isolated.c (the worker process). */
#ifndef KCS_PLUGIN_INTERNAL_H
#define KCS_PLUGIN_INTERNAL_H

#include <limits.h>

#include "backend.h"
#include "kcs_plugin.h"
#include "worker_host.h"

#define PLUGIN_GUARD_BYTES 4096 /* each side of the output */
#define PLUGIN_MSG_LEN 1024
#define PLUGIN_RUNTIME "kcs plugin ABI 1"

struct kcs_backend_ctx {
    void *dl;               /* in-process: the library */
    const kcs_plugin *pl;   /* in-process: its descriptor */
    kcs_worker *w;          /* isolated: the current worker (NULL: start one at the next call) */
    kcs_worker_limits lim;  /* isolated: the worker's limits and log */
    char worker[PATH_MAX];  /* isolated: the kcs-worker program */
    unsigned restarts;      /* isolated: workers started after the first */
    unsigned ops_mask;      /* bit (1u << kcs_op) for each op the plugin lists */
    char given[PATH_MAX];   /* cfg->path as given */
    char file[PATH_MAX];    /* the file the loader mapped (for the identity) */
    char name[128];
    char uuid[48];          /* XXH3-128 of the library file's bytes, hex */
    uint32_t declares;      /* what the library declares (kcs_plugin_declares; declares.h) */
    char box[48];           /* isolated: the worker box's layers that held (kcs_box_summary) */
};

int plugin_to_dtype(kcs_format f, kcs_dtype *t_p);
void plugin_encode(kcs_format f, const double *x, size_t n, void *dst);
void plugin_decode(kcs_format f, const void *src, size_t n, double *x);
int plugin_hash_file(const char *path, char *hex, size_t len);
void plugin_copy_tail(char *dst, size_t len, const char *src);
int plugin_parse_ops(const char *list, unsigned *mask_p, int verbose, const char *lib);
void plugin_ops_list(unsigned mask, char *buf, size_t len);
int plugin_check_call(const kcs_backend_ctx *c, const kcs_call *call, kcs_plugin_call *pc,
               kcs_error *err);
void plugin_copy_msg(const kcs_call *call, const char *msg);
size_t plugin_input_bytes(const kcs_call *call, int i);
int plugin_encode_input(const kcs_backend_ctx *c, const kcs_call *call, int i, void *dst,
                        kcs_error *err);
void plugin_fill_guarded(unsigned char *base, size_t out_bytes, size_t guard_bytes, kcs_format f);
size_t plugin_guard_breach(const unsigned char *base, size_t out_bytes, size_t guard_bytes,
                           kcs_format f);
size_t plugin_guard_breach_range(const unsigned char *base, size_t out_bytes, size_t guard_bytes,
                                 kcs_format f, size_t *last_p);
int plugin_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err);
int plugin_describe(kcs_backend_ctx *c, kcs_device_info *info, kcs_error *err);
void plugin_close(kcs_backend_ctx *c);
/* The library's declaration text -> c->declares; KCS_E_INVAL naming an
 * unknown name. */
int plugin_set_declares(kcs_backend_ctx *c, const char *text, kcs_error *err);
/* The ops table's declares slot: the library's declaration, for every op. */
uint32_t plugin_declares(kcs_backend_ctx *c, const kcs_call *call);

/* The in-process table (the library dlopen()ed into kcs): `kcs bench
 * isolation`'s baseline only. */
extern const kcs_backend_ops kcs_backend_plugin_inprocess;

/* A fresh context for the library named in cfg (device 0 only), or NULL
 * with the reason in err: what both ways of running a plugin start from. */
kcs_backend_ctx *kcs_plugin_ctx_new(int device_index, const kcs_backend_config *cfg,
                                    kcs_error *err);

/* "" for a path with a '/', else the hint that a bare name is searched on
 * the library path (appended to a failure to load it). */
const char *kcs_plugin_path_hint(const char *path);

#endif
