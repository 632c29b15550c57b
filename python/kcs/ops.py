"""The ops table of include/kcs_plugin.h: the inputs a kernel receives and
the shape of the output it returns, for one call's m, n, k, batch.

    gemm          fn(A m×k, B k×n[, C m×n])          -> m×n   (D = C + A·B)
    batched_gemm  fn(A b×m×k, B b×k×n[, C b×m×n])    -> b×m×n
    reduce_sum    fn(x m×k)                          -> m
    dot           fn(x k, y k)                       -> a scalar (shape () or (1,))
    softmax       fn(x m×k)                          -> m×k (row-wise)
    layernorm     fn(x m×k, gamma k, beta k)         -> m×k
    rmsnorm       fn(x m×k, gamma k)                 -> m×k
    attention     fn(Q b×m×k, K b×n×k, V b×n×k)      -> b×m×k
    gather        fn(table m×k, indices n (int64))   -> n×k
    elementwise   fn(x m×k)                          -> m×k (y = f(x), attrs fn=)
    norm          fn(x m×k)                          -> m (||x_i||_2 per row)
"""


def _b(batch):
    return batch if batch > 0 else 1


def input_shapes(op, m, n, k, batch):
    """Shapes of in[0..3] (None where the slot is unused)."""
    b = _b(batch)
    table = {
        "gemm": [(m, k), (k, n), (m, n)],
        "batched_gemm": [(b, m, k), (b, k, n), (b, m, n)],
        "reduce_sum": [(m, k)],
        "dot": [(k,), (k,)],
        "softmax": [(m, k)],
        "layernorm": [(m, k), (k,), (k,)],
        "rmsnorm": [(m, k), (k,)],
        "attention": [(b, m, k), (b, n, k), (b, n, k)],
        "gather": [(m, k), (n,)],
        "elementwise": [(m, k)],
        "norm": [(m, k)],
    }
    if op not in table:
        raise ValueError(f"op {op!r}: a Python kernel can implement "
                         f"{', '.join(sorted(table))}")
    s = table[op]
    return s + [None] * (4 - len(s))


def output_shape(op, m, n, k, batch):
    b = _b(batch)
    return {
        "gemm": (m, n), "batched_gemm": (b, m, n), "reduce_sum": (m,), "dot": (),
        "softmax": (m, k), "layernorm": (m, k), "rmsnorm": (m, k),
        "attention": (b, m, k), "gather": (n, k), "elementwise": (m, k),
        "norm": (m,),
    }[op]


OPS = ("gemm", "batched_gemm", "reduce_sum", "dot", "softmax", "layernorm", "rmsnorm",
       "attention", "gather", "elementwise", "norm")
