"""In-place writes: copy_, in-place arithmetic and fills, index assignment
(the shadow memory, overlap errors, version counter bumps)."""

from __future__ import annotations

import numpy as np

from conformance.model.claims import MSG
from conformance.model.geometry import broadcast_shapes, internal_overlap, partial_overlap
from conformance.model.state import TensorModel
from conformance.model.values import DIFFERENTIABLE, convert, same_bits

__all__ = ["WriteRules"]


class WriteRules:
    """copy_, add_/mul_/fill_/zero_ and ``t[i] = v``."""

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
            changed = {int(p) for p, v in zip(dpos, new, strict=True) if not same_bits(buf[p], v)}
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
            if internal_overlap(dst):
                raise self._raise(
                    "RuntimeError", MSG["internal_overlap"], claim="sequences.write-overlap-raises"
                )
            if partial_overlap(dst, src):
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
            if internal_overlap(t):
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
        if internal_overlap(target):
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
