"""Hypothesis strategies for strided torch tensors.

The central object is :class:`TensorSpec`: a plain, hashable description of a
tensor - its dtype, the root *base* tensor's shape and storage values, and the
chain of view operations that turns the base into the tensor under test. Its
``repr`` is runnable Python, so a shrunk falsifying example reads as code a
reviewer can paste::

    TensorSpec(dtype=torch.float64, base_shape=(4, 3), storage=[...],
               views=(('permute', (1, 0)), ('slice', 1, 0, None, 2)))

:func:`tensor_specs` draws specs covering every strided layout family the suite
cares about - contiguous tensors, views with a storage offset, stepped slices,
transposes/permutations, ``expand`` (stride 0), ``unsqueeze``/``select`` views,
channels_last bases, 0-d and zero-size tensors - alone and composed.
:func:`tensors` draws built tensors directly. Element values come in three
classes (``values=``): ``"bounded"`` (finite, ``|x| <= 1e3``, the default, for
arithmetic), ``"finite"`` and ``"all"`` (every value of the dtype, with
``-0.0``, subnormals, the extremes and - for ``"all"`` - NaN and +-Inf drawn
often; see :func:`special_values`), for claims that values are kept, copied or
shared, checked bit for bit with :func:`conformance.checks.same_bits`.
:func:`strategies.domains.layout_kinds` classifies any tensor by its strides,
so meta-tests can prove that every layout family actually occurs in the draws.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from strategies.dtypes import ALL_DTYPES, DIFFERENTIABLE, dtype_name
from strategies.views import VIEWS

__all__ = [
    "VIEW_KINDS",
    "NON_OVERLAPPING_VIEWS",
    "VALUE_CLASSES",
    "LAYOUT_KINDS",
    "TensorSpec",
    "shapes",
    "small_int_specs",
    "tensor_specs",
    "tensors",
    "numpy_dtype",
    "scalar_repr",
    "special_values",
]

#: View operations a spec may apply to its base, in the order they are applied (the
#: tuples :func:`_apply_view` takes; ``programs.PROGRAM_VIEW_KINDS`` are a program's).
VIEW_KINDS: tuple[str, ...] = ("offset", "slice", "permute", "expand", "unsqueeze", "select")

#: View kinds that never make several elements share one memory location
#: (everything but ``expand``): for claims about in-place writes, which torch
#: refuses on overlapping tensors.
NON_OVERLAPPING_VIEWS: tuple[str, ...] = tuple(k for k in VIEW_KINDS if k != "expand")

#: Layout families reported by :func:`layout_kinds`.
LAYOUT_KINDS: tuple[str, ...] = (
    "contiguous",
    "offset",
    "stepped",
    "permuted",
    "expanded",
    "channels_last",
    "zero-size",
    "0-d",
)

MAX_BASE_NUMEL = 512


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    """The NumPy dtype used to hold storage values of ``dtype``.

    ``bfloat16`` has no NumPy equivalent; its values are held as ``float32``
    and rounded by torch on construction.
    """
    if dtype == torch.bfloat16:
        return np.dtype("float32")
    return np.dtype(dtype_name(dtype) if dtype != torch.bool else "bool")


def _view_call(op: tuple) -> tuple[str, tuple]:
    """A spec view (``("offset" | "slice", dim, start, stop, step)``,
    ``("permute", dims)``, ``("expand", sizes)``, ``("unsqueeze", dim)`` or
    ``("select", dim, index)``; ``offset`` is a slice of step 1, named apart for
    the layout it makes) as a :data:`strategies.views.VIEWS` kind and its arguments."""
    if op[0] not in VIEW_KINDS:
        raise ValueError(f"unknown view op {op!r}")
    return ("slice" if op[0] == "offset" else op[0]), op[1:]


def _apply_view(t: torch.Tensor, op: tuple) -> torch.Tensor:
    """Apply one of a spec's views (:func:`_view_call`) to ``t``."""
    kind, args = _view_call(op)
    return VIEWS[kind].apply(t, *args)


def _view_code(name: str, op: tuple) -> str:
    """The Python expression applying view ``op`` to the tensor named ``name``
    (the code :func:`_apply_view` runs)."""
    kind, args = _view_call(op)
    return VIEWS[kind].code(name, *args)


_CANONICAL_NAN_BITS = {0x7FF8000000000000: "float('nan')", 0xFFF8000000000000: "float('-nan')"}


def _float_repr(x: float) -> str:
    """Runnable Python for float ``x`` that rebuilds its exact bits."""
    if math.isfinite(x):
        return repr(x)  # shortest round-tripping repr; '-0.0' keeps the sign
    if math.isinf(x):
        return "float('inf')" if x > 0 else "float('-inf')"
    bits = int(np.array(x, dtype=np.float64).view(np.uint64))
    if bits in _CANONICAL_NAN_BITS:
        return _CANONICAL_NAN_BITS[bits]
    signed = bits - (1 << 64) if bits >> 63 else bits
    return f"torch.tensor({signed}).view(torch.float64).item()"


def scalar_repr(v) -> str:
    """Runnable Python for one storage value (bool, int, float or complex)
    that rebuilds its exact bits (see :class:`TensorSpec`'s repr); needs
    ``import torch`` only for a NaN with a payload."""
    if isinstance(v, float):
        return _float_repr(v)
    if isinstance(v, complex):
        parts = (v.real, v.imag)
        if all(math.isfinite(p) and p != 0 for p in parts):
            return repr(v)
        return f"complex({_float_repr(v.real)}, {_float_repr(v.imag)})"
    return repr(v)


@dataclass(frozen=True)
class TensorSpec:
    """A reproducible recipe for one strided tensor.

    Attributes:
        dtype: the tensor's ``torch.dtype``.
        base_shape: shape of the root base tensor (a fresh contiguous tensor,
            or channels_last when ``channels_last`` is set; then it is 4-D).
        storage: the base's values in row-major order, as Python scalars
            (``len(storage) == prod(base_shape)``).
        views: view operations applied in order to the base:
            ``('offset'|'slice', dim, start, stop, step)``, ``('permute', dims)``,
            ``('expand', sizes)``, ``('unsqueeze', dim)``, ``('select', dim, index)``.
        channels_last: lay the base out in ``torch.channels_last``.

    ``repr`` is runnable given ``import torch`` and
    ``from strategies import TensorSpec``, and rebuilds the same bits:
    ``-0.0`` stays ``-0.0``, infinities read ``float('inf')``, a NaN reads
    ``float('nan')``/``float('-nan')`` or, with a payload, an expression
    rebuilding its exact float64 bits, and a complex value whose parts a
    plain literal would not keep reads ``complex(re, im)``.
    """

    dtype: torch.dtype
    base_shape: tuple[int, ...]
    storage: tuple = field(repr=False)
    views: tuple[tuple, ...] = ()
    channels_last: bool = False

    def __repr__(self) -> str:
        parts = [
            f"dtype=torch.{dtype_name(self.dtype)}",
            f"base_shape={self.base_shape!r}",
            f"storage=[{', '.join(scalar_repr(v) for v in self.storage)}]",
        ]
        if self.views:
            parts.append(f"views={self.views!r}")
        if self.channels_last:
            parts.append("channels_last=True")
        return f"TensorSpec({', '.join(parts)})"

    def _repr_pretty_(self, p, cycle) -> None:
        """Pretty printing (Hypothesis' falsifying examples, IPython): the same
        runnable repr, rather than Hypothesis' field-by-field dataclass
        printing, which shows NaN and infinities as bare ``nan``/``inf``."""
        p.text(repr(self))

    @property
    def is_view(self) -> bool:
        """True when the built tensor is a view of a larger base."""
        return bool(self.views)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the built tensor, by the views' shape rules (no tensor built)."""
        shape = tuple(self.base_shape)
        for op in self.views:
            kind, args = _view_call(op)
            shape = VIEWS[kind].shape(shape, *args)
        return shape

    def apply_views(self, t: torch.Tensor) -> torch.Tensor:
        """Apply this spec's view chain to ``t`` (a tensor of ``base_shape``)."""
        for op in self.views:
            t = _apply_view(t, op)
        return t

    def build_base(self, device: str | torch.device = "cpu") -> torch.Tensor:
        """Build the root base tensor (never a view) on ``device``."""
        arr = np.array(self.storage, dtype=numpy_dtype(self.dtype)).reshape(self.base_shape)
        base = torch.from_numpy(arr).to(dtype=self.dtype, copy=True)
        base = base.to(device)
        if self.channels_last:
            base = base.contiguous(memory_format=torch.channels_last)
        return base

    def to_code(self, name: str = "x", *, requires_grad: bool = False, leaf: bool = False) -> str:
        """Plain-torch Python that builds the same tensor as :meth:`build`
        (same bits, same view chain, same autograd state) into variable
        ``name`` on the device held by a variable ``device``; needs
        ``import torch`` and ``import ctypes`` only (no import of this suite),
        for bug reports.

        The base's bytes are written straight into a fresh ``torch.empty_strided``
        tensor with ``ctypes.memmove`` (exact for every dtype and value class,
        NaN payloads included; no tensor operation involved), then moved to
        ``device``, laid out channels_last if the spec says so, and viewed.
        Raises ``ValueError`` as :meth:`build` does.
        """
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise ValueError(f"{self.dtype} cannot require gradients")
        base = dataclasses.replace(self, channels_last=False).build_base("cpu")  # row-major
        n = base.numel() * base.element_size()
        raw = ctypes.string_at(base.data_ptr(), n) if n else b""
        lines = [
            f"{name} = torch.empty_strided({self.base_shape!r}, {base.stride()!r}, "
            f"dtype=torch.{dtype_name(self.dtype)})",
        ]
        if n:
            lines.append(f"ctypes.memmove({name}.data_ptr(), bytes.fromhex({raw.hex()!r}), {n})")
        lines.append(f"{name} = {name}.to(device)")
        if self.channels_last:
            lines.append(f"{name} = {name}.contiguous(memory_format=torch.channels_last)")
        if requires_grad and not leaf:
            lines.append(f"{name}.requires_grad_(True)")
        for op in self.views:
            lines.append(f"{name} = {_view_code(name, op)}")
        if leaf and requires_grad:
            lines.append(f"{name}.requires_grad_(True)")
        return "\n".join(lines)

    def build(
        self,
        device: str | torch.device = "cpu",
        *,
        requires_grad: bool = False,
        leaf: bool = False,
    ) -> torch.Tensor:
        """Build the tensor on ``device``.

        With ``requires_grad=True`` (differentiable dtypes only) the base
        requires grad, so a spec with views yields a *non-leaf* view whose
        ``grad_fn`` is the last view's backward node. With ``leaf=True`` the
        base does not require grad and the (possibly view) result is flagged
        with ``requires_grad_()``, so it is a leaf that keeps its strides,
        storage offset and storage.

        Raises ``ValueError`` when ``requires_grad`` is asked of an integral
        or bool dtype.
        """
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise ValueError(f"{self.dtype} cannot require gradients")
        base = self.build_base(device)
        if requires_grad and not leaf:
            base.requires_grad_(True)
        t = self.apply_views(base)
        if leaf and requires_grad:
            # The views of a base that does not require grad are leaves; flag
            # the view itself. (Not via detach(): the strategy must not depend
            # on the semantics under test.)
            t.requires_grad_(True)
        return t


def shapes(
    *, min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 4
) -> st.SearchStrategy[tuple[int, ...]]:
    """Tensor shapes: tuples of ``min_dims..max_dims`` sides in ``min_side..max_side``.

    ``min_side=0`` admits zero-size tensors; ``min_dims=0`` admits 0-d tensors.
    Shrinks towards ``()``/small sides.
    """
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


#: Strategy objects are immutable and reusable, and Hypothesis validates
#: each new one (``is_empty``, ``label``, ...) the first time it is drawn
#: from: building them afresh for every example cost more than drawing from
#: them (about two thirds of an eager example's time). The helpers below
#: build each distinct strategy once; the draws, and so the examples of a
#: derandomized run, are the same.


@functools.cache
def _sampled(options: tuple) -> st.SearchStrategy:
    """``st.sampled_from(options)``, one object per distinct ``options``."""
    return st.sampled_from(options)


@functools.cache
def _integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    """``st.integers(lo, hi)``, one object per distinct range."""
    return st.integers(lo, hi)


@functools.cache
def _elements(dtype: torch.dtype) -> st.SearchStrategy:
    """Finite element values for ``dtype`` (floats bounded to +-1e3 to keep
    gradients and products representable in float16)."""
    if dtype == torch.bool:
        return st.booleans()
    if dtype.is_complex:
        part = st.floats(-1e3, 1e3, allow_nan=False, width=32)
        return st.builds(complex, part, part)
    if dtype.is_floating_point:
        width = (
            16 if dtype == torch.float16 else 32 if dtype in (torch.float32, torch.bfloat16) else 64
        )
        return st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=width)
    info = torch.iinfo(dtype)
    return st.integers(info.min, info.max)


#: The value classes :func:`tensor_specs` can draw element values from.
VALUE_CLASSES: tuple[str, ...] = ("bounded", "finite", "all")


def _nan_from_bits(bits: int, np_float: str) -> float:
    """The NaN of ``np_float`` with bit pattern ``bits``, as a Python float
    (which holds it exactly: converting back to ``np_float`` gives ``bits``)."""
    width = np.dtype(np_float).itemsize * 8
    return np.array([bits], dtype=f"uint{width}").view(np_float)[0].item()


#: Extra NaN bit patterns per floating dtype (besides +NaN and -NaN): a
#: quiet NaN with a payload, and where a Python float keeps it, a signalling
#: NaN. float32 NaNs pass through a Python float (float64), which quiets
#: them; bfloat16 storage is converted from float32 by torch, which maps every
#: NaN to one pattern, so it has no extra ones.
_EXTRA_NANS: dict[torch.dtype, tuple[tuple[int, str], ...]] = {
    torch.float16: ((0x7E01, "float16"), (0xFC01, "float16")),
    torch.float32: ((0x7FC00001, "float32"), (0xFFC12345, "float32")),
    torch.float64: ((0x7FF8000000000001, "float64"), (0x7FF0000000000001, "float64")),
}


def _floating_specials(dtype: torch.dtype, values: str) -> list[float]:
    """The special values of a floating dtype (all exactly representable):
    signed zeros, the extremes (largest finite, smallest normal, smallest
    and largest subnormal, each signed), 1, -1 and epsilon; with
    ``values="all"`` also +-Inf, +-NaN and NaNs with payloads."""
    fi = torch.finfo(dtype)
    smallest_subnormal = fi.tiny * fi.eps  # 2**(emin - mantissa bits): exact
    out = [-0.0, 0.0, fi.max, -fi.max, fi.tiny, -fi.tiny, smallest_subnormal,
           -smallest_subnormal, fi.tiny - smallest_subnormal, -(fi.tiny - smallest_subnormal),
           fi.eps, 1.0, -1.0]  # fmt: skip
    if values == "all":
        out += [math.inf, -math.inf, math.nan, -math.nan]
        out += [_nan_from_bits(bits, np_float) for bits, np_float in _EXTRA_NANS.get(dtype, ())]
    return out


def special_values(dtype: torch.dtype, values: str = "all") -> list:
    """The special values of ``dtype`` that :func:`tensor_specs` mixes into
    its draws for ``values`` (``"finite"`` or ``"all"``), as Python scalars
    exactly representable in ``dtype``.

    Floating: ``-0.0``, ``0.0``, +-largest finite, +-smallest normal,
    +-smallest and +-largest subnormal, epsilon, +-1; with ``"all"`` also
    +-Inf, +-NaN and NaNs with a payload. Complex: pairs of the component
    dtype's specials (each part special). Integral: the extremes, 0 and
    +-1. Bool: both values. ``"bounded"`` has no special values (``[]``).

    Raises ``hypothesis.errors.InvalidArgument`` for an unknown ``values``.
    """
    _check_values(values)
    if values == "bounded":
        return []
    if dtype == torch.bool:
        return [False, True]
    if dtype.is_complex:
        part = _floating_specials(torch.float32 if dtype == torch.complex64 else torch.float64,
                                  values)  # fmt: skip
        # Each special as the real part with a varied imaginary part, and
        # the other way round; each bit pattern once.
        pairs = [complex(p, part[(i * 7 + 3) % len(part)]) for i, p in enumerate(part)] + [
            complex(part[(i * 5 + 1) % len(part)], p) for i, p in enumerate(part)
        ]
        return list({np.array(z, dtype=np.complex128).tobytes(): z for z in pairs}.values())
    if dtype.is_floating_point:
        return _floating_specials(dtype, values)
    info = torch.iinfo(dtype)
    return sorted({info.min, info.max, 0, 1, -1 if info.min < 0 else 2})


def _check_values(values) -> None:
    if values not in VALUE_CLASSES:
        raise InvalidArgument(
            f"values={values!r} must be one of {', '.join(map(repr, VALUE_CLASSES))}"
        )


def _to_bfloat16_grid(x: float) -> float:
    """Round a float32 value towards zero onto bfloat16's grid (drop the low
    16 bits): finite stays finite, subnormals stay subnormal or become a
    signed zero, infinities and NaNs stay what they are."""
    if math.isnan(x):
        return x
    bits = np.array([x], dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)[0].item()


def _nearest_bfloat16(x: float) -> float:
    """The finite float32 value ``x`` rounded to the nearest bfloat16 (ties to
    even), as torch converts it: what a bfloat16 tensor built from ``x`` holds."""
    bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return np.array([bits], dtype=np.uint32).view(np.float32)[0].item()


@functools.cache
def _special_elements(dtype: torch.dtype, values: str) -> st.SearchStrategy:
    """Element values of ``dtype`` for ``values`` in ``("finite", "all")``:
    Hypothesis' ``from_dtype`` (which favours boundary values), mixed with
    :func:`special_values` drawn explicitly so every special value class is
    reached within a few hundred draws for every dtype."""
    specials = st.sampled_from(special_values(dtype, values))
    if dtype == torch.bool:
        return st.booleans()
    nonfinite = values == "all"
    if dtype == torch.bfloat16:
        drawn = hnp.from_dtype(
            np.dtype("float32"), allow_nan=nonfinite, allow_infinity=nonfinite,
            allow_subnormal=True,
        ).map(_to_bfloat16_grid)  # fmt: skip
    elif dtype.is_complex or dtype.is_floating_point:
        drawn = hnp.from_dtype(
            numpy_dtype(dtype), allow_nan=nonfinite, allow_infinity=nonfinite,
            allow_subnormal=True,
        )  # fmt: skip
        if dtype.is_complex:
            # Each part special on its own, independently of the other.
            width = numpy_dtype(dtype).itemsize * 4
            parts = special_values(torch.float32 if width == 32 else torch.float64, values)
            part = st.one_of(
                st.floats(width=width, allow_nan=nonfinite, allow_infinity=nonfinite),
                st.sampled_from(parts),
            )
            drawn = st.one_of(drawn, st.builds(complex, part, part))
    else:
        drawn = hnp.from_dtype(numpy_dtype(dtype))
    return st.one_of(drawn, specials).map(lambda v: v.item() if hasattr(v, "item") else v)


@functools.cache
def _shuffles(n: int) -> st.SearchStrategy[list[int]]:
    """Permutations of ``range(n)`` other than the identity."""
    return st.permutations(range(n)).filter(lambda p: list(p) != sorted(p))


@functools.cache
def _nonempty_subsets(cand: tuple[int, ...]) -> st.SearchStrategy[list[int]]:
    """Non-empty lists of distinct members of ``cand``."""
    return st.lists(st.sampled_from(cand), min_size=1, unique=True)


@functools.cache
def _view_chains(shape: tuple[int, ...], kinds: tuple[str, ...], max_views: int):
    """:func:`_view_chain` for these arguments, one object per distinct set."""
    return _view_chain(shape, kinds, max_views)


@functools.cache
def _flat_arrays(dtype: torch.dtype, values: str, numel: int) -> st.SearchStrategy[np.ndarray]:
    """1-D arrays of ``numel`` element values of ``dtype`` in value class ``values``."""
    elements = _elements(dtype) if values == "bounded" else _special_elements(dtype, values)
    return hnp.arrays(
        numpy_dtype(dtype) if dtype != torch.bool else np.dtype(bool), (numel,), elements=elements
    )


@st.composite
def _view_chain(draw, shape: tuple[int, ...], kinds: Sequence[str], max_views: int):
    """Draw a chain of view ops producing ``shape``; returns (base_shape, ops)."""
    # Views in about four draws out of five: most semantics bugs live there.
    # (sampled_from draws uniformly; integers() and one_of() favour their
    # first/lowest choice, which would starve the view families.)
    n = draw(_sampled((1, 0, *range(1, max_views + 1)) * 2)) if max_views else 0
    ops: list[tuple] = []
    out = list(shape)
    for _ in range(n):
        usable = [
            k
            for k in kinds
            if (k in ("offset", "slice") and len(out) >= 1)
            or (k == "permute" and len(out) >= 2)
            or (k == "expand" and any(s != 1 for s in out))
            or (k == "unsqueeze" and 1 in out)
            or (k == "select")
        ]
        if not usable:
            break
        # Layout-changing views (slice, permute, expand) weigh double.
        kind = draw(
            _sampled((*usable, *(k for k in usable if k in ("slice", "permute", "expand"))))
        )
        if kind in ("offset", "slice"):
            dim = draw(_integers(0, len(out) - 1))
            step = 1 if kind == "offset" else draw(_integers(2, 3))
            start = draw(_integers(1, 2)) if kind == "offset" else draw(_integers(0, 1))
            tail = draw(_integers(0, 1))
            size = out[dim]
            span = 0 if size == 0 else (size - 1) * step + 1
            out[dim] = start + span + tail
            stop = None if tail == 0 and size > 0 else start + span
            ops.append((kind, dim, start, stop, step))
        elif kind == "permute":
            perm = draw(_shuffles(len(out)))
            new = [0] * len(out)
            for i, p in enumerate(perm):
                new[p] = out[i]
            out = new
            ops.append(("permute", tuple(perm)))
        elif kind == "expand":
            target = tuple(out)
            cand = [i for i, s in enumerate(out) if s != 1]
            chosen = draw(_nonempty_subsets(tuple(cand)))
            lead = 0
            if chosen and min(chosen) == 0 and len(out) > 1 and draw(st.booleans()):
                lead = 1  # the first expanded dim is a new leading dim
            for i in chosen:
                out[i] = 1
            out = out[lead:]
            ops.append(("expand", target))
        elif kind == "unsqueeze":
            dim = draw(_sampled(tuple(i for i, s in enumerate(out) if s == 1)))
            out = out[:dim] + out[dim + 1 :]
            ops.append(("unsqueeze", dim))
        elif kind == "select":
            dim = draw(_integers(0, len(out)))
            index = draw(_integers(0, 2))
            out = out[:dim] + [index + 1 + draw(_integers(0, 1))] + out[dim:]
            ops.append(("select", dim, index))
    ops.reverse()
    return tuple(out), tuple(ops)


def tensor_specs(
    *,
    dtype: torch.dtype | Sequence[torch.dtype] | st.SearchStrategy | None = None,
    shape: tuple[int, ...] | st.SearchStrategy | None = None,
    views: bool | Sequence[str] = True,
    max_views: int = 2,
    channels_last: bool | None = None,
    requires_grad: bool = False,
    values: str = "bounded",
) -> st.SearchStrategy[TensorSpec]:
    """Strategy for :class:`TensorSpec`.

    Args:
        dtype: a dtype, a sequence to sample from, a strategy, or ``None`` for
            every dtype in :data:`strategies.dtypes.ALL_DTYPES`.
        shape: a fixed shape, a strategy of shapes, or ``None`` for a mix
            of :func:`shapes` (0-4 dims, sides 0-4) weighted so that 4-D and
            zero-size shapes each appear in about a fifth of the draws.
        views: ``True`` for every view kind in :data:`VIEW_KINDS`, ``False``
            for plain contiguous tensors, or a subset of kinds.
        max_views: most view ops chained onto the base (0-2 by default).
        channels_last: force (``True``) or forbid (``False``) a channels_last
            base; ``None`` draws it whenever the base is 4-D.
        requires_grad: restrict dtypes to floating/complex so the spec can be
            built with ``requires_grad=True``.
        values: the class of element values (one of :data:`VALUE_CLASSES`):

            - ``"bounded"`` (default): finite values with ``|x| <= 1e3`` for
              floating and complex dtypes (each part), so sums, products and
              gradients stay finite even in float16; the whole range for
              integral dtypes. For properties that do arithmetic.
            - ``"finite"``: every finite value of the dtype, with its special
              ones drawn often: ``-0.0``, subnormals, the largest finite
              value and the smallest normal (see :func:`special_values`),
              integer extremes. For properties whose arithmetic makes NaN
              meaningless but that should see the whole finite range.
            - ``"all"``: ``"finite"`` plus ``NaN`` (signed, with payloads where
              the storage keeps them) and ``+-Inf``. For every property that
              says values are kept, copied, shared or written: compare with
              :func:`conformance.checks.same_bits`, not ``==``.

            Complex dtypes draw each part on its own; bfloat16 draws values
            on its own grid (its extremes and subnormals exactly); bool draws
            both values whatever ``values`` says.

    Example::

        @given(spec=tensor_specs(dtype=torch.float16, values="all"))
        def test_clone_keeps_bits(spec):
            t = spec.build()
            assert_same_bits(t.clone(), spec.build(), "clone() keeps the values")

    The base never exceeds :data:`MAX_BASE_NUMEL` elements (draws beyond it
    are rejected, which is rare with the default shapes).

    Raises ``hypothesis.errors.InvalidArgument`` (when called, before
    anything is drawn) for a ``values`` not in :data:`VALUE_CLASSES`, and
    ``ValueError`` (when drawing) for ``requires_grad=True`` with a
    non-differentiable ``dtype``.
    """
    _check_values(values)
    return _tensor_specs(
        dtype=dtype,
        shape=shape,
        views=views,
        max_views=max_views,
        channels_last=channels_last,
        requires_grad=requires_grad,
        values=values,
    )


@functools.cache
def _shape_families() -> st.SearchStrategy[st.SearchStrategy[tuple[int, ...]]]:
    """The shape families :func:`tensor_specs` draws from when no shape is
    given: weighted so that every layout family shows up within ~100 draws
    (mostly non-empty shapes, a 4-D branch for channels_last bases, and a
    branch admitting zero-size sides)."""
    return st.sampled_from(
        [
            shapes(min_side=1),
            shapes(min_dims=2, min_side=1),
            shapes(min_dims=1, min_side=1),
            shapes(min_dims=4, max_dims=4, min_side=1, max_side=3),
            shapes(min_dims=1, min_side=0),
        ]
    )


@st.composite
def _tensor_specs(
    draw, *, dtype, shape, views, max_views, channels_last, requires_grad, values
) -> TensorSpec:
    """The draws of :func:`tensor_specs` (arguments validated there)."""
    if dtype is None:
        pool = DIFFERENTIABLE if requires_grad else ALL_DTYPES
        dt = draw(_sampled(tuple(pool)))
    elif isinstance(dtype, st.SearchStrategy):
        dt = draw(dtype)
    elif isinstance(dtype, torch.dtype):
        dt = dtype
    else:
        dt = draw(_sampled(tuple(dtype)))
    if requires_grad and dt not in DIFFERENTIABLE:
        raise ValueError(f"requires_grad=True asked for non-differentiable dtype {dt}")
    if shape is None:
        shp = draw(draw(_shape_families()))
    elif isinstance(shape, st.SearchStrategy):
        shp = tuple(draw(shape))
    else:
        shp = tuple(shape)
    kinds = VIEW_KINDS if views is True else tuple(views) if views else ()
    if kinds:
        base_shape, ops = draw(_view_chains(tuple(shp), tuple(kinds), max_views))
    else:
        base_shape, ops = shp, ()
    numel = math.prod(base_shape)
    if numel > MAX_BASE_NUMEL:
        from hypothesis import reject

        reject()
    cl = False
    if len(base_shape) == 4:
        cl = draw(st.booleans()) if channels_last is None else channels_last
    elif channels_last:
        from hypothesis import reject

        reject()
    drawn = draw(_flat_arrays(dt, values, numel))
    storage = tuple(v.item() for v in drawn)
    if dt == torch.bfloat16 and values == "bounded":
        # Drawn as float32: store what the built tensor holds, so the spec's
        # repr is exact (rounded after drawing, so the draws stay the same).
        storage = tuple(_nearest_bfloat16(v) for v in storage)
    return TensorSpec(
        dtype=dt, base_shape=tuple(base_shape), storage=storage, views=ops, channels_last=cl
    )


@st.composite
def small_int_specs(draw, spec_strategy: st.SearchStrategy[TensorSpec], hi: int) -> TensorSpec:
    """Specs from ``spec_strategy`` whose storage holds integers in ``[0, hi]``.

    Such values are exact in every dtype (``hi=1`` for bool), so conversions
    between any two dtypes can be checked for exact values.
    """
    spec = draw(spec_strategy)
    n = math.prod(spec.base_shape)
    values = draw(st.lists(st.integers(0, hi), min_size=n, max_size=n))
    return dataclasses.replace(spec, storage=tuple(values))


def tensors(
    *,
    device: str | torch.device = "cpu",
    requires_grad: bool = False,
    leaf: bool = False,
    **spec_kwargs,
) -> st.SearchStrategy[torch.Tensor]:
    """Strategy for built tensors: ``tensor_specs(**spec_kwargs)`` built on ``device``.

    ``requires_grad``/``leaf`` are passed to :meth:`TensorSpec.build`; with
    ``requires_grad=True`` only floating and complex dtypes are drawn. Prefer
    :func:`tensor_specs` in properties, so the falsifying example prints as a
    runnable spec instead of a tensor's values.
    """
    return tensor_specs(requires_grad=requires_grad, **spec_kwargs).map(
        lambda s: s.build(device, requires_grad=requires_grad, leaf=leaf)
    )
