/* The worker's box, the grader's preparation before the clone
 * (worker_box_impl.h): the Landlock ruleset, the mount list for the
 * read-only remount, the cgroup v2 directory. The C library is fine here. */
#define _GNU_SOURCE
#include "worker_box_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* -------------------------------------------------------------- Landlock */

/* The uapi structures as of ABI 6 (the system's header may be older). */
struct box_ll_attr {
    uint64_t handled_access_fs, handled_access_net, scoped;
};
struct box_ll_path {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define LL_WRITE_FILE (1ull << 1)
#define LL_REMOVE_DIR (1ull << 4)
#define LL_REMOVE_FILE (1ull << 5)
#define LL_MAKE_ALL (0x7Full << 6) /* char dir reg sock fifo block sym */
#define LL_REFER (1ull << 13)      /* ABI 2 */
#define LL_TRUNCATE (1ull << 14)   /* ABI 3 */
#define LL_SCOPE_SIGNAL (1ull << 1) /* ABI 6 */
#define LL_RULE_PATH_BENEATH 1

static int ll_abi(void)
{
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, 1u /* VERSION */);
    return v < 0 ? 0 : (int)v;
}

static void ll_allow(int ruleset, const char *path, uint64_t access)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            access &= LL_WRITE_FILE | LL_TRUNCATE; /* the rights a file can hold */
        struct box_ll_path pb = {access, fd};
        syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
    }
    close(fd);
}

/* A ruleset: writes only beneath scratch and to the harmless and GPU
 * device nodes; no signal out of the domain (ABI 6). -1 with why. */
int box_ll_ruleset(const char *scratch, char *why, size_t len, int *e)
{
    int abi = ll_abi();
    *e = 0;
    if (abi < 1) {
        *e = errno;
        snprintf(why, len, "the kernel offers no Landlock");
        return -1;
    }
    struct box_ll_attr a = {0};
    a.handled_access_fs = LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_ALL;
    if (abi >= 2)
        a.handled_access_fs |= LL_REFER;
    if (abi >= 3)
        a.handled_access_fs |= LL_TRUNCATE;
    size_t size = sizeof(uint64_t);
    if (abi >= 6) {
        a.scoped = LL_SCOPE_SIGNAL;
        size = sizeof a;
    }
    int fd = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
    if (fd < 0) {
        *e = errno;
        snprintf(why, len, "landlock_create_ruleset failed");
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (scratch[0])
        ll_allow(fd, scratch, a.handled_access_fs);
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/kfd",
                                       "/dev/dri"};
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        ll_allow(fd, devs[i], LL_WRITE_FILE | (abi >= 3 ? LL_TRUNCATE : 0));
    DIR *d = opendir("/dev");
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (!strncmp(de->d_name, "nvidia", 6)) {
            char p[300];
            snprintf(p, sizeof p, "/dev/%s", de->d_name);
            ll_allow(fd, p, LL_WRITE_FILE);
        }
    if (d)
        closedir(d);
    return fd;
}

/* --------------------------------------------------------- mounts, cgroup */


static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] && p[3]) {
            *o++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
}

void box_mounts_read(box_mount_list *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return;
    size_t cap = 0, used = 0;
    int ncap = 0;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char mp[4096], opts[512];
        if (sscanf(line, "%*s %*s %*s %*s %4095s %511s", mp, opts) != 2)
            continue;
        unescape(mp);
        unsigned long fl = 0;
        if (strstr(opts, "nosuid"))
            fl |= MS_NOSUID;
        if (strstr(opts, "nodev"))
            fl |= MS_NODEV;
        if (strstr(opts, "noexec"))
            fl |= MS_NOEXEC;
        if (strstr(opts, "noatime"))
            fl |= MS_NOATIME;
        else if (strstr(opts, "relatime"))
            fl |= MS_RELATIME;
        if (strstr(opts, "nodiratime"))
            fl |= MS_NODIRATIME;
        size_t l = strlen(mp) + 1;
        if (used + l > cap) {
            size_t nc = (cap + l) * 2;
            char *p = realloc(m->paths, nc);
            if (!p)
                break;
            m->paths = p;
            cap = nc;
        }
        if (m->n == ncap) {
            int nn = ncap ? 2 * ncap : 64;
            unsigned long *q = realloc(m->flags, (size_t)nn * sizeof *q);
            if (!q)
                break;
            m->flags = q;
            ncap = nn;
        }
        memcpy(m->paths + used, mp, l);
        used += l;
        m->flags[m->n++] = fl;
    }
    fclose(f);
}

void box_mounts_free(box_mount_list *m)
{
    free(m->paths);
    free(m->flags);
    memset(m, 0, sizeof *m);
}

/* The cgroup v2 hierarchy's directory of this process ("" when none). */
void box_cgroup_here(char *out, size_t len)
{
    out[0] = 0;
    char mnt[4096] = "", rel[4096] = "", line[8192];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f && fgets(line, sizeof line, f)) {
        char mp[4096], fstype[64];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(dash + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
            continue;
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1) {
            unescape(mp);
            snprintf(mnt, sizeof mnt, "%s", mp);
            break;
        }
    }
    if (f)
        fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "0::", 3)) {
            snprintf(rel, sizeof rel, "%s", line + 3);
            rel[strcspn(rel, "\n")] = 0;
        }
    if (f)
        fclose(f);
    if (mnt[0] && rel[0])
        snprintf(out, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "");
}
