"""Autograd state: requires_grad, grad_fn (nodes of :mod:`conformance.model.graph`),
leaves, views' autograd tracking, the checks and history of in-place ops,
``requires_grad_``, ``retain_grad``, saved tensors, backward and ``.grad``."""

from __future__ import annotations

import numpy as np

from conformance.model.claims import MSG
from conformance.model.geometry import contiguous_strides, is_non_overlapping_and_dense
from conformance.model.graph import (
    Accumulate,
    Node,
    domain,
    fit,
    positions_backward,
    run_backward,
)
from conformance.model.state import Grad, Saved, TensorModel
from conformance.model.values import DIFFERENTIABLE, convert, decode

__all__ = ["AutogradRules"]


class AutogradRules:
    """requires_grad / grad_fn / is_leaf, requires_grad_, retain_grad, square,
    backward and ``.grad``."""

    # ---- observations -----------------------------------------------------

    def requires_grad(self, t: TensorModel) -> bool:
        """``t.requires_grad``: its flag, its grad_fn, or (views) its base's."""
        if t.rg_flag or t.node is not None:
            return True
        return t.diff_view and self.requires_grad(t.base)

    def grad_fn_is_none(self, t: TensorModel) -> bool:
        """``t.grad_fn is None``. Reading a view's grad_fn rebuilds it when the
        shared version counter moved since it was built and the view or its
        base has history (torch does the same, lazily): an as_strided view
        of the base's current gradient edge."""
        if t.diff_view:
            if t.node is None and not self.requires_grad(t.base):
                return True
            if t.attr_version != t.counter.version:
                t.node = self._regenerated_view_node(t)
                t.attr_version = t.counter.version
        return t.node is None

    def grad_fn_names(self, t: TensorModel) -> tuple[str, ...]:
        """Accepted stable prefixes of ``type(t.grad_fn).__name__`` (empty when
        there is no grad_fn)."""
        return () if self.grad_fn_is_none(t) else t.node.names

    def is_leaf(self, t: TensorModel) -> bool:
        return self.grad_fn_is_none(t)

    def is_view(self, t: TensorModel) -> bool:
        return t.base is not None

    def root(self, t: TensorModel) -> TensorModel:
        return t.base if t.base is not None else t

    def _graph(self, t: TensorModel) -> frozenset:
        """The saved tensors reachable from ``t``'s gradient edge (reads grad_fn)."""
        return frozenset() if self.grad_fn_is_none(t) else t.graph

    def _edge(self, t: TensorModel):
        """``gradient_edge(t)``: its grad_fn, else its AccumulateGrad when it is
        a leaf with the requires_grad flag of its own, else ``None``."""
        if not self.grad_fn_is_none(t):
            return t.node
        if t.rg_flag:
            acc = t.__dict__.get("_acc")
            if acc is None:
                acc = t.__dict__["_acc"] = Accumulate(t)
            return acc
        return None

    def _input(self, t: TensorModel) -> tuple:
        """``(edge, dtype, shape)`` of ``t`` as an input of a new node."""
        return (self._edge(t), t.dtype, t.shape)

    def _regenerated_view_node(self, t: TensorModel) -> Node:
        base = t.base
        overlapping = not is_non_overlapping_and_dense(base.shape, base.strides)
        if overlapping:
            fn = _unspecified_backward(base.shape)
        else:
            fn = positions_backward(t.positions(), base.positions())
        names = ("AsStridedBackward",) + ((t.view_op,) if t.view_op else ())
        return Node(names, (self._input(base),), fn, overlapping=overlapping)

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

    def _record_inplace(
        self, t: TensorModel, names: tuple[str, ...], fn, others=(), saved=()
    ) -> None:
        """History after a recorded in-place op on ``t`` (the counter was bumped).

        ``fn(grad, rnd)`` is the op's gradient formula for ``t``'s region
        (first result: the gradient for ``t``'s previous value, then one per
        input of ``others``, a tuple of ``(edge, dtype, shape)``). A view's
        root base gets the new history (``CopySlices`` around the op) and the
        view's grad_fn is rebuilt from it; any other tensor gets the op's node."""
        if t.diff_view:
            self._cite("sequences.view-autograd-follows-base")
            root = t.base
            overlapping = not is_non_overlapping_and_dense(root.shape, root.strides)
            region = None if overlapping else _region(t.positions(), root.positions())

            def copy_slices(g, rnd):
                if region is None:
                    return (np.full(g.shape, np.nan, dtype=g.dtype),) + tuple(
                        np.full(s, np.nan, dtype=g.dtype) for _, _, s in others
                    )
                res = g.copy().reshape(-1)
                grads = fn(res[region].reshape(t.shape), rnd)
                res[region] = np.asarray(grads[0]).reshape(-1)
                return (res.reshape(g.shape), *grads[1:])

            # CopySlices releases its op after a backward ran it (a second
            # backward raises as for a freed saved tensor)
            released = Saved(next(self._ids), self._counter(), 0)
            root.node = Node(
                ("CopySlices",), (self._input(root), *others), copy_slices,
                saved=(*saved, released), overlapping=overlapping,
            )  # fmt: skip
            t.node = self._regenerated_view_node(t)
            t.attr_version = t.counter.version
        else:
            t.node = Node(names, (self._input(t), *others), fn, saved=saved)

    # ---- autograd ---------------------------------------------------------

    def requires_grad_(self, t: TensorModel, flag: bool = True):
        """``t.requires_grad_(flag)``: returns ``t``; only leaves may drop the
        flag, only differentiable dtypes may set it, and an inference tensor
        may not set it outside inference_mode."""
        self._begin("sequences.requires-grad-flag")
        leaf = self.is_leaf(t)
        if not leaf and not flag:
            raise self._raise(
                "RuntimeError", MSG["rg_nonleaf"], claim="sequences.requires-grad-flag"
            )
        if flag and t.dtype not in DIFFERENTIABLE:
            raise self._raise("RuntimeError", MSG["rg_dtype"], claim="sequences.requires-grad-flag")
        if flag and t.inference:
            raise self._raise(
                "RuntimeError", MSG["inference_rg"], claim="sequences.inference-tensors"
            )
        t.rg_flag = flag
        return t

    def retain_grad(self, t: TensorModel) -> None:
        """``t.retain_grad()``: raises for a tensor that does not require grad;
        a no-op on a leaf; a non-leaf retains the gradient flowing into its
        grad_fn from now on (also after in-place ops replace the grad_fn)."""
        self._begin("sequences.retain-grad")
        if not self.requires_grad(t):
            raise self._raise("RuntimeError", MSG["retain_rg"], claim="sequences.retain-grad")
        if not self.is_leaf(t):
            t.retains_grad = True

    def square(self, t: TensorModel):
        """``(t * t).clone(memory_format=torch.contiguous_format)``: a new
        row-major tensor; when recorded the multiplication saves ``t`` (at its
        current version) for backward."""
        self._begin("sequences.leaf-and-grad-fn")
        # the product's clone: a new tensor in new memory, row-major
        self._cite("sequences.clone-copies")
        self._cite("sequences.clone-memory-format")
        if ("mul_", t.dtype) in self.missing_kernels:
            raise self._raise(
                "NotImplementedError", MSG["no_kernel"], claim="sequences.dtype-support"
            )
        record = self.requires_grad(t)
        edge = self._input(t) if record else None
        v = self.values(t)
        unspecified = None
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
                if not all(
                    np.array_equal(p.astype(v.real.dtype).astype(np.float64), p) for p in parts
                ):
                    unspecified = np.ones(t.shape, dtype=bool)
            elif t.dtype in ("float16", "bfloat16"):
                # computed in float32, rounded once (NaN bits: kernel-dependent)
                f = decode(v, t.dtype).astype(np.float32)
                new = convert(f * f, t.dtype)
                unspecified = np.isnan(f)
            else:
                new = v * v
                if new.dtype.kind == "f":
                    # NaN sign and payload: kernel-dependent (CUDA: canonical)
                    unspecified = np.isnan(new)
        out = self._alloc(t.dtype, t.shape, contiguous_strides(t.shape), new, t.dtype)
        if unspecified is not None and unspecified.any():
            pos = out.positions()[unspecified]
            self.unspecified.append((out, frozenset(int(p) for p in pos.reshape(-1))))
        if record:
            saved = Saved(next(self._ids), t.counter, t.counter.version, t)
            dt = t.dtype

            def mul_backward(g, rnd):
                x = decode(self.values(saved.tensor), dt).astype(domain(dt))
                part = rnd(g * np.conj(x), dt)
                return (rnd(part + part, dt),)

            mul = Node(
                ("MulBackward",), (edge,), mul_backward, saved=(saved,),
                zero_signs=dt.startswith("complex"),
            )  # fmt: skip
            out.node = Node(("CloneBackward",), ((mul, dt, t.shape),), lambda g, rnd: (g,))
            self._cite("sequences.saved-tensor-check")
        return out

    def backward(self, t: TensorModel) -> None:
        """``t.sum().backward()`` (``.real`` of the sum for complex): raises
        when ``t`` does not require grad. Otherwise runs the graph (see
        :func:`conformance.model.graph.run_backward`): accumulates into the
        ``.grad`` of the leaves it reaches that require grad, fills retained
        non-leaves' ``.grad``, frees the saved tensors of the nodes that ran,
        and raises where a node finds a saved tensor modified in place or
        already freed, or a leaf moved into the graph interior - after what
        ran before that point (unlike other rules, a raising backward has
        effects)."""
        self._begin("sequences.backward-needs-grad")
        if not self.requires_grad(t):
            raise self._raise(
                "RuntimeError", MSG["no_grad_fn"], claim="sequences.backward-needs-grad"
            )
        dt = t.dtype
        seed = np.ones(t.shape, dtype=domain(dt))
        root = Node(("SumBackward",), (self._input(t),), lambda g, rnd: (g,))
        graph = root.graph
        out = run_backward(
            root,
            seed,
            has_grad_fn=lambda leaf: not self.grad_fn_is_none(leaf),
            requires_grad=self.requires_grad,
            retained_by=lambda n: [
                x for x in self.tensors if x.retains_grad and not self.is_leaf(x) and x.node is n
            ],
        )
        self.grad_unspecified = set(out.ambiguous)
        for x, (exact, rounded) in out.retained:
            self._set_grad(x, exact, rounded, retained=True, outcome=out)
            self._cite("sequences.retain-grad")
        for leaf, (exact, rounded) in out.accumulated:
            self._set_grad(leaf, exact, rounded, retained=False, outcome=out)
            self._cite("sequences.grad-accumulates")
        if out.accumulated:
            self._cite("sequences.grad-layout")
        if out.error == "stale":
            raise self._raise("RuntimeError", MSG["stale"], claim="sequences.saved-tensor-check")
        if out.error == "freed":
            raise self._raise("RuntimeError", MSG["freed"], claim="sequences.backward-frees-saved")
        if out.error == "moved":
            raise self._raise("RuntimeError", MSG["moved"], claim="sequences.grad-accumulates")
        self._cite("sequences.backward-frees-saved" if graph else "sequences.backward-needs-grad")

    def _set_grad(self, t, exact, rounded, *, retained: bool, outcome) -> None:
        """Accumulate a gradient into ``t.grad`` (in place for a leaf with a
        gradient, a new tensor otherwise)."""
        dt = t.dtype
        old = t.grad
        if old is not None:
            prev = decode(old.values, dt).astype(domain(dt))
            exact = prev + exact
            with np.errstate(all="ignore"):
                rounded = fit(prev + rounded, dt, True)
        values = convert(rounded, dt)
        with np.errstate(all="ignore"):
            unspecified = np.asarray(np.isnan(rounded)) | ~_same_elements(
                convert(fit(exact, dt, False), dt), values
            )
        if outcome.zero_signs or dt.startswith("complex"):
            # complex products (and complex sums, which multiply by alpha):
            # zero signs and Inf/NaN parts (Inf * 0 partial products) depend
            # on the kernel's evaluation order
            r = np.asarray(rounded)
            unspecified = unspecified | (r.real == 0) | ~np.isfinite(r.real)
            if r.dtype.kind == "c":
                unspecified = unspecified | (r.imag == 0) | ~np.isfinite(r.imag)
        if outcome.overlapping:
            unspecified = np.ones(t.shape, dtype=bool)
        if old is not None and not retained:
            old.values = values
            old.unspecified = unspecified
            return
        if retained:
            layout = None
        elif is_non_overlapping_and_dense(t.shape, t.strides):
            layout = ("strides", t.strides)
        else:
            layout = ("contiguous",)
        t.grad = Grad(next(self._ids), dt, t.shape, values, unspecified, layout)


def _same_elements(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise bit equality of two arrays of one storage dtype."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.size == 0:
        return np.ones(a.shape, dtype=bool)
    ra = a.reshape(-1).view(np.uint8).reshape(a.size, -1)
    rb = b.reshape(-1).view(np.uint8).reshape(b.size, -1)
    return np.all(ra == rb, axis=1).reshape(a.shape)


def _region(view_pos: np.ndarray, base_pos: np.ndarray) -> np.ndarray:
    """Flat indices into the base of each element of a view (by position)."""
    index = {int(p): i for i, p in enumerate(base_pos.reshape(-1))}
    return np.array([index[int(p)] for p in view_pos.reshape(-1)], dtype=np.int64)


def _unspecified_backward(shape):
    def fn(g, rnd):
        return (np.full(shape, np.nan, dtype=g.dtype),)

    return fn
