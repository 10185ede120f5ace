"""The model's core: the live tensors and arrays, claim citation, allocation
and the observations every rule shares (values, version counters)."""

from __future__ import annotations

import itertools

import numpy as np

from conformance.model.claims import CLAIM_IDS, Raises
from conformance.model.geometry import positions
from conformance.model.state import ArrayModel, Buffer, Counter, Storage, TensorModel
from conformance.model.values import convert

_CLAIMS = frozenset(CLAIM_IDS)

__all__ = ["ModelCore"]


class ModelCore:
    """Bookkeeping shared by every rule module (see :class:`conformance.model.Model`)."""

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
