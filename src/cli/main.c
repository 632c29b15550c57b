/* kcs: Kernel Contract Studies. Dispatches to one file per subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "build_info.h"
#include "cli.h"
#include "store_readback.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"run", kcs_cmd_run, "run a study under MPI and write its HDF5 dataset"},
    {"check", kcs_cmd_check, "check a study without running it and print its plan"},
    {"reduce", kcs_cmd_reduce, "analyse datasets: verdicts, baselines, signatures, merge, report"},
    {"detect", kcs_cmd_detect, "detection curves: inject errors, judge them with every detector"},
    {"lint", kcs_cmd_lint, "validate contract files and print them normalized"},
    {"exec", kcs_cmd_exec, "run one op on one backend with inputs from files"},
    {"bench", kcs_cmd_bench, "performance: emulated matrix units vs native and own kernels"},
    {"probe", kcs_cmd_probe, "infer a gemm path's arithmetic and name the nearest profile"},
    {"calibrate", kcs_cmd_calibrate, "three-state calibration: does each contract separate bad from good?"},
    {"grade", kcs_cmd_grade, "grade a plugin kernel library against every contract in scope"},
    {"devices", kcs_cmd_devices, "list backends compiled in and the devices they find"},
    {"version", kcs_cmd_version, "print version and build provenance"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: kcs <command> [options]  (kcs <command> --help for details)\n\n"
               "Kernel Contract Studies %s: ML kernel correctness across heterogeneous silicon.\n\n"
               "commands:\n",
            KCS_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

/* A study allocates and frees the same large arrays (inputs, reference,
 * outputs: tens of MiB each) every trial. glibc serves those by mmap and
 * returns them on free, so each trial paid its page faults again (about a
 * fifth of `kcs bench study`'s end to end at 1024x1024x4096). Served from
 * the heap and kept there up to 512 MiB, they are reused. The peak stays
 * what the largest case needs; a user's MALLOC_*_ settings win. */
static void keep_freed_arrays(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    const int keep = 512 << 20;
    if (!getenv("MALLOC_MMAP_THRESHOLD_"))
        mallopt(M_MMAP_THRESHOLD, keep);
    if (!getenv("MALLOC_TRIM_THRESHOLD_"))
        mallopt(M_TRIM_THRESHOLD, keep);
#endif
}

int main(int argc, char **argv)
{
    keep_freed_arrays();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    /* internal: the read-back of `kcs run` (store_readback.h), not listed */
    if (strcmp(argv[1], "_readback") == 0)
        return kcs_readback_child_main(0, 1);
    if (strcmp(argv[1], "--version") == 0)
        return kcs_cmd_version(1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "kcs: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
