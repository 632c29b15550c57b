/* The argument checks the device Freivalds verifiers share. Which backend
 * has a verifier is its ops table's freivalds slot (backends/registry.c:
 * kcs_freivalds_device). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "freivalds_device.h"

static int dims_ok(long a, long b)
{
    return (uint64_t)b <= KCS_FV_DEV_MAX_ELEMS / (uint64_t)a;
}

int kcs_fv_device_args(const float *A, const float *B, const float *C, long m, long kk, long n,
                       const kcs_fv_params *p, const kcs_fv_result *res_p, size_t *na_p,
                       size_t *nb_p, size_t *nc_p, kcs_error *err)
{
    int rc = kcs_freivalds_check_args(A, B, C, m, kk, n, p, res_p, err);
    if (rc)
        return rc;
    long k = p->probes;
    if (!dims_ok(m, kk) || !dims_ok(kk, n) || !dims_ok(m, n) || !dims_ok(m, k) ||
        !dims_ok(kk, k) || !dims_ok(n, k))
        return kcs_fail(err, KCS_E_INVAL, "freivalds: shape %ldx%ld * %ldx%ld too large", m, kk,
                        kk, n);
    *na_p = (size_t)m * (size_t)kk;
    *nb_p = (size_t)kk * (size_t)n;
    *nc_p = (size_t)m * (size_t)n;
    return 0;
}
