/* gpu_freivalds.h: the host side of the device Freivalds check, one source
 * for CUDA (cuda_freivalds.c) and HIP (hip/hip_freivalds.c), whose runtime
 * APIs are name-parallel. The includer includes its runtime's names first
 * (gpu_cuda.h or hip/gpu_hip.h: the macros of gpu_rt.h and KCS_GPU_FN). It defines
 * KCS_GPU_FN(freivalds_verify) (backends/freivalds_device.h).
 *
 * Steps: check the arguments (before any runtime call), check the device
 * (KCS_E_NODEV "<rt>: no device (...)", as the backends' discovery says),
 * select it, create a stream, allocate and upload A, B, C, allocate work
 * and terms, launch the terms kernels (freivalds.cu: the tiled v2 ones, or
 * v1 when p->device_kernel == 1) between two events,
 * copy the terms back (stream-ordered, then synchronised: a kernel fault
 * surfaces there), finish on the host with kcs_freivalds_finish, so the
 * verdict follows exactly the CPU's rules. Every resource is released on
 * every path; res_p is set only on success. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "freivalds.h"
#include "freivalds_device.h"
#include "gpu_rt.h"

/* freivalds.cu / freivalds.hip (extern "C"). */
int64_t KCS_GPU_FN(freivalds_work_doubles)(int64_t m, int64_t kk, int64_t n, int k);
int64_t KCS_GPU_FN(freivalds_terms_doubles)(int64_t m, int64_t kk, int64_t n, int k);
int KCS_GPU_FN(freivalds_terms)(void *stream, const float *A, const float *B, const float *C,
                                int64_t m, int64_t kk, int64_t n, int k, uint64_t seed,
                                uint64_t probe_stream, double *work, double *terms);
int64_t KCS_GPU_FN(freivalds_work_doubles_v2)(int64_t m, int64_t kk, int64_t n, int k);
int KCS_GPU_FN(freivalds_terms_v2)(void *stream, const float *A, const float *B,
                                   const float *C, int64_t m, int64_t kk, int64_t n, int k,
                                   uint64_t seed, uint64_t probe_stream, double *work,
                                   double *terms);

/* Bytes of `count` doubles (a count from the kernels' size helpers). */
static int fv_bytes(int64_t count, size_t *bytes_p, const char *what, kcs_error *err)
{
    if (count < 1 || (uint64_t)count > SIZE_MAX / sizeof(double))
        return kcs_fail(err, KCS_E_INTERNAL, "%s: freivalds: bad %s size (%lld doubles)",
                        KCS_GPU_NAME, what, (long long)count);
    *bytes_p = (size_t)count * sizeof(double);
    return 0;
}

/* KCS_E_NODEV unless `device` exists, then make it current. */
static int fv_select(int device, kcs_error *err)
{
    int rc = gpu_rt_exists(device, err);
    return rc ? rc : GPU_RT_CALL(err, SetDevice, (device));
}

static void fv_free(void *p)
{
    if (p)
        (void)KCS_GPU_RT(Free)(p);
}

int KCS_GPU_FN(freivalds_verify)(int device, const float *A, const float *B, const float *C,
                                 long m, long kk, long n, const kcs_fv_params *p,
                                 const kcs_fv_detail *detail, kcs_fv_result *res_p,
                                 kcs_error *err)
{
    size_t na = 0, nb = 0, nc = 0;
    int rc = kcs_fv_device_args(A, B, C, m, kk, n, p, res_p, &na, &nb, &nc, err);
    if (rc)
        return rc;
    int k = p->probes;
    bool v1 = p->device_kernel == 1; /* else the tiled kernels (v2) */
    /* the counts are bounded by kcs_fv_device_args (no int64 overflow) */
    int64_t nterms = KCS_GPU_FN(freivalds_terms_doubles)(m, kk, n, k);
    size_t work_bytes = 0, terms_bytes = 0;
    rc = fv_bytes(v1 ? KCS_GPU_FN(freivalds_work_doubles)(m, kk, n, k)
                     : KCS_GPU_FN(freivalds_work_doubles_v2)(m, kk, n, k),
                  &work_bytes, "work", err);
    if (!rc)
        rc = fv_bytes(nterms, &terms_bytes, "terms", err);
    if (rc)
        return rc;
    size_t mk = (size_t)m * (size_t)k;
    if ((uint64_t)nterms != 2 * (uint64_t)mk + 4 * (uint64_t)m + 1) /* layout below */
        return kcs_fail(err, KCS_E_INTERNAL,
                        "%s: freivalds: terms size %lld does not match its layout", KCS_GPU_NAME,
                        (long long)nterms);
    rc = fv_select(device, err);
    if (rc)
        return rc;

    KCS_GPU_RT(Stream_t) s = NULL;
    KCS_GPU_RT(Event_t) ev0 = NULL, ev1 = NULL;
    void *dA = NULL, *dB = NULL, *dC = NULL, *dwork = NULL, *dterms = NULL;
    double *terms = NULL;
    float ms = 0;
    if ((rc = GPU_RT_CALL(err, StreamCreateWithFlags, (&s, KCS_GPU_RT(StreamNonBlocking)))) != 0) {
        s = NULL;
        goto out;
    }
    if ((rc = GPU_RT_CALL(err, EventCreate, (&ev0))) != 0) {
        ev0 = NULL;
        goto out;
    }
    if ((rc = GPU_RT_CALL(err, EventCreate, (&ev1))) != 0) {
        ev1 = NULL;
        goto out;
    }
    terms = malloc(terms_bytes);
    if (!terms) {
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: freivalds: out of memory (%zu bytes of terms)",
                      KCS_GPU_NAME, terms_bytes);
        goto out;
    }
    if ((rc = GPU_RT_CALL(err, Malloc, (&dA, na * sizeof(float)))) != 0 ||
        (rc = GPU_RT_CALL(err, Malloc, (&dB, nb * sizeof(float)))) != 0 ||
        (rc = GPU_RT_CALL(err, Malloc, (&dC, nc * sizeof(float)))) != 0 ||
        (rc = GPU_RT_CALL(err, Malloc, (&dwork, work_bytes))) != 0 ||
        (rc = GPU_RT_CALL(err, Malloc, (&dterms, terms_bytes))) != 0)
        goto out;
    if ((rc = GPU_RT_CALL(err, MemcpyAsync,
                      (dA, A, na * sizeof(float), KCS_GPU_RT(MemcpyHostToDevice), s))) != 0 ||
        (rc = GPU_RT_CALL(err, MemcpyAsync,
                      (dB, B, nb * sizeof(float), KCS_GPU_RT(MemcpyHostToDevice), s))) != 0 ||
        (rc = GPU_RT_CALL(err, MemcpyAsync,
                      (dC, C, nc * sizeof(float), KCS_GPU_RT(MemcpyHostToDevice), s))) != 0)
        goto out;

    (void)KCS_GPU_RT(GetLastError)(); /* the launcher reports GetLastError: start clean */
    if ((rc = GPU_RT_CALL(err, EventRecord, (ev0, s))) != 0)
        goto out;
    int st = v1 ? KCS_GPU_FN(freivalds_terms)(s, dA, dB, dC, m, kk, n, k, p->seed, p->stream,
                                              dwork, dterms)
                : KCS_GPU_FN(freivalds_terms_v2)(s, dA, dB, dC, m, kk, n, k, p->seed, p->stream,
                                                 dwork, dterms);
    if (st < 0) {
        rc = kcs_fail(err, KCS_E_INVAL,
                      "%s: freivalds_terms: bad arguments (%ldx%ld * %ldx%ld, k=%d)", KCS_GPU_NAME,
                      m, kk, kk, n, k);
        goto out;
    }
    if (st != 0) {
        rc = gpu_rt_check((KCS_GPU_RT(Error_t))st, "launch freivalds_terms", err);
        goto out;
    }
    if ((rc = GPU_RT_CALL(err, EventRecord, (ev1, s))) != 0)
        goto out;
    /* copy after the kernels on the same stream, then wait for it */
    if ((rc = GPU_RT_CALL(err, MemcpyAsync,
                      (terms, dterms, terms_bytes, KCS_GPU_RT(MemcpyDeviceToHost), s))) != 0 ||
        (rc = GPU_RT_CALL(err, StreamSynchronize, (s))) != 0 ||
        (rc = GPU_RT_CALL(err, EventSynchronize, (ev1))) != 0 ||
        (rc = GPU_RT_CALL(err, EventElapsedTime, (&ms, ev0, ev1))) != 0)
        goto out;

    const double *ya = terms, *yc = ya + mk, *sab = yc + mk;
    const double *na2 = sab + m, *sc = na2 + m, *nc2 = sc + m;
    kcs_fv_result res;
    rc = kcs_freivalds_finish(ya, yc, sab, na2, sc, nc2, nc2[m], m, kk, n, p, detail, &res, err);
    if (rc)
        goto out;
    /* seconds: the device time of the terms kernels (between the events;
     * uploads and allocations excluded) plus the host time of the finish */
    res.seconds += (double)ms * 1e-3;
    *res_p = res;

out:
    if (s) /* no queued copy or kernel may still use the buffers */
        (void)KCS_GPU_RT(StreamSynchronize)(s);
    fv_free(dterms);
    fv_free(dwork);
    fv_free(dC);
    fv_free(dB);
    fv_free(dA);
    if (ev1)
        (void)KCS_GPU_RT(EventDestroy)(ev1);
    if (ev0)
        (void)KCS_GPU_RT(EventDestroy)(ev0);
    if (s)
        (void)KCS_GPU_RT(StreamDestroy)(s);
    free(terms);
    if (rc)
        (void)KCS_GPU_RT(GetLastError)(); /* leave no non-sticky error behind */
    return rc;
}
