/* Elementary functions with one fixed definition: the same bits on every
 * compiler, libm, CPU and flag set (-ffp-contract, -march, FMA or not),
 * for the input generator (rng_normal.c, tensor.c). Each is a fixed
 * sequence of IEEE 754 binary64 +, -, *, / in round-to-nearest with the
 * products kept out of reach of FMA contraction (every product passes a
 * volatile, so no compiler may fuse it into an add). Accuracy ~1e-16
 * relative; what matters is that the result is specified, not libm's.
 * Needs FLT_EVAL_METHOD == 0 (SSE2 on x86-64, every AArch64). */
#ifndef KCS_DETMATH_H
#define KCS_DETMATH_H

/* e^t for -700 <= t <= 700. */
double kcs_det_exp(double t);
/* 2^e for -1000 <= e <= 1000. */
double kcs_det_exp2(double e);
/* ln u for finite u > 0. */
double kcs_det_log(double u);

#endif
