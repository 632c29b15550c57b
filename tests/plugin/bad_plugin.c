/* Deliberately defective plugin libraries for tests/unit/backends/test_plugin.c,
 * one per build flag (tests/plugin/CMakeLists.txt):
 *   -DBAD_ABI    libkcs_bad_abi_plugin.so   declares abi_version 99
 *   -DNO_SYMBOL  libkcs_nosym_plugin.so     exports no kcs_plugin_get
 *   -DOVERRUN    libkcs_overrun_plugin.so   a gemm and a gather that write
 *                                           one float past the end of their
 *                                           output (zeros within it) */
#include <string.h>

#include "kcs_plugin.h"

#ifdef NO_SYMBOL
/* A shared library with an unrelated export: not a kcs plugin. */
KCS_PLUGIN_EXPORT int kcs_not_a_plugin(void)
{
    return 42;
}
#else
static int bad_run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    (void)msg;
    (void)msg_len;
#ifdef OVERRUN
    /* Fill the output with zeros, one element too many. */
    memset(c->out, 0, c->out_bytes + sizeof(float));
#else
    (void)c;
#endif
    return 0;
}

static const kcs_plugin bad = {
#ifdef BAD_ABI
    .abi_version = 99,
    .name = "kcs-bad-abi",
#else
    .abi_version = KCS_PLUGIN_ABI_VERSION,
    .name = "kcs-overrun",
#endif
#ifdef OVERRUN
    .ops = "gemm,gather",
#else
    .ops = "gemm",
#endif
    .run = bad_run,
};

KCS_PLUGIN_EXPORT const kcs_plugin *kcs_plugin_get(void)
{
    return &bad;
}
#endif
