"""The model's state: memory (:class:`Buffer`), storage objects
(:class:`Storage`), version counters (:class:`Counter`), tensors saved for
backward (:class:`Saved`), and the live tensors and arrays over them
(:class:`TensorModel`, :class:`ArrayModel`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from conformance.model.geometry import positions

__all__ = ["Buffer", "Storage", "Counter", "Saved", "TensorModel", "ArrayModel"]


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
