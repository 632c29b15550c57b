/* The kcs command: one file per subcommand, declarative option tables
 * (the --help text is generated from the same table that parses). */
#ifndef KCS_CLI_H
#define KCS_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef enum kcs_opt_kind { KCS_OPT_FLAG, KCS_OPT_STR, KCS_OPT_INT } kcs_opt_kind;

typedef struct kcs_opt {
    char short_name;       /* 0: long only */
    const char *long_name;
    kcs_opt_kind kind;
    void *target;          /* int* for FLAG, long long* for INT, const char** for STR */
    const char *arg;       /* metavariable in help, e.g. "FILE" */
    const char *help;
} kcs_opt;

typedef struct kcs_cmd_doc {
    const char *name;
    const char *usage;     /* after "kcs <name> " */
    const char *summary;
    const char *details;   /* printed after the options; may be NULL */
} kcs_cmd_doc;

/* Parse argv[1..] (argv[0] is the subcommand). Positional arguments are
 * moved to the front of argv: on return argv[0..*npos) are they. Returns 0
 * to go on (*status_p = 0), or 1 when the command is done: --help was
 * printed (*status_p = 0) or a usage error (*status_p = 2). */
int kcs_cli_parse(const kcs_cmd_doc *doc, const kcs_opt *opts, int argc, char **argv, int *npos,
                  int *status_p);
/* kcs_cli_parse, first writing the command line as one string into
 * cmdline (for provenance: "kcs <argv[0]> ..." as given). */
int kcs_cli_parse_recorded(const kcs_cmd_doc *doc, const kcs_opt *opts, int argc, char **argv,
                           int *npos, int *status_p, char *cmdline, size_t len);
void kcs_cli_help(FILE *f, const kcs_cmd_doc *doc, const kcs_opt *opts);

/* Subcommands. */
int kcs_cmd_run(int argc, char **argv);
int kcs_cmd_check(int argc, char **argv);
int kcs_cmd_reduce(int argc, char **argv);
int kcs_cmd_detect(int argc, char **argv);
int kcs_cmd_lint(int argc, char **argv);
int kcs_cmd_exec(int argc, char **argv);
int kcs_cmd_devices(int argc, char **argv);
int kcs_cmd_bench(int argc, char **argv);
int kcs_cmd_probe(int argc, char **argv);
int kcs_cmd_version(int argc, char **argv);
int kcs_cmd_calibrate(int argc, char **argv);
int kcs_cmd_grade(int argc, char **argv);

/* The backend named (--backend), opened on device with the profile and
 * options: 0 with *ops_p and *ctx_p set, or an error (KCS_E_NODEV for a
 * backend unavailable here). */
struct kcs_backend_ops;
struct kcs_backend_ctx;
struct kcs_error;
int kcs_cli_open_backend(const char *backend, int device, const char *profile,
                         const char *options, const struct kcs_backend_ops **ops_p,
                         struct kcs_backend_ctx **ctx_p, struct kcs_error *err);

/* kcs grade --backend cpu (grade_cpu.c): bind the CPU backend's kernels. */
struct kcs_rank_binding;
int kcs_grade_bind_cpu(const char *variant, const char *acc, const char *schedule,
                       const char *profile, struct kcs_rank_binding *b, struct kcs_error *err);

/* kcs calibrate --sweep (calibrate_sweep.c): prints the table, writes out
 * when given; returns the exit status (*rc_p: an error code or 0). */
struct kcs_contract;
struct kcs_calib_run;
int kcs_calibrate_sweep_cmd(struct kcs_contract **cs, int n, const struct kcs_calib_run *run,
                            int trials, long long min_k, long long max_k, const char *out,
                            const char *cmdline, int *rc_p, struct kcs_error *err);

/* kcs bench sub-benchmarks (bench.c's table; bench_<name>.c). */
int kcs_bench_metrics(int argc, char **argv);
int kcs_bench_hdf5(int argc, char **argv);
int kcs_bench_study(int argc, char **argv);
int kcs_bench_isolation(int argc, char **argv);

#endif
