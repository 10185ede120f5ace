"""Copies and conversions: clone, to, contiguous, torch.tensor, new_tensor,
as_tensor and asarray of a tensor."""

from __future__ import annotations

from conformance.model.claims import MSG
from conformance.model.geometry import (
    channels_last_strides,
    contiguous_strides,
    infer_dense_strides,
    is_contiguous,
    is_non_overlapping_and_dense,
)
from conformance.model.graph import Node
from conformance.model.state import TensorModel
from conformance.model.values import DIFFERENTIABLE

__all__ = ["CopyRules"]


class CopyRules:
    """Out-of-place copies, and conversions that return their input or a copy."""

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
        self,
        t: TensorModel,
        dtype: str,
        strides: tuple[int, ...],
        *,
        grad: bool,
        name: str = "CloneBackward",
        inference: bool = False,
    ) -> TensorModel:
        """An out-of-place copy of ``t`` (clone, to, contiguous, ...): new memory
        and counter; a grad_fn ``name`` when recorded (grad mode, ``t``
        requires grad, differentiable result). Inside inference_mode
        (``inference``) an inference tensor; outside it a copy of an
        inference tensor is a normal tensor whose version is 1 (observed:
        torch makes it by empty + copy_)."""
        record = grad and self.requires_grad(t) and dtype in DIFFERENTIABLE
        edge = self._input(t) if record else None
        out = self._alloc(dtype, t.shape, strides, self.values(t), t.dtype, inference=inference)
        if record:
            out.node = Node((name,), (edge,), lambda g, rnd: (g,))
        if inference:
            self._cite("sequences.inference-tensors")
        elif t.inference:
            self._cite("sequences.inference-aliases")
            out.counter.version = 1
        self._cite("sequences.leaf-and-grad-fn")
        return out

    def clone(
        self,
        t: TensorModel,
        memory_format: str = "preserve",
        grad: bool = True,
        inference: bool = False,
    ):
        """``t.clone(memory_format=...)`` (under ``no_grad`` unless ``grad``,
        inside ``inference_mode`` when ``inference``)."""
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
        if not grad and not inference:
            self._cite("sequences.no-grad-untracked")
        return self._copy_of(t, t.dtype, strides, grad=grad and not inference, inference=inference)

    def to(self, t: TensorModel, dtype: str, copy: bool = False):
        """``t.to(dtype, copy=copy)``: ``t`` itself when nothing changes and no
        copy is asked; otherwise a preserve_format copy, which does not require
        grad for a non-differentiable target dtype."""
        self._begin("sequences.to-self-or-copy")
        if dtype == t.dtype and not copy:
            return t
        strides = self.preserve_format_strides(t.shape, t.strides)
        return self._copy_of(t, dtype, strides, grad=True, name="ToCopyBackward")

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
        strides = self.preserve_format_strides(t.shape, t.strides)
        return self._copy_of(t, dtype, strides, grad=True, name="ToCopyBackward")

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
        strides = self.preserve_format_strides(t.shape, t.strides)
        name = "CloneBackward" if same else "ToCopyBackward"
        return self._copy_of(t, target, strides, grad=True, name=name)
