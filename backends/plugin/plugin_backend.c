/* The plugin backend: grades a kernel author's own shared library through
 * the public ABI of include/kcs_plugin.h (DESIGN §4, ABI version 1).
 *
 * kcs_backend_plugin (plugin_isolated.c) runs the library in a worker
 * process (include/kcs_worker.h); this file holds what both modes share
 * (dtype mapping, encodings, guards, the call checks, the identity) and
 * kcs_backend_plugin_inprocess, the same library dlopen()ed into kcs
 * itself: used only by `kcs bench isolation` as the baseline.
 *
 * In-process, open() dlopen()s cfg->path (RTLD_NOW | RTLD_LOCAL), resolves
 * kcs_plugin_get and checks the descriptor; run() converts a kcs_call
 * (doubles exact in their declared formats) into a kcs_plugin_call (native
 * storage of each dtype), pre-fills the output with the finite sentinel of
 * dtype_out surrounded by guard regions, calls the plugin, checks the
 * guards and decodes the result back into doubles.
 *
 * Error codes: a library that cannot be loaded is KCS_E_NODEV (like a
 * missing driver); a library that loads but is not a kcs ABI 1 plugin
 * (no kcs_plugin_get, wrong abi_version, incomplete descriptor) is
 * KCS_E_INVAL. run(): 0 ok; plugin > 0 -> KCS_E_RAISED, < 0 -> KCS_E_DEVICE
 * (the plugin's message in both cases, also copied to call->msg); a write
 * outside the output -> KCS_E_DEVICE; an op the plugin does not list ->
 * KCS_E_UNSUPPORTED. */
#define _GNU_SOURCE /* dladdr: the file the dynamic loader actually mapped */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "declares.h"
#include "plugin_internal.h"
#include "tensor.h"

/* --- dtype mapping ----------------------------------------------------- */

int plugin_to_dtype(kcs_format f, kcs_dtype *t_p)
{
    switch (f) {
    case KCS_FMT_FP64: *t_p = KCS_DT_F64; return 0;
    case KCS_FMT_FP32: *t_p = KCS_DT_F32; return 0;
    case KCS_FMT_TF32: *t_p = KCS_DT_TF32; return 0;
    case KCS_FMT_BF16: *t_p = KCS_DT_BF16; return 0;
    case KCS_FMT_FP16: *t_p = KCS_DT_F16; return 0;
    case KCS_FMT_FP8_E4M3: *t_p = KCS_DT_F8_E4M3; return 0;
    case KCS_FMT_FP8_E5M2: *t_p = KCS_DT_F8_E5M2; return 0;
    default: return KCS_E_UNSUPPORTED; /* FNUZ fp8: no ABI 1 dtype */
    }
}

/* Encode n doubles (exact in f) into f's native storage at dst. */
void plugin_encode(kcs_format f, const double *x, size_t n, void *dst)
{
    switch (f) {
    case KCS_FMT_FP64:
        memcpy(dst, x, n * sizeof *x);
        return;
    case KCS_FMT_FP32:
        for (size_t i = 0; i < n; i++)
            ((float *)dst)[i] = (float)x[i];
        return;
    case KCS_FMT_TF32:
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)dst)[i] = (uint32_t)kcs_format_encode(f, x[i]);
        return;
    case KCS_FMT_BF16:
    case KCS_FMT_FP16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = (uint16_t)kcs_format_encode(f, x[i]);
        return;
    default: /* fp8 */
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = (uint8_t)kcs_format_encode(f, x[i]);
        return;
    }
}

/* Decode n elements of f's storage into doubles. tf32 outputs are read as
 * the full fp32 value they hold: a kernel that leaves low mantissa bits set
 * is not silently truncated into conformance. */
void plugin_decode(kcs_format f, const void *src, size_t n, double *x)
{
    switch (f) {
    case KCS_FMT_FP64:
        memcpy(x, src, n * sizeof *x);
        return;
    case KCS_FMT_FP32:
    case KCS_FMT_TF32:
        for (size_t i = 0; i < n; i++)
            x[i] = (double)((const float *)src)[i];
        return;
    case KCS_FMT_BF16:
    case KCS_FMT_FP16:
        for (size_t i = 0; i < n; i++)
            x[i] = kcs_format_decode(f, ((const uint16_t *)src)[i]);
        return;
    default:
        for (size_t i = 0; i < n; i++)
            x[i] = kcs_format_decode(f, ((const uint8_t *)src)[i]);
        return;
    }
}

/* --- identity ------------------------------------------------------------ */

int plugin_hash_file(const char *path, char *hex, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    XXH3_state_t *st = XXH3_createState();
    if (!st) {
        fclose(f);
        return -1;
    }
    XXH3_128bits_reset(st);
    unsigned char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        XXH3_128bits_update(st, buf, got);
    int bad = ferror(f);
    fclose(f);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    if (bad)
        return -1;
    snprintf(hex, len, "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
    return 0;
}

/* Copy src into a small field, keeping the tail ("...") when it is too long:
 * the file name is the informative end of a path. */
void plugin_copy_tail(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n < len)
        snprintf(dst, len, "%s", src);
    else
        snprintf(dst, len, "...%s", src + n - (len - 4));
}

/* --- ops list ------------------------------------------------------------ */

int plugin_parse_ops(const char *list, unsigned *mask_p, int verbose, const char *lib)
{
    unsigned mask = 0;
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ",");
        size_t t = len;
        while (t > 0 && (p[t - 1] == ' ' || p[t - 1] == '\t'))
            t--;
        if (t > 0) {
            char word[64];
            kcs_op op;
            snprintf(word, sizeof word, "%.*s", (int)(t < 63 ? t : 63), p);
            if (t < 63 && kcs_op_parse(word, &op) == 0)
                mask |= 1u << op;
            else if (verbose)
                fprintf(stderr, "kcs: plugin %s lists op '%s', which kcs does not know "
                        "(ignored)\n", lib, word);
        }
        p += len;
    }
    *mask_p = mask;
    return mask ? 0 : KCS_E_INVAL;
}

void plugin_ops_list(unsigned mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int op = 0; op < KCS_OP_COUNT && used < len; op++)
        if (mask & (1u << op))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                     kcs_op_name((kcs_op)op));
}

/* --- declarations --------------------------------------------------------- */

int plugin_set_declares(kcs_backend_ctx *c, const char *text, kcs_error *err)
{
    char bad[64];
    if (kcs_decls_parse(text, &c->declares, bad, sizeof bad))
        return kcs_fail(err, KCS_E_INVAL, "plugin %s: kcs_plugin_declares() names '%s', which "
                        "kcs does not know (known: %s)", c->given, bad, kcs_decls_known());
    return 0;
}

uint32_t plugin_declares(kcs_backend_ctx *c, const kcs_call *call)
{
    (void)call;
    return c ? c->declares : 0;
}

/* --- ops table ------------------------------------------------------------ */

int plugin_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    (void)err;
    if (max > 0) {
        kcs_device_info *d = &out[0];
        memset(d, 0, sizeof *d);
        snprintf(d->backend, sizeof d->backend, "plugin");
        d->index = 0;
        snprintf(d->vendor, sizeof d->vendor, "plugin");
        snprintf(d->model, sizeof d->model, "user kernel library (plugin:PATH or --plugin PATH)");
        snprintf(d->arch, sizeof d->arch, "host memory I/O");
        snprintf(d->driver, sizeof d->driver, "dlopen");
        snprintf(d->runtime, sizeof d->runtime, PLUGIN_RUNTIME);
        snprintf(d->uuid, sizeof d->uuid, "plugin-0");
    }
    *count_p = 1;
    return 0;
}

kcs_backend_ctx *kcs_plugin_ctx_new(int device_index, const kcs_backend_config *cfg,
                                    kcs_error *err)
{
    const char *path = cfg ? cfg->path : NULL;
    if (!path || !*path) {
        kcs_fail(err, KCS_E_INVAL, "plugin: no library path (placement plugin:PATH or "
                 "kcs run --plugin PATH)");
        return NULL;
    }
    if (device_index != 0) {
        kcs_fail(err, KCS_E_NODEV, "plugin %s: device %d does not exist (a plugin is device 0)",
                 path, device_index);
        return NULL;
    }
    kcs_backend_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        kcs_fail(err, KCS_E_NOMEM, "plugin %s: out of memory", path);
        return NULL;
    }
    snprintf(c->given, sizeof c->given, "%s", path);
    return c;
}

const char *kcs_plugin_path_hint(const char *path)
{
    return strchr(path, '/') ? ""
                             : " (a name without '/' is searched on the library path; write "
                               "./NAME for a file in the current directory)";
}

static int inproc_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                       kcs_error *err)
{
    kcs_backend_ctx *c = kcs_plugin_ctx_new(device_index, cfg, err);
    if (!c)
        return err->code;
    const char *path = c->given;
    dlerror();
    c->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!c->dl) {
        const char *why = dlerror();
        kcs_fail(err, KCS_E_NODEV, "plugin %s: cannot load the library: %s%s", path,
                 why ? why : "unknown dlopen error", kcs_plugin_path_hint(path));
        goto err_free;
    }
    dlerror();
    void *sym = dlsym(c->dl, "kcs_plugin_get");
    const char *why = dlerror();
    if (why || !sym) {
        kcs_fail(err, KCS_E_INVAL, "plugin %s: not a kcs plugin: symbol kcs_plugin_get not "
                 "found: %s", path, why ? why : "it resolves to NULL");
        goto err_close;
    }
    kcs_plugin_get_fn get;
    memcpy(&get, &sym, sizeof get); /* object -> function pointer, as POSIX dlsym allows */
    const kcs_plugin *pl = get();
    if (!pl) {
        kcs_fail(err, KCS_E_INVAL, "plugin %s: kcs_plugin_get() returned NULL", path);
        goto err_close;
    }
    if (pl->abi_version != KCS_PLUGIN_ABI_VERSION) {
        kcs_fail(err, KCS_E_INVAL, "plugin %s: ABI version mismatch: the library declares "
                 "abi_version %d, this kcs implements %d (rebuild it against this "
                 "kcs_plugin.h)", path, pl->abi_version, KCS_PLUGIN_ABI_VERSION);
        goto err_close;
    }
    if (!pl->name || !pl->ops || !pl->run) {
        kcs_fail(err, KCS_E_INVAL, "plugin %s: incomplete descriptor: %s is NULL", path,
                 !pl->name ? "name" : !pl->ops ? "ops" : "run");
        goto err_close;
    }
    if (plugin_parse_ops(pl->ops, &c->ops_mask, cfg->verbose, path)) {
        kcs_fail(err, KCS_E_INVAL, "plugin %s: ops '%s' names no op kcs knows", path, pl->ops);
        goto err_close;
    }
    c->pl = pl;
    snprintf(c->name, sizeof c->name, "%s", pl->name);
    dlerror();
    void *dsym = dlsym(c->dl, "kcs_plugin_declares");
    if (!dlerror() && dsym) {
        kcs_plugin_declares_fn dfn;
        memcpy(&dfn, &dsym, sizeof dfn);
        if (plugin_set_declares(c, dfn(), err))
            goto err_close;
    }
    /* The identity is the file the loader mapped, found from the symbol. */
    Dl_info di;
    if (dladdr(sym, &di) && di.dli_fname && di.dli_fname[0]) {
        char real[PATH_MAX];
        snprintf(c->file, sizeof c->file, "%s",
                 realpath(di.dli_fname, real) ? real : di.dli_fname);
    } else {
        snprintf(c->file, sizeof c->file, "%s", path);
    }
    if (plugin_hash_file(c->file, c->uuid, sizeof c->uuid)) {
        kcs_fail(err, KCS_E_IO, "plugin %s: cannot read %s to fingerprint it", path, c->file);
        goto err_close;
    }
    if (cfg->verbose)
        fprintf(stderr, "kcs: plugin %s (%s) loaded from %s, xxh3-128 %s\n", c->name, pl->ops,
                c->file, c->uuid);
    *ctx_p = c;
    return 0;
err_close:
    dlclose(c->dl);
err_free:
    free(c);
    return err->code;
}

int plugin_describe(kcs_backend_ctx *c, kcs_device_info *info, kcs_error *err)
{
    (void)err;
    memset(info, 0, sizeof *info);
    snprintf(info->backend, sizeof info->backend, "plugin");
    info->index = 0;
    snprintf(info->vendor, sizeof info->vendor, "plugin");
    snprintf(info->model, sizeof info->model, "%s", c->name);
    plugin_ops_list(c->ops_mask, info->arch, sizeof info->arch);
    plugin_copy_tail(info->driver, sizeof info->driver, c->file);
    if (c->box[0]) /* isolated: which layers of the worker's box held */
        snprintf(info->runtime, sizeof info->runtime, PLUGIN_RUNTIME "; box %s", c->box);
    else
        snprintf(info->runtime, sizeof info->runtime, PLUGIN_RUNTIME);
    snprintf(info->uuid, sizeof info->uuid, "%s", c->uuid);
    return 0;
}

void plugin_close(kcs_backend_ctx *c)
{
    if (!c)
        return;
    kcs_worker_stop(c->w);
    kcs_worker_log_tidy(&c->lim);
    if (c->dl)
        dlclose(c->dl);
    free(c);
}

/* --- run ------------------------------------------------------------------ */

/* The native inputs of one call: each encoded into its own buffer. */
typedef struct native_io {
    void *in[KCS_MAX_INPUTS];
    unsigned char *out_base; /* guard | out | guard */
    size_t out_bytes, guard_bytes;
} native_io;

static void io_free(native_io *io)
{
    for (int i = 0; i < KCS_MAX_INPUTS; i++)
        free(io->in[i]);
    free(io->out_base);
}

/* Bytes of input i in its native storage (0: absent, gemm's optional C). */
size_t plugin_input_bytes(const kcs_call *call, int i)
{
    if (i >= kcs_op_n_inputs(call->op) || i >= KCS_MAX_INPUTS || !call->in[i])
        return 0;
    size_t n = kcs_op_in_len(call, i);
    int idx = call->op == KCS_OP_GATHER && i == 1;
    size_t es = idx ? sizeof(int64_t) : (size_t)kcs_format_get(call->dtype_in)->bits / 8;
    return n ? n * es : 1;
}

/* Encode input i (present) into dst (plugin_input_bytes(call, i) bytes). */
int plugin_encode_input(const kcs_backend_ctx *c, const kcs_call *call, int i, void *dst,
                        kcs_error *err)
{
    size_t n = kcs_op_in_len(call, i);
    if (call->in_len[i] && call->in_len[i] < n)
        return kcs_fail(err, KCS_E_INVAL, "plugin %s: input %d holds %zu elements, %s "
                        "needs %zu", c->name, i, call->in_len[i], kcs_op_name(call->op), n);
    if (!(call->op == KCS_OP_GATHER && i == 1)) {
        plugin_encode(call->dtype_in, call->in[i], n, dst);
        return 0;
    }
    int64_t *idx = dst;
    for (size_t r = 0; r < n; r++) {
        double x = call->in[i][r];
        /* 2^63 is the first double past int64's range. */
        if (!(x == floor(x)) || fabs(x) >= 9223372036854775808.0)
            return kcs_fail(err, KCS_E_INVAL, "plugin %s: gather index %g at position %zu "
                            "is not an int64", c->name, x, r);
        idx[r] = (int64_t)x;
    }
    return 0;
}

static int encode_inputs(const kcs_backend_ctx *c, const kcs_call *call, native_io *io,
                         kcs_error *err)
{
    for (int i = 0; i < KCS_MAX_INPUTS; i++) {
        size_t bytes = plugin_input_bytes(call, i);
        if (!bytes)
            continue;
        io->in[i] = malloc(bytes);
        if (!io->in[i])
            return kcs_fail(err, KCS_E_NOMEM, "plugin %s: out of memory for input %d (%zu "
                            "bytes)", c->name, i, bytes);
        int rc = plugin_encode_input(c, call, i, io->in[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Sentinel everywhere in guard | out | guard at base. */
void plugin_fill_guarded(unsigned char *base, size_t out_bytes, size_t guard_bytes, kcs_format f)
{
    size_t es = (size_t)kcs_format_get(f)->bits / 8;
    unsigned char pat[8];
    double s = kcs_sentinel(f);
    plugin_encode(f, &s, 1, pat);
    size_t total = out_bytes + 2 * guard_bytes;
    for (size_t off = 0; off < total; off += es)
        memcpy(base + off, pat, es);
}

/* Offset (from base) of the first guard byte that changed, or (size_t)-1. */
size_t plugin_guard_breach(const unsigned char *base, size_t out_bytes, size_t guard_bytes,
                           kcs_format f)
{
    return plugin_guard_breach_range(base, out_bytes, guard_bytes, f, NULL);
}

/* As plugin_guard_breach; *last_p (may be NULL) gets the last changed one. */
size_t plugin_guard_breach_range(const unsigned char *base, size_t out_bytes, size_t guard_bytes,
                                 kcs_format f, size_t *last_p)
{
    size_t es = (size_t)kcs_format_get(f)->bits / 8;
    unsigned char pat[8];
    double s = kcs_sentinel(f);
    plugin_encode(f, &s, 1, pat);
    const unsigned char *lo = base;
    const unsigned char *hi = base + guard_bytes + out_bytes;
    size_t first = (size_t)-1, last = (size_t)-1;
    for (size_t off = 0; off < guard_bytes; off++)
        if (lo[off] != pat[off % es]) {
            first = first == (size_t)-1 ? off : first;
            last = off;
        }
    for (size_t off = 0; off < guard_bytes; off++)
        if (hi[off] != pat[off % es]) {
            first = first == (size_t)-1 ? guard_bytes + out_bytes + off : first;
            last = guard_bytes + out_bytes + off;
        }
    if (last_p)
        *last_p = last;
    return first;
}

static int alloc_output(const kcs_backend_ctx *c, const kcs_call *call, native_io *io,
                        kcs_error *err)
{
    kcs_format f = call->dtype_out;
    size_t es = (size_t)kcs_format_get(f)->bits / 8;
    io->out_bytes = call->out_len * es;
    io->guard_bytes = PLUGIN_GUARD_BYTES;
    void *base = NULL;
    if (posix_memalign(&base, 64, io->out_bytes + 2 * io->guard_bytes))
        return kcs_fail(err, KCS_E_NOMEM, "plugin %s: out of memory for the output (%zu "
                        "bytes)", c->name, io->out_bytes);
    io->out_base = base;
    plugin_fill_guarded(io->out_base, io->out_bytes, io->guard_bytes, f);
    return 0;
}


int plugin_check_call(const kcs_backend_ctx *c, const kcs_call *call, kcs_plugin_call *pc,
                      kcs_error *err)
{
    const char *opn = kcs_op_name(call->op);
    if ((unsigned)call->op >= KCS_OP_COUNT || !(c->ops_mask & (1u << call->op))) {
        char offered[128];
        plugin_ops_list(c->ops_mask, offered, sizeof offered);
        return kcs_fail(err, KCS_E_UNSUPPORTED, "plugin %s does not offer %s (it offers %s)",
                        c->name, opn, offered);
    }
    if (call->variant && call->variant[0] && strcmp(call->variant, "native") != 0)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "plugin %s: variant '%s' is not offered (a "
                        "plugin library is one implementation: variant native)", c->name,
                        call->variant);
    if (plugin_to_dtype(call->dtype_in, &pc->dtype_in) || plugin_to_dtype(call->dtype_out, &pc->dtype_out))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "plugin %s: %s -> %s has no plugin ABI 1 dtype",
                        c->name, kcs_format_name(call->dtype_in),
                        kcs_format_name(call->dtype_out));
    if (call->acc.bits > 0 || plugin_to_dtype(call->acc.fmt, &pc->dtype_acc)) {
        char acc[32];
        return kcs_fail(err, KCS_E_UNSUPPORTED, "plugin %s: accumulator %s has no plugin ABI 1 "
                        "dtype", c->name, kcs_acc_str(&call->acc, acc, sizeof acc));
    }
    if (call->out_len != kcs_op_out_len(call))
        return kcs_fail(err, KCS_E_INVAL, "plugin %s: output holds %zu elements, %s %lldx%lldx"
                        "%lld needs %zu", c->name, call->out_len, opn, (long long)call->m,
                        (long long)call->n, (long long)call->k, kcs_op_out_len(call));
    pc->op = opn;
    pc->m = call->m;
    pc->n = call->n;
    pc->k = call->k;
    pc->batch = call->batch;
    pc->attrs = call->attrs ? call->attrs : "";
    return 0;
}

void plugin_copy_msg(const kcs_call *call, const char *msg)
{
    if (call->msg && call->msg_len)
        snprintf(call->msg, call->msg_len, "%s", msg);
}

static int inproc_run(kcs_backend_ctx *c, const kcs_call *call, kcs_error *err)
{
    kcs_plugin_call pc;
    memset(&pc, 0, sizeof pc);
    int rc = plugin_check_call(c, call, &pc, err);
    if (rc)
        return rc;
    native_io io;
    memset(&io, 0, sizeof io);
    rc = encode_inputs(c, call, &io, err);
    if (rc)
        goto out;
    rc = alloc_output(c, call, &io, err);
    if (rc)
        goto out;
    for (int i = 0; i < KCS_MAX_INPUTS; i++)
        pc.in[i] = io.in[i];
    pc.out = io.out_base + io.guard_bytes;
    pc.out_bytes = io.out_bytes;
    char msg[PLUGIN_MSG_LEN] = "";
    int prc = c->pl->run(&pc, msg, sizeof msg);
    msg[sizeof msg - 1] = 0;
    size_t last = 0;
    size_t bad = plugin_guard_breach_range(io.out_base, io.out_bytes, io.guard_bytes,
                                           call->dtype_out, &last);
    if (bad != (size_t)-1) {
        long long off = (long long)bad - (long long)io.guard_bytes;
        long long end = (long long)last - (long long)io.guard_bytes;
        /* the values it returned are judged, with the breach (protocol.c) */
        plugin_decode(call->dtype_out, pc.out, call->out_len, call->out);
        rc = kcs_fail(err, KCS_E_OVERRUN, "plugin %s: %s: plugin wrote outside its output "
                      "(bytes %lld..%lld relative to an output of %zu bytes)", c->name, pc.op,
                      off, end, io.out_bytes);
        plugin_copy_msg(call, err->msg);
        goto out;
    }
    if (prc > 0) {
        plugin_copy_msg(call, msg[0] ? msg : "(the plugin gave no reason)");
        rc = kcs_fail(err, KCS_E_RAISED, "plugin %s: %s raised: %s", c->name, pc.op,
                      msg[0] ? msg : "(no reason given)");
        goto out;
    }
    if (prc < 0) {
        plugin_copy_msg(call, msg[0] ? msg : "(the plugin gave no reason)");
        rc = kcs_fail(err, KCS_E_DEVICE, "plugin %s: %s failed (%d): %s", c->name, pc.op, prc,
                      msg[0] ? msg : "(no reason given)");
        goto out;
    }
    plugin_decode(call->dtype_out, pc.out, call->out_len, call->out);
out:
    io_free(&io);
    return rc;
}

const kcs_backend_ops kcs_backend_plugin_inprocess = {
    .abi = KCS_BACKEND_ABI,
    .name = "plugin",
    .discover = plugin_discover,
    .open = inproc_open,
    .run = inproc_run, /* ops the library does not list answer KCS_E_UNSUPPORTED */
    .describe = plugin_describe,
    .close = plugin_close,
    .declares = plugin_declares,
};
