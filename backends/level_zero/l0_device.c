/* Level Zero drivers and GPU devices: enumeration in driver order and the
 * kcs_device_info of one device. Without a Level Zero driver (zeInit
 * fails, or no driver/GPU) the answer is KCS_E_NODEV with the reason. */
#include <stdio.h>
#include <string.h>

#include "l0_internal.h"

#define MAX_DRIVERS 8

int kcs_l0_devices(ze_driver_handle_t *drivers, ze_device_handle_t *devs, int max,
                   int *count_p, kcs_error *err)
{
    ze_result_t r = zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (r != ZE_RESULT_SUCCESS)
        return kcs_fail(err, KCS_E_NODEV, "level_zero: no driver (zeInit: %s)",
                        kcs_l0_strerror(r));
    uint32_t nd = 0;
    r = zeDriverGet(&nd, NULL);
    if (r != ZE_RESULT_SUCCESS || nd == 0)
        return kcs_fail(err, KCS_E_NODEV, "level_zero: no driver (zeDriverGet: %s, %u drivers)",
                        kcs_l0_strerror(r), nd);
    ze_driver_handle_t drv[MAX_DRIVERS];
    if (nd > MAX_DRIVERS)
        nd = MAX_DRIVERS;
    r = zeDriverGet(&nd, drv);
    if (r != ZE_RESULT_SUCCESS)
        return kcs_fail(err, KCS_E_NODEV, "level_zero: no driver (zeDriverGet: %s)",
                        kcs_l0_strerror(r));
    int count = 0;
    for (uint32_t d = 0; d < nd; d++) {
        uint32_t n = 0;
        if (zeDeviceGet(drv[d], &n, NULL) != ZE_RESULT_SUCCESS || n == 0)
            continue;
        ze_device_handle_t list[KCS_MAX_DEVICES];
        if (n > KCS_MAX_DEVICES)
            n = KCS_MAX_DEVICES;
        if (zeDeviceGet(drv[d], &n, list) != ZE_RESULT_SUCCESS)
            continue;
        for (uint32_t i = 0; i < n; i++) {
            ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
            if (zeDeviceGetProperties(list[i], &p) != ZE_RESULT_SUCCESS ||
                p.type != ZE_DEVICE_TYPE_GPU)
                continue;
            if (count < max) {
                drivers[count] = drv[d];
                devs[count] = list[i];
            }
            count++;
        }
    }
    if (count == 0)
        return kcs_fail(err, KCS_E_NODEV, "level_zero: no device (%u drivers, no GPU)", nd);
    *count_p = count;
    return 0;
}

int kcs_l0_device_info(ze_driver_handle_t drv, ze_device_handle_t dev, int index,
                       kcs_device_info *info, int *has_fp64_p, uint32_t *max_group_p,
                       uint32_t *local_mem_p, kcs_error *err)
{
    ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    int rc = KCS_ZE_CHECK(err, zeDeviceGetProperties, (dev, &p));
    if (rc)
        return rc;
    memset(info, 0, sizeof *info);
    snprintf(info->backend, sizeof info->backend, "level_zero");
    info->index = index;
    if (p.vendorId == 0x8086)
        snprintf(info->vendor, sizeof info->vendor, "Intel");
    else
        snprintf(info->vendor, sizeof info->vendor, "vendor 0x%04x", (unsigned)p.vendorId);
    snprintf(info->model, sizeof info->model, "%.127s", p.name);
    snprintf(info->arch, sizeof info->arch, "device 0x%04x, %u EU/subslice, %u subslices",
             (unsigned)p.deviceId, (unsigned)p.numEUsPerSubslice,
             (unsigned)(p.numSubslicesPerSlice * p.numSlices));
    ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    if (zeDriverGetProperties(drv, &dp) == ZE_RESULT_SUCCESS)
        snprintf(info->driver, sizeof info->driver, "%u", (unsigned)dp.driverVersion);
    ze_api_version_t api;
    if (zeDriverGetApiVersion(drv, &api) == ZE_RESULT_SUCCESS)
        snprintf(info->runtime, sizeof info->runtime, "Level Zero %u.%u",
                 (unsigned)ZE_MAJOR_VERSION(api), (unsigned)ZE_MINOR_VERSION(api));
    const unsigned char *u = p.uuid.id;
    snprintf(info->uuid, sizeof info->uuid,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    if (has_fp64_p) {
        ze_device_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES};
        *has_fp64_p = zeDeviceGetModuleProperties(dev, &mp) == ZE_RESULT_SUCCESS &&
                      (mp.flags & ZE_DEVICE_MODULE_FLAG_FP64);
    }
    if (max_group_p || local_mem_p) {
        ze_device_compute_properties_t cp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
        int ok = zeDeviceGetComputeProperties(dev, &cp) == ZE_RESULT_SUCCESS;
        if (max_group_p)
            *max_group_p = ok ? cp.maxTotalGroupSize : 0;
        if (local_mem_p)
            *local_mem_p = ok ? cp.maxSharedLocalMemory : 0;
    }
    return 0;
}

int kcs_l0_compute_ordinal(ze_device_handle_t dev, uint32_t *ordinal_p, kcs_error *err)
{
    uint32_t n = 0;
    int rc = KCS_ZE_CHECK(err, zeDeviceGetCommandQueueGroupProperties, (dev, &n, NULL));
    if (rc)
        return rc;
    ze_command_queue_group_properties_t g[16];
    if (n > 16)
        n = 16;
    for (uint32_t i = 0; i < n; i++)
        g[i] = (ze_command_queue_group_properties_t){
            .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES};
    rc = KCS_ZE_CHECK(err, zeDeviceGetCommandQueueGroupProperties, (dev, &n, g));
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        if (g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
            *ordinal_p = i;
            return 0;
        }
    }
    return kcs_fail(err, KCS_E_DEVICE, "level_zero: the device has no compute queue group");
}
