"""Aliases and views: detach, .data, detach_, and the view ops (slice, select,
transpose, permute, unsqueeze, expand, view, reshape)."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.model.claims import MSG
from conformance.model.geometry import (
    contiguous_strides,
    expand_geometry,
    is_contiguous,
    view_strides,
)
from conformance.model.graph import Node, view_backward
from conformance.model.state import TensorModel

__all__ = ["ViewRules"]


class ViewRules:
    """Results over the input's storage: untracked aliases and differentiable views."""

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
        the docs list detach among the view ops. Of an inference tensor
        (outside inference_mode): an inference tensor with a version counter
        of its own (see :meth:`_inference_alias`)."""
        self._begin("sequences.detach-shares")
        if t.inference:
            return self._inference_alias(t)
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
        if t.inference:
            return self._inference_alias(t)
        return self._alias(t, counter=self._counter())

    def _inference_alias(self, t: TensorModel) -> TensorModel:
        """``detach()`` / ``.data`` of an inference tensor outside
        inference_mode (observed): an inference tensor over the same memory
        with a *new* version counter (version 0), which in-place ops outside
        inference_mode bump instead of raising."""
        self._cite("sequences.inference-aliases")
        return self._alias(t, counter=self._counter(), inference=True)

    def detach_(self, t: TensorModel):
        """``t.detach_()``: raises for views; else drops flag and history (returns ``t``)."""
        self._begin("sequences.detach-inplace")
        if self.is_view(t):
            raise self._raise("RuntimeError", MSG["detach_view"], claim="sequences.detach-inplace")
        t.rg_flag = False
        t.node = None
        if any(v.base is t for v in self.tensors):
            self._cite("sequences.view-autograd-follows-base")
        return t

    def _view(
        self, t: TensorModel, shape, strides, offset=None, *, claim: str, op: tuple
    ) -> TensorModel:
        """A differentiable view of ``t`` (created in grad mode): root base,
        shared storage and counter; a grad_fn when ``t`` requires grad.
        ``op`` is ``(grad_fn name or names, formula kind, formula args)``.

        A view of an inference tensor is an inference tensor without a
        version counter and is not tracked as a view (observed)."""
        name, kind, args = op
        geometry = dict(shape=tuple(shape), strides=tuple(strides))
        geometry["offset"] = t.offset if offset is None else offset
        self._cite(claim)
        if t.inference:
            self._cite("sequences.inference-tensors")
            return self._alias(t, counter=None, inference=True, **geometry)
        record = self.requires_grad(t)
        out = self._alias(t, **geometry)
        out.base = self.root(t)
        out.diff_view = True
        out.view_op = name[0] if isinstance(name, tuple) else name
        if record:
            fn = view_backward(kind, args, t.shape)
            names = name if isinstance(name, tuple) else (name,)
            out.node = Node(names, (self._input(t),), fn)
        out.attr_version = t.counter.version
        self._cite("sequences.view-autograd-follows-base")
        return out

    def slice(self, t: TensorModel, dim: int, start: int, step: int):
        """``t[(slice(None),) * dim + (slice(start, None, step),)]``."""
        self._begin("sequences.views-alias-base")
        if t.ndim == 0:
            raise self._raise(
                "IndexError", MSG["too_many_indices"], claim="sequences.view-index-errors"
            )
        start = min(start, t.shape[dim])
        n = max(-(-(t.shape[dim] - start) // step), 0)  # ceil
        shape, strides = list(t.shape), list(t.strides)
        shape[dim] = n
        strides[dim] = t.strides[dim] * step
        offset = t.offset + start * t.strides[dim]
        op = ("SliceBackward", "slice", (dim, start, step, n))
        if start == 0 and step == 1:
            # a slice that keeps everything: indexing returns an alias
            op = ("AliasBackward", "reshape", ())
        return self._view(t, shape, strides, offset, claim="sequences.views-alias-base", op=op)

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
        offset = t.offset + index * t.strides[dim]
        op = ("SelectBackward", "select", (dim, index))
        return self._view(t, shape, strides, offset, claim="sequences.views-alias-base", op=op)

    def transpose(self, t: TensorModel, dim0: int, dim1: int):
        """``t.transpose(dim0, dim1)`` (an alias view when ``dim0 == dim1``)."""
        self._begin("sequences.views-alias-base")
        shape, strides, dims = list(t.shape), list(t.strides), list(range(t.ndim))
        if t.ndim:
            shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
            strides[dim0], strides[dim1] = strides[dim1], strides[dim0]
            dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
        op = ("TransposeBackward", "permute", (tuple(dims),))
        return self._view(t, shape, strides, claim="sequences.views-alias-base", op=op)

    def permute(self, t: TensorModel, dims: Sequence[int]):
        """``t.permute(dims)``."""
        self._begin("sequences.views-alias-base")
        shape = [t.shape[d] for d in dims]
        strides = [t.strides[d] for d in dims]
        op = ("PermuteBackward", "permute", (tuple(dims),))
        return self._view(t, shape, strides, claim="sequences.views-alias-base", op=op)

    def unsqueeze(self, t: TensorModel, dim: int):
        """``t.unsqueeze(dim)`` (``inferUnsqueezeGeometry``)."""
        self._begin("sequences.views-alias-base")
        stride = 1 if dim >= t.ndim else t.shape[dim] * t.strides[dim]
        shape = t.shape[:dim] + (1,) + t.shape[dim:]
        strides = t.strides[:dim] + (stride,) + t.strides[dim:]
        op = ("UnsqueezeBackward", "unsqueeze", (dim,))
        return self._view(t, shape, strides, claim="sequences.views-alias-base", op=op)

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
        op = ("ExpandBackward", "expand", ())
        return self._view(t, geo[0], geo[1], claim="sequences.expand-geometry", op=op)

    def view(self, t: TensorModel, shape: Sequence[int]):
        """``t.view(shape)`` (same number of elements): a view when the strides
        allow it, else RuntimeError."""
        self._begin("sequences.view-compatibility")
        strides = view_strides(t.shape, t.strides, shape)
        if strides is None:
            raise self._raise(
                "RuntimeError", MSG["view_stride"], claim="sequences.view-compatibility"
            )
        op = ("ViewBackward", "reshape", ())
        return self._view(t, shape, strides, claim="sequences.view-compatibility", op=op)

    def reshape(self, t: TensorModel, shape: Sequence[int]):
        """``t.reshape(shape)``: a view when ``view`` would succeed, else a
        contiguous copy (not a view, recorded like clone)."""
        self._begin("sequences.reshape-view-or-copy")
        strides = view_strides(t.shape, t.strides, shape)
        if strides is not None:
            # torch 2.13: a view() of a contiguous input, else _reshape_alias
            # (which of the two differs between releases: both accepted)
            names = ("ViewBackward", "ReshapeAliasBackward")
            if not is_contiguous(t.shape, t.strides):
                names = names[::-1]
            op = (names, "reshape", ())
            return self._view(t, shape, strides, claim="sequences.reshape-view-or-copy", op=op)
        record = self.requires_grad(t)
        edge = self._input(t) if record else None
        values = self.values(t).reshape(shape)
        out = self._alloc(t.dtype, tuple(shape), contiguous_strides(shape), values, t.dtype)
        if record:
            fn = view_backward("reshape", (), t.shape)
            out.node = Node(("UnsafeViewBackward",), (edge,), fn)
        return out
