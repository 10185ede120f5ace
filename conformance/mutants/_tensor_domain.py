"""Mutants wrong at exactly one domain value of a tensor argument (issue 29).

A claim about "every tensor" of a boundary (``t.numpy()``, DLPack export,
``torch.save``, ``copy.deepcopy``, ``share_memory_()``, ``__torch_function__``)
declares the ``layout``, ``dtype_family`` and ``tensor_kind`` values it speaks
of (``conformance/domains.toml``). Each such (area, dimension=value) pair
needs a mutant wrong only there: a fast path gone wrong for one layout family,
one dtype family or one kind of tensor. :func:`domain_mutants` builds one
mutant per value from an area's patch and witness functions.

The classifiers here (:func:`in_domain`) restate
:func:`strategies.tensors.layout_kinds`, :func:`strategies.tensors.tensor_kind_of`,
:func:`strategies.tensors.math_bit_of` and :func:`strategies.dtypes.dtype_family`
(a patch runs before the suite's strategy modules may be imported: importing
them first would bind the torch functions the patch replaces, and a witness
runs outside the suite), so a mutant's guard means exactly what the tests'
features mean. They are the one copy: the factory of
:mod:`conformance.mutants.clone` uses them too.
Not an area module (the leading underscore keeps it out of the catalogue).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from conformance.mutants.base import Mutant

__all__ = [
    "InDomain",
    "in_domain",
    "ndarray_kinds",
    "domain_mutants",
    "LAYOUT_MAKERS",
    "FAMILY_MAKERS",
    "TENSOR_KIND_MAKERS",
    "MATH_BIT_MAKERS",
]


def _dense(t):
    expected = 1
    for size, stride in sorted(((s, st) for s, st in zip(t.shape, t.stride(), strict=False)
                                if s != 1), key=lambda p: p[1]):  # fmt: skip
        if stride != expected:
            return False
        expected *= size
    return True


def _layout_kinds(t):
    import torch

    kinds = set()
    if t.dim() == 0:
        kinds.add("0-d")
    if t.numel() == 0:
        kinds.add("zero-size")
    if t.storage_offset() > 0:
        kinds.add("offset")
    sized = [(s, st) for s, st in zip(t.shape, t.stride(), strict=False) if s > 1]
    if any(st == 0 for _, st in sized):
        kinds.add("expanded")
    elif t.numel() > 0 and not _dense(t):
        kinds.add("stepped")
    strides = [st for _, st in sized if st != 0]
    if any(a < b for a, b in zip(strides, strides[1:], strict=False)):
        kinds.add("permuted")
    if (t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last)
            and not t.is_contiguous()):  # fmt: skip
        kinds.add("channels_last")
    if t.is_contiguous() and t.storage_offset() == 0:
        kinds.add("contiguous")
    return kinds


def _dtype_family(dtype):
    import torch

    if dtype == torch.bool:
        return "bool"
    if dtype in (torch.float16, torch.bfloat16):
        return "reduced_float"
    if dtype in (torch.float32, torch.float64):
        return "float"
    if dtype.is_complex:
        return "complex"
    if dtype in (torch.int8, torch.int16, torch.int32, torch.int64):
        return "signed"
    if dtype == torch.uint8 or str(dtype) in ("torch.uint16", "torch.uint32", "torch.uint64"):
        return "unsigned"
    return "other"


def _tensor_kind(t):
    import torch

    if t.is_inference():
        return "inference"
    if isinstance(t, torch.nn.Parameter):
        return "parameter"
    if type(t) is not torch.Tensor:
        return "subclass"
    if t.grad_fn is not None:
        return "non_leaf"
    return "leaf" if t.requires_grad else "plain"


def in_domain(t, dim: str, value: str) -> bool:
    """Whether ``t`` is a tensor at ``dim=value`` of the domain vocabulary
    (``conformance/domains.toml``), computed as the suite's features are
    (with ``__torch_function__`` subclass dispatch off)."""
    import torch

    if not isinstance(t, torch.Tensor):
        return False
    with torch._C.DisableTorchFunctionSubclass():
        if dim == "layout":
            return value in _layout_kinds(t)
        if dim == "dtype_family":
            return _dtype_family(t.dtype) == value
        if dim == "tensor_kind":
            return _tensor_kind(t) == value
        if dim == "math_bit":
            return ("conj" if t.is_conj() else "neg" if t.is_neg() else "none") == value
    raise ValueError(dim)


@dataclass(frozen=True)
class InDomain:
    """The guard of a domain mutant: ``hit(t)`` is :func:`in_domain` at
    one ``dim=value``."""

    dim: str
    value: str

    def __call__(self, t) -> bool:
        return in_domain(t, self.dim, self.value)


def ndarray_kinds(a):
    """The kinds of NumPy array ``a``: a copy of
    :func:`conformance.evidence.ndarray_kinds` (a patch must not import the
    suite's modules before it runs)."""
    import numpy as np

    if isinstance(a, np.generic):
        return {"numpy_scalar"}
    kinds = set()
    if not a.flags.writeable:
        kinds.add("read_only")
    if not a.dtype.isnative:
        kinds.add("byteswapped")
    if not a.flags.aligned:
        kinds.add("misaligned")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        kinds.add("non_contiguous")
    if a.size == 0:
        kinds.add("zero_size")
    if a.ndim == 0:
        kinds.add("0-d")
    return kinds or {"plain"}


#: A maker builds a witness's input: ``make(torch)`` (torch passed in, so that
#: importing the catalogue imports no torch).
Maker = Callable[..., object]

#: A float32 tensor of each layout family (a witness's input).
LAYOUT_MAKERS: dict[str, Maker] = {
    "contiguous": lambda torch: torch.arange(6.0).reshape(2, 3),
    "offset": lambda torch: torch.arange(12.0).reshape(4, 3)[1:],
    "stepped": lambda torch: torch.arange(12.0).reshape(2, 6)[:, ::2],
    "permuted": lambda torch: torch.arange(6.0).reshape(3, 2).t(),
    "expanded": lambda torch: torch.arange(3.0).expand(2, 3),
    "channels_last": lambda torch: (
        torch.arange(24.0).reshape(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
    ),
    "zero-size": lambda torch: torch.zeros(0, 3),
    "0-d": lambda torch: torch.tensor(1.5),
}

#: A contiguous tensor of each dtype family (a witness's input).
FAMILY_MAKERS: dict[str, Maker] = {
    "bool": lambda torch: torch.tensor([True, False, True]),
    "signed": lambda torch: torch.tensor([1, -2, 3], dtype=torch.int32),
    "unsigned": lambda torch: torch.tensor([1, 2, 3], dtype=torch.uint8),
    "reduced_float": lambda torch: torch.tensor([1.5, -2.0, 3.0], dtype=torch.float16),
    "float": lambda torch: torch.tensor([1.5, -2.0, 3.0], dtype=torch.float64),
    "complex": lambda torch: torch.tensor([1 + 2j, -3j, 4.0], dtype=torch.complex64),
}

#: The words of a region, per dimension.
_REGION = {
    "layout": "tensors of the {value} layout family (strategies.tensors.layout_kinds)",
    "dtype_family": "tensors of the {value} dtype family (strategies.dtypes.dtype_family)",
    "tensor_kind": "tensor_kind={value} tensors",
    "math_bit": "tensors with math_bit={value} (conjugate / negative-bit views)",
}

_FAMILY = {
    "layout": "layout",
    "dtype_family": "dtype",
    "tensor_kind": "autograd",
    "math_bit": "value",
}

#: A tensor of each math bit (a witness's input).
MATH_BIT_MAKERS: dict[str, Maker] = {
    "none": lambda torch: torch.tensor([1 + 2j, 3j]),
    "conj": lambda torch: torch.tensor([1 + 2j, 3j]).conj(),
    "neg": lambda torch: torch.tensor([1 + 2j, 3j]).conj().imag,
}

#: A float32 tensor of each tensor kind (a witness's input).
TENSOR_KIND_MAKERS: dict[str, Maker] = {
    "plain": lambda torch: torch.ones(3),
    "leaf": lambda torch: torch.ones(3, requires_grad=True),
    "non_leaf": lambda torch: torch.ones(3, requires_grad=True) * 2,
    "parameter": lambda torch: torch.nn.Parameter(torch.ones(3)),
    "inference": lambda torch: torch.inference_mode()(torch.ones)(3),
}


def domain_mutants(
    *,
    prefix: str,
    claims: tuple[str, ...],
    what: str,
    patch: Callable[[InDomain], object],
    witness: Callable[[Maker], object],
    dims: dict[str, tuple[str, ...]],
    makers: dict[str, dict[str, Maker]] | None = None,
) -> tuple[Mutant, ...]:
    """One partial mutant per (dimension, value) of ``dims``.

    ``patch(hit)`` patches torch, calling ``hit(x)`` (an :class:`InDomain`)
    to test whether ``x`` is at the mutant's value; ``witness(make)``
    asserts the real behaviour on ``make(torch)``, an input of that value
    (from :data:`LAYOUT_MAKERS`, :data:`FAMILY_MAKERS`,
    :data:`TENSOR_KIND_MAKERS`, :data:`MATH_BIT_MAKERS`, or ``makers[dim]``,
    which replaces them). ``what`` describes the wrong behaviour
    ("t.numpy() returns a copy"). Names are ``{prefix}-{dim}-{value}``.
    """
    makers = {
        "layout": LAYOUT_MAKERS,
        "dtype_family": FAMILY_MAKERS,
        "tensor_kind": TENSOR_KIND_MAKERS,
        "math_bit": MATH_BIT_MAKERS,
        **(makers or {}),
    }
    out = []
    for dim, values in dims.items():
        for value in values:
            slug = value.replace("_", "-")
            out.append(
                Mutant(
                    name=f"{prefix}-{dim.replace('_', '-')}-{slug}",
                    description=f"{what}, only for {_REGION[dim].format(value=value)}",
                    claims=claims,
                    domain={dim: value},
                    region=_REGION[dim].format(value=value),
                    family=_FAMILY[dim],
                    patch=functools.partial(patch, InDomain(dim, value)),
                    witness=functools.partial(witness, makers[dim][value]),
                )
            )
    return tuple(out)
