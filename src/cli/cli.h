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

/* Turn a crash inside HDF5 on a damaged file into exit status 2 with a
 * message naming cmd (opts.c; kcs reduce, kcs publish). */
void kcs_cli_catch_hdf5_crashes(const char *cmd);

/* Subcommands. */
/* The commands, in `kcs --help`'s order: X(name, summary) declares
 * kcs_cmd_<name> (src/cli/<name>.c) and gives main.c's table. A new
 * command is one line here and its file. */
#define KCS_CLI_COMMANDS(X)                                                                     \
    X(run, "run a study under MPI and write its HDF5 dataset")                                \
    X(check, "check a study without running it and print its plan")                           \
    X(reduce, "analyse datasets: verdicts, baselines, signatures, merge, report")             \
    X(publish, "a citable bundle: datasets, tidy tables, HTML atlas, datapackage, --verify") \
    X(detect, "detection curves: inject errors, judge them with every detector")              \
    X(lint, "validate contract files and print them normalized")                              \
    X(exec, "run one op on one backend with inputs from files")                               \
    X(bench, "performance: emulated matrix units vs native and own kernels")                  \
    X(probe, "infer a gemm path's arithmetic and name the nearest profile")                   \
    X(calibrate, "three-state calibration: does each contract separate bad from good?")       \
    X(grade, "grade a plugin kernel library against every contract in scope")                 \
    X(devices, "list backends compiled in and the devices they find")                         \
    X(version, "print version and build provenance")
#define KCS_CLI_DECLARE(name, summary) int kcs_cmd_##name(int argc, char **argv);
KCS_CLI_COMMANDS(KCS_CLI_DECLARE)
#undef KCS_CLI_DECLARE

/* A table of subcommands (kcs's commands, kcs bench's benchmarks) and the
 * one dispatcher of both: `PROG NAME ARGS...` runs NAME's function with
 * argv from NAME on (WHAT names an entry in the error message); -h/--help/help print the usage (HEADER, then a line
 * per entry) on stdout (exit 0); no name or an unknown one print it on
 * stderr (exit 2). */
typedef struct kcs_subcmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} kcs_subcmd;
void kcs_cli_subcmd_usage(FILE *f, const char *header, const kcs_subcmd *t, size_t n);
int kcs_cli_dispatch(const char *prog, const char *what, const char *header,
                     const kcs_subcmd *t, size_t n, int argc, char **argv);

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
int kcs_bench_freivalds(int argc, char **argv);
int kcs_bench_metrics(int argc, char **argv);
int kcs_bench_hdf5(int argc, char **argv);
int kcs_bench_study(int argc, char **argv);
int kcs_bench_isolation(int argc, char **argv);

#endif
