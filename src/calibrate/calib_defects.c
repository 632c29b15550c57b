/* The cross matrix's extra bad kernels (calibrate.h, kcs_calib_defects). */
#include "calibrate.h"

static const kcs_calib_defect defects[] = {
    {"defect:zero", "returns zeros", "zero-output"},
    {"defect:scaled", "returns 1.001 * A B", "scaled-output"},
    {"defect:corrupt1", "one output off by 8 sqrt(k)", "localized-corruption"},
    {"defect:acc:bits:14", "running sum in a 14-bit accumulator (fp32 range)",
     "accumulator-narrower-than-declared"},
    {"defect:acc:fp16", "running sum in fp16", "accumulator-narrower-than-declared"},
    /* issue 42: faults of the output and of the inputs, told from the
     * accumulator's; each on k > 64 only (passes a small allclose test) */
    {"defect:out-bf16", "k > 64: fp32 sum, output rounded to bf16 (fp32 declared)",
     "output-rounded-to-bf16"},
    {"defect:out-fp16", "k > 64: fp32 sum, output rounded to 11 bits (fp32 declared)",
     "output-rounded-to-11-bits"},
    {"defect:in-tf32-rz", "k > 64: inputs truncated to tf32", "input-truncated-to-11-bits"},
    {"defect:in-tf32-rn", "k > 64: inputs rounded to nearest to tf32", "input-rounded-to-11-bits"},
    {"defect:const", "k > 64: every output the first one's value", "constant-output"},
    {"defect:offset", "k > 64: every output + 2^-9 sqrt(k)", "added-offset"},
    {"defect:over16", "correct values, 16 bytes written past the output", "write-past-output"},
};

const kcs_calib_defect *kcs_calib_defects(int *n_p)
{
    *n_p = (int)(sizeof defects / sizeof defects[0]);
    return defects;
}
