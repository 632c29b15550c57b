/* gpu_rt.h: status translation and device checks of the CUDA and HIP
 * runtimes, one source for both (their runtime APIs are name-parallel);
 * used by the backends (gpu_backend.h) and the device Freivalds check
 * (gpu_freivalds.h). The includer defines
 *   KCS_GPU_RT(x)   the runtime's name for x: cuda##x or hip##x
 *   KCS_GPU_NAME    "cuda" or "hip" (prefixes every message)
 *   KCS_GPU_OOM     the runtime's out-of-memory error
 * and includes its runtime API header first. Everything is static. */
#ifndef KCS_GPU_RT_H
#define KCS_GPU_RT_H

#include "error.h"

/* 0, or kcs_fail(KCS_E_NOMEM or KCS_E_DEVICE) with
 * "<rt>: <call>: <message> (<name>)". */
static inline int gpu_rt_check(KCS_GPU_RT(Error_t) e, const char *call, kcs_error *err)
{
    if (e == KCS_GPU_RT(Success))
        return 0;
    (void)KCS_GPU_RT(GetLastError)(); /* clear a non-sticky error */
    return kcs_fail(err, e == KCS_GPU_OOM ? KCS_E_NOMEM : KCS_E_DEVICE, "%s: %s: %s (%s)",
                    KCS_GPU_NAME, call, KCS_GPU_RT(GetErrorString)(e),
                    KCS_GPU_RT(GetErrorName)(e));
}

/* GPU_RT_CALL(err, Malloc, (&p, n)): call the runtime, name it in the message. */
#define GPU_RT_CALL(err, fn, args) gpu_rt_check(KCS_GPU_RT(fn) args, KCS_GPU_NAME #fn, (err))

/* The number of devices, or KCS_E_NODEV with the runtime's reason. */
static inline int gpu_rt_count(int *n_p, kcs_error *err)
{
    int n = 0;
    KCS_GPU_RT(Error_t) e = KCS_GPU_RT(GetDeviceCount)(&n);
    if (e != KCS_GPU_RT(Success)) {
        (void)KCS_GPU_RT(GetLastError)();
        return kcs_fail(err, KCS_E_NODEV, "%s: no device (%sGetDeviceCount: %s)", KCS_GPU_NAME,
                        KCS_GPU_NAME, KCS_GPU_RT(GetErrorString)(e));
    }
    *n_p = n;
    return 0;
}

/* KCS_E_NODEV unless `device` exists. */
static inline int gpu_rt_exists(int device, kcs_error *err)
{
    int n = 0;
    int rc = gpu_rt_count(&n, err);
    if (!rc && (device < 0 || device >= n))
        rc = kcs_fail(err, KCS_E_NODEV, "%s: no device %d (%d found)", KCS_GPU_NAME, device, n);
    return rc;
}

#endif
