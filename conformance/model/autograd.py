"""Autograd state: requires_grad, grad_fn, leaves, views' autograd tracking,
the checks and history of in-place ops, saved tensors and backward."""

from __future__ import annotations

import numpy as np

from conformance.model.claims import MSG
from conformance.model.geometry import contiguous_strides
from conformance.model.state import Saved, TensorModel
from conformance.model.values import DIFFERENTIABLE

__all__ = ["AutogradRules"]


class AutogradRules:
    """requires_grad / grad_fn / is_leaf, requires_grad_, square and backward."""

    # ---- observations -----------------------------------------------------

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

    # ---- in-place ops -----------------------------------------------------

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
