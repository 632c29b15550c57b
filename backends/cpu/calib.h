/* Calibration implementations of the CPU backend (DESIGN §3): for each of
 * the contracts three built-in kernels, selected by the variant
 * "calib:<CONTRACT-ID>:<baseline|bad|good>":
 *   baseline  fails everything: returns without writing its output (the
 *             poison sentinel stays);
 *   bad       passes the plain functional test a kernel author writes for
 *             the op (tests/unit/calibrate/test_calibrate.c proves it per kernel),
 *             yet violates its contract;
 *   good      the same kernel with the defect removed: conforms.
 * The defects (bad):
 *   C-PRC-01 gemm       running sum rounded to bf16 after every add when k > 64
 *   C-PRC-02 softmax    exp without max-subtraction; layernorm variance as
 *                       E[x^2] - E[x]^2 (one pass)
 *   C-PRC-03 gemm       inputs rounded to tf32 (11-bit significand) first
 *   C-PRC-04 reduce_sum subnormal inputs read as zero, subnormal sums flushed
 *   C-ORD-01 reduce_sum k > 256: fp32 sums of 64-element blocks stored in a
 *                       bf16 workspace, then added in fp32
 *   C-ORD-02 gemm       every output's k terms summed in a random order drawn
 *                       from the call's seed (new on every run)
 *   C-ORD-03 gemm       m < 4: split-K into 4 fp32 partials; else sequential
 *   C-CMP-01 attention  fused: unnormalised P rounded to bf16 before the PV
 *                       product
 *   C-CMP-02 gemm       m*n >= 4096 selects 32x32 tiles whose remainder
 *                       tiles load A and B as bf16
 *   C-CMP-03 gemm       shapes outside the 64-multiple class served from a
 *                       per-shape memo of the first result (stale replay)
 *   C-EXC-01 gemm       NaN outputs replaced by 0 in the epilogue
 *   C-EXC-02 gather     out-of-range index answered with table[idx mod m]
 *                       under oob=raise
 *   C-PRC-05 elementwise exp as 2^(x log2 e) with the product rounded to
 *                       fp32 (the argument path of CUDA's __expf)
 *   C-PRC-06 softmax    the denominator, and layernorm's mean and variance,
 *            layernorm  summed in a round-to-nearest accumulator of 16
 *                       significant bits (declaring round_to_nearest fp32)
 *   C-PRC-07 attention  the unfused composition with every sum (scores,
 *                       denominator, PV) in a round-to-nearest accumulator
 *                       of 16 significant bits (declaring round_to_nearest)
 *   C-PRC-08 norm       k > 64: the sum of squares rounded to bf16 after
 *                       every add (fp32 declared)
 * Two more gemm kernels serve the narrow-output states of a contract's
 * calibration (calibration.yaml `narrow:`, variants calib:<ID>:narrow-sum
 * and calib:<ID>:blocks256, any gemm-scoped contract):
 *   narrow-sum  k > 64: the running sum rounded to dtype_out (bf16, fp16)
 *               after every add; fp32 below
 *   blocks256   split-K partials kept in dtype_out: fp32 sums of blocks of
 *               256 terms, each rounded to dtype_out, added in fp32 (for
 *               k <= 256 the good kernel's result)
 * All of them take inputs exact in fp32 (fp32, tf32, bf16, fp16) and
 * compute with an fp32 accumulator unless the defect says otherwise. */
#ifndef KCS_CPU_CALIB_H
#define KCS_CPU_CALIB_H

#include "backend.h"

enum { KCS_CALIB_BASELINE = 0, KCS_CALIB_BAD, KCS_CALIB_GOOD, KCS_CALIB_NARROW_SUM,
       KCS_CALIB_BLOCKS256 };

/* Run a "calib:" variant. KCS_E_UNSUPPORTED for an unknown contract or
 * state, or an op the contract's calibration kernels do not implement. */
int kcs_cpu_calib(kcs_backend_ctx *ctx, const kcs_call *call, kcs_error *err);

/* The kernels, one file per op family (calib_gemm.c, calib_rows.c).
 * id is the contract id, state KCS_CALIB_BAD or KCS_CALIB_GOOD. */
int kcs_cpu_calib_gemm(const kcs_call *c, const char *id, int state, kcs_error *err);
int kcs_cpu_calib_rows(const kcs_call *c, const char *id, int state, kcs_error *err);
int kcs_cpu_calib_elementwise(const kcs_call *c, const char *id, int state, kcs_error *err);
/* C-PRC-06's softmax and layernorm (calib_rows_rn.c). */
int kcs_cpu_calib_rows_rn(const kcs_call *c, const char *id, int state, kcs_error *err);
/* C-PRC-07's attention (calib_attention_rn.c). */
int kcs_cpu_calib_attention_rn(const kcs_call *c, const char *id, int state, kcs_error *err);
/* C-PRC-08's norm (calib_rows.c). */
int kcs_cpu_calib_norm(const kcs_call *c, const char *id, int state, kcs_error *err);

/* One row of a row-wise calibration kernel: the c->k values x into y. */
typedef void (*kcs_cpu_calib_row_fn)(const kcs_call *c, const double *x, double *y,
                                     const void *arg);
/* fn(c, row, y, arg) on each of c's m rows of k inputs (c->in[0]), every
 * value of y rounded to c->dtype_out into the row's output (calib_rows.c). */
int kcs_cpu_calib_each_row(const kcs_call *c, kcs_cpu_calib_row_fn fn, const void *arg,
                           kcs_error *err);
/* Layernorm's last step in fp32: y[t] = ((float)x[t] - mu) / den, times
 * g[t], plus b[t] (g, b may be NULL). */
void kcs_cpu_calib_ln_scale(const double *x, const double *g, const double *b, int64_t k,
                            float mu, float den, double *y);

/* Forget the per-shape memo of calib:C-CMP-03:bad (tests). */
void kcs_cpu_calib_memo_reset(void);

#endif
