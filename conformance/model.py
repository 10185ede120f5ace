"""An executable reference model of PyTorch's copy, aliasing and autograd semantics.

Pure Python + NumPy: the model never calls torch to make a prediction. It is
driven side by side with real torch by the state machine in
``conformance/test_copy_sequences.py`` and unit-tested on its own in
``tests/test_model.py``.

What it tracks
--------------
Memory is a set of :class:`Buffer` s - flat NumPy arrays holding the *values*
(the shadow of the real memory). A :class:`Storage` is one torch storage object
over a buffer, starting at an element position (``from_numpy(t.numpy())`` makes
a second storage object over the same memory). Every live tensor is a
:class:`TensorModel`: dtype, shape, strides, storage offset, storage, version
counter (:class:`Counter`), the autograd state (``requires_grad`` flag, whether
its ``grad_fn`` is set, the root base and view tracking, the saved tensors
reachable from its graph) - and NumPy arrays are :class:`ArrayModel` s over the
same buffers. A tensor's values are read from the buffer at the element
positions its geometry addresses, so a write through one alias is seen by
every alias of the same memory, overlapping and expanded ones included.

Every operation predicts the result (a new :class:`TensorModel`, or an existing
one when torch returns the very same object) or raises :class:`Raises` with the
exception type and the stable message substring(s) torch raises with; a raising
prediction leaves the model untouched. Each prediction cites the claim id it
encodes (``Model.claim`` after the call; every id is in :data:`CLAIM_IDS` and
registered in ``claims/sequences.toml``).

Where torch departs from its documentation the model encodes the *observed*
behaviour (the claim it cites is a characterization); ``Model(docs=True)``
switches those rules to the documented promise, for the small tests that
check the documented claims (and are recorded as known deviations).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "CLAIM_IDS",
    "DTYPES",
    "DIFFERENTIABLE",
    "MSG",
    "Raises",
    "Buffer",
    "Storage",
    "Counter",
    "Saved",
    "TensorModel",
    "ArrayModel",
    "Model",
    "contiguous_strides",
    "channels_last_strides",
    "is_contiguous",
    "is_non_overlapping_and_dense",
    "infer_dense_strides",
    "view_strides",
    "expand_geometry",
    "broadcast_shapes",
    "positions",
    "convert",
]

#: dtypes the model knows (NumPy names, which are also the torch attribute names).
DTYPES: tuple[str, ...] = ("float32", "float64", "int64", "bool", "complex64")
#: dtypes that can require gradients.
DIFFERENTIABLE = frozenset({"float16", "float32", "float64", "complex64", "complex128"})

#: Stable substrings of torch's messages, by situation.
MSG = {
    "leaf_inplace": "a leaf Variable that requires grad is being used in an in-place operation",
    "view_leaf_inplace": "a view of a leaf Variable that requires grad is being used in an in-place operation",
    "internal_overlap": "more than one element of the written-to tensor refers to a single memory location",
    "partial_overlap": "some elements of the input tensor and the written-to tensor refer to a single memory location",
    "broadcast_mismatch": "must match the size of tensor",
    "broadcast_grow": "doesn't match the broadcast shape",
    "cast": "can't be cast to the desired output type",
    "view_stride": "view size is not compatible with input tensor's size and stride",
    "expand": "The expanded size of the tensor",
    "numel_overflow": "integer multiplication overflow",
    "zero_dim": "cannot be applied to a 0-dim tensor",
    "too_many_indices": "too many indices for tensor of dimension 0",
    "index_range": "out of range",
    "channels_last_rank": "required rank 4 tensor to use channels_last format",
    "detach_view": "Can't detach views in-place",
    "rg_dtype": "can require gradients",
    "rg_nonleaf": "you can only change requires_grad flags of leaf variables",
    "alias_dtype": "can't alias tensor with dtype",
    "numpy_rg": "Can't call numpy() on Tensor that requires grad",
    "negative_strides": "At least one stride in the given numpy array is negative",
    "np_index": "too many indices for array",
    "no_grad_fn": "does not require grad and does not have a grad_fn",
    "stale": "has been modified by an inplace operation",
    "freed": "Trying to backward through the graph a second time",
}

#: Every claim id a model rule cites (all registered in claims/sequences.toml).
CLAIM_IDS: tuple[str, ...] = (
    "sequences.clone-copies",
    "sequences.clone-memory-format",
    "sequences.clone-non-dense-keeps-stride-order",
    "sequences.clone-non-dense-contiguous",
    "sequences.detach-shares",
    "sequences.detach-untracked-alias",
    "sequences.detach-is-view",
    "sequences.detach-inplace",
    "sequences.data-untracked-alias",
    "sequences.copy-in-place",
    "sequences.copy-broadcast-raises",
    "sequences.write-overlap-raises",
    "sequences.inplace-records-history",
    "sequences.tensor-copies",
    "sequences.new-tensor-copies",
    "sequences.as-tensor",
    "sequences.asarray",
    "sequences.asarray-ndarray-shares",
    "sequences.asarray-0d-ndarray-copies",
    "sequences.from-numpy-shares",
    "sequences.numpy-negative-strides-raise",
    "sequences.numpy-shares",
    "sequences.to-self-or-copy",
    "sequences.contiguous-self-or-copy",
    "sequences.views-alias-base",
    "sequences.view-compatibility",
    "sequences.reshape-view-or-copy",
    "sequences.expand-geometry",
    "sequences.view-index-errors",
    "sequences.writes-visible",
    "sequences.index-assignment-in-place",
    "sequences.inplace-arithmetic",
    "sequences.version-counter",
    "sequences.leaf-inplace-raises",
    "sequences.no-grad-untracked",
    "sequences.requires-grad-flag",
    "sequences.leaf-and-grad-fn",
    "sequences.view-autograd-follows-base",
    "sequences.backward-needs-grad",
    "sequences.saved-tensor-check",
    "sequences.backward-frees-saved",
)
_CLAIMS = frozenset(CLAIM_IDS)


class Raises(Exception):
    """A predicted exception: torch raises ``exc`` (type name) with a message
    containing one of ``match``; ``claim`` is the claim id the rule encodes."""

    def __init__(self, exc: str, *match: str, claim: str):
        super().__init__(f"{exc}: {' | '.join(match)} [{claim}]")
        self.exc = exc
        self.match = match
        self.claim = claim

    def matches(self, error: BaseException) -> bool:
        """True when ``error`` has this type name and one of the substrings."""
        return type(error).__name__ == self.exc and any(m in str(error) for m in self.match)


# --------------------------------------------------------------------------
# Geometry (ports of the ATen helpers that decide strides and view legality)
# --------------------------------------------------------------------------


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides (size-0/1 dims count as 1, as ``empty_tensor_restride``)."""
    out = [0] * len(shape)
    acc = 1
    for i in reversed(range(len(shape))):
        out[i] = acc
        acc *= max(shape[i], 1)
    return tuple(out)


def channels_last_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """NHWC strides of a 4-D shape (``get_channels_last_strides_2d``)."""
    _, c, h, w = shape
    s3 = c
    s2 = s3 * w
    return (s2 * h, 1, s2, s3)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """``Tensor.is_contiguous()``: row-major, ignoring size-1 dims."""
    if math.prod(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """``compute_non_overlapping_and_dense``: the elements exactly fill a block
    of memory in some dimension order (size-0/1 dims are ignored)."""
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    require = 1
    for d in dims:
        if strides[d] != require:
            return False
        require *= shape[d]
    return True


def infer_dense_strides(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """``at::infer_dense_strides``: dense strides keeping the input's stride
    order (stable insertion sort; stride-0 dims compare as ambiguous)."""
    n = len(shape)
    if n == 0:
        return ()
    if n == 1:
        return (1,)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, n):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    out = [0] * n
    cur = 1
    for idx in perm:
        out[idx] = cur
        if shape[idx] > 1:
            cur *= shape[idx]
    return tuple(out)


def view_strides(
    old_shape: Sequence[int], old_strides: Sequence[int], new_shape: Sequence[int]
) -> tuple[int, ...] | None:
    """``at::detail::computeStride``: the strides of ``view(new_shape)``, or
    ``None`` when the view is impossible without copying."""
    if math.prod(old_shape) != math.prod(new_shape):
        raise ValueError("view_strides needs shapes with the same number of elements")
    if len(old_shape) == 0:
        return (1,) * len(new_shape)
    if math.prod(old_shape) == 0:
        raise NotImplementedError("zero-size tensors are outside the model")
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_strides[tensor_d - 1] != tensor_numel * chunk_base
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new)


def expand_geometry(
    shape: Sequence[int], strides: Sequence[int], sizes: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]] | str:
    """``inferExpandGeometry``: ``(shape, strides)`` of ``expand(*sizes)``, or
    the error message torch raises."""
    ndim, tdim = len(sizes), len(shape)
    if ndim < tdim:
        return "the number of sizes provided must be greater or equal"
    if tdim == 0:
        if any(s == -1 for s in sizes):
            return f"{MSG['expand']} (-1) isn't allowed in a leading, non-existing dimension"
        return tuple(sizes), (0,) * ndim
    out_shape = [0] * ndim
    out_strides = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        dim = tdim - 1 - offset
        size = shape[dim] if dim >= 0 else 1
        stride = strides[dim] if dim >= 0 else out_shape[i + 1] * out_strides[i + 1]
        target = sizes[i]
        if target == -1:
            if dim < 0:
                return (
                    f"{MSG['expand']} (-1) isn't allowed in a leading, non-existing dimension {i}"
                )
            target = size
        if size != target:
            if size != 1:
                return f"{MSG['expand']} ({target}) must match the existing size ({size})"
            size = target
            stride = 0
        out_shape[i] = size
        out_strides[i] = stride
    return tuple(out_shape), tuple(out_strides)


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy/torch broadcasting of two shapes, or ``None`` when incompatible."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def positions(start: int, shape: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Element positions (into the buffer) addressed by a strided geometry,
    as an int64 array of ``shape``."""
    pos = np.array(start, dtype=np.int64)
    for size, stride in zip(shape, strides, strict=True):
        pos = pos[..., None] + np.arange(size, dtype=np.int64) * stride
    return pos


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


def _same(a, b) -> bool:
    """Bit equality of two elements of one dtype (for deciding whether a write
    changes memory): -0.0 differs from 0.0, a NaN equals only the same NaN."""
    a = np.asarray(a)
    return a.tobytes() == np.asarray(b, dtype=a.dtype).tobytes()


# --------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------


@dataclass(eq=False)
class Buffer:
    """A block of memory: the shadow of its values."""

    id: int
    values: np.ndarray


@dataclass(eq=False)
class Storage:
    """One torch storage object over a buffer, starting at element ``start``."""

    id: int
    buffer: Buffer
    start: int = 0

    @property
    def key(self) -> tuple[int, int]:
        """What ``untyped_storage().data_ptr()`` distinguishes: memory and start."""
        return (self.buffer.id, self.start)


@dataclass(eq=False)
class Counter:
    """A version counter shared by the tensors that alias it."""

    id: int
    version: int = 0


@dataclass(eq=False)
class Saved:
    """A tensor saved for backward: its counter, the version at save time and
    whether a backward pass has freed it."""

    id: int
    counter: Counter
    version: int
    freed: bool = False

    @property
    def stale(self) -> bool:
        return not self.freed and self.counter.version != self.version


@dataclass(eq=False)
class TensorModel:
    """One live ``torch.Tensor`` object."""

    id: int
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    storage: Storage
    counter: Counter
    #: the leaf flag set by requires_grad_/factories
    rg_flag: bool = False
    #: the grad_fn member is set (for views: as last (re)built)
    own_gf: bool = False
    #: root base (what ``_base`` returns), ``None`` for non-views
    base: TensorModel | None = None
    #: autograd view tracking: requires_grad/grad_fn follow the base
    diff_view: bool = False
    #: version at which a view's grad_fn was last (re)built
    attr_version: int = 0
    #: tensors saved for backward reachable from this tensor's graph
    graph: frozenset = field(default_factory=frozenset)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def buffer(self) -> Buffer:
        return self.storage.buffer

    @property
    def start(self) -> int:
        """Buffer position of the element at index (0, ..., 0)."""
        return self.storage.start + self.offset

    def positions(self) -> np.ndarray:
        """Buffer positions of the elements (cached: geometry never changes)."""
        pos = self.__dict__.get("_pos")
        if pos is None:
            pos = self.__dict__["_pos"] = positions(self.start, self.shape, self.strides)
        return pos


@dataclass(eq=False)
class ArrayModel:
    """One live ``numpy.ndarray`` over a buffer (strides in elements)."""

    id: int
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    start: int
    buffer: Buffer

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def positions(self) -> np.ndarray:
        """Buffer positions of the elements (cached: geometry never changes)."""
        pos = self.__dict__.get("_pos")
        if pos is None:
            pos = self.__dict__["_pos"] = positions(self.start, self.shape, self.strides)
        return pos


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------


class Model:
    """The reference model: a set of live tensors and arrays plus one method
    per operation. ``docs=True`` encodes documented promises where torch
    deviates from them (see the module docstring)."""

    def __init__(self, *, docs: bool = False):
        self.docs = docs
        self.tensors: list[TensorModel] = []
        self.arrays: list[ArrayModel] = []
        #: claim ids the last prediction encodes, the primary one first
        self.cited: list[str] = []
        #: buffer positions whose values the last operation leaves unspecified
        #: (order-dependent overlapping copies): (tensor addressing them, positions)
        self.unspecified: list[tuple[TensorModel, frozenset[int]]] = []
        self._ids = itertools.count()

    # ---- bookkeeping ------------------------------------------------------

    @property
    def claim(self) -> str | None:
        """The primary claim id of the last prediction."""
        return self.cited[0] if self.cited else None

    def _cite(self, claim: str) -> None:
        assert claim in _CLAIMS, claim
        if claim not in self.cited:
            self.cited.append(claim)

    def _raise(self, exc: str, *match: str, claim: str) -> Raises:
        self._cite(claim)
        return Raises(exc, *match, claim=claim)

    def _begin(self, claim: str) -> None:
        self.unspecified = []
        self.cited = []
        self._cite(claim)

    def _buffer(self, values: np.ndarray) -> Buffer:
        return Buffer(next(self._ids), np.array(values).reshape(-1))

    def _storage(self, buffer: Buffer, start: int = 0) -> Storage:
        return Storage(next(self._ids), buffer, start)

    def _counter(self) -> Counter:
        return Counter(next(self._ids))

    def _add(self, t: TensorModel) -> TensorModel:
        self.tensors.append(t)
        return t

    def _alloc(
        self, dtype: str, shape: tuple[int, ...], strides: tuple[int, ...], values: np.ndarray
    ) -> TensorModel:
        """A new tensor in new memory laid out with ``strides``, holding
        ``values`` (an array of ``shape``)."""
        extent = 1 + sum((s - 1) * st for s, st in zip(shape, strides, strict=True))
        buf = np.zeros(extent, dtype=np.dtype(dtype))
        buf[positions(0, shape, strides)] = convert(values, dtype)
        storage = self._storage(self._buffer(buf))
        t = TensorModel(
            next(self._ids), dtype, tuple(shape), tuple(strides), 0, storage, self._counter()
        )
        return self._add(t)

    # ---- observations -----------------------------------------------------

    def values(self, t: TensorModel | ArrayModel) -> np.ndarray:
        """The values ``t`` holds now (an array of its shape)."""
        return t.buffer.values[t.positions()]

    def requires_grad(self, t: TensorModel) -> bool:
        """``t.requires_grad``: its flag, its grad_fn, or (views) its base's."""
        if t.rg_flag or t.own_gf:
            return True
        return t.diff_view and self.requires_grad(t.base)

    def grad_fn_is_none(self, t: TensorModel) -> bool:
        """``t.grad_fn is None``. Reading a view's grad_fn rebuilds it when the
        shared version counter moved since it was built and the view or its
        base has history (torch does the same, lazily)."""
        if t.diff_view:
            if not t.own_gf and not self.requires_grad(t.base):
                return True
            if t.attr_version != t.counter.version:
                t.own_gf = True
                t.graph = t.base.graph
                t.attr_version = t.counter.version
        return not t.own_gf

    def is_leaf(self, t: TensorModel) -> bool:
        return self.grad_fn_is_none(t)

    def is_view(self, t: TensorModel) -> bool:
        return t.base is not None

    def root(self, t: TensorModel) -> TensorModel:
        return t.base if t.base is not None else t

    def _graph(self, t: TensorModel) -> frozenset:
        """The saved tensors reachable from ``t``'s gradient edge (reads grad_fn)."""
        return frozenset() if self.grad_fn_is_none(t) else t.graph

    def pinned_counters(self) -> set[int]:
        """Ids of the counters whose bump would change a later backward: those
        of tensors saved (unfreed) at the counter's current version."""
        return {
            s.counter.id
            for t in self.tensors
            for s in t.graph
            if not s.freed and s.version == s.counter.version
        }

    def bump(self, counter: Counter) -> None:
        """``torch.autograd.graph.increment_version`` on a tensor of ``counter``."""
        self._cite("sequences.version-counter")
        counter.version += 1

    def resync(self, t: TensorModel, actual: np.ndarray) -> None:
        """Take the observed values for the positions the last operation left
        unspecified (``actual``: the values of ``t`` read from torch)."""
        for owner, unspecified in self.unspecified:
            if owner is t:
                pos = t.positions()
                mask = np.isin(pos, np.fromiter(unspecified, dtype=np.int64))
                t.buffer.values[pos[mask]] = convert(np.asarray(actual)[mask], t.dtype)

    # ---- creation ---------------------------------------------------------

    def fresh(self, dtype: str, shape: tuple[int, ...], values, requires_grad: bool = False):
        """``torch.tensor(np.array(values).reshape(shape), dtype=...)``, then
        ``requires_grad_(requires_grad)``: a contiguous leaf in new memory."""
        self._begin("sequences.tensor-copies")
        if requires_grad and dtype not in DIFFERENTIABLE:
            raise self._raise("RuntimeError", MSG["rg_dtype"], claim="sequences.requires-grad-flag")
        t = self._alloc(dtype, shape, contiguous_strides(shape), np.reshape(values, shape))
        t.rg_flag = requires_grad
        return t

    def make_array(self, dtype: str, shape: tuple[int, ...], values) -> ArrayModel:
        """``np.array(values, dtype).reshape(shape)``: a C-contiguous array."""
        self._begin("sequences.from-numpy-shares")
        buf = self._buffer(convert(values, dtype))
        a = ArrayModel(next(self._ids), dtype, tuple(shape), contiguous_strides(shape), 0, buf)
        self.arrays.append(a)
        return a

    # ---- copies -----------------------------------------------------------

    def preserve_format_strides(
        self, shape: tuple[int, ...], strides: tuple[int, ...]
    ) -> tuple[int, ...]:
        """Strides of a ``torch.preserve_format`` copy of a ``shape``/``strides`` input.

        Dense inputs keep their strides (documented). Non-dense inputs: the
        docs say 'converted to the dense (contiguous) format'; eager torch keeps
        the input's stride order (``infer_dense_strides``)."""
        if is_non_overlapping_and_dense(shape, strides):
            self._cite("sequences.clone-memory-format")
            return tuple(strides)
        if self.docs:
            self._cite("sequences.clone-non-dense-contiguous")
            return contiguous_strides(shape)
        self._cite("sequences.clone-non-dense-keeps-stride-order")
        return infer_dense_strides(shape, strides)

    def _copy_of(
        self, t: TensorModel, dtype: str, strides: tuple[int, ...], *, grad: bool
    ) -> TensorModel:
        """An out-of-place copy of ``t`` (clone, to, contiguous, ...): new memory
        and counter; a grad_fn when recorded (grad mode, ``t`` requires grad,
        differentiable result)."""
        record = grad and self.requires_grad(t) and dtype in DIFFERENTIABLE
        graph = self._graph(t) if record else frozenset()
        out = self._alloc(dtype, t.shape, strides, convert(self.values(t), dtype))
        out.own_gf = record
        out.graph = graph
        self._cite("sequences.leaf-and-grad-fn")
        return out

    def clone(self, t: TensorModel, memory_format: str = "preserve", grad: bool = True):
        """``t.clone(memory_format=...)`` (under ``no_grad`` unless ``grad``)."""
        self._begin("sequences.clone-copies")
        if memory_format == "channels_last":
            if t.ndim != 4:
                raise self._raise(
                    "RuntimeError", MSG["channels_last_rank"], claim="sequences.clone-memory-format"
                )
            strides = channels_last_strides(t.shape)
        elif memory_format == "contiguous":
            strides = contiguous_strides(t.shape)
        else:
            strides = self.preserve_format_strides(t.shape, t.strides)
        self._cite("sequences.clone-memory-format")
        if not grad:
            self._cite("sequences.no-grad-untracked")
        return self._copy_of(t, t.dtype, strides, grad=grad)

    def to(self, t: TensorModel, dtype: str, copy: bool = False):
        """``t.to(dtype, copy=copy)``: ``t`` itself when nothing changes and no
        copy is asked; otherwise a preserve_format copy, which does not require
        grad for a non-differentiable target dtype."""
        self._begin("sequences.to-self-or-copy")
        if dtype == t.dtype and not copy:
            return t
        return self._copy_of(t, dtype, self.preserve_format_strides(t.shape, t.strides), grad=True)

    def contiguous(self, t: TensorModel):
        """``t.contiguous()``: ``t`` itself when already contiguous, else a
        row-major copy (recorded like clone)."""
        self._begin("sequences.contiguous-self-or-copy")
        if is_contiguous(t.shape, t.strides):
            return t
        return self._copy_of(t, t.dtype, contiguous_strides(t.shape), grad=True)

    def tensor_of(self, t: TensorModel):
        """``torch.tensor(t)`` == ``t.detach().clone()``: a new leaf that does
        not require grad."""
        self._begin("sequences.tensor-copies")
        return self._copy_of(
            t, t.dtype, self.preserve_format_strides(t.shape, t.strides), grad=False
        )

    def new_tensor(self, x: TensorModel, t: TensorModel):
        """``x.new_tensor(t)`` == ``t.detach().clone()`` converted to ``x``'s dtype."""
        self._begin("sequences.new-tensor-copies")
        return self._copy_of(
            t, x.dtype, self.preserve_format_strides(t.shape, t.strides), grad=False
        )

    def as_tensor(self, t: TensorModel, dtype: str | None = None):
        """``torch.as_tensor(t, dtype=dtype)``: ``t`` itself for the same dtype,
        else ``t.to(dtype)`` (keeping history)."""
        self._begin("sequences.as-tensor")
        if dtype is None or dtype == t.dtype:
            return t
        return self._copy_of(t, dtype, self.preserve_format_strides(t.shape, t.strides), grad=True)

    def asarray(self, t: TensorModel, copy: bool | None = None, dtype: str | None = None):
        """``torch.asarray(t, copy=copy, dtype=dtype)`` (requires_grad left to
        its default, which inherits ``t.requires_grad``): ``t`` itself unless a
        copy is asked or the dtype differs; ``copy=False`` with another dtype
        raises; a copy that would have to require grad in a non-differentiable
        dtype raises."""
        self._begin("sequences.asarray")
        same = dtype is None or dtype == t.dtype
        target = t.dtype if dtype is None else dtype
        if same and copy is not True:
            return t
        if not same and copy is False:
            raise self._raise("ValueError", MSG["alias_dtype"], claim="sequences.asarray")
        if self.requires_grad(t) and target not in DIFFERENTIABLE:
            raise self._raise("RuntimeError", MSG["rg_dtype"], claim="sequences.asarray")
        return self._copy_of(t, target, self.preserve_format_strides(t.shape, t.strides), grad=True)

    # ---- aliases ----------------------------------------------------------

    def _alias(self, t: TensorModel, **geometry) -> TensorModel:
        """A new tensor over ``t``'s storage (same counter unless given)."""
        fields = dict(
            dtype=t.dtype, shape=t.shape, strides=t.strides, offset=t.offset,
            storage=t.storage, counter=t.counter,
        )  # fmt: skip
        fields.update(geometry)
        return self._add(TensorModel(next(self._ids), **fields))

    def detach(self, t: TensorModel):
        """``t.detach()``: same storage, geometry and version counter; never
        requires grad; a leaf. Observed: not tracked as a view (``_base`` None);
        the docs list detach among the view ops."""
        self._begin("sequences.detach-shares")
        out = self._alias(t)
        if self.docs:
            self._cite("sequences.detach-is-view")
            out.base = self.root(t)
        else:
            self._cite("sequences.detach-untracked-alias")
        return out

    def data(self, t: TensorModel):
        """``t.data``: same storage and geometry, a *new* version counter, no
        history, does not require grad, not a view."""
        self._begin("sequences.data-untracked-alias")
        return self._alias(t, counter=self._counter())

    def detach_(self, t: TensorModel):
        """``t.detach_()``: raises for views; else drops flag and history (returns ``t``)."""
        self._begin("sequences.detach-inplace")
        if self.is_view(t):
            raise self._raise("RuntimeError", MSG["detach_view"], claim="sequences.detach-inplace")
        t.rg_flag = False
        t.own_gf = False
        t.graph = frozenset()
        if any(v.base is t for v in self.tensors):
            self._cite("sequences.view-autograd-follows-base")
        return t

    def _view(self, t: TensorModel, shape, strides, offset=None, *, claim: str) -> TensorModel:
        """A differentiable view of ``t`` (created in grad mode): root base,
        shared storage and counter; a grad_fn when ``t`` requires grad."""
        record = self.requires_grad(t)
        graph = self._graph(t) if record else frozenset()
        out = self._alias(
            t, shape=tuple(shape), strides=tuple(strides),
            offset=t.offset if offset is None else offset,
        )  # fmt: skip
        out.base = self.root(t)
        out.diff_view = True
        out.own_gf = record
        out.graph = graph
        out.attr_version = t.counter.version
        self._cite(claim)
        self._cite("sequences.view-autograd-follows-base")
        return out

    def slice(self, t: TensorModel, dim: int, start: int, step: int):
        """``t[(slice(None),) * dim + (slice(start, None, step),)]``."""
        self._begin("sequences.views-alias-base")
        if t.ndim == 0:
            raise self._raise(
                "IndexError", MSG["too_many_indices"], claim="sequences.view-index-errors"
            )
        n = -(-(t.shape[dim] - start) // step)  # ceil
        if n <= 0:
            raise NotImplementedError("zero-size tensors are outside the model")
        shape, strides = list(t.shape), list(t.strides)
        shape[dim] = n
        strides[dim] = t.strides[dim] * step
        offset = t.offset + start * t.strides[dim]
        return self._view(t, shape, strides, offset, claim="sequences.views-alias-base")

    def select(self, t: TensorModel, dim: int, index: int):
        """``t.select(dim, index)`` (negative index counts from the end)."""
        self._begin("sequences.views-alias-base")
        if t.ndim == 0:
            raise self._raise("IndexError", MSG["zero_dim"], claim="sequences.view-index-errors")
        size = t.shape[dim]
        if not -size <= index < size:
            raise self._raise("IndexError", MSG["index_range"], claim="sequences.view-index-errors")
        index %= size
        shape = t.shape[:dim] + t.shape[dim + 1 :]
        strides = t.strides[:dim] + t.strides[dim + 1 :]
        return self._view(
            t, shape, strides, t.offset + index * t.strides[dim], claim="sequences.views-alias-base"
        )

    def transpose(self, t: TensorModel, dim0: int, dim1: int):
        """``t.transpose(dim0, dim1)`` (an alias view when ``dim0 == dim1``)."""
        self._begin("sequences.views-alias-base")
        shape, strides = list(t.shape), list(t.strides)
        if t.ndim:
            shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
            strides[dim0], strides[dim1] = strides[dim1], strides[dim0]
        return self._view(t, shape, strides, claim="sequences.views-alias-base")

    def permute(self, t: TensorModel, dims: Sequence[int]):
        """``t.permute(dims)``."""
        self._begin("sequences.views-alias-base")
        shape = [t.shape[d] for d in dims]
        strides = [t.strides[d] for d in dims]
        return self._view(t, shape, strides, claim="sequences.views-alias-base")

    def unsqueeze(self, t: TensorModel, dim: int):
        """``t.unsqueeze(dim)`` (``inferUnsqueezeGeometry``)."""
        self._begin("sequences.views-alias-base")
        stride = 1 if dim >= t.ndim else t.shape[dim] * t.strides[dim]
        shape = t.shape[:dim] + (1,) + t.shape[dim:]
        strides = t.strides[:dim] + (stride,) + t.strides[dim:]
        return self._view(t, shape, strides, claim="sequences.views-alias-base")

    def expand(self, t: TensorModel, sizes: Sequence[int]):
        """``t.expand(*sizes)``: a view with stride 0 on expanded dims; raises
        for a non-singleton mismatch or -1 on a new leading dim."""
        self._begin("sequences.expand-geometry")
        geo = expand_geometry(t.shape, t.strides, sizes)
        if isinstance(geo, str):
            # a 0-d input skips the -1 check and fails computing numel
            extra = (MSG["numel_overflow"],) if t.ndim == 0 else ()
            raise self._raise(
                "RuntimeError", MSG["expand"], *extra, claim="sequences.expand-geometry"
            )
        return self._view(t, geo[0], geo[1], claim="sequences.expand-geometry")

    def view(self, t: TensorModel, shape: Sequence[int]):
        """``t.view(shape)`` (same number of elements): a view when the strides
        allow it, else RuntimeError."""
        self._begin("sequences.view-compatibility")
        strides = view_strides(t.shape, t.strides, shape)
        if strides is None:
            raise self._raise(
                "RuntimeError", MSG["view_stride"], claim="sequences.view-compatibility"
            )
        return self._view(t, shape, strides, claim="sequences.view-compatibility")

    def reshape(self, t: TensorModel, shape: Sequence[int]):
        """``t.reshape(shape)``: a view when ``view`` would succeed, else a
        contiguous copy (not a view, recorded like clone)."""
        self._begin("sequences.reshape-view-or-copy")
        strides = view_strides(t.shape, t.strides, shape)
        if strides is not None:
            return self._view(t, shape, strides, claim="sequences.reshape-view-or-copy")
        record = self.requires_grad(t)
        graph = self._graph(t) if record else frozenset()
        out = self._alloc(
            t.dtype, tuple(shape), contiguous_strides(shape), self.values(t).reshape(shape)
        )
        out.own_gf = record
        out.graph = graph
        return out

    # ---- NumPy interop ----------------------------------------------------

    def numpy(self, t: TensorModel) -> ArrayModel:
        """``t.numpy()`` in grad mode: refuses a tensor that requires grad;
        else an array over the same memory with the same geometry."""
        self._begin("sequences.numpy-shares")
        if self.requires_grad(t):
            raise self._raise("RuntimeError", MSG["numpy_rg"], claim="sequences.numpy-shares")
        a = ArrayModel(next(self._ids), t.dtype, t.shape, t.strides, t.start, t.buffer)
        self.arrays.append(a)
        return a

    def _check_strides(self, a: ArrayModel) -> None:
        if any(s < 0 for s in a.strides):
            raise self._raise(
                "ValueError",
                MSG["negative_strides"],
                claim="sequences.numpy-negative-strides-raise",
            )

    def from_numpy(self, a: ArrayModel):
        """``torch.from_numpy(a)`` (also ``as_tensor(a)``, ``asarray(a)``): a
        new storage object over the array's memory, offset 0, same strides,
        a new version counter, a leaf."""
        self._begin("sequences.from-numpy-shares")
        return self._from_numpy(a)

    def _from_numpy(self, a: ArrayModel) -> TensorModel:
        self._check_strides(a)
        storage = self._storage(a.buffer, a.start)
        t = TensorModel(next(self._ids), a.dtype, a.shape, a.strides, 0, storage, self._counter())
        return self._add(t)

    def tensor_of_array(self, a: ArrayModel, copy_kind: str = "tensor"):
        """``torch.tensor(a)`` (``copy_kind="tensor"``) or ``torch.asarray(a,
        copy=True)`` (``"asarray"``): a copy in new memory that keeps the
        array's stride order; negative strides raise."""
        self._begin("sequences.tensor-copies" if copy_kind == "tensor" else "sequences.asarray")
        self._check_strides(a)
        strides = self.preserve_format_strides(a.shape, a.strides)
        return self._alloc(a.dtype, a.shape, strides, self.values(a))

    def asarray_array(self, a: ArrayModel, copy: bool | None = None):
        """``torch.asarray(a, copy=copy)`` of an ndarray: a copy for ``copy=True``;
        otherwise ``from_numpy`` sharing - except that torch copies a 0-d
        ndarray (even with ``copy=False``, without an error), which the docs
        promise to share (``docs=True`` encodes the documented sharing)."""
        if copy is True:
            return self.tensor_of_array(a, "asarray")
        self._begin("sequences.asarray")
        if a.ndim == 0 and not self.docs:
            self._cite("sequences.asarray-0d-ndarray-copies")
            return self._alloc(a.dtype, (), (), self.values(a))
        self._cite("sequences.asarray-ndarray-shares")
        return self._from_numpy(a)

    def np_write(self, a: ArrayModel, index: int | None, value) -> None:
        """``a[index] = value`` (``a[...] = value`` when ``index`` is None):
        NumPy writes the memory directly; no version counter moves."""
        self._begin("sequences.from-numpy-shares")
        self._cite("sequences.writes-visible")
        pos = a.positions() if index is None else a.positions()[index]
        a.buffer.values[pos] = convert(value, a.dtype)

    def np_flip(self, a: ArrayModel) -> ArrayModel:
        """``a[::-1]``: a view with a negative first stride."""
        self._begin("sequences.numpy-negative-strides-raise")
        if a.ndim == 0:
            raise self._raise(
                "IndexError", MSG["np_index"], claim="sequences.numpy-negative-strides-raise"
            )
        start = a.start + (a.shape[0] - 1) * a.strides[0]
        strides = (-a.strides[0],) + a.strides[1:]
        out = ArrayModel(next(self._ids), a.dtype, a.shape, strides, start, a.buffer)
        self.arrays.append(out)
        return out

    def np_transpose(self, a: ArrayModel) -> ArrayModel:
        """``a.T``: a view with reversed dimensions."""
        self._begin("sequences.from-numpy-shares")
        out = ArrayModel(
            next(self._ids), a.dtype, a.shape[::-1], a.strides[::-1], a.start, a.buffer
        )
        self.arrays.append(out)
        return out

    # ---- writes -----------------------------------------------------------

    def _check_inplace(self, t: TensorModel) -> None:
        """The autograd check before a recorded in-place op (``check_inplace``)."""
        if t.diff_view and self.requires_grad(t) and self.is_leaf(t.base):
            raise self._raise(
                "RuntimeError", MSG["view_leaf_inplace"], claim="sequences.leaf-inplace-raises"
            )
        if self.requires_grad(t) and self.is_leaf(t):
            raise self._raise(
                "RuntimeError", MSG["leaf_inplace"], claim="sequences.leaf-inplace-raises"
            )

    def _record_inplace(self, t: TensorModel, extra: frozenset = frozenset()) -> None:
        """History after a recorded in-place op on ``t`` (the counter was bumped):
        a view's base gets the new history (CopySlices) and the view's grad_fn
        is rebuilt from it."""
        if t.diff_view:
            self._cite("sequences.view-autograd-follows-base")
            root = t.base
            root.graph = self._graph(root) | extra
            root.own_gf = True
            t.own_gf = True
            t.graph = root.graph
            t.attr_version = t.counter.version
        else:
            t.graph = self._graph(t) | extra
            t.own_gf = True

    def _write(self, dst: TensorModel, new: np.ndarray, src_pos: np.ndarray | None = None) -> None:
        """Write ``new`` (shape of ``dst``) at ``dst``'s positions. When the
        source positions ``src_pos`` lie in the same memory, elements whose read
        depends on the order of the element-wise copy are left unspecified."""
        self._cite("sequences.writes-visible")
        buf = dst.buffer.values
        dpos = dst.positions().reshape(-1)
        new = np.asarray(new).reshape(-1)
        if src_pos is not None:
            spos = src_pos.reshape(-1)
            changed = {int(p) for p, v in zip(dpos, new, strict=True) if not _same(buf[p], v)}
            uncertain: set[int] = set()
            grew = True
            while grew:
                grew = False
                for k in range(len(dpos)):
                    p, s = int(dpos[k]), int(spos[k])
                    if s != p and (s in changed or s in uncertain) and p not in uncertain:
                        uncertain.add(p)
                        grew = True
            if uncertain:
                self.unspecified.append((dst, frozenset(uncertain)))
        buf[dpos] = new

    def _inplace_prologue(self, t: TensorModel, grad: bool, src: TensorModel | None = None) -> bool:
        """Decide whether the op is recorded and run the autograd check."""
        record = (
            grad
            and t.dtype in DIFFERENTIABLE
            and (self.requires_grad(t) or (src is not None and self.requires_grad(src)))
        )
        if record:
            self._check_inplace(t)
        return record

    def copy_(self, dst: TensorModel, src: TensorModel, grad: bool = True):
        """``dst.copy_(src)``: writes ``src`` broadcast to ``dst``'s shape and
        converted to its dtype; returns ``dst``; bumps its version counter."""
        self._begin("sequences.copy-in-place")
        record = self._inplace_prologue(dst, grad, src)
        same_data = dst is src or (
            dst.storage is src.storage
            and (dst.offset, dst.strides, dst.shape, dst.dtype)
            == (src.offset, src.strides, src.shape, src.dtype)
        )
        if not same_data:
            if _internal_overlap(dst):
                raise self._raise(
                    "RuntimeError", MSG["internal_overlap"], claim="sequences.write-overlap-raises"
                )
            if _partial_overlap(dst, src):
                raise self._raise(
                    "RuntimeError", MSG["partial_overlap"], claim="sequences.write-overlap-raises"
                )
            shape = broadcast_shapes(dst.shape, src.shape)
            if shape is None:
                raise self._raise(
                    "RuntimeError",
                    MSG["broadcast_mismatch"],
                    claim="sequences.copy-broadcast-raises",
                )
            if shape != dst.shape:
                raise self._raise(
                    "RuntimeError", MSG["broadcast_grow"], claim="sequences.copy-broadcast-raises"
                )
        src_graph = self._graph(src) if record and self.requires_grad(src) else frozenset()
        new = np.broadcast_to(convert(self.values(src), dst.dtype), dst.shape)
        src_pos = None
        if src.buffer is dst.buffer:
            src_pos = np.broadcast_to(src.positions(), dst.shape)
        self._write(dst, new, src_pos)
        dst.counter.version += 1
        if record:
            self._record_inplace(dst, src_graph)
            self._cite("sequences.inplace-records-history")
        else:
            self._cite("sequences.no-grad-untracked" if not grad else "sequences.copy-in-place")
        return dst

    def inplace(self, t: TensorModel, op: str, value=None, grad: bool = True):
        """``t.add_(value)``, ``t.mul_(value)``, ``t.fill_(value)`` or ``t.zero_()``
        with a Python scalar: computed in ``t``'s dtype; add_/mul_ refuse an
        overlapping (expanded) ``t`` and a bool ``t``; returns ``t``."""
        self._begin("sequences.inplace-arithmetic")
        record = self._inplace_prologue(t, grad)
        if op in ("add_", "mul_"):
            if _internal_overlap(t):
                raise self._raise(
                    "RuntimeError", MSG["internal_overlap"], claim="sequences.write-overlap-raises"
                )
            integral = np.dtype(t.dtype).kind in "biu"
            if t.dtype == "bool" or (integral and isinstance(value, float)):
                raise self._raise("RuntimeError", MSG["cast"], claim="sequences.inplace-arithmetic")
        old = self.values(t)
        with np.errstate(all="ignore"):
            if op == "add_":
                new = old + convert(np.asarray([value]), t.dtype)[0]
            elif op == "mul_":
                new = old * convert(np.asarray([value]), t.dtype)[0]
            elif op == "fill_":
                new = np.broadcast_to(convert(value, t.dtype), t.shape)
            elif op == "zero_":
                new = np.zeros(t.shape, dtype=np.dtype(t.dtype))
            else:
                raise ValueError(f"unknown in-place op {op!r}")
        new = convert(new, t.dtype)
        self._write(t, new)
        if op in ("add_", "mul_") and np.dtype(t.dtype).kind == "c":
            # The sign and payload of a NaN that complex arithmetic makes
            # (Inf * 0) or carries depend on the kernel's evaluation order
            # (mul/sub vs fused or negated forms): those elements are left
            # to torch. Every other element, NaN-free, is predicted exactly.
            nan = np.isnan(np.asarray(new).real) | np.isnan(np.asarray(new).imag)
            if nan.any():
                pos = t.positions()[np.broadcast_to(nan, t.shape)]
                self.unspecified.append((t, frozenset(int(p) for p in pos.reshape(-1))))
        t.counter.version += 1
        if record:
            self._record_inplace(t)
            self._cite("sequences.inplace-records-history")
        else:
            self._cite(
                "sequences.no-grad-untracked" if not grad else "sequences.inplace-arithmetic"
            )
        return t

    def setitem(self, t: TensorModel, index: int | None, value, grad: bool = True):
        """``t[index] = value`` (``t[...] = value`` when ``index`` is None): a
        copy_ of the scalar into ``t.select(0, index)`` (into ``t`` itself for
        ``...``), so a leaf requiring grad is refused as 'a view of a leaf'."""
        self._begin("sequences.index-assignment-in-place")
        if index is None:
            target = t
        else:
            sub_shape = t.shape[1:]
            sub_strides = t.strides[1:]
            target = TensorModel(
                -1, t.dtype, sub_shape, sub_strides, t.offset + index * t.strides[0],
                t.storage, t.counter, base=self.root(t), diff_view=grad,
                own_gf=grad and self.requires_grad(t), attr_version=t.counter.version,
            )  # fmt: skip
            if target.own_gf:
                target.graph = self._graph(t)
        record = self._inplace_prologue(target, grad)
        if _internal_overlap(target):
            raise self._raise(
                "RuntimeError", MSG["internal_overlap"], claim="sequences.write-overlap-raises"
            )
        self._write(target, np.broadcast_to(convert(value, t.dtype), target.shape))
        t.counter.version += 1
        if record:
            # the temporary select view's base (t's root) gets the new history
            self._record_inplace(target)
            self._cite("sequences.inplace-records-history")
        else:
            self._cite(
                "sequences.no-grad-untracked" if not grad else "sequences.index-assignment-in-place"
            )
        return t

    # ---- autograd ---------------------------------------------------------

    def requires_grad_(self, t: TensorModel, flag: bool = True):
        """``t.requires_grad_(flag)``: returns ``t``; only leaves may drop the
        flag, only differentiable dtypes may set it."""
        self._begin("sequences.requires-grad-flag")
        leaf = self.is_leaf(t)
        if not leaf and not flag:
            raise self._raise(
                "RuntimeError", MSG["rg_nonleaf"], claim="sequences.requires-grad-flag"
            )
        if flag and t.dtype not in DIFFERENTIABLE:
            raise self._raise("RuntimeError", MSG["rg_dtype"], claim="sequences.requires-grad-flag")
        t.rg_flag = flag
        return t

    def square(self, t: TensorModel):
        """``(t * t).clone(memory_format=torch.contiguous_format)``: a new
        row-major tensor; when recorded the multiplication saves ``t`` (at its
        current version) for backward."""
        self._begin("sequences.leaf-and-grad-fn")
        record = self.requires_grad(t)
        graph = self._graph(t) if record else frozenset()
        v = self.values(t)
        unspecified = False
        with np.errstate(all="ignore"):
            if t.dtype == "bool":
                new = v & v
            elif t.dtype.startswith("complex"):
                # Exact only when every partial product and the result are
                # representable: then any evaluation order (FMA or not) agrees.
                exact = v.astype(np.complex128) * v.astype(np.complex128)
                new = exact.astype(np.dtype(t.dtype))
                a, b = v.real.astype(np.float64), v.imag.astype(np.float64)
                parts = [a * a, b * b, a * b, exact.real, exact.imag]
                unspecified = not all(
                    np.array_equal(p.astype(v.real.dtype).astype(np.float64), p) for p in parts
                )
            else:
                new = v * v
        out = self._alloc(t.dtype, t.shape, contiguous_strides(t.shape), new)
        if unspecified:
            self.unspecified.append((out, frozenset(int(p) for p in out.positions().reshape(-1))))
        if record:
            out.own_gf = True
            out.graph = graph | {Saved(next(self._ids), t.counter, t.counter.version)}
            self._cite("sequences.saved-tensor-check")
        return out

    def backward(self, t: TensorModel) -> None:
        """``t.sum().backward()`` (``.real`` of the sum for complex): raises
        when ``t`` does not require grad, when a saved tensor of its graph was
        modified in place, or when a backward already freed it; else frees the
        saved tensors of the graph."""
        self._begin("sequences.backward-needs-grad")
        if not self.requires_grad(t):
            raise self._raise(
                "RuntimeError", MSG["no_grad_fn"], claim="sequences.backward-needs-grad"
            )
        graph = self._graph(t)
        stale = any(s.stale for s in graph)
        freed = any(s.freed for s in graph)
        if stale or freed:
            match = ([MSG["stale"]] if stale else []) + ([MSG["freed"]] if freed else [])
            claim = "sequences.saved-tensor-check" if stale else "sequences.backward-frees-saved"
            raise self._raise("RuntimeError", *match, claim=claim)
        for s in graph:
            s.freed = True
        self._cite("sequences.backward-frees-saved" if graph else "sequences.backward-needs-grad")


def _internal_overlap(t: TensorModel) -> bool:
    """``has_internal_overlap == YES``: a size>1 dim with stride 0."""
    if is_non_overlapping_and_dense(t.shape, t.strides):
        return False
    return any(st == 0 and s > 1 for s, st in zip(t.shape, t.strides, strict=True))


def _partial_overlap(a: TensorModel, b: TensorModel) -> bool:
    """``get_overlap_status == PARTIAL``: both dense, the same storage object,
    intersecting memory ranges that are not the identical layout."""
    if a is b or a.numel == 0 or b.numel == 0:
        return False
    if not (
        is_non_overlapping_and_dense(a.shape, a.strides)
        and is_non_overlapping_and_dense(b.shape, b.strides)
    ):
        return False
    if a.storage is not b.storage:
        return False
    a0, a1 = a.offset, a.offset + a.numel
    b0, b1 = b.offset, b.offset + b.numel
    if (a0, a1) == (b0, b1):
        return a.strides != b.strides
    return a0 < b1 and b0 < a1
