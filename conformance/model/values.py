"""dtypes and value conversion (torch's C++ casts, in NumPy).

Values live in a buffer in their *storage representation*: the NumPy dtype
of the same name, except ``bfloat16`` (NumPy has none), stored as its raw
``uint16`` bit patterns. :func:`convert` takes a source dtype for arrays in
storage representation (``src="bfloat16"`` decodes the bits first); a
same-dtype conversion copies the bits unchanged, as torch's copy kernels do.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "DTYPES",
    "DIFFERENTIABLE",
    "FLOATING",
    "INTEGRAL",
    "UNSIGNED",
    "storage_dtype",
    "itemsize",
    "decode",
    "bf16_bits",
    "convert",
    "conversion_unspecified",
    "scalar_overflows",
    "same_bits",
]

#: dtypes the model knows (the torch attribute names; all of ``strategies.ALL_DTYPES``).
DTYPES: tuple[str, ...] = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
#: dtypes that can require gradients. The source of ``strategies.dtypes.DIFFERENTIABLE`` (derived from it).
DIFFERENTIABLE = frozenset({"float16", "bfloat16", "float32", "float64", "complex64", "complex128"})
#: real floating dtypes.
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
#: integral dtypes (bool excluded).
INTEGRAL = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
#: unsigned integral dtypes.
UNSIGNED = frozenset({"uint8", "uint16", "uint32", "uint64"})


def storage_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of ``dtype``'s storage representation."""
    return np.dtype(np.uint16) if dtype == "bfloat16" else np.dtype(dtype)


def itemsize(dtype: str) -> int:
    return storage_dtype(dtype).itemsize


def decode(values, dtype: str) -> np.ndarray:
    """The numbers an array in ``dtype``'s storage representation holds
    (``bfloat16`` bits become the float32 values they denote, exactly)."""
    v = np.asarray(values)
    if dtype == "bfloat16":
        return (v.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return v


def bf16_bits(values) -> np.ndarray:
    """float32 values (exactly representable in bfloat16, NaNs included:
    sign and top payload bits kept) as bfloat16 bit patterns - how the state
    machine builds bfloat16 tensors bit for bit."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32)
    return (u >> np.uint32(16)).astype(np.uint16)


def _round_bf16(f: np.ndarray) -> np.ndarray:
    """``c10::BFloat16(float)``: round to nearest even; a NaN becomes 0x7FC0
    (see :func:`conversion_unspecified`: vectorized kernels differ)."""
    u = np.asarray(f, dtype=np.float32).view(np.uint32).astype(np.uint64)
    out = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(
        np.uint16
    )
    return np.where(np.isnan(np.asarray(f, dtype=np.float32)), np.uint16(0x7FC0), out)


def convert(values, dtype: str, src: str | None = None) -> np.ndarray:
    """torch's value conversion to ``dtype`` (C++ casts), in ``dtype``'s
    storage representation: complex to real keeps the real part, to bool
    means non-zero, floating to integral truncates, to bfloat16 goes through
    float32 (then rounds to nearest even). ``src`` names the dtype of
    ``values`` when they are in storage representation (needed for
    bfloat16 bits); a conversion to the same dtype keeps the bits."""
    v = np.asarray(values)
    if src is not None and src == dtype:
        with np.errstate(all="ignore"):
            return v.astype(storage_dtype(dtype))
    if src == "bfloat16":
        v = decode(v, src)
    if dtype == "bool":
        return v != 0
    if v.dtype.kind == "c" and dtype not in ("complex64", "complex128"):
        v = v.real
    with np.errstate(all="ignore"):
        if dtype == "bfloat16":
            return _round_bf16(v.astype(np.float32))
        return v.astype(np.dtype(dtype))


def conversion_unspecified(values, dtype: str, src: str | None = None) -> np.ndarray:
    """Mask of the elements whose conversion to ``dtype`` torch leaves
    implementation-defined: a floating value that is not finite or whose
    truncation lies outside an integral ``dtype`` (undefined behaviour in
    C++; kernels differ), and a NaN converted to another floating dtype
    (bfloat16: the scalar path makes 0x7FC0, vectorized ones keep other
    bits; a 0-d source may go through a double Scalar)."""
    v = decode(np.asarray(values), src) if src == "bfloat16" else np.asarray(values)
    if src is not None and src == dtype:
        return np.zeros(v.shape, dtype=bool)
    if v.dtype.kind == "c":
        if dtype.startswith("complex"):
            return np.isnan(v.real) | np.isnan(v.imag)
        v = v.real
    if v.dtype.kind != "f":
        return np.zeros(v.shape, dtype=bool)
    if dtype == "bfloat16" or dtype in FLOATING or dtype.startswith("complex"):
        # the sign and payload of a converted NaN depend on the path (a 0-d
        # source may go through a double Scalar)
        return np.isnan(v)
    if dtype in INTEGRAL:
        info = np.iinfo(np.dtype(dtype))
        with np.errstate(all="ignore"):
            t = np.trunc(v.astype(np.float64))
            return ~np.isfinite(t) | (t < info.min) | (t > info.max)
    return np.zeros(v.shape, dtype=bool)


def scalar_overflows(value, dtype: str) -> bool:
    """``c10::overflows<dtype>(value)`` for a Python scalar: what ``fill_``
    and index assignment check before writing. A float outside the integral
    range overflows; a negative int may wrap into an unsigned dtype."""
    if dtype == "bool" or dtype not in INTEGRAL:
        return False
    info = np.iinfo(np.dtype(dtype))
    if isinstance(value, float):
        return value != value or value < info.min or value > info.max
    if dtype in UNSIGNED and value < 0:
        return -value > info.max
    return value < info.min or value > info.max


def same_bits(a, b) -> bool:
    """Bit equality of two elements of one dtype (for deciding whether a write
    changes memory): -0.0 differs from 0.0, a NaN equals only the same NaN."""
    a = np.asarray(a)
    return a.tobytes() == np.asarray(b, dtype=a.dtype).tobytes()
