"""Hypothesis strategies for torch dtypes.

Every dtype the installed torch exposes with general strided-tensor support is
covered: ``bool``; the signed integers; ``uint8`` and, where torch has them
(>= 2.3), ``uint16``/``uint32``/``uint64``; ``float16``, ``bfloat16``,
``float32``, ``float64``; ``complex64``, ``complex128``.

Deliberately left out, with the reason: ``complex32`` (``chalf``: torch warns
that "ComplexHalf support is experimental" and ``torch.equal`` has no kernel
for it) and the float8 family (no arithmetic or comparison kernels on CPU), so
no property could compare values for them. Quantized dtypes are not strided
tensors in the sense of this suite.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from conformance.model.values import DIFFERENTIABLE as _DIFFERENTIABLE_NAMES

__all__ = [
    "BOOL",
    "SIGNED_INTS",
    "UNSIGNED_INTS",
    "INTEGRAL",
    "FLOATING",
    "COMPLEX",
    "DIFFERENTIABLE",
    "ALL_DTYPES",
    "ARITHMETIC",
    "dtypes",
    "dtype_name",
    "is_differentiable",
]

BOOL: tuple[torch.dtype, ...] = (torch.bool,)
SIGNED_INTS: tuple[torch.dtype, ...] = (torch.int8, torch.int16, torch.int32, torch.int64)
#: ``uint8`` always; the wide unsigned types only where this torch defines them.
UNSIGNED_INTS: tuple[torch.dtype, ...] = (torch.uint8,) + tuple(
    getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)
)
INTEGRAL: tuple[torch.dtype, ...] = SIGNED_INTS + UNSIGNED_INTS
FLOATING: tuple[torch.dtype, ...] = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
COMPLEX: tuple[torch.dtype, ...] = (torch.complex64, torch.complex128)
ALL_DTYPES: tuple[torch.dtype, ...] = BOOL + INTEGRAL + FLOATING + COMPLEX
#: dtypes that can require gradients ("floating point and complex dtype"): FLOATING + COMPLEX,
#: in that order. Derived from the source, the torch-free reference model's name set
#: (conformance.model.values.DIFFERENTIABLE; the model may not import torch, so not the reverse).
DIFFERENTIABLE: tuple[torch.dtype, ...] = tuple(
    d for d in ALL_DTYPES if str(d).removeprefix("torch.") in _DIFFERENTIABLE_NAMES
)
#: dtypes with in-place arithmetic (``add_``, ``mul_``) kernels on every device.
#: The wide unsigned types only have copy/fill kernels, so they are excluded.
ARITHMETIC: tuple[torch.dtype, ...] = SIGNED_INTS + (torch.uint8,) + FLOATING + COMPLEX

_FAMILIES = {
    "bool": BOOL,
    "signed": SIGNED_INTS,
    "unsigned": UNSIGNED_INTS,
    "integral": INTEGRAL,
    "floating": FLOATING,
    "complex": COMPLEX,
    "differentiable": DIFFERENTIABLE,
    "arithmetic": ARITHMETIC,
    "all": ALL_DTYPES,
}


def dtypes(*families: str) -> st.SearchStrategy[torch.dtype]:
    """Strategy drawing a ``torch.dtype`` from the union of the named families.

    Families: ``"all"`` (default), ``"bool"``, ``"signed"``, ``"unsigned"``,
    ``"integral"``, ``"floating"``, ``"complex"``, ``"differentiable"``
    (floating + complex) and ``"arithmetic"`` (dtypes with ``add_``/``mul_``
    kernels). Shrinks towards the first dtype of the union.

    Raises ``ValueError`` for an unknown family name.
    """
    names = families or ("all",)
    chosen: list[torch.dtype] = []
    for name in names:
        if name not in _FAMILIES:
            raise ValueError(f"unknown dtype family {name!r}; known: {', '.join(_FAMILIES)}")
        chosen.extend(d for d in _FAMILIES[name] if d not in chosen)
    return st.sampled_from(chosen)


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` -> ``"float32"`` (the attribute name on ``torch``)."""
    return str(dtype).removeprefix("torch.")


#: The dtype families a claim's domain names (``dtype_family`` in
#: ``conformance/domains.toml``): each dtype belongs to exactly one.
DTYPE_FAMILIES: tuple[str, ...] = (
    "bool",
    "signed",
    "unsigned",
    "reduced_float",
    "float",
    "complex",
)


def dtype_family(dtype: torch.dtype) -> str:
    """The one :data:`DTYPE_FAMILIES` entry ``dtype`` belongs to: ``"bool"``,
    ``"signed"`` (int8-int64), ``"unsigned"`` (uint8-uint64), ``"reduced_float"``
    (float16, bfloat16), ``"float"`` (float32, float64) or ``"complex"``.

    >>> dtype_family(torch.bfloat16)
    'reduced_float'

    Raises ``ValueError`` for a dtype outside :data:`ALL_DTYPES` (quantized,
    float8, ...)."""
    if dtype == torch.bool:
        return "bool"
    if dtype in SIGNED_INTS:
        return "signed"
    if dtype in UNSIGNED_INTS:
        return "unsigned"
    if dtype in (torch.float16, torch.bfloat16):
        return "reduced_float"
    if dtype in (torch.float32, torch.float64):
        return "float"
    if dtype in COMPLEX:
        return "complex"
    raise ValueError(f"dtype {dtype} belongs to none of {DTYPE_FAMILIES}")


def is_differentiable(dtype: torch.dtype) -> bool:
    """True for floating and complex dtypes, the only ones that can require grad."""
    return dtype.is_floating_point or dtype.is_complex
