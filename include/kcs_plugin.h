/* kcs_plugin.h: the plugin ABI of kcs (Kernel Contract Studies), version 1.
 *
 * A kernel author grades a kernel library of their own by building it as a
 * shared library that exports ONE symbol, kcs_plugin_get(), and pointing kcs
 * at it (`kcs run --plugin ./libmine.so STUDY -o out.h5`, or placement
 * `plugin:./libmine.so` in a study). kcs starts a worker process
 * (kcs-worker, the worker protocol of kcs_worker.h) that dlopen()s the
 * library (RTLD_NOW | RTLD_LOCAL), calls kcs_plugin_get() once, checks
 * abi_version and then calls run() once per op call, from one thread at a
 * time. The library's stdout/stderr go to the worker's log; a crash, exit
 * or hang of the library fails the call being made (kcs records why) and a
 * fresh worker process takes the next call.
 *
 * This header is self-contained: it includes only <stddef.h> and
 * <stdint.h>, and it is the only kcs file a plugin needs. It is usable from
 * C (C99 or later) and C++ (CUDA .cu / HIP files included).
 *
 * Versioning: KCS_PLUGIN_ABI_VERSION changes whenever the layout or the
 * meaning of anything below changes; kcs refuses a plugin whose abi_version
 * differs from the version kcs was built with (with a message naming both).
 *
 * Memory: every pointer in a kcs_plugin_call is host memory (shared with
 * kcs) owned by kcs and valid only during that run() call. Tensors are dense and row-major, with
 * no padding between rows. A plugin that computes on an accelerator copies
 * inputs in and the result out within run().
 *
 * Storage of each dtype (what `in[i]` and `out` point at):
 *   KCS_DT_F64      double (IEEE binary64)
 *   KCS_DT_F32      float  (IEEE binary32)
 *   KCS_DT_TF32     uint32_t: an fp32 bit pattern whose low 13 mantissa bits
 *                   are zero on input (read it as a float); an output is
 *                   read back as the full fp32 value it holds
 *   KCS_DT_BF16     uint16_t: the bfloat16 encoding (top half of an fp32)
 *   KCS_DT_F16      uint16_t: the IEEE binary16 encoding
 *   KCS_DT_F8_E4M3  uint8_t: OCP fp8 E4M3 (bias 7, no Inf, S.1111.111 = NaN)
 *   KCS_DT_F8_E5M2  uint8_t: OCP fp8 E5M2 (bias 15, IEEE-like Inf/NaN)
 *   KCS_DT_I64      int64_t (indices)
 * kcs_plugin_dtype_size() below gives the bytes per element.
 */
#ifndef KCS_PLUGIN_H
#define KCS_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KCS_PLUGIN_ABI_VERSION 1

/* Element types. The numeric values are part of the ABI. */
typedef enum {
    KCS_DT_F64 = 0,
    KCS_DT_F32 = 1,
    KCS_DT_TF32 = 2,
    KCS_DT_BF16 = 3,
    KCS_DT_F16 = 4,
    KCS_DT_F8_E4M3 = 5,
    KCS_DT_F8_E5M2 = 6,
    KCS_DT_I64 = 7
} kcs_dtype;

/* One op call. Shapes per op (row-major; the reduction length is k):
 *   gemm          in[0] A m×k, in[1] B k×n, in[2] C m×n or NULL
 *                 -> out D = C + A·B, m×n
 *   batched_gemm  batch × (gemm), each operand batch-major  -> batch×m×n
 *   reduce_sum    in[0] x m×k (m rows of length k)          -> m sums
 *   dot           in[0] x, in[1] y of length k              -> 1 value
 *   softmax       in[0] x m×k, row-wise                     -> m×k
 *   layernorm     in[0] x m×k, in[1] gamma k, in[2] beta k  -> m×k
 *   rmsnorm       in[0] x m×k, in[1] gamma k                -> m×k
 *   attention     in[0] Q batch×m×k, in[1] K batch×n×k,
 *                 in[2] V batch×n×k                         -> batch×m×k
 *   gather        in[0] table m×k, in[1] indices n (KCS_DT_I64) -> n×k
 *   allreduce     in[0] x m×k: row r is rank r's contribution (m ranks;
 *                 m <= 1: one rank)                         -> k sums over ranks
 *   elementwise   in[0] x m×k                               -> m×k, y = f(x)
 *                 elementwise, f named by attrs key fn = exp (default) |
 *                 tanh | silu | gelu_tanh | rsqrt (src/arith/elementwise.h)
 *   norm          in[0] x m×k (m rows of length k)          -> m 2-norms ||x_i||_2
 * Every input except gather's indices has dtype_in; the output has
 * dtype_out. Unused in[] slots are NULL. */
typedef struct kcs_plugin_call {
    const char *op;                 /* "gemm", "softmax", "gather", … (never NULL) */
    kcs_dtype dtype_in, dtype_acc, dtype_out;   /* what the caller declares:
                                       inputs' type, the accumulator the kernel
                                       must use (at least this precise), and
                                       the output's type */
    int64_t m, n, k, batch;         /* op-dependent; unused = 0 */
    const void *in[4];              /* host memory, row-major, dense; gemm: A, B, C or NULL */
    void *out;                      /* host memory, pre-filled by kcs (sentinel + guards):
                                       exactly out_bytes may be written; kcs checks the
                                       guard regions before and after it */
    size_t out_bytes;               /* number of output elements × element size of dtype_out */
    const char *attrs;              /* "key=value;…", e.g. "oob=raise;nan=propagate"
                                       (never NULL; "" when there are none). gather's
                                       key oob = raise (default) | clamp | zero | undefined;
                                       elementwise's key fn (above) */
} kcs_plugin_call;

/* What kcs_plugin_get() returns. The struct and the strings it points at
 * must stay valid while the library is loaded (a static const object). */
typedef struct kcs_plugin {
    int abi_version;                /* KCS_PLUGIN_ABI_VERSION */
    const char *name;               /* the plugin's name, recorded as the device model */
    const char *ops;                /* comma-separated ops it implements, e.g. "gemm,gather";
                                       kcs answers "unsupported" for any other op */
    int (*run)(const kcs_plugin_call *call, char *msg, size_t msg_len);
    /* 0: done; > 0: raised an error on purpose (e.g. out-of-bounds index under
       oob=raise), msg says why; < 0: the plugin failed */
    /* Return-value convention of run():
     *    0   done: out holds the result.
     *  > 0   the kernel raised an error on purpose, as its declared semantics
     *        demand (e.g. an out-of-range gather index under oob=raise);
     *        msg (a NUL-terminated string of at most msg_len bytes) says
     *        why. kcs records the call as "raised" and ignores out.
     *  < 0   the plugin failed (cannot handle these dtypes, out of memory,
     *        device error); msg says why. kcs records an error.
     * msg is never NULL and arrives holding "" (msg_len >= 256). */
} kcs_plugin;

/* The one exported symbol. kcs resolves it by this exact name. */
typedef const kcs_plugin *(*kcs_plugin_get_fn)(void);

/* Mark the definition of kcs_plugin_get with KCS_PLUGIN_EXPORT so that it
 * stays visible when the library is built with -fvisibility=hidden. */
#if defined(_WIN32)
#define KCS_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define KCS_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define KCS_PLUGIN_EXPORT
#endif

KCS_PLUGIN_EXPORT const kcs_plugin *kcs_plugin_get(void);   /* the one exported symbol */

/* Optional: what the library's kernels declare about themselves (the
 * properties some contracts bind only when declared), as a list of names
 * separated by ',' or blanks. Known names:
 *   batch_invariant   a row's result does not depend on the batch it is
 *                     computed in: op(x[:b]) == op(x)[:b] bitwise for every
 *                     b (C-ORD-03 binds only kernels that declare it; the
 *                     others are reported NOT-CLAIMED there)
 *   nan_mask          the kernel implements nan=mask when the call's attrs
 *                     ask for it: a NaN input element is absent (0 in sums
 *                     and products, -Inf in softmax; contracts/README.md);
 *                     a contract that declares nan=mask should bind only
 *                     kernels that declare it (precondition.declares)
 *   round_to_nearest  every addition and multiplication in the declared
 *                     accumulator rounds to nearest (no truncating matrix
 *                     unit, no fast-math), and elementwise functions are
 *                     within 4 ulp: C-PRC-06 then holds the kernel's
 *                     normalisations to the probabilistic error of fp32
 *                     sums (lambda sqrt(k) u); the others are NOT-CLAIMED
 *   nan=mask          the kernel always masks NaN (implies nan_mask):
 *                     contracts written for nan=propagate (C-EXC-01,
 *                     C-EXC-03) judge it under nan=mask instead
 *   oob=clamp, oob=zero, oob=undefined
 *                     its gather always answers an out-of-range index so:
 *                     C-EXC-02 (written for oob=raise) judges it under the
 *                     declared policy (rows exact, never a raise)
 *   nan=propagate, oob=raise  the contracts' defaults: accepted, no effect
 * kcs grade names the semantics each contract was judged under.
 * kcs refuses a library that declares a name it does not know. A library
 * without this symbol declares nothing (ABI 1 is unchanged: the symbol is
 * looked up by name and may be absent). Define it as
 *   KCS_PLUGIN_EXPORT const char *kcs_plugin_declares(void) { return "batch_invariant"; } */
typedef const char *(*kcs_plugin_declares_fn)(void);

/* Bytes per element of a dtype (0 for a value outside the enum). */
static inline size_t kcs_plugin_dtype_size(kcs_dtype t)
{
    if (t == KCS_DT_F64 || t == KCS_DT_I64)
        return 8;
    if (t == KCS_DT_F32 || t == KCS_DT_TF32)
        return 4;
    if (t == KCS_DT_BF16 || t == KCS_DT_F16)
        return 2;
    if (t == KCS_DT_F8_E4M3 || t == KCS_DT_F8_E5M2)
        return 1;
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif
