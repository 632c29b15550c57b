/* kcs-worker: the C plugin host of the worker protocol (include/kcs_worker.h).
 *
 *   kcs-worker LIB.so      (started by kcs, never by hand: the channel is fd 3)
 *
 * It dlopen()s LIB.so (include/kcs_plugin.h, ABI 1), answers HELLO, then
 * runs one kcs_plugin_call per CALL on the shared region and answers RESULT.
 * It links nothing of kcs but the two public headers: the grader's code and
 * data are not in this process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kcs_plugin.h"
#include "kcs_worker.h"

#define MSG_LEN 1024
#define TAIL_RESERVE ((size_t)1 << 20) /* PROT_NONE after the region: runaway writes fault */

static const int chan = KCS_WORKER_FD;
static unsigned char *region;
static size_t region_len, region_map_len;

static void die(const char *what)
{
    fprintf(stderr, "kcs-worker[%d]: %s\n", (int)getpid(), what);
    fflush(stderr);
    _exit(3);
}

/* Append a string (with its NUL) to a payload. */
static size_t put_str(unsigned char *buf, size_t used, size_t cap, const char *s)
{
    size_t n = strlen(s) + 1;
    if (used + n > cap)
        n = cap - used; /* truncated only beyond KCS_WORKER_MAX_MSG */
    memcpy(buf + used, s, n);
    if (n)
        buf[used + n - 1] = 0;
    return used + n;
}

static void send_msg(uint16_t type, uint32_t seq, const void *payload, size_t len)
{
    unsigned char buf[KCS_WORKER_MAX_MSG];
    kcs_worker_hdr h = {KCS_WORKER_MAGIC, KCS_WORKER_PROTOCOL_VERSION, type, (uint32_t)len, seq};
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, payload, len);
    ssize_t n;
    do
        n = send(chan, buf, sizeof h + len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        die("cannot send on the channel (the grader went away)");
}

static void hello(int status, const char *name, const char *ops, const char *msg,
                  const char *file, const char *declares)
{
    unsigned char p[KCS_WORKER_MAX_MSG - sizeof(kcs_worker_hdr)];
    kcs_worker_hello h = {status, (int32_t)getpid()};
    memcpy(p, &h, sizeof h);
    size_t used = sizeof h;
    used = put_str(p, used, sizeof p, name);
    used = put_str(p, used, sizeof p, ops);
    used = put_str(p, used, sizeof p, msg);
    used = put_str(p, used, sizeof p, file);
    used = put_str(p, used, sizeof p, declares);
    send_msg(KCS_WORKER_HELLO, 0, p, used);
}

static const kcs_plugin *load(const char *path)
{
    char msg[MSG_LEN];
    dlerror();
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        snprintf(msg, sizeof msg, "cannot load the library: %s", why ? why : "unknown error");
        hello(KCS_WORKER_LOAD_FAILED, "", "", msg, "", "");
        return NULL;
    }
    dlerror();
    void *sym = dlsym(dl, "kcs_plugin_get");
    const char *why = dlerror();
    if (why || !sym) {
        snprintf(msg, sizeof msg, "not a kcs plugin: symbol kcs_plugin_get not found: %s",
                 why ? why : "it resolves to NULL");
        hello(KCS_WORKER_NOT_IMPLEMENTATION, "", "", msg, "", "");
        return NULL;
    }
    kcs_plugin_get_fn get;
    memcpy(&get, &sym, sizeof get);
    const kcs_plugin *pl = get();
    if (!pl)
        snprintf(msg, sizeof msg, "kcs_plugin_get() returned NULL");
    else if (pl->abi_version != KCS_PLUGIN_ABI_VERSION)
        snprintf(msg, sizeof msg, "ABI version mismatch: the library declares abi_version %d, "
                 "this kcs implements %d (rebuild it against this kcs_plugin.h)",
                 pl->abi_version, KCS_PLUGIN_ABI_VERSION);
    else if (!pl->name || !pl->ops || !pl->run)
        snprintf(msg, sizeof msg, "incomplete descriptor: %s is NULL",
                 !pl->name ? "name" : !pl->ops ? "ops" : "run");
    else
        msg[0] = 0;
    if (msg[0]) {
        hello(KCS_WORKER_NOT_IMPLEMENTATION, "", "", msg, "", "");
        return NULL;
    }
    Dl_info di;
    char real[PATH_MAX] = "";
    if (dladdr(sym, &di) && di.dli_fname && di.dli_fname[0] && !realpath(di.dli_fname, real))
        snprintf(real, sizeof real, "%s", di.dli_fname);
    /* optional: what its kernels declare (kcs_plugin.h) */
    const char *declares = "";
    dlerror();
    void *dsym = dlsym(dl, "kcs_plugin_declares");
    if (!dlerror() && dsym) {
        kcs_plugin_declares_fn dfn;
        memcpy(&dfn, &dsym, sizeof dfn);
        const char *d = dfn();
        declares = d ? d : "";
    }
    hello(0, pl->name, pl->ops, "", real, declares);
    return pl;
}

static void map_region(int fd, uint64_t bytes)
{
    if (region)
        munmap(region, region_map_len);
    region = NULL;
    if (bytes == 0 || bytes > SIZE_MAX - TAIL_RESERVE)
        die("CALL announces a region of impossible size");
    region_len = (size_t)bytes;
    region_map_len = region_len + TAIL_RESERVE;
    void *base = mmap(NULL, region_map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        die("cannot reserve address space for the shared region");
    void *r = mmap(base, region_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (r == MAP_FAILED)
        die("cannot map the shared region");
    region = r;
    close(fd);
}

static int in_region(uint64_t off, uint64_t len)
{
    return off <= region_len && len <= region_len - off;
}

int main(int argc, char **argv)
{
    /* the process name kcs gave (argv[0]), not this program's file name:
     * a kernel does not learn from it that it is being graded */
    if (argc >= 1 && argv[0] && !strchr(argv[0], '/'))
        prctl(PR_SET_NAME, argv[0], 0, 0, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: kcs-worker LIB.so (started by kcs over the worker protocol, "
                "descriptor %d; see kcs_worker.h)\n", KCS_WORKER_FD);
        return 2;
    }
    const kcs_plugin *pl = load(argv[1]);
    if (!pl)
        return 0;
    static unsigned char buf[KCS_WORKER_MAX_MSG + 1];
    for (;;) {
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct iovec iov = {buf, sizeof buf};
        struct msghdr mh = {0};
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = ctl.b;
        mh.msg_controllen = sizeof ctl.b;
        ssize_t n = recvmsg(chan, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            return 0; /* the grader closed the channel: done */
        if (n < 0)
            die("cannot receive on the channel");
        int fd = -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                memcpy(&fd, CMSG_DATA(c), sizeof fd);
        kcs_worker_hdr h;
        if ((size_t)n < sizeof h || (mh.msg_flags & MSG_TRUNC))
            die("short or oversized message");
        memcpy(&h, buf, sizeof h);
        if (h.magic != KCS_WORKER_MAGIC || h.version != KCS_WORKER_PROTOCOL_VERSION ||
            h.length != (size_t)n - sizeof h)
            die("malformed message header");
        if (h.type == KCS_WORKER_BYE)
            return 0;
        if (h.type != KCS_WORKER_CALL)
            die("unexpected message type");
        kcs_worker_call wc;
        if (h.length < sizeof wc + 2)
            die("CALL too short");
        memcpy(&wc, buf + sizeof h, sizeof wc);
        buf[n] = 0;
        const char *op = (const char *)buf + sizeof h + sizeof wc;
        const char *attrs = op + strlen(op) + 1;
        if (attrs >= (const char *)buf + n)
            die("CALL lacks its attrs string");
        if (wc.flags & KCS_WORKER_CALL_NEW_REGION) {
            if (fd < 0)
                die("CALL announces a new region but carries no descriptor");
            map_region(fd, wc.region_bytes);
        } else if (fd >= 0) {
            close(fd);
        }
        if (!region || wc.region_bytes != region_len)
            die("CALL refers to a region that was never sent");
        kcs_plugin_call pc;
        memset(&pc, 0, sizeof pc);
        pc.op = op;
        pc.dtype_in = (kcs_dtype)wc.dtype_in;
        pc.dtype_acc = (kcs_dtype)wc.dtype_acc;
        pc.dtype_out = (kcs_dtype)wc.dtype_out;
        pc.m = wc.m;
        pc.n = wc.n;
        pc.k = wc.k;
        pc.batch = wc.batch;
        for (int i = 0; i < KCS_WORKER_MAX_INPUTS; i++) {
            if (!wc.in_bytes[i])
                continue;
            if (!in_region(wc.in_off[i], wc.in_bytes[i]))
                die("an input lies outside the region");
            pc.in[i] = region + wc.in_off[i];
        }
        if (!in_region(wc.out_off, wc.out_bytes))
            die("the output lies outside the region");
        pc.out = region + wc.out_off;
        pc.out_bytes = (size_t)wc.out_bytes;
        pc.attrs = attrs;
        char msg[MSG_LEN] = "";
        int rc = pl->run(&pc, msg, sizeof msg);
        msg[sizeof msg - 1] = 0;
        unsigned char p[sizeof(kcs_worker_result) + MSG_LEN];
        kcs_worker_result r = {rc, 0};
        memcpy(p, &r, sizeof r);
        size_t used = put_str(p, sizeof r, sizeof p, msg);
        send_msg(KCS_WORKER_RESULT, h.seq, p, used);
    }
}
