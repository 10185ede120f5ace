"""The model's core: the live tensors and arrays, claim citation, allocation
and the observations every rule shares (values, version counters)."""

from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np

from conformance.model.claims import CLAIM_IDS, Raises
from conformance.model.geometry import positions
from conformance.model.state import ArrayModel, Buffer, Counter, Grad, Storage, TensorModel
from conformance.model.values import conversion_unspecified, convert, storage_dtype

_CLAIMS = frozenset(CLAIM_IDS)

__all__ = ["ModelCore"]


class ModelCore:
    """Bookkeeping shared by every rule module (see :class:`conformance.model.Model`)."""

    def __init__(
        self,
        *,
        docs: bool = False,
        device: str = "cpu",
        missing_kernels: frozenset[tuple[str, str]] | None = None,
    ):
        """``device``: ``"cpu"`` or ``"cuda"`` (the few rules that differ by
        device read it: index assignment of a Python scalar); ``missing_kernels``:
        the ``(op, dtype)`` pairs (op ``"add_"``/``"mul_"``, dtype name) that
        have no kernel on the device - default the CPU gaps the model encodes
        (:data:`conformance.model.writes.CPU_MISSING_KERNELS`). Raises
        ``ValueError`` for another device."""
        from conformance.model.writes import CPU_MISSING_KERNELS

        self.docs = docs
        if device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', not {device!r}")
        self.device = device
        self.missing_kernels = (
            CPU_MISSING_KERNELS if missing_kernels is None else frozenset(missing_kernels)
        )
        self.tensors: list[TensorModel] = []
        self.arrays: list[ArrayModel] = []
        #: claim ids the last prediction encodes, the primary one first
        self.cited: list[str] = []
        #: buffer positions whose values the last operation leaves unspecified
        #: (order-dependent overlapping copies): (tensor addressing them, positions)
        self.unspecified: list[tuple[TensorModel, frozenset[int]]] = []
        #: tensors whose ``.grad`` the last backward leaves to torch (see
        #: :class:`conformance.model.graph.Outcome`)
        self.grad_unspecified: set[TensorModel] = set()
        #: claims whose refusal the model skips (see :meth:`waiving`)
        self.waived: frozenset[str] = frozenset()
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

    @contextlib.contextmanager
    def waiving(self, claim: str):
        """Predict as if torch did not refuse what ``claim`` says it refuses.

        For a state machine that saw torch perform an operation the model
        predicts it refuses (a violation of ``claim``, already recorded): the
        prediction made inside this block is what the operation does when it
        runs, so the program goes on checking the step's other claims (the
        values written, the version bump). Only the refusals in
        :data:`conformance.model.claims.WAIVABLE` have such a continuation; any other refusal still
        raises :class:`Raises`."""
        old = self.waived
        self.waived = old | {claim}
        try:
            yield
        finally:
            self.waived = old

    def _refuses(self, claim: str) -> bool:
        """False when ``claim``'s refusal is waived (cited either way)."""
        self._cite(claim)
        return claim not in self.waived

    def adopt_values(self, t: TensorModel, actual: np.ndarray) -> None:
        """Take torch's values for every element of ``t`` (``actual``: its
        values read from torch, storage representation) - after a violation
        of a claim the run already failed, so the program goes on checking
        the others from the state torch is in."""
        pos = t.positions()
        t.buffer.values[pos] = convert(np.asarray(actual), t.dtype, t.dtype)

    def _raise(self, exc: str, *match: str, claim: str) -> Raises:
        self._cite(claim)
        return Raises(exc, *match, claim=claim)

    def _begin(self, claim: str) -> None:
        self.unspecified = []
        self.grad_unspecified = set()
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
        self,
        dtype: str,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        values: np.ndarray,
        src: str | None = None,
        *,
        inference: bool = False,
    ) -> TensorModel:
        """A new tensor in new memory laid out with ``strides``, holding
        ``values`` (an array of ``shape``; in ``src``'s storage representation
        when given) converted to ``dtype``. Allocated inside inference_mode
        (``inference``) it is an inference tensor without a version counter."""
        numel = math.prod(shape)
        extent = 1 + sum((s - 1) * st for s, st in zip(shape, strides, strict=True)) if numel else 0
        buf = np.zeros(extent, dtype=storage_dtype(dtype))
        if numel:
            buf[positions(0, shape, strides)] = convert(values, dtype, src)
        storage = self._storage(self._buffer(buf))
        t = TensorModel(
            next(self._ids), dtype, tuple(shape), tuple(strides), 0, storage,
            None if inference else self._counter(), inference=inference,
        )  # fmt: skip
        if numel and src is not None and src != dtype:
            bad = conversion_unspecified(values, dtype, src)
            if bad.any():
                pos = t.positions()[np.broadcast_to(bad, shape)]
                self.unspecified.append((t, frozenset(int(p) for p in pos.reshape(-1))))
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
                t.buffer.values[pos[mask]] = convert(np.asarray(actual)[mask], t.dtype, t.dtype)

    def resync_grad(self, t: TensorModel, actual: np.ndarray | None, same_object: bool) -> None:
        """Take torch's ``.grad`` of ``t`` where the model leaves it
        unspecified: the elements of :attr:`Grad.unspecified`, or the whole
        attribute for a tensor in :attr:`grad_unspecified` (``actual`` is
        ``None`` when torch has no gradient; ``same_object`` when torch's is
        the object the model's was)."""
        g = t.grad
        if t in self.grad_unspecified:
            if actual is None:
                t.grad = None
                return
            actual = convert(np.asarray(actual), t.dtype, t.dtype)
            if g is None or not same_object:
                layout = g.layout if g is not None else None
                t.grad = Grad(next(self._ids), t.dtype, t.shape, actual,
                              np.zeros(t.shape, dtype=bool), layout)  # fmt: skip
            else:
                g.values, g.unspecified = actual, np.zeros(t.shape, dtype=bool)
            return
        if g is not None and actual is not None and g.unspecified.any():
            g.values = np.where(
                g.unspecified, convert(np.asarray(actual), t.dtype, t.dtype), g.values
            )
            g.unspecified = np.zeros(t.shape, dtype=bool)
