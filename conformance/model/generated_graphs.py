"""The static model of generated autograd programs
(:class:`strategies.graph_programs.Graph`): which node requires grad, which is
a leaf, which autograd vertices connect to which, which version counter and
storage each node uses, which reads are differentiable - computed from the
description alone, never by running torch autograd (torch is called only on
the ``meta`` device, for an op's result shape and dtype).

:func:`analyze` models a whole graph; the properties in
``conformance/test_graphs.py`` compare real torch against it. The strategies
of :mod:`strategies.graphs` build programs through the same incremental
:class:`Modeller`, so that they draw only programs torch accepts (no in-place
op on a leaf that requires grad, none on a view made in ``no_grad`` mode, nor
directly into a lazy view).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from strategies.graph_programs import (
    ALIASING_OPS,
    INPLACE_OPS,
    VIEW_OPS,
    Graph,
    Leaf,
    Op,
    apply_op,
)

__all__ = [
    "GraphModel",
    "Modeller",
    "TensorState",
    "Vertex",
    "analyze",
    "is_int_dtype",
    "probe_result",
]


_vertex_ids = itertools.count()


@dataclass(eq=False)
class Vertex:
    """A node of the modelled backward graph: ``'acc'`` (a leaf's gradient
    accumulator, ``leaf`` = node index), ``'op'`` (a recorded op) or
    ``'copyslices'`` (an in-place op through a view, re-basing the view's root)
    or ``'scalar-saved'`` (``mul_`` by a Python scalar)."""

    kind: str
    edges: tuple[Vertex, ...] = ()
    leaf: int | None = None
    live: bool = False  # reaches an accumulator
    uid: int = field(default_factory=lambda: next(_vertex_ids))

    @staticmethod
    def op(edges: Sequence[Vertex | None], kind: str = "op") -> Vertex:
        es = tuple(e for e in edges if e is not None)
        return Vertex(kind, es, live=any(e.live for e in es))


@dataclass
class TensorState:
    """Modelled state of one tensor object."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    requires_grad: bool
    vertex: Vertex | None
    inference: bool
    version_class: int  # version-counter class
    storage: int  # storage class
    root: int  # object id of the autograd view root
    view_ok: bool  # a view chain made entirely in grad mode (or not a view)
    is_view: bool
    fresh: bool  # non-view result of a computing/copying op (a valid in-place root)
    overlap: bool  # may have several elements at one memory location
    cut: bool  # a detach()/.data alias (or a view of one)
    mode: str
    #: A grad-mode view that requires grad through its view root but whose
    #: grad_fn torch has not materialized: made while its root did not
    #: require grad, and not recorded by any op since the root started to
    #: (see :func:`analyze`). torch's C++ ``is_leaf()`` is true for it.
    lazy: bool = False

    @property
    def is_leaf(self) -> bool:
        return self.vertex is None or self.vertex.kind == "acc"


@dataclass
class GraphModel:
    """The static model of a :class:`Graph` (see :func:`analyze`).

    ``obj[i]``: the tensor object id of node ``i`` (an in-place op without a
    view returns its target, so both nodes share one object); ``states``: the
    final modelled state per object; ``reads[(step, pos)]``: whether the
    value read by op ``step`` at argument ``pos`` is differentiable (its
    vertex reaches an accumulator); ``bumps[vc]``: the steps at which an
    in-place op bumped that version counter; ``acc[i]``: leaf ``i``'s
    accumulator vertex (None when it gets none).
    """

    graph: Graph
    obj: list[int]
    states: list[TensorState]
    reads: dict[tuple[int, int], bool]
    bumps: dict[int, list[int]]
    acc: list[Vertex | None]
    disabled_views: set[int]  # roots that have a view made in no_grad/inference
    loss_vertex: Vertex | None = None
    out_rg: bool = False
    #: Steps whose in-place op torch refuses with "a leaf Variable that
    #: requires grad is being used in an in-place operation": the op writes
    #: directly into a lazy view (:attr:`TensorState.lazy`). The strategy never
    #: draws one; hand-written graphs may have them.
    leaf_inplace_errors: list[int] = field(default_factory=list)
    #: Objects that were lazy when ``retain_grad()`` ran (after the ops,
    #: before the loss): ``retain_grad()`` is a silent no-op on them.
    lazy_at_retain: frozenset[int] = frozenset()

    def state(self, node: int) -> TensorState:
        return self.states[self.obj[node]]

    def _walk(self) -> list[Vertex]:
        seen: dict[int, Vertex] = {}
        stack = [self.loss_vertex] if self.loss_vertex is not None else []
        while stack:
            v = stack.pop()
            if v.uid in seen:
                continue
            seen[v.uid] = v
            stack.extend(v.edges)
        return list(seen.values())

    def reached(self) -> set[int]:
        """uids of the vertices backward() from the loss traverses."""
        return {v.uid for v in self._walk()}

    def grad_expected(self) -> list[bool]:
        """Per node: is ``.grad`` populated after ``loss.backward()``?"""
        reached = self.reached()
        retained = {self.obj[j] for j in self.graph.retain}
        out = []
        for i in range(self.graph.n_nodes):
            s = self.state(i)
            v = s.vertex
            if v is None:
                out.append(False)
            elif v.kind == "acc":
                out.append(v.uid in reached)
            else:
                out.append(self.obj[i] in retained and v.uid in reached)
        return out

    def frees_unhooked(self) -> bool:
        """Does backward from the loss run a node that frees state no
        saved_tensors_hook sees: an in-place op through a view (CopySlices
        frees the function it wraps) or ``mul_`` by a Python scalar (saved as
        a wrapped-number tensor)?"""
        return any(v.kind in ("copyslices", "scalar-saved") for v in self._walk())

    def retains(self, node: int) -> bool:
        return self.obj[node] in {self.obj[j] for j in self.graph.retain}

    def alias_vc(self) -> int | None:
        """Version-counter class the mutation bumps (None: a fresh one, i.e. ``.data``)."""
        m = self.graph.mutation
        if m is None or m.alias == "data":
            return None
        return self.state(m.node).version_class

    def real_leaves(self) -> list[int]:
        """Leaves with a gradient accumulator (user-created, requiring grad)."""
        return [i for i, a in enumerate(self.acc) if a is not None]

    def lazy(self, node: int) -> bool:
        """Is ``node`` a lazy view (:attr:`TensorState.lazy`) once the graph ran,
        loss included (the loss records the output, so it is never lazy)?"""
        return self.state(node).lazy


class Modeller:
    """Incremental static model; used by :func:`analyze` and by the strategy."""

    def __init__(self) -> None:
        self.states: list[TensorState] = []
        self.obj: list[int] = []
        self.reads: dict[tuple[int, int], bool] = {}
        self.bumps: dict[int, list[int]] = {}
        self.acc: list[Vertex | None] = []
        self.disabled_views: set[int] = set()
        self.leaf_inplace_errors: list[int] = []
        self._ids = itertools.count()
        self.n_leaves = 0

    # -- helpers
    def s(self, node: int) -> TensorState:
        return self.states[self.obj[node]]

    def _new_obj(self, st_: TensorState) -> int:
        self.states.append(st_)
        return len(self.states) - 1

    def new_class(self) -> int:
        return next(self._ids)

    # -- leaves
    def add_leaf(self, leaf: Leaf) -> None:
        spec = leaf.spec
        has_views = bool(spec.views)
        overlap = any(v[0] == "expand" for v in spec.views)
        i = len(self.obj)
        vc, sto = self.new_class(), self.new_class()
        dead = leaf.no_grad and leaf.requires_grad and has_views
        vertex = None
        if leaf.requires_grad and not dead:
            vertex = Vertex("acc", (), leaf=i, live=True)
        self.acc.append(vertex)
        root = len(self.states)
        if has_views:
            # The spec's hidden base: the view root torch records for the leaf.
            # It requires grad only when built by ``build(requires_grad=True)``
            # (under no_grad); ``leaf=True`` flags the view itself instead.
            self.states.append(
                TensorState(
                    shape=tuple(spec.base_shape), dtype=spec.dtype,
                    requires_grad=leaf.no_grad and leaf.requires_grad, vertex=None, inference=False,
                    version_class=vc, storage=sto, root=root, view_ok=True, is_view=False, fresh=False,
                    overlap=False, cut=False, mode="grad",
                )
            )  # fmt: skip
        oid = len(self.states)
        self.states.append(
            TensorState(
                shape=tuple(spec.shape), dtype=spec.dtype, requires_grad=leaf.requires_grad, vertex=vertex,
                inference=False, version_class=vc, storage=sto, root=root, view_ok=not leaf.no_grad,
                is_view=has_views, fresh=False, overlap=overlap, cut=False,
                mode="no_grad" if leaf.no_grad else "grad",
            )
        )  # fmt: skip
        self.obj.append(oid)
        self.n_leaves += 1

    # -- ops
    def add_op(self, op: Op, step: int) -> None:
        k, mode = op.kind, op.mode
        ins = [self.s(j) for j in op.args]
        shape, dtype = probe_result(op, ins)
        if k in INPLACE_OPS:
            self._inplace(op, step, ins, shape)
            return
        a = ins[0]
        # differentiable value reads (position -> connected?)
        if k not in ALIASING_OPS:
            recorded = mode == "grad" and not is_int_dtype(dtype)
            for pos, s in enumerate(ins):
                self.reads[(step, pos)] = recorded and s.vertex is not None and s.vertex.live
        if k in VIEW_OPS:
            inference = a.inference
            if mode == "grad":
                rg = a.requires_grad
                if rg:  # recorded: torch materializes the input's grad_fn
                    a.lazy = False
                vertex = Vertex.op([a.vertex]) if rg else None
            elif a.inference:
                rg, vertex = False, None
            else:
                # A view made with grad disabled reports its view root's
                # requires_grad (issue #11390) but records no vertex.
                rg, vertex = self.states[a.root].requires_grad, None
                self.disabled_views.add(a.root)
            root = a.root if not a.inference else len(self.states)
            st_ = TensorState(
                shape=shape, dtype=dtype, requires_grad=rg, vertex=vertex, inference=inference,
                version_class=a.version_class, storage=a.storage, root=root,
                view_ok=a.view_ok and mode == "grad", is_view=True, fresh=False,
                overlap=a.overlap or k == "expand", cut=a.cut, mode=mode,
            )  # fmt: skip
        elif k in ("detach", "data"):
            st_ = TensorState(
                shape=shape, dtype=dtype, requires_grad=False, vertex=None, inference=a.inference,
                version_class=a.version_class if k == "detach" else self.new_class(), storage=a.storage,
                root=len(self.states), view_ok=True, is_view=False, fresh=False,
                overlap=a.overlap, cut=True, mode=mode,
            )  # fmt: skip
        else:
            differentiable = [
                s
                for s in ins
                if (s.dtype.is_floating_point or s.dtype.is_complex)
                and not (k == "to" and not (dtype.is_floating_point or dtype.is_complex))
            ]
            if mode == "grad":
                rg = any(s.requires_grad for s in differentiable)
                vertex = Vertex.op([s.vertex for s in differentiable]) if rg else None
                inference = False
                if rg:  # recorded: torch materializes every input's grad_fn
                    for s in ins:
                        s.lazy = False
            else:
                rg, vertex = False, None
                inference = mode == "inference"
            # matmul may return a view of an internal result (it folds batch
            # dims with reshape/view), so it is no root for in-place ops.
            st_ = TensorState(
                shape=shape, dtype=dtype, requires_grad=rg, vertex=vertex, inference=inference,
                version_class=self.new_class(), storage=self.new_class(), root=len(self.states),
                view_ok=True, is_view=False, fresh=k != "matmul", overlap=False, cut=False,
                mode=mode,
            )  # fmt: skip
        self.obj.append(self._new_obj(st_))

    def _inplace(self, op: Op, step: int, ins: list[TensorState], view_shape) -> None:
        t = ins[0]
        other = ins[1] if len(ins) > 1 else None
        if other is not None:
            self.reads[(step, 1)] = other.vertex is not None and other.vertex.live
        self.bumps.setdefault(t.version_class, []).append(step)
        root_id = t.root
        root = self.states[root_id]
        other_rg = other is not None and other.requires_grad and not is_int_dtype(other.dtype)
        new_rg = root.requires_grad or other_rg
        family = [
            i
            for i, s in enumerate(self.states)
            if s.root == root_id and not s.cut and s.view_ok and not s.inference
        ]
        view = op.params[0]
        target = self.obj[op.args[0]]
        through_view = bool(view) or target != root_id
        if view:
            # Taking the view sub-op (before the write) records t when t
            # requires grad, which a lazy t does: its grad_fn is materialized.
            t.lazy = False
        elif t.lazy:
            self.leaf_inplace_errors.append(step)
        if new_rg and other is not None:
            other.lazy = False  # recorded as an input of the in-place op
        was_rg = {i: self.states[i].requires_grad for i in family}
        if new_rg:
            # mul_ by a Python scalar saves it as a wrapped-number tensor
            # (invisible to saved_tensors_hooks, freed by backward).
            kind = "copyslices" if through_view else "op"
            if not through_view and op.kind == "mul_" and other is None:
                kind = "scalar-saved"
            new_root_vertex = Vertex.op(
                [root.vertex, other.vertex if other is not None else None], kind
            )
            for i in family:
                s = self.states[i]
                s.requires_grad = True
                s.vertex = new_root_vertex if i == root_id else Vertex.op([new_root_vertex])
                # A view that had no grad_fn gets none until something asks
                # for it; the written view itself is re-based (it gets one).
                if i != root_id and not was_rg[i] and not (i == target and not view):
                    s.lazy = True
        if view:
            rs = self.states[root_id]
            st_ = TensorState(
                shape=view_shape, dtype=t.dtype, requires_grad=rs.requires_grad,
                vertex=Vertex.op([rs.vertex]) if rs.requires_grad else None, inference=False,
                version_class=t.version_class, storage=t.storage, root=root_id, view_ok=True, is_view=True,
                fresh=False, overlap=t.overlap, cut=False, mode="grad",
            )  # fmt: skip
            self.obj.append(self._new_obj(st_))
        else:
            self.obj.append(self.obj[op.args[0]])

    # -- eligibility used by the strategy
    def inplace_root_ok(self, node: int) -> bool:
        """May ``node`` (or a view of it) be the target of an in-place op in grad mode?"""
        s = self.s(node)
        if node < self.n_leaves or s.cut or s.inference or s.overlap or not s.view_ok:
            return False
        if not (s.dtype.is_floating_point or s.dtype.is_complex):
            return False
        root = self.states[s.root]
        return root.fresh and s.root not in self.disabled_views

    def finish(self, graph: Graph) -> GraphModel:
        out = self.s(graph.output)
        self.reads[(len(graph.ops), 0)] = out.vertex is not None and out.vertex.live
        loss_vertex = Vertex.op([out.vertex]) if out.requires_grad else None
        lazy_at_retain = frozenset(o for o, s in enumerate(self.states) if s.lazy)
        if out.requires_grad:
            out.lazy = False  # the loss records the output
        return GraphModel(
            graph=graph, obj=self.obj, states=self.states, reads=self.reads, bumps=self.bumps,
            acc=self.acc, disabled_views=self.disabled_views, loss_vertex=loss_vertex,
            out_rg=out.requires_grad, leaf_inplace_errors=list(self.leaf_inplace_errors),
            lazy_at_retain=lazy_at_retain,
        )  # fmt: skip


def is_int_dtype(d: torch.dtype) -> bool:
    return not (d.is_floating_point or d.is_complex)


def _probe(s: TensorState) -> torch.Tensor:
    return torch.ones(s.shape, dtype=s.dtype)


def probe_result(op: Op, ins: list[TensorState]) -> tuple[tuple[int, ...], torch.dtype]:
    """Shape and dtype of ``op``'s result, computed on small CPU stand-ins of
    its inputs (forward shape/dtype rules only; nothing autograd). Raises
    ``RuntimeError`` where torch has no kernel (e.g. ComplexHalf)."""
    with torch.no_grad():
        out = apply_op(op, [_probe(s) for s in ins])
    return tuple(out.shape), out.dtype


def analyze(graph: Graph) -> GraphModel:
    """Static model of ``graph`` from its description alone (see the module docstring).

    Rules (PyTorch's documented autograd semantics, plus two pinned quirks):

    - in grad mode a result requires grad iff a floating/complex input does;
      ``detach()``, ``.data`` and ``.to(<integer dtype>)`` never do; a
      recorded op gets a vertex with edges to its inputs' vertices;
    - under ``no_grad``/``inference_mode`` non-view results do not require
      grad; *views* report their view root's ``requires_grad`` but get no
      vertex (issue #11390), so they are leaves whose ``.grad`` is never
      populated;
    - ``matmul`` may return a view of an internal tensor, so neither it nor
      its views are ever the target of a generated in-place op;
    - inference tensors: non-view results made in inference mode, and views
      (also ``detach``/``.data``) of inference tensors;
    - an in-place op bumps its target's version counter (shared by views and
      ``detach()``, not by ``.data``); when the target or the other operand
      requires grad, the target's view root gets a new vertex with edges to
      its old vertex and to the operand, and every view of that root made in
      grad mode is re-based on it;
    - lazy views (``TensorState.lazy``): a view made in grad mode while its root
      did not require grad has no grad_fn; when the root starts to require
      grad, the view reports ``requires_grad=True`` but torch gives it a
      grad_fn only when asked (C++ ``grad_fn()``: Python's ``.grad_fn`` /
      ``.is_leaf``, or any op autograd records with it as an input - views
      of it in grad mode, an in-place op writing through a view of it, the
      loss - but not ``detach()``, ``.data``, ``.to(<int>)``, ops under
      no_grad/inference_mode). An in-place op written directly into it is
      re-based (gets one). While lazy, torch's C++ ``is_leaf()`` is true for
      it: an in-place op directly on it raises "a leaf Variable that requires
      grad is being used in an in-place operation"
      (:attr:`GraphModel.leaf_inplace_errors`), ``.grad`` does not warn and
      ``retain_grad()`` is a no-op (:attr:`GraphModel.lazy_at_retain`).
    """
    m = Modeller()
    for leaf in graph.leaves:
        m.add_leaf(leaf)
    for step, op in enumerate(graph.ops):
        m.add_op(op, step)
    return m.finish(graph)
