/* What the test plugins (the .c files of tests/plugin/) share, written once: decoding
 * their inputs into float, and the table that kcs_plugin_get exports. Like
 * the plugins, it needs nothing from kcs but include/kcs_plugin.h. */
#ifndef KCS_TEST_PLUGIN_COMMON_H
#define KCS_TEST_PLUGIN_COMMON_H

#include <string.h>

#include "kcs_plugin.h"

/* --- formats: decode inputs into float ----------------------------------- */

static inline float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE binary16 -> float (exact: every fp16 value is a float). */
static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
        return f32_from_bits(sign | 0x7f800000u | (m << 13)); /* Inf / NaN */
    if (e == 0) { /* zero or subnormal: m · 2^-24 */
        float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return f32_from_bits(sign | ((e + 112) << 23) | (m << 13));
}

/* Element i of an input of type t (fp32, tf32, bf16 or fp16) as a float. */
static inline float load(kcs_dtype t, const void *p, size_t i)
{
    switch (t) {
    case KCS_DT_F32:
    case KCS_DT_TF32: return ((const float *)p)[i];
    case KCS_DT_BF16: return f32_from_bits((uint32_t)((const uint16_t *)p)[i] << 16);
    case KCS_DT_F16: return f16_to_f32(((const uint16_t *)p)[i]);
    default: return 0.0f; /* rejected before */
    }
}

/* --- formats: encode an output ----------------------------------------- */

/* float -> bf16 bits, rounded to nearest, ties to even (NaN stays NaN). */
static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* float -> IEEE binary16 bits, rounded to nearest, ties to even: beyond
 * 65520 Inf, below 2^-14 gradual underflow. */
static inline uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u); /* NaN */
    if (ax >= 0x477ff000u)                 /* 65520 and beyond (Inf too) round to Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below 2^-14: a multiple of 2^-24, exact scaling */
        float v = (f < 0 ? -f : f) * 16777216.0f, t = (float)(uint32_t)v, fr = v - t;
        uint32_t m = (uint32_t)t;
        if (fr > 0.5f || (fr == 0.5f && (m & 1u)))
            m++;
        return (uint16_t)(sign | m);
    }
    uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax & 0x7fffffu) >> 13), rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

/* Element i of an output of type t (fp32, bf16, fp16): v rounded once. */
static inline void store(kcs_dtype t, void *p, size_t i, float v)
{
    switch (t) {
    case KCS_DT_F32: ((float *)p)[i] = v; break;
    case KCS_DT_BF16: ((uint16_t *)p)[i] = f32_to_bf16(v); break;
    case KCS_DT_F16: ((uint16_t *)p)[i] = f32_to_f16(v); break;
    default: break; /* rejected before */
    }
}

/* The plugin's table (ABI version, NAME, OPS, RUN) and kcs_plugin_get,
 * its one export. */
#define KCS_TEST_PLUGIN(NAME, OPS, RUN)                                                    \
    static const kcs_plugin test_plugin_table = {KCS_PLUGIN_ABI_VERSION, NAME, OPS, RUN}; \
    KCS_PLUGIN_EXPORT const kcs_plugin *kcs_plugin_get(void)                               \
    {                                                                                      \
        return &test_plugin_table;                                                         \
    }

#endif
