/* `placement: auto` (src/placement.c, kcs_placement_auto_pick): a GPU's
 * vendor-native backend is chosen over the same GPU's OpenCL ICD and over
 * the CPU, one GPU visible per rank gives every rank its own GPU natively,
 * several visible are spread by node-local rank, and only a node without a
 * native GPU spreads its ranks over OpenCL and the CPU. */
#include <CUnit/Basic.h>
#include <string.h>

#include "placement.h"
#include "unit_helpers.h"

static void pick(const char *const *names, const int *counts, int nb, int local,
                 const char *want_backend, int want_device)
{
    kcs_placement p;
    kcs_placement_auto_pick(names, counts, nb, local, &p);
    CU_ASSERT_STRING_EQUAL(p.backend, want_backend);
    CU_ASSERT_EQUAL(p.device, want_device);
    CU_ASSERT_STRING_EQUAL(p.variant, "native");
}

/* An NVIDIA node with --gpus-per-task=1: each rank sees one GPU through
 * CUDA and through the NVIDIA OpenCL ICD, and the CPU. Every local rank
 * (4 on the node) takes cuda:0, never opencl or cpu. */
static void test_one_gpu_per_rank(void)
{
    const char *names[] = {"cpu", "opencl", "cuda", "plugin"};
    const int counts[] = {1, 1, 1, 1};
    for (int local = 0; local < 4; local++)
        pick(names, counts, 4, local, "cuda", 0);
    const char *amd[] = {"cpu", "opencl", "hip"};
    const int c3[] = {1, 2, 1}; /* the ICD also lists the CPU through PoCL */
    for (int local = 0; local < 3; local++)
        pick(amd, c3, 3, local, "hip", 0);
    const char *intel[] = {"cpu", "level_zero", "opencl"};
    const int ci[] = {1, 1, 2};
    for (int local = 0; local < 3; local++)
        pick(intel, ci, 3, local, "level_zero", 0);
}

/* Four GPUs visible to every rank: local rank i takes the (i mod 4)-th. */
static void test_several_visible(void)
{
    const char *names[] = {"cpu", "opencl", "cuda"};
    const int counts[] = {1, 4, 4};
    for (int local = 0; local < 8; local++)
        pick(names, counts, 3, local, "cuda", local % 4);
}

/* No native GPU: OpenCL devices first, then the CPU (as before). */
static void test_no_native(void)
{
    const char *names[] = {"cpu", "opencl", "plugin"};
    const int counts[] = {1, 1, 1};
    pick(names, counts, 3, 0, "opencl", 0);
    pick(names, counts, 3, 1, "cpu", 0);
    pick(names, counts, 3, 2, "opencl", 0);
    /* nothing at all: the CPU */
    kcs_placement p;
    CU_ASSERT_EQUAL(kcs_placement_auto_pick(names, (const int[]){0, 0, 0}, 3, 5, &p), 0);
    CU_ASSERT_STRING_EQUAL(p.backend, "cpu");
    CU_ASSERT_EQUAL(p.device, 0);
}

static const ut_test tests[] = {
    {"one GPU per rank", test_one_gpu_per_rank},
    {"several visible", test_several_visible},
    {"no native GPU", test_no_native},
};

UT_MAIN("placement_auto", tests)
