/* The plugin backend as kcs runs it: the library is loaded by a worker
 * process (`kcs-worker LIB.so`, backends/plugin/plugin_worker.c) that
 * speaks the worker protocol of include/kcs_worker.h. Each call's inputs,
 * in their native encodings, and its output between two guard regions go
 * into a shared region; the reference and everything else of kcs stay in
 * this process. A worker that dies, hangs past the call's time limit,
 * closes its channel or breaks the protocol fails that call
 * (KCS_E_CRASHED / KCS_E_TIMEOUT, the whole reason in the error) and the
 * next call starts a fresh worker.
 *
 * The worker program: $KCS_PLUGIN_WORKER, else kcs-worker next to the
 * running executable, else the one in the build tree. Limits and log:
 * KCS_WORKER_MEM, KCS_WORKER_CPU, KCS_WORKER_LOG (src/worker_host.h). */
#define _GNU_SOURCE
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_internal.h"
#include "tensor.h"

#define START_TIMEOUT_S 60.0 /* exec + dlopen of a GPU library can be slow */

static int find_worker(char *out, size_t len)
{
    const char *env = getenv("KCS_PLUGIN_WORKER");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, X_OK);
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        snprintf(out, len, "%s/kcs-worker", dirname(self));
        if (access(out, X_OK) == 0)
            return 0;
    }
#ifdef KCS_WORKER_BUILD_PATH
    snprintf(out, len, "%s", KCS_WORKER_BUILD_PATH);
    if (access(out, X_OK) == 0)
        return 0;
#endif
    snprintf(out, len, "kcs-worker");
    return -1;
}

/* Start a worker for c->given and check its HELLO. */
static int start(kcs_backend_ctx *c, kcs_worker_info *info, kcs_error *err)
{
    char *argv[] = {c->worker, c->given, NULL};
    int rc = kcs_worker_start(argv, &c->lim, START_TIMEOUT_S, &c->w, info, err);
    if (rc)
        return kcs_error_prefix(err, "plugin %s", c->given);
    kcs_box_summary(&info->box, c->box, sizeof c->box);
    if (info->status == 0)
        return 0;
    kcs_worker_stop(c->w);
    c->w = NULL;
    const char *path = c->given;
    if (info->status == KCS_WORKER_LOAD_FAILED)
        return kcs_fail(err, KCS_E_NODEV, "plugin %s: %s%s", path, info->msg,
                        kcs_plugin_path_hint(path));
    return kcs_fail(err, KCS_E_INVAL, "plugin %s: %s", path, info->msg);
}

static int iso_open(int device_index, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                    kcs_error *err)
{
    kcs_backend_ctx *c = kcs_plugin_ctx_new(device_index, cfg, err);
    if (!c)
        return err->code;
    const char *path = c->given;
    int rc = kcs_worker_limits_env(&c->lim, err);
    if (rc)
        goto fail;
    if (find_worker(c->worker, sizeof c->worker)) {
        rc = kcs_fail(err, KCS_E_NODEV, "plugin %s: the worker program %s is missing (set "
                      "KCS_PLUGIN_WORKER, or install kcs-worker next to kcs)", path, c->worker);
        goto fail;
    }
    kcs_worker_info info;
    if ((rc = start(c, &info, err)))
        goto fail;
    if (plugin_parse_ops(info.ops, &c->ops_mask, cfg->verbose, path)) {
        rc = kcs_fail(err, KCS_E_INVAL, "plugin %s: ops '%s' names no op kcs knows", path,
                      info.ops);
        goto fail;
    }
    snprintf(c->name, sizeof c->name, "%s", info.name);
    if ((rc = plugin_set_declares(c, info.declares, err)))
        goto fail;
    snprintf(c->file, sizeof c->file, "%s", info.file[0] ? info.file : path);
    if (plugin_hash_file(c->file, c->uuid, sizeof c->uuid)) {
        rc = kcs_fail(err, KCS_E_IO, "plugin %s: cannot read %s to fingerprint it", path,
                      c->file);
        goto fail;
    }
    if (cfg->verbose)
        fprintf(stderr, "kcs: plugin %s (%s) loaded from %s, xxh3-128 %s, in worker %d "
                "(%s; its output: %s)\n", c->name, info.ops, c->file, c->uuid,
                kcs_worker_pid(c->w), c->worker, c->lim.log_path);
    *ctx_p = c;
    return 0;
fail:
    plugin_close(c);
    return rc;
}

static size_t align_up(size_t x)
{
    return (x + KCS_WORKER_ALIGN - 1) & ~(size_t)(KCS_WORKER_ALIGN - 1);
}

static int iso_run(kcs_backend_ctx *c, const kcs_call *call, kcs_error *err)
{
    kcs_plugin_call pc;
    memset(&pc, 0, sizeof pc);
    int rc = plugin_check_call(c, call, &pc, err);
    if (rc)
        return rc;
    if (!c->w) { /* the last worker died: a fresh one takes this call */
        kcs_worker_info info;
        if ((rc = start(c, &info, err)))
            return rc == KCS_E_TIMEOUT ? rc : kcs_fail(err, KCS_E_CRASHED, "%s", err->msg);
        c->restarts++;
    }
    kcs_worker_call wc;
    memset(&wc, 0, sizeof wc);
    wc.dtype_in = pc.dtype_in;
    wc.dtype_acc = pc.dtype_acc;
    wc.dtype_out = pc.dtype_out;
    wc.m = pc.m;
    wc.n = pc.n;
    wc.k = pc.k;
    wc.batch = pc.batch;
    size_t off = 0;
    for (int i = 0; i < KCS_MAX_INPUTS && i < KCS_WORKER_MAX_INPUTS; i++) {
        wc.in_bytes[i] = plugin_input_bytes(call, i);
        wc.in_off[i] = wc.in_bytes[i] ? off : 0;
        off = align_up(off + wc.in_bytes[i]);
    }
    size_t es = (size_t)kcs_format_get(call->dtype_out)->bits / 8;
    size_t out_bytes = call->out_len * es;
    wc.guard_bytes = PLUGIN_GUARD_BYTES;
    size_t guard_at = off;
    wc.out_off = guard_at + PLUGIN_GUARD_BYTES;
    wc.out_bytes = out_bytes;
    size_t total = guard_at + 2 * PLUGIN_GUARD_BYTES + out_bytes;
    unsigned char *region = kcs_worker_region(c->w, total, err);
    if (!region)
        return err->code;
    for (int i = 0; i < KCS_WORKER_MAX_INPUTS; i++)
        if (wc.in_bytes[i] && (rc = plugin_encode_input(c, call, i, region + wc.in_off[i], err)))
            return rc;
    plugin_fill_guarded(region + guard_at, out_bytes, PLUGIN_GUARD_BYTES, call->dtype_out);
    char msg[PLUGIN_MSG_LEN] = "";
    int prc = 0;
    rc = kcs_worker_invoke(c->w, &wc, pc.op, pc.attrs, call->time_limit_s, &prc, msg, sizeof msg,
                         err);
    if (rc) {
        kcs_worker_stop(c->w);
        c->w = NULL;
        kcs_error_prefix(err, "plugin %s: %s", c->name, pc.op);
        plugin_copy_msg(call, err->msg);
        return rc;
    }
    size_t last = 0;
    size_t bad = plugin_guard_breach_range(region + guard_at, out_bytes, PLUGIN_GUARD_BYTES,
                                           call->dtype_out, &last);
    if (bad != (size_t)-1) {
        long long rel = (long long)bad - (long long)PLUGIN_GUARD_BYTES;
        long long end = (long long)last - (long long)PLUGIN_GUARD_BYTES;
        /* the values it returned are judged, with the breach (protocol.c) */
        plugin_decode(call->dtype_out, region + wc.out_off, call->out_len, call->out);
        rc = kcs_fail(err, KCS_E_OVERRUN, "plugin %s: %s: plugin wrote outside its output "
                      "(bytes %lld..%lld relative to an output of %zu bytes)", c->name, pc.op,
                      rel, end, out_bytes);
        plugin_copy_msg(call, err->msg);
        return rc;
    }
    if (prc > 0) {
        plugin_copy_msg(call, msg[0] ? msg : "(the plugin gave no reason)");
        return kcs_fail(err, KCS_E_RAISED, "plugin %s: %s raised: %s", c->name, pc.op,
                        msg[0] ? msg : "(no reason given)");
    }
    if (prc < 0) {
        plugin_copy_msg(call, msg[0] ? msg : "(the plugin gave no reason)");
        return kcs_fail(err, KCS_E_DEVICE, "plugin %s: %s failed (%d): %s", c->name, pc.op, prc,
                        msg[0] ? msg : "(no reason given)");
    }
    plugin_decode(call->dtype_out, region + wc.out_off, call->out_len, call->out);
    return 0;
}

const kcs_backend_ops kcs_backend_plugin = {
    .abi = KCS_BACKEND_ABI,
    .name = "plugin",
    .discover = plugin_discover,
    .open = iso_open,
    .run = iso_run, /* ops the library does not list answer KCS_E_UNSUPPORTED */
    .describe = plugin_describe,
    .close = plugin_close,
    .isolated = 1,
    .declares = plugin_declares,
};
