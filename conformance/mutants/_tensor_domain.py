"""Mutants wrong at exactly one domain value of a tensor argument (issue 29).

A claim about "every tensor" of a boundary (``t.numpy()``, DLPack export,
``torch.save``, ``copy.deepcopy``, ``share_memory_()``, ``__torch_function__``)
declares the ``layout``, ``dtype_family`` and ``tensor_kind`` values it speaks
of (``conformance/domains.toml``). Each such (area, dimension=value) pair
needs a mutant wrong only there: a fast path gone wrong for one layout family,
one dtype family or one kind of tensor. :func:`domain_mutants` builds one
mutant per value from an area's patch and witness templates.

The classifiers in :data:`GUARDS` restate :func:`strategies.tensors.layout_kinds`,
:func:`strategies.tensors.tensor_kind_of`, :func:`strategies.tensors.math_bit_of`
and :func:`strategies.dtypes.dtype_family` (a mutant's source runs before the
checkout is importable, and its witness outside it), so a mutant's guard means
exactly what the tests' features mean. They are the one copy: the factory of
:mod:`conformance.mutants.clone` uses them too.
Not an area module (the leading underscore keeps it out of the catalogue).
"""

from __future__ import annotations

import textwrap

from conformance.mutants.base import Mutant

#: Python source defining ``_in_domain(t, dim, value)`` for a mutant.
GUARDS = """
import torch

def _dense(t):
    expected = 1
    for size, stride in sorted(((s, st) for s, st in zip(t.shape, t.stride()) if s != 1),
                               key=lambda p: p[1]):
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
    sized = [(s, st) for s, st in zip(t.shape, t.stride()) if s > 1]
    if any(st == 0 for _, st in sized):
        kinds.add("expanded")
    elif t.numel() > 0 and not _dense(t):
        kinds.add("stepped")
    strides = [st for _, st in sized if st != 0]
    if any(a < b for a, b in zip(strides, strides[1:])):
        kinds.add("permuted")
    if (t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last)
            and not t.is_contiguous()):
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

def _in_domain(t, dim, value):
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
"""

#: Python source defining ``_ndarray_kinds(a)`` in a mutant: a copy of
#: :func:`conformance.evidence.ndarray_kinds` (a mutant's source runs before
#: the checkout is importable).
NDARRAY_KINDS = """
def _ndarray_kinds(a):
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
"""

#: A float32 tensor of each layout family (a witness's input).
LAYOUT_MAKERS: dict[str, str] = {
    "contiguous": "torch.arange(6.0).reshape(2, 3)",
    "offset": "torch.arange(12.0).reshape(4, 3)[1:]",
    "stepped": "torch.arange(12.0).reshape(2, 6)[:, ::2]",
    "permuted": "torch.arange(6.0).reshape(3, 2).t()",
    "expanded": "torch.arange(3.0).expand(2, 3)",
    "channels_last": (
        "torch.arange(24.0).reshape(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)"
    ),
    "zero-size": "torch.zeros(0, 3)",
    "0-d": "torch.tensor(1.5)",
}

#: A contiguous tensor of each dtype family (a witness's input).
FAMILY_MAKERS: dict[str, str] = {
    "bool": "torch.tensor([True, False, True])",
    "signed": "torch.tensor([1, -2, 3], dtype=torch.int32)",
    "unsigned": "torch.tensor([1, 2, 3], dtype=torch.uint8)",
    "reduced_float": "torch.tensor([1.5, -2.0, 3.0], dtype=torch.float16)",
    "float": "torch.tensor([1.5, -2.0, 3.0], dtype=torch.float64)",
    "complex": "torch.tensor([1 + 2j, -3j, 4.0], dtype=torch.complex64)",
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
MATH_BIT_MAKERS: dict[str, str] = {
    "none": "torch.tensor([1 + 2j, 3j])",
    "conj": "torch.tensor([1 + 2j, 3j]).conj()",
    "neg": "torch.tensor([1 + 2j, 3j]).conj().imag",
}

#: A float32 tensor of each tensor kind (a witness's input).
TENSOR_KIND_MAKERS: dict[str, str] = {
    "plain": "torch.ones(3)",
    "leaf": "torch.ones(3, requires_grad=True)",
    "non_leaf": "torch.ones(3, requires_grad=True) * 2",
    "parameter": "torch.nn.Parameter(torch.ones(3))",
    "inference": "torch.inference_mode()(torch.ones)(3)",
}


def domain_mutants(
    *,
    prefix: str,
    claims: tuple[str, ...],
    what: str,
    patch: str,
    witness: str,
    dims: dict[str, tuple[str, ...]],
    makers: dict[str, dict[str, str]] | None = None,
) -> tuple[Mutant, ...]:
    """One partial mutant per (dimension, value) of ``dims``.

    ``patch`` is the mutant's source after :data:`GUARDS`, with ``{dim}`` and
    ``{value}`` (as Python literals) to pass to ``_in_domain``; ``witness`` a
    snippet with ``{make}``, an expression building an input of that value
    (from :data:`LAYOUT_MAKERS`, :data:`FAMILY_MAKERS`, :data:`TENSOR_KIND_MAKERS`,
    :data:`MATH_BIT_MAKERS`, or ``makers[dim]``, which replaces them).
    ``what`` describes the wrong behaviour ("t.numpy() returns a copy").
    Names are ``{prefix}-{dim}-{value}``.
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
            source = textwrap.dedent(GUARDS) + textwrap.dedent(patch).format(
                dim=repr(dim), value=repr(value)
            )
            out.append(
                Mutant(
                    name=f"{prefix}-{dim.replace('_', '-')}-{slug}",
                    description=f"{what}, only for {_REGION[dim].format(value=value)}",
                    claims=claims,
                    domain={dim: value},
                    region=_REGION[dim].format(value=value),
                    family=_FAMILY[dim],
                    source=source,
                    witness=textwrap.dedent(witness).format(make=makers[dim][value]),
                )
            )
    return tuple(out)
