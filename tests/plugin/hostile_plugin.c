/* Hostile plugin libraries for tests/integration/test_isolation.sh: each is
 * an fp32 gemm that attacks the grader in one way (one build flag each,
 * tests/plugin/CMakeLists.txt). kcs must give every one a verdict, exit
 * non-zero for all but the chatty one, and never die itself.
 *   -DPEEK      reads the reference from memory: computes D[0][0] and D[0][1]
 *               with two dot products, searches its own process's writable
 *               memory for a double array starting with them, then its
 *               parent's (through /proc/PPID/mem), and copies it out (the
 *               mechanism of a kernel "finding" the grader's reference);
 *               finds nothing: zeros elsewhere
 *   -DEXIT      exit(0) inside run()
 *   -DABORT     abort()
 *   -DOVERRUN   writes 64 KiB past the end of its output
 *   -DHANG      never returns
 *   -DCLOSEFDS  closes every file descriptor, then returns a correct result
 *   -DCHATTY    a correct gemm that prints to stdout and stderr on every call
 *   -DCRASH_AFTER=N  correct for N calls, then SIGSEGV on every later call
 *               (a rank crashing mid-study)
 *   -DCRASH_K=K  SIGSEGV on every call with reduction length K, correct
 *               otherwise (a crash that depends on the inputs only, so a
 *               resumed run must reproduce it)
 *   -DSPIN      never returns, burning CPU (for the worker's CPU-time limit)
 *   -DHOG       a correct gemm that first reserves 1 GiB (malloc, untouched)
 *               and fails the call when it cannot (the address-space limit) */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_common.h"

__attribute__((unused)) static void gemm_f32(const kcs_plugin_call *c)
{
    const float *A = c->in[0], *B = c->in[1], *C = c->in[2];
    float *D = c->out;
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j = 0; j < c->n; j++) {
            double s = C ? C[i * c->n + j] : 0.0;
            for (int64_t p = 0; p < c->k; p++)
                s += (double)A[i * c->k + p] * B[p * c->n + j];
            D[i * c->n + j] = (float)s;
        }
}

#ifdef PEEK
static double dot(const kcs_plugin_call *c, int64_t j)
{
    const float *A = c->in[0], *B = c->in[1], *C = c->in[2];
    double s = C ? C[j] : 0.0;
    for (int64_t p = 0; p < c->k; p++)
        s += (double)A[p] * B[p * c->n + j];
    return s;
}

static int close_to(double x, double y)
{
    double d = x - y;
    d = d < 0 ? -d : d;
    double a = y < 0 ? -y : y;
    return d <= 1e-9 * a + 1e-300;
}

/* The parent's writable mappings, read through /proc/PPID/mem into buf. */
static int find_in_parent(double d00, double d01, double *buf, size_t want)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)getppid());
    FILE *f = fopen(path, "r");
    snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
    FILE *mem = fopen(path, "rb");
    int found = 0;
    char line[512];
    static double chunk[1 << 16];
    while (f && mem && !found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r' || perm[1] != 'w')
            continue;
        for (unsigned long a = lo; a < hi && !found; a += sizeof chunk - 16) {
            size_t len = hi - a < sizeof chunk ? hi - a : sizeof chunk;
            if (fseek(mem, (long)a, SEEK_SET) || fread(chunk, 1, len, mem) != len)
                break;
            for (size_t i = 0; i + 1 < len / 8 && !found; i++)
                if (close_to(chunk[i], d00) && close_to(chunk[i + 1], d01)) {
                    fseek(mem, (long)(a + 8 * i), SEEK_SET);
                    found = fread(buf, 8, want, mem) == want;
                }
        }
    }
    if (f)
        fclose(f);
    if (mem)
        fclose(mem);
    return found;
}

/* Every writable mapping of this process, searched for d00, d01. */
static const double *find_reference(double d00, double d01, size_t want)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return NULL;
    char line[512];
    const double *hit = NULL;
    while (!hit && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r' || perm[1] != 'w')
            continue;
        if (strstr(line, "[vvar]") || strstr(line, "[vsyscall]"))
            continue;
        for (unsigned long a = (lo + 7) & ~7ul; a + 8 * want <= hi; a += 8) {
            const double *p = (const double *)a;
            if (close_to(p[0], d00) && close_to(p[1], d01)) {
                hit = p;
                break;
            }
        }
    }
    fclose(f);
    return hit;
}
#endif

static int hostile_run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    if (strcmp(c->op, "gemm") || c->dtype_in != KCS_DT_F32 || c->dtype_out != KCS_DT_F32) {
        snprintf(msg, msg_len, "hostile plugin: fp32 gemm only");
        return -1;
    }
#if defined(PEEK)
    size_t mn = (size_t)(c->m * c->n);
    float *D = c->out;
    memset(D, 0, c->out_bytes);
    double d00 = dot(c, 0), d01 = c->n > 1 ? dot(c, 1) : 0.0;
    const double *ref = mn > 1 ? find_reference(d00, d01, mn) : NULL;
    static double copy[1 << 20];
    if (!ref && mn > 1 && mn <= sizeof copy / 8 && find_in_parent(d00, d01, copy, mn))
        ref = copy;
    if (ref) {
        for (size_t i = 0; i < mn; i++)
            D[i] = (float)ref[i];
    } else {
        D[0] = (float)d00;
        if (c->n > 1)
            D[1] = (float)d01;
    }
    return 0;
#elif defined(EXIT)
    exit(0);
#elif defined(ABORT)
    abort();
#elif defined(OVERRUN)
    gemm_f32(c);
    memset((char *)c->out + c->out_bytes, 0x5a, 64 * 1024);
    return 0;
#elif defined(HANG)
    for (;;)
        pause();
#elif defined(CLOSEFDS)
    gemm_f32(c);
    for (int fd = 0; fd < 65536; fd++)
        close(fd);
    return 0;
#elif defined(CHATTY)
    printf("chatty plugin: gemm %lldx%lldx%lld {\"not\": \"json\"\n", (long long)c->m,
           (long long)c->n, (long long)c->k);
    fflush(stdout);
    fprintf(stderr, "chatty plugin: stderr too\n");
    gemm_f32(c);
    return 0;
#elif defined(SPIN)
    for (volatile unsigned long i = 0;; i++)
        ;
#elif defined(HOG)
    void *big = malloc((size_t)1 << 30);
    if (!big) {
        snprintf(msg, msg_len, "hog: malloc of 1 GiB failed");
        return -1;
    }
    free(big);
    gemm_f32(c);
    return 0;
#elif defined(CRASH_AFTER)
    static int calls;
    if (++calls > CRASH_AFTER)
        raise(SIGSEGV);
    gemm_f32(c);
    return 0;
#elif defined(CRASH_K)
    if (c->k == CRASH_K)
        raise(SIGSEGV);
    gemm_f32(c);
    return 0;
#else
#error "one of PEEK EXIT ABORT OVERRUN HANG CLOSEFDS CHATTY CRASH_AFTER CRASH_K SPIN HOG"
#endif
}

KCS_TEST_PLUGIN("kcs-hostile", "gemm", hostile_run)
