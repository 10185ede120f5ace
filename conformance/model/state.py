"""The model's state: memory (:class:`Buffer`), storage objects
(:class:`Storage`), version counters (:class:`Counter`), tensors saved for
backward (:class:`Saved`), gradients (:class:`Grad`), and the live tensors
and arrays over them (:class:`TensorModel`, :class:`ArrayModel`).

The autograd graph itself (``grad_fn`` nodes) is in :mod:`conformance.model.graph`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from conformance.model.geometry import positions

__all__ = ["Buffer", "Storage", "Counter", "Saved", "Grad", "TensorModel", "ArrayModel"]


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
    """A tensor saved for backward: its counter, the version at save time,
    the tensor (whose memory the gradient formula reads when it runs: a
    write that did not bump the counter, through ``.data`` or NumPy, is
    seen) and whether a backward pass has freed it."""

    id: int
    counter: Counter
    version: int
    tensor: TensorModel | None = None
    freed: bool = False

    @property
    def stale(self) -> bool:
        return not self.freed and self.counter.version != self.version


@dataclass(eq=False)
class Grad:
    """The tensor in a ``.grad`` attribute: a new object ``id`` whenever torch
    makes a new one (a leaf's first gradient, every gradient a retained
    non-leaf receives), the same while a leaf accumulates into it in place.

    ``values`` (storage representation, the tensor's logical shape) are the
    predicted values; ``unspecified`` masks the elements the model leaves to
    torch (see :mod:`conformance.model.graph`). ``layout`` is the documented
    gradient layout: the leaf's strides (``("strides", strides)``: every dim of
    size other than 1 has them) for a non-overlapping and dense leaf,
    ``("contiguous",)`` otherwise, ``None`` when not promised (retained grads).
    """

    id: int
    dtype: str
    shape: tuple[int, ...]
    values: np.ndarray
    unspecified: np.ndarray
    layout: tuple | None = None


@dataclass(eq=False)
class TensorModel:
    """One live ``torch.Tensor`` object."""

    id: int
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    storage: Storage
    #: the version counter; ``None`` for an inference tensor that has none
    counter: Counter | None
    #: the leaf flag set by requires_grad_/factories
    rg_flag: bool = False
    #: the grad_fn node (:class:`conformance.model.graph.Node`); for views as
    #: last (re)built; ``None`` when there is none
    node: object | None = None
    #: root base (what ``_base`` returns), ``None`` for non-views
    base: TensorModel | None = None
    #: autograd view tracking: requires_grad/grad_fn follow the base
    diff_view: bool = False
    #: version at which a view's grad_fn was last (re)built
    attr_version: int = 0
    #: the stable grad_fn name prefix of the view op that made this view
    view_op: str = ""
    #: ``is_inference()``
    inference: bool = False
    #: a view made inside inference_mode (creation meta INFERENCE_MODE)
    inference_view: bool = False
    #: ``retains_grad``: retain_grad() was called on it while a non-leaf
    retains_grad: bool = False
    #: the ``.grad`` attribute
    grad: Grad | None = None

    @property
    def own_gf(self) -> bool:
        """The grad_fn member is set (for views: as last (re)built)."""
        return self.node is not None

    @property
    def graph(self) -> frozenset:
        """Tensors saved for backward reachable from this tensor's grad_fn."""
        return self.node.graph if self.node is not None else frozenset()

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
