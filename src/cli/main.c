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

#define KCS_CLI_ENTRY(name, summary) {#name, kcs_cmd_##name, summary},
static const kcs_subcmd commands[] = {KCS_CLI_COMMANDS(KCS_CLI_ENTRY)};
#undef KCS_CLI_ENTRY
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static char header[256];

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
    snprintf(header, sizeof header,
             "usage: kcs <command> [options]  (kcs <command> --help for details)\n\n"
             "Kernel Contract Studies %s: ML kernel correctness across heterogeneous silicon.\n\n"
             "commands:\n",
             KCS_VERSION);
    /* internal: the read-back of `kcs run` (store_readback.h), not listed */
    if (argc >= 2 && strcmp(argv[1], "_readback") == 0)
        return kcs_readback_child_main(0, 1);
    if (argc >= 2 && strcmp(argv[1], "--version") == 0)
        return kcs_cmd_version(1, argv + 1);
    return kcs_cli_dispatch("kcs", "command", header, commands, N_COMMANDS, argc, argv);
}
