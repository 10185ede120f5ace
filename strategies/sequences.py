"""Argument strategies of the copy-sequence state machine
(:mod:`conformance.copy_sequences`): fresh tensors and arrays of every
dtype the reference model knows (:class:`Fresh`, :func:`fresh_specs`, with
special values: signed zeros, infinities, NaNs, subnormals, extremes), their
shapes (zero-size included), the reshape targets of a size
(:func:`factorizations`), scalars, memory formats and grad modes.

Every value's ``repr`` is runnable Python, so a falsifying program Hypothesis
prints can be pasted as it is.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import torch
from hypothesis import strategies as st

from conformance.model import DIFFERENTIABLE, DTYPES, storage_values
from strategies.graphs import GRAD_MODES

__all__ = [
    "DTYPES",
    "ELEMENTS",
    "FORMATS",
    "GRAD_MODE_STRATEGY",
    "MAX_NUMEL",
    "NON_DIFFERENTIABLE",
    "NUMPY_DTYPES",
    "SCALARS",
    "SHAPES_BY_NDIM",
    "Fresh",
    "factorizations",
    "fresh_specs",
    "shapes",
    "values_repr",
]

#: The most elements a drawn tensor has (keeps every step cheap).
MAX_NUMEL = 12

FORMATS = {
    "preserve": torch.preserve_format,
    "contiguous": torch.contiguous_format,
    "channels_last": torch.channels_last,
}
SCALARS = (1, -1, 2, 0.5, -1.5)

SHAPES_BY_NDIM = {
    n: [s for s in itertools.product(range(1, 4), repeat=n) if math.prod(s) <= MAX_NUMEL]
    for n in range(5)
}
#: Zero-size shapes (one or more dims of size 0), drawn one time in nine.
SHAPES_BY_NDIM["zero-size"] = [(0,), (0, 2), (3, 0), (2, 0, 3), (1, 0, 2, 2)]
shapes = st.sampled_from([0, 1, 2, 2, 3, 3, 3, 4, "zero-size"]).flatmap(
    lambda n: st.sampled_from(SHAPES_BY_NDIM[n])
)
#: Special values (exact in float32, float64 and each complex64 part) that
#: replace the outermost halves, so the choice sequence Hypothesis draws for a
#: program is the same as with plain halves: the programs (rules, tensors)
#: stay the same and only values change. Every copy must keep them bit for
#: bit; in-place arithmetic by SCALARS keeps them or overflows identically
#: in the model (NumPy) and torch.
_F32 = torch.finfo(torch.float32)
_SPECIAL_HALVES = {
    -8: -0.0,
    8: math.inf,
    -7: -math.inf,
    7: math.nan,
    -6: -math.nan,
    6: _F32.tiny * _F32.eps,  # the smallest float32 subnormal
    -5: -_F32.max,
    5: _F32.max,
}


def _halves_of(dtype: torch.dtype):
    """Halves in [-4, 4] and the special values of ``dtype`` (its smallest
    subnormal and largest finite value; exact in it)."""
    info = torch.finfo(dtype)
    special = dict(_SPECIAL_HALVES)
    special[6] = info.smallest_normal * info.eps  # the smallest subnormal
    special[5], special[-5] = info.max, -info.max
    return st.integers(-8, 8).map(lambda k: special.get(k, k / 2))


def _integers_of(dtype: str):
    """Small integers and the extremes of ``dtype``."""
    info = torch.iinfo(getattr(torch, dtype))
    low = max(info.min, -4)
    return st.integers(low - 1, 5).map(
        lambda k: info.min if k == low - 1 else info.max if k == 5 else k
    )


_halves = _halves_of(torch.float32)
ELEMENTS = {
    "bool": st.booleans(),
    **{d: _integers_of(d) for d in ("int8", "int16", "int32", "int64")},
    **{d: _integers_of(d) for d in ("uint8", "uint16", "uint32", "uint64") if hasattr(torch, d)},
    "float16": _halves_of(torch.float16),
    "bfloat16": _halves_of(torch.bfloat16),
    "float32": _halves,
    "float64": _halves,
    "complex64": st.builds(complex, _halves, _halves),
    "complex128": st.builds(complex, _halves, _halves),
}
#: bool and the integral dtypes.
#: The model knows every dtype; the machine draws those this torch has
#: (uint16/uint32/uint64 exist from torch 2.3 on).
DTYPES = tuple(d for d in DTYPES if hasattr(torch, d))
NON_DIFFERENTIABLE = tuple(d for d in DTYPES if d not in DIFFERENTIABLE)
#: dtypes NumPy has (arrays are drawn from these).
NUMPY_DTYPES = tuple(d for d in DTYPES if d != "bfloat16")


def values_repr(values) -> str:
    """Runnable Python for a list of values (NaN, Inf, -0.0 and complex
    values with special parts included; see ``strategies.scalar_repr``)."""
    from strategies.tensors import scalar_repr

    return f"[{', '.join(scalar_repr(v) for v in values)}]"


@dataclass(frozen=True)
class Fresh:
    """A fresh tensor or array: ``np.array(values, dtype).reshape(shape)``
    (bfloat16: built from its bits), made inside inference_mode when
    ``inference``."""

    dtype: str
    shape: tuple[int, ...]
    values: tuple
    requires_grad: bool = False
    inference: bool = False

    def __repr__(self) -> str:
        return (
            f"Fresh(dtype={self.dtype!r}, shape={self.shape!r}, values={values_repr(self.values)}, "
            f"requires_grad={self.requires_grad!r}, inference={self.inference!r})"
        )

    def array(self) -> np.ndarray:
        return storage_values(self.dtype, self.values).reshape(self.shape)

    def tensor(self, device: str) -> torch.Tensor:
        """The tensor, bit for bit (NaN signs and payloads included); a
        zero-size one by ``torch.empty`` (``torch.tensor`` would keep the
        all-zero strides NumPy 2 gives empty arrays)."""
        if 0 in self.shape:
            return torch.empty(self.shape, dtype=getattr(torch, self.dtype), device=device)
        if self.dtype == "bfloat16":
            bits = torch.from_numpy(self.array().view(np.int16).copy())
            return bits.view(torch.bfloat16).clone().to(device)
        return torch.tensor(self.array(), device=device)

    def code(self) -> str:
        """The torch call that builds it (for the printed program)."""
        if 0 in self.shape:
            return f"torch.empty({self.shape!r}, dtype=torch.{self.dtype})"
        if self.dtype == "bfloat16":
            return (
                f"torch.from_numpy(bf16_bits(np.array({values_repr(self.values)}, dtype='float32'))"
                f".view(np.int16)).view(torch.bfloat16).reshape({self.shape!r}).clone()"
            )
        return (
            f"torch.tensor(np.array({values_repr(self.values)}, dtype={self.dtype!r})"
            f".reshape({self.shape!r}))"
        )


@st.composite
def fresh_specs(
    draw, *, arrays: bool = False, requires_grad: bool | None = None, shape=None,
    inference: bool = False, dtypes: tuple[str, ...] | None = None,
) -> Fresh:  # fmt: skip
    """Fresh tensors of every dtype (``requires_grad=True``: differentiable
    leaves that require grad; ``None``: either, for differentiable dtypes),
    of a drawn shape or the given ``shape``; arrays of every NumPy dtype;
    ``dtypes`` narrows the pool; ``inference``: maybe made inside
    inference_mode (then never requiring grad)."""
    pool = sorted(DIFFERENTIABLE) if requires_grad else NUMPY_DTYPES if arrays else DTYPES
    if dtypes is not None:
        pool = [d for d in pool if d in dtypes]
    dtype = draw(st.sampled_from(pool))
    shape = draw(shapes) if shape is None else shape
    n = math.prod(shape)
    values = tuple(draw(st.lists(ELEMENTS[dtype], min_size=n, max_size=n)))
    inf = inference and draw(st.sampled_from([False, False, False, True]))
    if requires_grad is None:
        rg = not arrays and not inf and dtype in DIFFERENTIABLE and draw(st.booleans())
    else:
        rg = requires_grad
    return Fresh(dtype, tuple(shape), values, rg, inf)


@cache
def factorizations(numel: int) -> tuple[tuple[int, ...], ...]:
    """Every shape of 0-4 dims with ``numel`` elements (the view/reshape targets)."""

    def split(n: int, dims: int):
        if dims == 0:
            if n == 1:
                yield ()
            return
        for d in range(1, n + 1):
            if n % d == 0:
                for rest in split(n // d, dims - 1):
                    yield (d, *rest)

    if numel == 0:
        return ((0,), (0, 1), (1, 0), (0, 2), (2, 0), (0, 3), (3, 0), (2, 0, 3), (0, 0))
    return tuple(s for dims in range(5) for s in split(numel, dims))


#: The grad mode an operation runs in: one of the graphs' :data:`GRAD_MODES`, grad
#: enabled drawn twice as often (``["grad", "grad", "no_grad", "inference"]``).
GRAD_MODE_STRATEGY = st.sampled_from([GRAD_MODES[0], *GRAD_MODES])
