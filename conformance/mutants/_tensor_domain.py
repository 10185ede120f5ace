"""Mutants wrong at exactly one domain value of a tensor argument (issue 29).

A claim about "every tensor" of a boundary (``t.numpy()``, DLPack export,
``torch.save``, ``copy.deepcopy``, ``share_memory_()``, ``__torch_function__``)
declares the ``layout``, ``dtype_family`` and ``tensor_kind`` values it speaks
of (``conformance/domains.toml``). Each such (area, dimension=value) pair
needs a mutant wrong only there: a fast path gone wrong for one layout family,
one dtype family or one kind of tensor. :func:`domain_mutants` builds one
mutant per value from an area's patch and witness functions.

The classifiers here (:func:`in_domain`) restate
:func:`strategies.domains.layout_kinds`, :func:`strategies.domains.tensor_kind_of`,
:func:`strategies.domains.math_bit_of` and :func:`strategies.dtypes.dtype_family`
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
from conformance.mutants.patching import Patch, np, torch

__all__ = [
    "InDomain",
    "in_domain",
    "other_dtype",
    "is_dense",
    "bind_domain",
    "LAYOUTS",
    "DTYPE_FAMILIES",
    "TENSOR_KINDS",
    "ndarray_kinds",
    "domain_mutants",
    "LAYOUT_MAKERS",
    "FAMILY_MAKERS",
    "TENSOR_KIND_MAKERS",
    "MATH_BIT_MAKERS",
]


def is_dense(t):
    """Whether ``t``'s elements fill a block of its storage without gaps, in
    some order of its dims (strides sorted, each the product of the sizes
    before it; dims of size 1 ignored)."""
    expected = 1
    for size, stride in sorted(((s, st) for s, st in zip(t.shape, t.stride(), strict=False)
                                if s != 1), key=lambda p: p[1]):  # fmt: skip
        if stride != expected:
            return False
        expected *= size
    return True


def _layout_kinds(t):
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
    elif t.numel() > 0 and not is_dense(t):
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


def other_dtype(dtype):
    """Another dtype of ``dtype``'s kind that holds its values: float32 for
    float64, complex128 for complex64, complex64 for other complex dtypes,
    float64 for the rest (what the "converts" mutants copy to)."""
    if dtype == torch.float64:
        return torch.float32
    if dtype == torch.complex64:
        return torch.complex128
    if dtype.is_complex:
        return torch.complex64
    return torch.float64


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


#: The values of the tensor dimensions of ``conformance/domains.toml``: every
#: layout family, dtype family and tensor kind.
LAYOUTS = ("contiguous", "offset", "stepped", "permuted", "expanded", "channels_last",
           "zero-size", "0-d")  # fmt: skip
DTYPE_FAMILIES = ("bool", "signed", "unsigned", "reduced_float", "float", "complex")
TENSOR_KINDS = ("plain", "leaf", "non_leaf", "parameter", "subclass", "inference")

#: A maker builds a witness's input: ``make()`` (a function, so that
#: importing the catalogue imports no torch).
Maker = Callable[..., object]

#: A float32 tensor of each layout family (a witness's input).
LAYOUT_MAKERS: dict[str, Maker] = {
    "contiguous": lambda: torch.arange(6.0).reshape(2, 3),
    "offset": lambda: torch.arange(12.0).reshape(4, 3)[1:],
    "stepped": lambda: torch.arange(12.0).reshape(2, 6)[:, ::2],
    "permuted": lambda: torch.arange(6.0).reshape(3, 2).t(),
    "expanded": lambda: torch.arange(3.0).expand(2, 3),
    "channels_last": lambda: (
        torch.arange(24.0).reshape(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
    ),
    "zero-size": lambda: torch.zeros(0, 3),
    "0-d": lambda: torch.tensor(1.5),
}

#: A contiguous tensor of each dtype family (a witness's input).
FAMILY_MAKERS: dict[str, Maker] = {
    "bool": lambda: torch.tensor([True, False, True]),
    "signed": lambda: torch.tensor([1, -2, 3], dtype=torch.int32),
    "unsigned": lambda: torch.tensor([1, 2, 3], dtype=torch.uint8),
    "reduced_float": lambda: torch.tensor([1.5, -2.0, 3.0], dtype=torch.float16),
    "float": lambda: torch.tensor([1.5, -2.0, 3.0], dtype=torch.float64),
    "complex": lambda: torch.tensor([1 + 2j, -3j, 4.0], dtype=torch.complex64),
}

#: The words of a region, per dimension.
_REGION = {
    "layout": "tensors of the {value} layout family (strategies.domains.layout_kinds)",
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
    "none": lambda: torch.tensor([1 + 2j, 3j]),
    "conj": lambda: torch.tensor([1 + 2j, 3j]).conj(),
    "neg": lambda: torch.tensor([1 + 2j, 3j]).conj().imag,
}

#: A float32 tensor of each tensor kind (a witness's input).
TENSOR_KIND_MAKERS: dict[str, Maker] = {
    "plain": lambda: torch.ones(3),
    "leaf": lambda: torch.ones(3, requires_grad=True),
    "non_leaf": lambda: torch.ones(3, requires_grad=True) * 2,
    "parameter": lambda: torch.nn.Parameter(torch.ones(3)),
    "inference": lambda: torch.inference_mode()(torch.ones)(3),
}


def bind_domain(patch, hit: InDomain):
    """The patch of one domain value: a combinator template's ``given(hit)``,
    or a function ``patch(hit)`` called with it."""
    return patch.given(hit) if isinstance(patch, Patch) else functools.partial(patch, hit)


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
    asserts the real behaviour on ``make()``, an input of that value
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
                    patch=bind_domain(patch, InDomain(dim, value)),
                    witness=functools.partial(witness, makers[dim][value]),
                )
            )
    return tuple(out)
