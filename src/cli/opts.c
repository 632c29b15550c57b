#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "error.h"

void kcs_cli_help(FILE *f, const kcs_cmd_doc *doc, const kcs_opt *opts)
{
    fprintf(f, "usage: kcs %s %s\n\n%s\n\noptions:\n", doc->name, doc->usage, doc->summary);
    for (const kcs_opt *o = opts; o->long_name; o++) {
        char left[64];
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->long_name,
                     o->kind == KCS_OPT_FLAG ? "" : " ", o->kind == KCS_OPT_FLAG ? "" : o->arg);
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->long_name,
                     o->kind == KCS_OPT_FLAG ? "" : " ", o->kind == KCS_OPT_FLAG ? "" : o->arg);
        fprintf(f, "  %-28s %s\n", left, o->help);
    }
    fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
    if (doc->details)
        fprintf(f, "\n%s\n", doc->details);
}

static const kcs_opt *find_long(const kcs_opt *opts, const char *name, size_t len)
{
    for (const kcs_opt *o = opts; o->long_name; o++)
        if (strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
            return o;
    return NULL;
}

static const kcs_opt *find_short(const kcs_opt *opts, char c)
{
    for (const kcs_opt *o = opts; o->long_name; o++)
        if (o->short_name == c)
            return o;
    return NULL;
}

static int set_value(const kcs_cmd_doc *doc, const kcs_opt *o, const char *val)
{
    if (o->kind == KCS_OPT_STR) {
        *(const char **)o->target = val;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (errno || *end || !*val || v < 0 || v > (1ll << 40)) {
        fprintf(stderr, "kcs %s: --%s: '%s' is not a non-negative integer\n", doc->name,
                o->long_name, val);
        return 2;
    }
    *(long long *)o->target = v;
    return 0;
}

static int parse(const kcs_cmd_doc *doc, const kcs_opt *opts, int argc, char **argv, int *npos)
{
    int np = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            kcs_cli_help(stdout, doc, opts);
            return 1;
        }
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++)
                argv[np++] = argv[i];
            break;
        }
        const kcs_opt *o = NULL;
        const char *val = NULL;
        if (strncmp(a, "--", 2) == 0) {
            const char *eq = strchr(a + 2, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            o = find_long(opts, a + 2, len);
            if (eq)
                val = eq + 1;
        } else if (a[0] == '-' && a[1] && !a[2]) {
            o = find_short(opts, a[1]);
        } else {
            argv[np++] = a;
            continue;
        }
        if (!o) {
            fprintf(stderr, "kcs %s: unknown option '%s' (see kcs %s --help)\n", doc->name, a,
                    doc->name);
            return 2;
        }
        if (o->kind == KCS_OPT_FLAG) {
            if (val) {
                fprintf(stderr, "kcs %s: --%s takes no value\n", doc->name, o->long_name);
                return 2;
            }
            *(int *)o->target = 1;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "kcs %s: --%s needs a value (%s)\n", doc->name, o->long_name,
                        o->arg);
                return 2;
            }
            val = argv[++i];
        }
        int rc = set_value(doc, o, val);
        if (rc)
            return rc;
    }
    *npos = np;
    return 0;
}

int kcs_cli_parse(const kcs_cmd_doc *doc, const kcs_opt *opts, int argc, char **argv, int *npos,
                  int *status_p)
{
    int rc = parse(doc, opts, argc, argv, npos);
    *status_p = rc == 1 ? 0 : rc ? 2 : 0;
    return rc != 0;
}

int kcs_cli_parse_recorded(const kcs_cmd_doc *doc, const kcs_opt *opts, int argc, char **argv,
                           int *npos, int *status_p, char *cmdline, size_t len)
{
    size_t used = (size_t)snprintf(cmdline, len, "kcs");
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(cmdline + used, len - used, " %s", argv[i]);
    return kcs_cli_parse(doc, opts, argc, argv, npos, status_p);
}

void kcs_cli_subcmd_usage(FILE *f, const char *header, const kcs_subcmd *t, size_t n)
{
    fputs(header, f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-10s %s\n", t[i].name, t[i].summary);
}

int kcs_cli_dispatch(const char *prog, const char *what, const char *header,
                     const kcs_subcmd *t, size_t n, int argc, char **argv)
{
    if (argc < 2) {
        kcs_cli_subcmd_usage(stderr, header, t, n);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        kcs_cli_subcmd_usage(stdout, header, t, n);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(argv[1], t[i].name) == 0)
            return t[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown %s '%s'\n", prog, what, argv[1]);
    kcs_cli_subcmd_usage(stderr, header, t, n);
    return 2;
}

/* kcs exec and kcs probe open one backend by name (cli.h); kept here, with
 * what the other subcommands share, so that src/cli stays one file per
 * subcommand within its 25 files. */
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

/* Last resort against damaged files (cli.h): HDF5 1.10 crashes on some
 * damaged metadata (found by test_reduce_corrupt: H5Aexists on a damaged
 * attribute message, H5T conversion of a damaged compound), where no check
 * of kcs can look first. The crash becomes exit 2 with a message; datasets
 * are opened read-only, and an output directory is only replaced when
 * complete (the unfinished one is DIR.partial-<pid>). Nothing else is
 * trusted after the signal: write and _exit only. */
static const char *crash_cmd = "kcs";

static void on_crash(int sig)
{
    static const char msg[] = ": the HDF5 library crashed reading a damaged file (signal ";
    char num[4] = {(char)('0' + sig / 10 % 10), (char)('0' + sig % 10), ')', '\n'};
    static const char tail[] = "; the dataset was not modified and the output directory not "
                               "replaced (remove its .partial-<pid> copy)\n";
    ssize_t w = write(2, crash_cmd, strlen(crash_cmd));
    w += write(2, msg, sizeof msg - 1);
    w += write(2, num, 3);
    w += write(2, tail, sizeof tail - 1);
    (void)w;
    _exit(2);
}

void kcs_cli_catch_hdf5_crashes(const char *cmd)
{
    static char stack[1 << 16];
    crash_cmd = cmd;
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}
