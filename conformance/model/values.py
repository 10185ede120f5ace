"""dtypes and value conversion (torch's C++ casts, in NumPy)."""

from __future__ import annotations

import numpy as np

__all__ = ["DTYPES", "DIFFERENTIABLE", "convert", "same_bits"]

#: dtypes the model knows (NumPy names, which are also the torch attribute names).
DTYPES: tuple[str, ...] = ("float32", "float64", "int64", "bool", "complex64")
#: dtypes that can require gradients.
DIFFERENTIABLE = frozenset({"float16", "float32", "float64", "complex64", "complex128"})


def convert(values, dtype: str) -> np.ndarray:
    """torch's value conversion to ``dtype`` (C++ casts): complex to real keeps
    the real part, to bool means non-zero, floating to integral truncates."""
    target = np.dtype(dtype)
    v = np.asarray(values)
    if target.kind == "b":
        return v != 0
    if v.dtype.kind == "c" and target.kind != "c":
        v = v.real
    with np.errstate(all="ignore"):
        return v.astype(target)


def same_bits(a, b) -> bool:
    """Bit equality of two elements of one dtype (for deciding whether a write
    changes memory): -0.0 differs from 0.0, a NaN equals only the same NaN."""
    a = np.asarray(a)
    return a.tobytes() == np.asarray(b, dtype=a.dtype).tobytes()
