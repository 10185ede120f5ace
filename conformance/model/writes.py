"""In-place writes: copy_, in-place arithmetic and fills, index assignment
(the shadow memory, overlap errors, version counter bumps, the history an
in-place op records, and in-place ops on inference tensors)."""

from __future__ import annotations

import numpy as np

from conformance.model.claims import MSG
from conformance.model.geometry import broadcast_shapes, internal_overlap, partial_overlap
from conformance.model.graph import Node, view_backward
from conformance.model.state import Saved, TensorModel
from conformance.model.values import (
    DIFFERENTIABLE,
    INTEGRAL,
    conversion_unspecified,
    convert,
    decode,
    same_bits,
    scalar_overflows,
)

__all__ = ["WriteRules", "arithmetic"]

#: dtypes torch has no ``add`` kernel for (limited support of wide unsigned ints).
NO_ADD_KERNEL = frozenset({"uint16", "uint32", "uint64"})

#: The CPU kernels the model encodes as missing: ``(op, dtype)`` pairs, op
#: ``"add_"`` or ``"mul_"`` (the out-of-place op shares the kernel). CUDA's
#: gaps are probed by the state machine (:mod:`conformance.capabilities`)
#: and passed to :class:`conformance.model.Model` as ``missing_kernels``.
CPU_MISSING_KERNELS = frozenset(("add_", d) for d in NO_ADD_KERNEL)


def arithmetic(old: np.ndarray, dtype: str, op: str, value) -> tuple[np.ndarray, np.ndarray]:
    """``add_``/``mul_`` by a Python scalar in ``dtype`` (old values in storage
    representation): ``(new values, unspecified mask)``. Integers wrap;
    float16/bfloat16 compute in float32 and round once; the sign and payload
    of a NaN result are left to torch (IEEE 754 leaves them open: x86 CPU
    kernels propagate the operand's NaN, CUDA's return the canonical NaN
    0x7FFFFFFF; the machine still requires a NaN there) - complex: also
    Inf * 0 partial products, evaluation-order dependent."""
    with np.errstate(all="ignore"):
        if dtype in ("float16", "bfloat16"):
            f = decode(old, dtype).astype(np.float32)
            s = np.float32(value)
            r = f + s if op == "add_" else f * s
            return convert(r, dtype), np.isnan(r)
        s = convert(np.asarray([value]), dtype)[0]
        new = old + s if op == "add_" else old * s
        new = convert(new, dtype, dtype)
        if dtype.startswith("complex"):
            nan = np.isnan(new.real) | np.isnan(new.imag)
            return new, nan
        if np.asarray(new).dtype.kind == "f":
            return new, np.isnan(new)
        return new, np.zeros(np.shape(new), dtype=bool)


class WriteRules:
    """copy_, add_/mul_/fill_/zero_ and ``t[i] = v``.

    Every rule takes ``grad`` (False under ``no_grad``) and ``inference``
    (inside ``inference_mode``; then nothing is recorded either)."""

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

    def _unspecified_at(self, t: TensorModel, mask: np.ndarray) -> None:
        if np.any(mask):
            pos = t.positions()[np.broadcast_to(mask, t.shape)]
            self.unspecified.append((t, frozenset(int(p) for p in pos.reshape(-1))))

    def _reached_twice(self, t: TensorModel) -> None:
        """Leave to torch every memory position several elements of ``t``
        address (an overlapping write torch performed although the model
        predicts it refuses: which write lands last, and what each one read,
        is the kernel's order)."""
        pos = t.positions().reshape(-1)
        uniq, counts = np.unique(pos, return_counts=True)
        if (counts > 1).any():
            self.unspecified.append((t, frozenset(int(p) for p in uniq[counts > 1])))

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

    def _bump(self, t: TensorModel, inference: bool, src: TensorModel | None = None) -> None:
        """The version bump after an in-place op wrote ``t``'s memory.

        Outside inference_mode an inference tensor without a version counter
        refuses the bump: the op raises *after* writing (observed). Inside the
        mode an inference tensor is not bumped - unless a normal tensor
        ``src`` takes part (copy_): then the op dispatches through the
        version-counting kernel, which bumps the counter an inference alias
        made by detach()/.data outside the mode has (observed); a normal
        tensor is bumped."""
        if t.counter is None:
            if not inference:
                raise self._raise(
                    "RuntimeError", MSG["inference_inplace"],
                    claim="sequences.inference-inplace-raises",
                )  # fmt: skip
            self._cite("sequences.inference-tensors")
            return
        if t.inference:
            self._cite("sequences.inference-aliases")
            if inference and (src is None or src.inference):
                return
        elif inference:
            self._cite("sequences.inference-tensors")
        t.counter.version += 1

    def _untracked(self, grad: bool, inference: bool, claim: str) -> None:
        if inference:
            self._cite("sequences.inference-tensors")
        else:
            self._cite("sequences.no-grad-untracked" if not grad else claim)

    def copy_(self, dst: TensorModel, src: TensorModel, grad: bool = True, inference: bool = False):
        """``dst.copy_(src)``: writes ``src`` broadcast to ``dst``'s shape and
        converted to its dtype; returns ``dst``; bumps its version counter."""
        self._begin("sequences.copy-in-place")
        grad = grad and not inference
        record = self._inplace_prologue(dst, grad, src)
        same_data = dst is src or (
            dst.storage is src.storage
            and (dst.offset, dst.strides, dst.shape, dst.dtype)
            == (src.offset, src.strides, src.shape, src.dtype)
        )
        overlapping = False
        if not same_data:
            if internal_overlap(dst):
                overlapping = True
                if self._refuses("sequences.write-overlap-raises"):
                    raise self._raise(
                        "RuntimeError",
                        MSG["internal_overlap"],
                        claim="sequences.write-overlap-raises",
                    )
            if partial_overlap(dst, src) and self._refuses("sequences.write-overlap-raises"):
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
        others = ()
        if record and self.requires_grad(src):
            others = (self._input(src),)
        values = self.values(src)
        new = np.broadcast_to(convert(values, dst.dtype, src.dtype), dst.shape)
        bad = np.broadcast_to(conversion_unspecified(values, dst.dtype, src.dtype), dst.shape)
        src_pos = None
        if src.buffer is dst.buffer:
            src_pos = np.broadcast_to(src.positions(), dst.shape)
        self._write(dst, new, src_pos)
        self._unspecified_at(dst, bad)
        if overlapping:
            self._reached_twice(dst)
        self._bump(dst, inference, src)
        if record:
            src_dtype = src.dtype

            def copy_backward(g, rnd):
                zeros = np.zeros(g.shape, dtype=g.dtype)
                if not others:
                    return (zeros,)
                return (zeros, rnd(g, src_dtype))  # the engine sums it to src's shape

            self._record_inplace(dst, ("CopyBackwards",), copy_backward, others)
            self._cite("sequences.inplace-records-history")
        else:
            self._untracked(grad, inference, "sequences.copy-in-place")
        return dst

    def inplace(
        self, t: TensorModel, op: str, value=None, grad: bool = True, inference: bool = False
    ):
        """``t.add_(value)``, ``t.mul_(value)``, ``t.fill_(value)`` or ``t.zero_()``
        with a Python scalar: computed in ``t``'s dtype; add_/mul_ refuse an
        overlapping (expanded) ``t``, a bool ``t`` and a float scalar for an
        integral ``t``; a dtype without a kernel on the device (CPU: uint16/32/64
        add_; CUDA: probed) raises NotImplementedError; fill_ refuses a
        value that overflows ``t``'s dtype; returns ``t``."""
        self._begin("sequences.inplace-arithmetic")
        grad = grad and not inference
        record = self._inplace_prologue(t, grad)
        overlapping = op in ("add_", "mul_") and internal_overlap(t)
        if op in ("add_", "mul_"):
            if overlapping and self._refuses("sequences.write-overlap-raises"):
                raise self._raise(
                    "RuntimeError", MSG["internal_overlap"], claim="sequences.write-overlap-raises"
                )
            if t.dtype == "bool" or (t.dtype in INTEGRAL and isinstance(value, float)):
                raise self._raise("RuntimeError", MSG["cast"], claim="sequences.inplace-arithmetic")
            if (op, t.dtype) in self.missing_kernels:
                raise self._raise(
                    "NotImplementedError", MSG["no_kernel"], claim="sequences.dtype-support"
                )
        if op == "fill_" and scalar_overflows(value, t.dtype):
            raise self._raise("RuntimeError", MSG["overflow"], claim="sequences.dtype-support")
        old = self.values(t)
        unspecified = None
        if op in ("add_", "mul_"):
            new, unspecified = arithmetic(old, t.dtype, op, value)
        elif op == "fill_":
            new = np.broadcast_to(convert(value, t.dtype), t.shape)
        elif op == "zero_":
            new = np.broadcast_to(convert(0, t.dtype), t.shape)
        else:
            raise ValueError(f"unknown in-place op {op!r}")
        self._write(t, new)
        if unspecified is not None:
            self._unspecified_at(t, unspecified)
        if overlapping:
            self._reached_twice(t)
        self._bump(t, inference)
        if record:
            names = {"add_": "AddBackward", "mul_": "MulBackward", "fill_": "FillBackward"}
            name = names.get(op, "ZeroBackward")
            dt = t.dtype

            def backward(g, rnd):
                if op == "add_":
                    return (g,)
                if op == "mul_":
                    return (rnd(g * np.conj(value), dt),)
                return (np.zeros(g.shape, dtype=g.dtype),)

            # mul_ by a Python number multiplies by a wrapped 0-d tensor, which
            # MulBackward saves (a backward frees it; nothing can modify it)
            saved = (Saved(next(self._ids), self._counter(), 0),) if op == "mul_" else ()
            self._record_inplace(t, (name,), backward, saved=saved)
            if op == "mul_" and dt.startswith("complex"):
                self.root(t).node.zero_signs = True
            self._cite("sequences.inplace-records-history")
        else:
            self._untracked(grad, inference, "sequences.inplace-arithmetic")
        return t

    def setitem(
        self, t: TensorModel, index: int | None, value, grad: bool = True, inference: bool = False
    ):
        """``t[index] = value`` (``t[...] = value`` when ``index`` is None): a
        copy_ of the scalar into ``t.select(0, index)`` (a fill_ of ``t``
        itself for ``...``), so a leaf requiring grad is refused as 'a view of
        a leaf'; a value that overflows ``t``'s dtype is refused first."""
        self._begin("sequences.index-assignment-in-place")
        grad = grad and not inference
        if scalar_overflows(value, t.dtype):
            raise self._raise("RuntimeError", MSG["overflow"], claim="sequences.dtype-support")
        if index is None:
            target = t
        else:
            target = self._temporary_select(t, index, grad)
        record = self._inplace_prologue(target, grad)
        # On CUDA the scalar is wrapped in a CPU tensor, and fill_ of a CUDA
        # tensor from a CPU value fills from a Python number, without the
        # overlap check copy_ makes (the fill is idempotent): torch writes an
        # expanded target there (observed on torch 2.11 CUDA).
        if internal_overlap(target):
            if self.device == "cpu" and self._refuses("sequences.write-overlap-raises"):
                raise self._raise(
                    "RuntimeError", MSG["internal_overlap"], claim="sequences.write-overlap-raises"
                )
            self._cite("sequences.write-overlap-raises")
        self._write(target, np.broadcast_to(convert(value, t.dtype), target.shape))
        self._bump(target, inference)  # a select of an inference tensor has no counter
        if record:
            # a temporary select view's base (t's root) gets the new history
            # t[...] = v fills t (a 0-d t: a copy_ of the value)
            # (the same on CUDA: probes/cuda_device_differences.py)
            name = "FillBackward" if index is None and t.ndim else "CopyBackwards"
            self._record_inplace(target, (name,), lambda g, rnd: (np.zeros(g.shape, g.dtype),))
            self._cite("sequences.inplace-records-history")
        else:
            self._untracked(grad, inference, "sequences.index-assignment-in-place")
        return t

    def _temporary_select(self, t: TensorModel, index: int, grad: bool) -> TensorModel:
        """``t.select(0, index)`` as setitem makes it (not a live tensor)."""
        diff = grad and not t.inference
        target = TensorModel(
            -1, t.dtype, t.shape[1:], t.strides[1:], t.offset + index * t.strides[0],
            t.storage, None if t.inference else t.counter,
            base=None if t.inference else self.root(t), diff_view=diff,
            attr_version=t.counter.version if t.counter is not None else 0,
            inference=t.inference, view_op="SelectBackward",
        )  # fmt: skip
        if diff and self.requires_grad(t):
            fn = view_backward("select", (0, index), t.shape)
            target.node = Node(("SelectBackward",), (self._input(t),), fn)
        return target
