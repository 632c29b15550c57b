/* libFuzzer target: arbitrary bytes as a study file (src/lang/study.c: YAML
 * reading, placements, case sweeps, contract references) and, when it
 * loads, the plan it expands into (src/plan/plan.c). A study names contracts by
 * path relative to itself, so each input is written to study.yaml in a
 * private directory that also holds contracts/ (copies of C-PRC-01 and
 * C-ORD-02, see fuzz_init). File access is sandboxed: every fopen() of the
 * code under test goes through fuzz_fopen (the build adds
 * -Dfopen=kcs_fuzz_fopen), which only opens regular files inside that
 * directory, so a fuzzed path such as /dev/stdin or /proc/kmsg cannot
 * block the run. The backend registry is stubbed (no backends compiled
 * in: every backend name is known, none is present), as study.c only asks
 * it for names.
 * Built by tests/fuzz/CMakeLists.txt (target fuzz_study) when clang is
 * found; run: ./fuzz_study corpus_work tests/fuzz/corpus_study */
#define _XOPEN_SOURCE 700 /* realpath, mkdtemp */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "profile.h"
#include "study.h"

#ifndef KCS_FUZZ_SOURCE_DIR
#define KCS_FUZZ_SOURCE_DIR "."
#endif

static char sandbox[PATH_MAX]; /* realpath of the private directory */
static char study_path[PATH_MAX];

/* The registry stub: study.c lists compiled-in backends in messages. */
const kcs_backend_ops *const *kcs_backends_all(void)
{
    static const kcs_backend_ops *const none[] = {NULL};
    return none;
}
/* and the profile names (backends/cpu/profile.c is not part of this fuzzer) */
int kcs_profile_names(const char *const **names_p, int *n_p)
{
    static const char *const names[] = {"nvidia-h100", "amd-mi300"};
    *names_p = names;
    *n_p = 2;
    return 0;
}
/* the profile spec parser: the name must be one of the two above; a
 * library path after a comma is accepted as it stands */
int kcs_profile_spec_parse(const char *spec, char *name, kcs_libpath *lp, kcs_error *err)
{
    *lp = (kcs_libpath){0};
    size_t n = strcspn(spec, ",");
    if (n >= KCS_PROFILE_SPEC_MAX || !((n == 11 && strncmp(spec, "nvidia-h100", n) == 0) ||
                                       (n == 9 && strncmp(spec, "amd-mi300", n) == 0)))
        return kcs_fail(err, KCS_E_INVAL, "unknown profile '%.*s'", (int)n, spec);
    memcpy(name, spec, n);
    name[n] = '\0';
    return 0;
}
int kcs_backend_known(const char *name)
{
    static const char *const all[] = {"cpu", "opencl", "cuda", "hip", "level_zero", "plugin"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, all[i]) == 0)
            return 1;
    return 0;
}
int kcs_backend_count(void)
{
    return 0;
}
const char *kcs_backend_name(int i)
{
    (void)i;
    return NULL;
}

/* fopen of the code under test (see the header comment). */
FILE *kcs_fuzz_fopen(const char *restrict path, const char *restrict mode)
{
    char real[PATH_MAX];
    struct stat st;
    size_t n = strlen(sandbox);
    if (strcmp(mode, "rb") != 0 && strcmp(mode, "r") != 0) {
        errno = EACCES;
        return NULL;
    }
    if (!realpath(path, real) || strncmp(real, sandbox, n) != 0 || real[n] != '/') {
        errno = ENOENT;
        return NULL;
    }
    int fd = open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = ENOENT;
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char buf[4096];
    ssize_t got;
    int rc = in >= 0 && out >= 0 ? 0 : -1;
    while (rc == 0 && (got = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)got) != got)
            rc = -1;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return rc;
}

static void cleanup(void)
{
    static const char *const names[] = {"contracts/C-PRC-01.yaml", "contracts/C-ORD-02.yaml",
                                        "contracts", "study.yaml", NULL};
    char p[PATH_MAX + 64];
    for (int i = 0; names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", sandbox, names[i]);
        if (unlink(p) != 0)
            rmdir(p);
    }
    rmdir(sandbox);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/kcs_fuzz_study.XXXXXX", tmp);
    if (!mkdtemp(dir) || !realpath(dir, sandbox)) {
        perror("fuzz_study: sandbox");
        exit(1);
    }
    atexit(cleanup);
    char p[PATH_MAX + 64], src[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/contracts", sandbox);
    if (mkdir(p, 0700) != 0) {
        perror("fuzz_study: mkdir");
        exit(1);
    }
    static const char *const ids[] = {"C-PRC-01", "C-ORD-02"};
    for (int i = 0; i < 2; i++) {
        snprintf(src, sizeof src, "%s/contracts/%s/%s.yaml", KCS_FUZZ_SOURCE_DIR, ids[i], ids[i]);
        snprintf(p, sizeof p, "%s/contracts/%s.yaml", sandbox, ids[i]);
        if (copy_file(src, p) != 0) {
            fprintf(stderr, "fuzz_study: cannot copy %s\n", src);
            exit(1);
        }
    }
    snprintf(study_path, sizeof study_path, "%s/study.yaml", sandbox);
    setenv("KCS_MAX_MEMORY_MIB", "64", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16))
        return 0;
    int fd = open(study_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
        abort();
    close(fd);

    kcs_study *s = NULL;
    kcs_error err = {0};
    int rc = kcs_study_load(study_path, &s, &err);
    if (rc == 0) {
        if (!s || s->n_contracts < 1)
            abort();
        kcs_plan plan = {0};
        if (kcs_plan_build(s, &plan, &err) == 0) {
            for (int64_t i = 0; i < plan.n_cases; i++) {
                const kcs_case *cs = &plan.cases[i];
                if (cs->contract < 0 || cs->contract >= s->n_contracts || cs->trials < 1)
                    abort();
            }
            for (int r = 0; r < 4 && s->n_placement; r++)
                (void)kcs_study_placement(s, r);
            kcs_plan_free(&plan);
        } else if (err.code != KCS_E_INVAL && err.code != KCS_E_NOMEM) {
            abort();
        }
        kcs_study_free(s);
    } else if (s || (err.code != KCS_E_INVAL && err.code != KCS_E_NOMEM && err.code != KCS_E_IO)) {
        abort();
    } else if (!err.msg[0]) {
        abort(); /* every refusal says why */
    }
    return 0;
}
