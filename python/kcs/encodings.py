"""Tensor storage of the kcs dtypes (include/kcs_plugin.h) <-> numpy.

In the shared region every tensor is dense, row-major, in the native
storage of its kcs_dtype. A Python kernel sees numpy arrays: float64,
float32 and float16 as themselves; tf32 as float32 (low 13 mantissa bits
zero); bf16 and the fp8 formats, which numpy lacks, as float32 arrays
holding exactly representable values; indices as int64. What the kernel
returns must have the dtype_out's numpy type (bf16 and fp8: float32 whose
values the format represents exactly: kcs grades the bits a kernel
produced, so nothing is rounded here on the kernel's behalf).
"""
import numpy as np

# kcs_dtype values (ABI): name, storage type, numpy type the kernel sees.
F64, F32, TF32, BF16, F16, F8_E4M3, F8_E5M2, I64 = range(8)

NAMES = {F64: "fp64", F32: "fp32", TF32: "tf32", BF16: "bf16", F16: "fp16",
         F8_E4M3: "fp8_e4m3", F8_E5M2: "fp8_e5m2", I64: "i64"}
BY_NAME = {v: k for k, v in NAMES.items()}

STORAGE = {F64: np.float64, F32: np.float32, TF32: np.uint32, BF16: np.uint16,
           F16: np.float16, F8_E4M3: np.uint8, F8_E5M2: np.uint8, I64: np.int64}
SEEN = {F64: np.float64, F32: np.float32, TF32: np.float32, BF16: np.float32,
        F16: np.float16, F8_E4M3: np.float32, F8_E5M2: np.float32, I64: np.int64}


class EncodingError(ValueError):
    """A returned array cannot be stored in dtype_out without changing it."""


def itemsize(dt):
    return np.dtype(STORAGE[dt]).itemsize


def _fp8_table(exp_bits, man_bits, bias, ieee):
    vals = np.empty(256, dtype=np.float32)
    for code in range(256):
        s = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        top = (1 << exp_bits) - 1
        if ieee and e == top:
            v = s * np.inf if m == 0 else np.nan
        elif not ieee and e == top and m == (1 << man_bits) - 1:
            v = np.nan  # E4M3: S.1111.111 is NaN, no Inf
        elif e == 0:
            v = s * m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            v = s * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        vals[code] = v
    return vals


_FP8 = {F8_E4M3: _fp8_table(4, 3, 7, False), F8_E5M2: _fp8_table(5, 2, 15, True)}
_FP8_NAN = {F8_E4M3: 0x7F, F8_E5M2: 0x7E}
_FP8_CODE = {}
for _dt, _tab in _FP8.items():
    _FP8_CODE[_dt] = {int(b): c for c, b in enumerate(_tab.view(np.uint32)) if not np.isnan(_tab[c])}


def decode(dt, raw):
    """Storage array (STORAGE[dt]) -> the array a kernel sees (SEEN[dt])."""
    if dt == TF32:
        return raw.view(np.float32)
    if dt == BF16:
        return (raw.astype(np.uint32) << 16).view(np.float32)
    if dt in _FP8:
        return _FP8[dt][raw]
    return raw


def encode(dt, arr):
    """A kernel's output (SEEN[dt]) -> storage (STORAGE[dt]); EncodingError
    when a value is not exactly representable."""
    if dt in (F64, F32, F16, I64):
        return arr
    if dt == TF32:
        return arr.view(np.uint32)
    if dt == BF16:
        bits = arr.view(np.uint32)
        nan = np.isnan(arr)
        inexact = (bits & 0xFFFF) != 0
        inexact &= ~nan
        if inexact.any():
            i = int(np.flatnonzero(inexact.reshape(-1))[0])
            raise EncodingError(f"output element {i} = {arr.reshape(-1)[i]!r} is not a bf16 value "
                                f"(float32 with the low 16 bits zero)")
        out = (bits >> 16).astype(np.uint16)
        out[nan] = (0x7FC0 | ((bits[nan] >> 16) & 0x8000)).astype(np.uint16)
        return out
    if dt in _FP8:
        codes = _FP8_CODE[dt]
        flat = arr.reshape(-1)
        out = np.empty(flat.shape, dtype=np.uint8)
        for i, (v, b) in enumerate(zip(flat, flat.view(np.uint32))):
            if np.isnan(v):
                out[i] = _FP8_NAN[dt] | (0x80 if b & 0x80000000 else 0)
                continue
            c = codes.get(int(b))
            if c is None:
                raise EncodingError(f"output element {i} = {v!r} is not a {NAMES[dt]} value")
            out[i] = c
        return out.reshape(arr.shape)
    raise EncodingError(f"unknown dtype {dt}")
