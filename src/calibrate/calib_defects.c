/* The cross matrix's extra bad kernels (calibrate.h, kcs_calib_defects). */
#include "calibrate.h"

static const kcs_calib_defect defects[] = {
    {"defect:zero", "returns zeros"},
    {"defect:scaled", "returns 1.001 * A B"},
    {"defect:corrupt1", "one output off by 8 sqrt(k)"},
    {"defect:acc:bits:14", "running sum in a 14-bit accumulator (fp32 range)"},
    {"defect:acc:fp16", "running sum in fp16"},
};

const kcs_calib_defect *kcs_calib_defects(int *n_p)
{
    *n_p = (int)(sizeof defects / sizeof defects[0]);
    return defects;
}
