/* Which BLAS the CPU backend's native kernels and the fp64 oracle call, and with how many
 * threads: OpenBLAS's results depend on its thread count (its GEMM splits
 * the reduction differently), so /provenance/ranks records both and
 * `kcs exec --threads N` can reproduce a rank's native output. */
#define _GNU_SOURCE /* dladdr */
#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>

#include "blas_info.h"
#include "error.h"

void kcs_blas_info(char *buf, size_t len, int *threads_p)
{
    Dl_info di;
    const char *lib = "?";
    if (dladdr((void *)&cblas_sgemm, &di) && di.dli_fname)
        lib = di.dli_fname;
    snprintf(buf, len, "%s (%s, core %s)", lib, openblas_get_config(), openblas_get_corename());
    if (threads_p)
        *threads_p = openblas_get_num_threads();
}

int kcs_blas_set_threads(int n)
{
    if (n < 1)
        return KCS_E_INVAL;
    openblas_set_num_threads(n);
    return openblas_get_num_threads() == n ? 0 : KCS_E_UNSUPPORTED;
}
