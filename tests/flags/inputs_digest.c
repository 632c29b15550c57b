/* Prints XXH3 digests of what the input generator produces: raw normals
 * (fp64 bits), detmath on a grid, and kcs_fill for every distribution and
 * format. tests/CMakeLists.txt builds this program twice from the same
 * sources, once plainly and once with -ffp-contract=fast -march=native (FMA
 * where the CPU has it), without the generator's own -ffp-contract=off; the
 * test inputs.flags compares the two outputs line by line. */
#include <stdio.h>
#include <stdlib.h>

#include "detmath.h"
#include "metrics.h"
#include "rng.h"
#include "tensor.h"

int main(void)
{
    size_t n = 200003;
    double *x = malloc(n * sizeof *x);
    if (!x)
        return 1;
    kcs_rng r;
    kcs_rng_init(&r, 20261129, 1, 2);
    kcs_rng_normal_n(&r, x, n);
    printf("normal_n %016llx\n", (unsigned long long)kcs_digest_bytes(x, n * sizeof *x, 0));
    for (size_t i = 0; i < 20000; i++)
        x[i] = kcs_rng_normal(&r);
    printf("normal %016llx\n", (unsigned long long)kcs_digest_bytes(x, 20000 * sizeof *x, 0));
    for (size_t i = 0; i < n; i++) {
        double t = -30.0 + 40.0 * (double)i / (double)n;
        x[i] = kcs_det_exp(t) + kcs_det_exp2(t) + kcs_det_log(1e-30 + (double)i);
    }
    printf("detmath %016llx\n", (unsigned long long)kcs_digest_bytes(x, n * sizeof *x, 0));
    for (int d = 0; d < KCS_DIST_COUNT; d++)
        for (int f = 0; f < KCS_FMT_COUNT; f++) {
            kcs_fill(x, n, (kcs_dist)d, (kcs_format)f, 7, (uint64_t)d, (uint64_t)f);
            printf("fill dist=%d fmt=%s %016llx\n", d, kcs_format_name((kcs_format)f),
                   (unsigned long long)kcs_digest_values(x, n, (kcs_format)f));
        }
    free(x);
    return 0;
}
