/* OpenCL device discovery and description. */
#include <CL/cl_ext.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ocl.h"

#define KCS_OCL_MAX_PLATFORMS 16
#define KCS_OCL_DEVICE_TYPES (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_ACCELERATOR)

int kcs_ocl_devices(cl_platform_id *plats, cl_device_id *devs, int max, int *count_p,
                    kcs_error *err)
{
    cl_platform_id pl[KCS_OCL_MAX_PLATFORMS];
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(KCS_OCL_MAX_PLATFORMS, pl, &np);
    if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && np == 0))
        return kcs_fail(err, KCS_E_NODEV,
                        "opencl: no OpenCL platform: the ICD loader found no driver "
                        "(install one, e.g. pocl-opencl-icd, or a GPU driver; see "
                        "/etc/OpenCL/vendors or OCL_ICD_VENDORS)");
    if (rc != CL_SUCCESS)
        return kcs_ocl_fail(err, "clGetPlatformIDs", rc);
    int count = 0;
    for (cl_uint p = 0; p < np && p < KCS_OCL_MAX_PLATFORMS && count < max; p++) {
        cl_device_id d[KCS_MAX_DEVICES];
        cl_uint nd = 0;
        rc = clGetDeviceIDs(pl[p], KCS_OCL_DEVICE_TYPES, KCS_MAX_DEVICES, d, &nd);
        if (rc == CL_DEVICE_NOT_FOUND)
            continue;
        if (rc != CL_SUCCESS)
            return kcs_ocl_fail(err, "clGetDeviceIDs", rc);
        for (cl_uint i = 0; i < nd && i < KCS_MAX_DEVICES && count < max; i++) {
            plats[count] = pl[p];
            devs[count] = d[i];
            count++;
        }
    }
    if (count == 0 && max > 0)
        return kcs_fail(err, KCS_E_NODEV,
                        "opencl: %u platform(s) but no GPU, CPU or accelerator device", np);
    *count_p = count;
    return 0;
}

static void info_str(cl_device_id dev, cl_device_info what, char *dst, size_t len)
{
    char buf[1024] = "";
    if (clGetDeviceInfo(dev, what, sizeof buf - 1, buf, NULL) != CL_SUCCESS)
        snprintf(buf, sizeof buf, "?");
    buf[sizeof buf - 1] = 0;
    kcs_ocl_copy(dst, len, buf);
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h ^ 0xff; /* separator, so ("ab","c") != ("a","bc") */
}

static int has_ext(cl_device_id dev, const char *ext)
{
    size_t len = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return 0;
    char buf[8192];
    if (len > sizeof buf)
        len = sizeof buf;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, len, buf, NULL) != CL_SUCCESS)
        return 0;
    buf[len - 1] = 0;
    size_t el = strlen(ext);
    for (const char *p = buf; (p = strstr(p, ext)) != NULL; p += el)
        if ((p == buf || p[-1] == ' ') && (p[el] == ' ' || p[el] == 0))
            return 1;
    return 0;
}

int kcs_ocl_device_info(cl_platform_id plat, cl_device_id dev, int index,
                        kcs_device_info *info, kcs_error *err)
{
    kcs_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.backend, sizeof d.backend, "opencl");
    d.index = index;
    info_str(dev, CL_DEVICE_VENDOR, d.vendor, sizeof d.vendor);
    info_str(dev, CL_DEVICE_NAME, d.model, sizeof d.model);
    info_str(dev, CL_DEVICE_VERSION, d.arch, sizeof d.arch);
    info_str(dev, CL_DRIVER_VERSION, d.driver, sizeof d.driver);
    char pv[256] = "?", pn[256] = "?";
    if (clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof pv - 1, pv, NULL) != CL_SUCCESS)
        snprintf(pv, sizeof pv, "?");
    if (clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pn - 1, pn, NULL) != CL_SUCCESS)
        snprintf(pn, sizeof pn, "?");
    pv[sizeof pv - 1] = pn[sizeof pn - 1] = 0;
    kcs_ocl_copy(d.runtime, sizeof d.runtime, pv);
    unsigned char uuid[CL_UUID_SIZE_KHR];
    if (has_ext(dev, "cl_khr_device_uuid") &&
        clGetDeviceInfo(dev, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, NULL) == CL_SUCCESS) {
        char *o = d.uuid;
        for (int i = 0; i < CL_UUID_SIZE_KHR; i++) {
            o += sprintf(o, "%02x", uuid[i]);
            if (i == 3 || i == 5 || i == 7 || i == 9)
                *o++ = '-';
        }
        *o = 0;
    } else {
        /* No device UUID: a stable name from the platform, the device and its
         * position among the platform's devices. */
        char model[256] = "?";
        if (clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof model - 1, model, NULL) != CL_SUCCESS)
            snprintf(model, sizeof model, "?");
        model[sizeof model - 1] = 0;
        cl_device_id ds[KCS_MAX_DEVICES];
        cl_uint nd = 0;
        int pos = 0;
        if (clGetDeviceIDs(plat, KCS_OCL_DEVICE_TYPES, KCS_MAX_DEVICES, ds, &nd) == CL_SUCCESS)
            for (cl_uint i = 0; i < nd && i < KCS_MAX_DEVICES; i++)
                if (ds[i] == dev)
                    pos = (int)i;
        char ps[16];
        snprintf(ps, sizeof ps, "%d", pos);
        uint64_t h = fnv(fnv(fnv(0xcbf29ce484222325ull, pn), model), ps);
        snprintf(d.uuid, sizeof d.uuid, "ocl-%016llx", (unsigned long long)h);
    }
    (void)err;
    *info = d;
    return 0;
}
