"""Every layout family and every domain value, by construction.

- :func:`layout_kinds` and :func:`is_dense` classify any tensor by its
  strides (the ``layout`` features of the regions and domains);
- :data:`GRID_LAYOUTS`, :func:`layout_grid` and :func:`grid_examples`: one
  :class:`~strategies.tensors.TensorSpec` per layout family and dtype, as
  explicit examples, so every family is met whatever the draws are;
- issue 29's domain vocabulary for tensors (:data:`TENSOR_KINDS`,
  :data:`MATH_BITS`), building a tensor of a kind (:func:`build_kind`) and
  the explicit examples that draw every declared value of a claim's domain
  (:func:`domain_grid`, :func:`domain_examples`, :func:`value_examples`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import struct
from collections.abc import Sequence

import torch
from hypothesis import example

from strategies.dtypes import ALL_DTYPES, DIFFERENTIABLE, dtype_family
from strategies.tensors import TensorSpec, _check_values, special_values

__all__ = [
    "is_dense",
    "layout_kinds",
    "layout_grid",
    "grid_examples",
    "PlainSubclass",
    "tensor_kind_of",
    "math_bit_of",
    "with_math_bit",
    "build_kind",
    "domain_grid",
    "non_empty",
    "not_expanded",
    "writable_non_empty",
    "domain_examples",
    "value_examples",
    "GRID_LAYOUTS",
    "TENSOR_KINDS",
    "MATH_BITS",
    "DOMAIN_SPEC",
    "DOMAIN_SPEC_COMPLEX",
]


def is_dense(t: torch.Tensor) -> bool:
    """True when ``t`` is non-overlapping and dense: its elements exactly fill
    a contiguous block of storage in *some* dimension order (any permutation
    of a contiguous tensor, channels_last included). Zero-size tensors are dense."""
    if t.numel() == 0:
        return True
    expected = 1
    for size, stride in sorted(
        ((s, st_) for s, st_ in zip(t.shape, t.stride(), strict=True) if s != 1),
        key=lambda p: p[1],
    ):
        if stride != expected:
            return False
        expected *= size
    return True


def layout_kinds(t: torch.Tensor) -> frozenset[str]:
    """Classify a tensor's strided layout into the families of :data:`LAYOUT_KINDS`.

    A tensor may belong to several families (an offset, stepped, permuted view).
    ``contiguous`` means ``is_contiguous()`` with storage offset 0.
    """
    kinds: set[str] = set()
    if t.dim() == 0:
        kinds.add("0-d")
    if t.numel() == 0:
        kinds.add("zero-size")
    if t.storage_offset() > 0:
        kinds.add("offset")
    sized = [(s, st_) for s, st_ in zip(t.shape, t.stride(), strict=True) if s > 1]
    if any(st_ == 0 for _, st_ in sized):
        kinds.add("expanded")
    if t.numel() > 0 and not any(st_ == 0 for _, st_ in sized) and not is_dense(t):
        kinds.add("stepped")
    strides = [st_ for _, st_ in sized if st_ != 0]
    if any(a < b for a, b in zip(strides, strides[1:], strict=False)):
        kinds.add("permuted")
    if (
        t.dim() == 4
        and t.is_contiguous(memory_format=torch.channels_last)
        and not t.is_contiguous()
    ):
        kinds.add("channels_last")
    if t.is_contiguous() and t.storage_offset() == 0:
        kinds.add("contiguous")
    return frozenset(kinds)


#: The layout families of :func:`layout_grid`: (name, base_shape, views, channels_last).
GRID_LAYOUTS: tuple[tuple[str, tuple[int, ...], tuple[tuple, ...], bool], ...] = (
    ("contiguous", (2, 3), (), False),
    ("offset", (4, 3), (("offset", 0, 1, None, 1),), False),
    ("stepped", (2, 6), (("slice", 1, 0, None, 2),), False),
    ("transposed", (3, 2), (("permute", (1, 0)),), False),
    ("transposed-stepped", (6, 4), (("permute", (1, 0)), ("slice", 1, 0, None, 2)), False),
    ("select-inner", (3, 4), (("select", 1, 2),), False),
    ("expanded", (1, 3), (("expand", (2, 3)),), False),
    ("unsqueezed-permuted", (3, 2), (("permute", (1, 0)), ("unsqueeze", 1)), False),
    ("channels_last", (2, 3, 2, 2), (), True),
    ("channels_last-sliced", (2, 3, 4, 2), (("slice", 2, 1, None, 2),), True),
    ("0-d", (), (), False),
    ("0-d-view", (3,), (("select", 0, 1),), False),
    ("zero-size", (0, 3), (), False),
    ("zero-size-view", (2, 3), (("slice", 0, 2, 2, 1),), False),
)


#: The order in which the grid puts special values first: the classes a
#: value-preserving op most often gets wrong lead, so even small layouts
#: hold them.
_GRID_SPECIAL_ORDER = (-0.0, math.nan, math.inf, -math.inf)


@functools.cache
def _grid_values(dtype: torch.dtype, n: int, values: str = "bounded") -> tuple:
    if dtype == torch.bool:
        return tuple(bool(i % 2) for i in range(n))
    if dtype.is_complex:
        plain = tuple(complex(i + 1, -i) for i in range(n))
    elif dtype.is_floating_point:
        plain = tuple(float(i) + 0.5 for i in range(n))
    else:
        plain = tuple(i + 1 for i in range(n))
    if values == "bounded":
        return plain
    specials = special_values(dtype, values)
    if dtype.is_floating_point:
        lead = [v for v in _GRID_SPECIAL_ORDER if any(_same_float(v, x) for x in specials)]
        specials = lead + [x for x in specials if not any(_same_float(v, x) for v in lead)]
    # The specials first (each a distinct bit pattern), then the plain
    # values (x.5, i + 1, ... never equal to a special one).
    return tuple(specials[:n]) + plain[len(specials) :]


def _same_float(a: float, b: float) -> bool:
    """The same float64 bit pattern (tells -0.0 from 0.0 and NaNs apart)."""
    return struct.pack("<d", a) == struct.pack("<d", b)


def layout_grid(
    dtypes: Sequence[torch.dtype] = ALL_DTYPES, *, values: str = "bounded"
) -> list[TensorSpec]:
    """Every (dtype, layout family) pair of :data:`GRID_LAYOUTS` as a spec.

    Random generation covers the product of dtypes and layouts unevenly in
    100 examples; this grid guarantees each combination is tried once, so a
    torch that breaks for one dtype on one layout (a fast path gone wrong)
    cannot slip through. Use with :func:`grid_examples`. Values are distinct
    per element (``i + 0.5``, ``i + 1``, alternating bools). With ``values``
    ``"finite"`` or ``"all"`` the first elements of each base are the
    dtype's :func:`special_values` (for floating dtypes ``-0.0``, then with
    ``"all"`` NaN, +Inf, -Inf, then the extremes and subnormals), still
    each a distinct bit pattern.

    Raises ``hypothesis.errors.InvalidArgument`` for an unknown ``values``.
    """
    _check_values(values)
    specs = []
    for dt in dtypes:
        for _name, base_shape, views, cl in GRID_LAYOUTS:
            n = math.prod(base_shape)
            specs.append(TensorSpec(dtype=dt, base_shape=base_shape,
                                    storage=_grid_values(dt, n, values),
                                    views=views, channels_last=cl))  # fmt: skip
    return specs


def grid_examples(
    param: str = "spec",
    dtypes: Sequence[torch.dtype] = ALL_DTYPES,
    where=None,
    *,
    grid_values: str = "bounded",
    **fixed,
):
    """Decorator adding one Hypothesis ``@example`` per :func:`layout_grid` spec.

    Place it above ``@given``. ``param`` names the ``TensorSpec`` argument;
    ``where`` (``TensorSpec -> bool``) keeps only the specs a claim covers
    (e.g. non-empty ones); ``grid_values`` is :func:`layout_grid`'s
    ``values`` (``"all"`` puts NaN, +-Inf, -0.0 and the extremes into every
    layout); ``fixed`` gives values for the test's other ``@given``
    arguments. Explicit examples run first in every profile.

    Raises ``hypothesis.errors.InvalidArgument`` for an unknown ``grid_values``.
    """

    specs = layout_grid(dtypes, values=grid_values)

    def decorate(fn):
        for spec in specs:
            if where is not None and not where(spec):
                continue
            fn = example(**{param: spec}, **fixed)(fn)
        return fn

    return decorate


# --- issue 29: every value of a claim's domain, by construction ---------------

#: The tensor kinds of ``conformance/domains.toml`` a test can build from any
#: spec (a module buffer is a plain tensor to every tensor op, so it has no
#: construction of its own here): what the tensor is to autograd and Python.
TENSOR_KINDS: tuple[str, ...] = ("plain", "leaf", "non_leaf", "parameter", "subclass", "inference")

#: The lazy math bits of ``conformance/domains.toml``: none, a conjugate view
#: (``t.conj()`` of a complex ``t``), a negative-bit view (``t.conj().imag``).
MATH_BITS: tuple[str, ...] = ("none", "conj", "neg")


class PlainSubclass(torch.Tensor):
    """A ``torch.Tensor`` subclass that adds nothing: the default
    ``__torch_function__`` keeps the subclass through every op. The suite's
    ``subclass`` tensor kind (``t.as_subclass(PlainSubclass)``)."""


def tensor_kind_of(t: torch.Tensor) -> str:
    """The :data:`TENSOR_KINDS` entry ``t`` is: ``"inference"`` (an
    inference tensor), ``"parameter"`` (an ``nn.Parameter``), ``"subclass"``
    (any other subclass of ``torch.Tensor``), ``"non_leaf"`` (has a
    ``grad_fn``), ``"leaf"`` (requires grad, no ``grad_fn``) or ``"plain"``."""
    if t.is_inference():
        return "inference"
    if isinstance(t, torch.nn.Parameter):
        return "parameter"
    if type(t) is not torch.Tensor:
        return "subclass"
    if t.grad_fn is not None:
        return "non_leaf"
    return "leaf" if t.requires_grad else "plain"


def math_bit_of(t: torch.Tensor) -> str:
    """The :data:`MATH_BITS` entry of ``t``: ``"conj"`` when ``t.is_conj()``,
    ``"neg"`` when ``t.is_neg()``, else ``"none"``."""
    if t.is_conj():
        return "conj"
    return "neg" if t.is_neg() else "none"


def with_math_bit(t: torch.Tensor, math_bit: str) -> torch.Tensor:
    """``t`` itself (``"none"``), its conjugate view ``t.conj()`` (``"conj"``)
    or its negative-bit view ``t.conj().imag`` (``"neg"``); a real ``t`` has
    neither and is returned as it is. Raises ``ValueError`` for an unknown
    ``math_bit``."""
    if math_bit not in MATH_BITS:
        raise ValueError(f"math_bit must be one of {MATH_BITS}, not {math_bit!r}")
    if math_bit == "none" or not t.is_complex():
        return t
    return t.conj() if math_bit == "conj" else t.conj().imag


def build_kind(
    spec: TensorSpec, device: str | torch.device = "cpu", kind: str = "plain"
) -> torch.Tensor:
    """Build ``spec`` on ``device`` as the tensor kind ``kind`` (one of
    :data:`TENSOR_KINDS`), keeping the spec's layout (shape, strides, storage
    offset): ``"leaf"`` flags the built tensor with ``requires_grad_()``,
    ``"non_leaf"`` builds it from a base that requires grad (plus an alias
    ``t.view_as(t)`` where the spec has no views), ``"parameter"`` wraps it in
    ``nn.Parameter`` (requiring grad where its dtype can), ``"subclass"`` is
    ``t.as_subclass(PlainSubclass)``, ``"inference"`` builds it inside
    ``torch.inference_mode()``. A kind that needs grad on an integral or bool
    dtype falls back to ``"plain"``: report :func:`tensor_kind_of` of the
    result, never ``kind``. Raises ``ValueError`` for an unknown ``kind``."""
    if kind not in TENSOR_KINDS:
        raise ValueError(f"kind must be one of {TENSOR_KINDS}, not {kind!r}")
    grad = spec.dtype in DIFFERENTIABLE
    if kind == "inference":
        with torch.inference_mode():
            return spec.build(device)
    if kind == "leaf" and grad:
        return spec.build(device, requires_grad=True, leaf=True)
    if kind == "non_leaf" and grad:
        t = spec.build(device, requires_grad=True)
        return t if t.grad_fn is not None else t.view_as(t)
    t = spec.build(device)
    if kind == "parameter":
        return torch.nn.Parameter(t, requires_grad=grad)
    if kind == "subclass":
        return t.as_subclass(PlainSubclass)
    return t


def _family_cycle(dtypes: Sequence[torch.dtype]) -> list[torch.dtype]:
    """``dtypes`` reordered round-robin over their dtype families, so any
    run of ``k`` consecutive entries spans ``min(k, families)`` families."""
    groups: dict[str, list[torch.dtype]] = {}
    for dt in dtypes:
        groups.setdefault(dtype_family(dt), []).append(dt)
    out: list[torch.dtype] = []
    while any(groups.values()):
        for g in groups.values():
            if g:
                out.append(g.pop(0))
    return out


def domain_grid(
    dtypes: Sequence[torch.dtype] = ALL_DTYPES, *, values: str = "bounded", where=None
) -> list[TensorSpec]:
    """One spec per :data:`GRID_LAYOUTS` family (``where``: the specs a claim
    covers), the dtypes cycling round-robin over their dtype families: every
    layout family of :func:`layout_kinds` and every dtype family among
    ``dtypes`` (up to 14 of them) drawn in about a dozen examples instead of
    :func:`layout_grid`'s product. A dtype family whose turn fell on layouts
    ``where`` leaves out gets one more spec, of the first layout it covers,
    so every family is drawn whatever the filter. Values as in
    :func:`layout_grid`."""
    cycle = _family_cycle(dtypes)
    by_dtype = {}
    for spec in layout_grid(dtypes, values=values):
        by_dtype.setdefault(spec.dtype, []).append(spec)
    out = []
    for i, _layout in enumerate(GRID_LAYOUTS):
        for k in range(len(cycle)):  # the next dtype whose spec for this layout the claim covers
            dt = cycle[(i + k) % len(cycle)]
            spec = by_dtype[dt][i]
            if where is None or where(spec):
                out.append(spec)
                break
    covered = {dtype_family(spec.dtype) for spec in out}
    for dt in cycle:
        if dtype_family(dt) in covered:
            continue
        spec = next((s for s in by_dtype[dt] if where is None or where(s)), None)
        if spec is not None:
            out.append(spec)
            covered.add(dtype_family(dt))
    return out


def non_empty(spec: TensorSpec) -> bool:
    """The spec's tensor has at least one element (a ``where`` of the grids)."""
    return math.prod(spec.shape) > 0


def not_expanded(spec: TensorSpec) -> bool:
    """No ``expand`` among the spec's views: an in-place write into its tensor
    is not refused for internal overlap (a ``where`` of the grids)."""
    return not any(v[0] == "expand" for v in spec.views)


def writable_non_empty(spec: TensorSpec) -> bool:
    """:func:`non_empty` and :func:`not_expanded`."""
    return non_empty(spec) and not_expanded(spec)


def domain_examples(
    param: str = "spec",
    dtypes: Sequence[torch.dtype] = ALL_DTYPES,
    where=None,
    *,
    grid_values: str = "bounded",
    make=None,
    **fixed,
):
    """Decorator adding one Hypothesis ``@example`` per :func:`domain_grid`
    spec (every layout family and every dtype family, by construction, in
    every profile). Arguments as in :func:`grid_examples`; ``make(spec)``,
    when given, builds the value of ``param`` from the spec (a ``(dst, src)``
    pair, an ``(op, spec)`` case). Place it above ``@given``.

    Example: ``@domain_examples("case", where=not_expanded, make=lambda s: ("fill_", s))``.
    """

    specs = domain_grid(dtypes, values=grid_values, where=where)

    def decorate(fn):
        for spec in specs:
            fn = example(**{param: make(spec) if make else spec}, **fixed)(fn)
        return fn

    return decorate


def value_examples(param: str, values: Sequence, **fixed):
    """Decorator adding one Hypothesis ``@example`` per value of ``param``
    (a tensor kind, a math bit, a call form), the test's other arguments
    fixed by ``fixed``; place it above ``@given``. Explicit examples run in
    every profile, so each declared domain value is drawn by construction."""

    def decorate(fn):
        for v in values:
            fn = example(**{param: v}, **fixed)(fn)
        return fn

    return decorate


#: A float32 offset, transposed view (2 x 3 of a 4 x 3 base): the spec the
#: per-value examples of :func:`value_examples` build, complex for math bits.
DOMAIN_SPEC = TensorSpec(
    dtype=torch.float32, base_shape=(4, 3), storage=tuple(float(i) + 0.5 for i in range(12)),
    views=(("offset", 0, 1, None, 1), ("permute", (1, 0))), channels_last=False,
)  # fmt: skip
DOMAIN_SPEC_COMPLEX = dataclasses.replace(
    DOMAIN_SPEC, dtype=torch.complex64, storage=tuple(complex(i + 1, -i) for i in range(12))
)
