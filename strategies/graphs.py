"""Generated autograd graphs: small programs over torch tensors.

A :class:`Graph` is a plain, frozen description of a short autograd program:

- *leaves*: :class:`Leaf` records, each a :class:`~strategies.tensors.TensorSpec`
  (floating or complex, possibly a strided view) with a ``requires_grad`` flag,
  optionally created under ``torch.no_grad()``;
- *ops*: :class:`Op` records referring to earlier nodes by index - elementwise
  unary and broadcasting binary ops, reductions, ``matmul``, views,
  multi-input ops whose backward routes the gradient to several inputs
  (``cat``, ``stack``, ``where``, out-of-place ``index_put``), multi-output
  ops whose outputs share one input (``split``, ``unbind``: two of their
  outputs added), copies
  (``clone``, ``detach``, ``.data``, ``copy_`` into a fresh buffer,
  ``.to(dtype)``), in-place ops on intermediates and on views of them
  (``mul_``, ``add_``, ``copy_`` into a slice), each run in ``grad``,
  ``no_grad`` or ``inference`` mode;
- an *output* node reduced to a real scalar by :func:`scalar_loss`, the nodes
  on which ``retain_grad()`` is called, and optionally a :class:`Mutation`
  applied after the forward pass through an alias (``.data``, ``detach()``,
  a view, or the tensor itself).

Node ``i`` is leaf ``i`` for ``i < len(leaves)``, else the result of
``ops[i - len(leaves)]``. ``repr(graph)`` is runnable Python rebuilding the
same graph; :meth:`Graph.to_program` renders it as a short script a reviewer
can paste. :meth:`Graph.run` executes it on real torch.

:func:`analyze` is a *static* model of what torch documents for such a
program - which node requires grad, which is a leaf, which autograd vertices
connect to which, which version counter and storage each node uses, which
reads are differentiable - computed from the description alone, never by
running torch autograd. The strategy uses it to draw only valid programs
(no in-place op on a leaf that requires grad, no in-place op on a view made
in no_grad mode, nor directly into a lazy view, ...); the properties compare
real torch against it. :func:`lazy_view_graphs` draws programs built to make
lazy views.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

from strategies._repr import params_repr, tuple_repr
from strategies.dtypes import COMPLEX, DIFFERENTIABLE, FLOATING, dtype_name
from strategies.tensors import VIEW_FUNCTIONS, TensorSpec, shapes, tensor_specs

__all__ = [
    "UNARY_OPS",
    "BINARY_OPS",
    "REDUCTION_OPS",
    "VIEW_OPS",
    "MULTI_INPUT_OPS",
    "MULTI_OUTPUT_OPS",
    "COPY_OPS",
    "INPLACE_OPS",
    "OP_KINDS",
    "GRAD_MODES",
    "ALIASES",
    "SAVES_RESULT",
    "SAVES_INPUT",
    "Leaf",
    "Op",
    "Mutation",
    "Graph",
    "GraphRun",
    "GraphModel",
    "Vertex",
    "analyze",
    "graphs",
    "silent_graphs",
    "lazy_view_graphs",
    "scalar_loss",
    "promote_dtype",
    "op_classes",
    "where_mask",
]

UNARY_OPS: tuple[str, ...] = ("exp", "sin", "tanh", "sigmoid", "relu", "abs", "neg", "square")
BINARY_OPS: tuple[str, ...] = ("add", "sub", "mul", "div", "maximum")
REDUCTION_OPS: tuple[str, ...] = ("sum", "mean", "amax")
#: Op kinds that view ``args[0]`` (params in :class:`Op`); not the view tuples an in-place op
#: or a :class:`Mutation` writes through (:func:`apply_view`), nor ``tensors.VIEW_KINDS``.
VIEW_OPS: tuple[str, ...] = ("slice", "transpose", "expand", "reshape", "unsqueeze", "select")
#: Ops of two tensors whose backward routes the gradient to both (each its
#: own part): ``torch.cat``, ``torch.stack``, ``torch.where`` with a fixed
#: mask, out-of-place ``index_put`` with distinct indices (the values'
#: gradient is the gathered upstream gradient, the target's the rest).
MULTI_INPUT_OPS: tuple[str, ...] = ("cat", "stack", "where", "index_put")
#: Ops with several outputs of one input, two of which the graph adds
#: (``split``/``unbind`` + ``add``): one backward node receives the gradient
#: of several outputs and scatters them into its input.
MULTI_OUTPUT_OPS: tuple[str, ...] = ("split", "unbind")
COPY_OPS: tuple[str, ...] = ("clone", "detach", "data", "copy_into", "to")
INPLACE_OPS: tuple[str, ...] = ("mul_", "add_", "copy_")
OP_KINDS: tuple[str, ...] = (
    UNARY_OPS
    + BINARY_OPS
    + REDUCTION_OPS
    + ("matmul",)
    + VIEW_OPS
    + MULTI_INPUT_OPS
    + MULTI_OUTPUT_OPS
    + COPY_OPS
    + INPLACE_OPS
)
#: The grad mode an :class:`Op` runs in: grad enabled, ``torch.no_grad()``,
#: ``torch.inference_mode()`` (not :data:`strategies.programs.STEP_MODES`, a program step's block).
GRAD_MODES: tuple[str, ...] = ("grad", "no_grad", "inference")
#: Aliases a post-forward :class:`Mutation` writes through.
ALIASES: tuple[str, ...] = ("data", "detach", "view", "self")
#: Unary ops whose derivative formula reads the op's *result* (derivatives.yaml:
#: ``exp: grad * result.conj()``, ``tanh``/``sigmoid``: ``*_backward(grad, result)``,
#: ``relu: threshold_backward(grad, result, 0)``).
SAVES_RESULT: frozenset[str] = frozenset({"exp", "tanh", "sigmoid", "relu"})
#: Unary ops whose derivative formula reads the op's *input* (``sin: grad * self.cos().conj()``,
#: ``abs: grad * self.sgn()``, ``square``/``pow: 2 * self``).
SAVES_INPUT: frozenset[str] = frozenset({"sin", "abs", "square"})

#: Leaf values: multiples of 1/8 in [-2, 2] without 0, exactly representable in
#: every floating dtype (float16/bfloat16 included), so a float64 replay starts
#: from the very same numbers, and away from the kinks of relu/abs at 0.
LEAF_VALUES: tuple[float, ...] = (
    0.5, -1.25, 1.5, -0.75, 0.25, 1.75, -1.5, 0.875, -0.375, 1.125, -1.875, 0.625, 2.0, -0.5,
)  # fmt: skip

INT_DTYPE = torch.int32


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Leaf:
    """A leaf of the graph: ``spec`` built with ``requires_grad``.

    ``no_grad=False``: ``spec.build(device, requires_grad=..., leaf=True)``, a
    user-created leaf (a view of a hidden base when the spec has views).
    ``no_grad=True``: ``spec.build(device, requires_grad=...)`` under
    ``torch.no_grad()``: the base requires grad and the spec's views are taken
    with grad disabled.
    """

    spec: TensorSpec
    requires_grad: bool = False
    no_grad: bool = False

    def __repr__(self) -> str:
        parts = [repr(self.spec)]
        if self.requires_grad:
            parts.append("requires_grad=True")
        if self.no_grad:
            parts.append("no_grad=True")
        return f"Leaf({', '.join(parts)})"


@dataclass(frozen=True)
class Op:
    """One operation. ``args`` are node indices; ``params`` depend on ``kind``.

    - unary / binary / ``matmul`` / ``clone`` / ``detach`` / ``data`` /
      ``copy_into``: no params;
    - ``sum``/``mean``/``amax``: ``(dim,)`` with ``dim`` an int or None (all dims);
    - ``cat``/``stack``: ``(dim,)``, two tensor args; ``where``: ``(phase,)``:
      ``torch.where(mask, args[0], args[1])`` with the fixed mask
      :func:`where_mask` of the broadcast shape; ``index_put``: ``(index,)``, a
      tuple of distinct indices into dim 0 of ``args[0]``, whose rows become
      ``args[1]`` (broadcast), out of place;
    - ``split``: ``(dim, size, i, j)``: ``c = args[0].split(size, dim)`` (``size``
      divides the dim), then ``c[i] + c[j]``; ``unbind``: ``(dim, i, j)``:
      ``u = args[0].unbind(dim)``, then ``u[i] + u[j]``;
    - ``slice``: ``(dim, start, step)``; ``transpose``: ``(d0, d1)``;
      ``expand``/``reshape``: ``(shape,)``; ``unsqueeze``: ``(dim,)``;
      ``select``: ``(dim, index)``; ``to``: ``(dtype,)``;
    - ``mul_``/``add_``/``copy_``: ``(view, scalar)``: the op is applied to
      ``target`` (``args[0]``) or to the view ``view`` of it (``()``, or
      ``('slice', dim, start, step)``, ``('select', dim, index)``,
      ``('transpose', d0, d1)``), with ``args[1]`` as the other operand, or
      the Python ``scalar`` when there is no ``args[1]``.
    """

    kind: str
    args: tuple[int, ...]
    params: tuple = ()
    mode: str = "grad"

    def __repr__(self) -> str:
        parts = [repr(self.kind), repr(self.args)]
        if self.params:
            parts.append(params_repr(self.params))
        if self.mode != "grad":
            parts.append(f"mode={self.mode!r}")
        return f"Op({', '.join(parts)})"


@dataclass(frozen=True)
class Mutation:
    """An in-place write after the forward pass, through an alias of ``node``.

    ``alias``: ``'data'`` (``node.data``), ``'detach'`` (``node.detach()``),
    ``'view'`` (``node`` viewed by ``view``) or ``'self'`` (``node`` itself);
    the last two run under ``torch.no_grad()`` (as an optimizer step does).
    ``method`` is ``'mul_'``, ``'add_'`` (with ``value``) or ``'zero_'``.
    """

    node: int
    alias: str
    method: str = "mul_"
    value: float = 2.0
    view: tuple = ()

    def __repr__(self) -> str:
        parts = [repr(self.node), repr(self.alias), repr(self.method)]
        if self.value != 2.0:
            parts.append(repr(self.value))
        if self.view:
            parts.append(f"view={self.view!r}")
        return f"Mutation({', '.join(parts)})"


@dataclass(frozen=True)
class Graph:
    """A generated autograd program (see the module docstring).

    ``repr`` is runnable given ``import torch`` and
    ``from strategies.graphs import Graph, Leaf, Op, Mutation`` and
    ``from strategies import TensorSpec``.
    """

    leaves: tuple[Leaf, ...]
    ops: tuple[Op, ...]
    output: int
    weighted: bool = True
    retain: tuple[int, ...] = ()
    mutation: Mutation | None = None

    def __repr__(self) -> str:
        parts = [f"leaves={tuple_repr(self.leaves)}", f"ops={tuple_repr(self.ops)}"]
        parts.append(f"output={self.output}")
        if not self.weighted:
            parts.append("weighted=False")
        if self.retain:
            parts.append(f"retain={self.retain!r}")
        if self.mutation is not None:
            parts.append(f"mutation={self.mutation!r}")
        return f"Graph({', '.join(parts)})"

    @property
    def n_nodes(self) -> int:
        return len(self.leaves) + len(self.ops)

    def op_of(self, node: int) -> Op | None:
        """The op producing ``node`` (None for a leaf)."""
        k = node - len(self.leaves)
        return self.ops[k] if k >= 0 else None

    def kinds(self) -> set[str]:
        """Op kinds used (``'leaf'`` excluded)."""
        return {op.kind for op in self.ops}

    # ------------------------------------------------------------------ execution

    def run(
        self,
        device: str | torch.device = "cpu",
        *,
        dtype_map: Callable[[torch.dtype], torch.dtype] | None = None,
        leaf_values: Sequence[torch.Tensor] | None = None,
        read: Callable[[int, int, torch.Tensor], torch.Tensor] | None = None,
        on_step: Callable[[int], None] | None = None,
        replay: bool = False,
        target: Callable[[int, torch.Tensor], None] | None = None,
    ) -> GraphRun:
        """Execute the forward pass and the loss on ``device``.

        Normal use: ``graph.run(device)``. The remaining arguments serve the
        oracles: ``dtype_map`` maps every floating/complex dtype (leaves and
        ``to`` targets); ``replay=True`` runs every op under ``no_grad`` on
        plain tensors (``leaf_values``, when given, replace the leaves);
        ``read(step, position, tensor)`` may substitute a value read by a
        non-aliasing op; ``on_step(step)`` is called before each op (the loss
        is step ``len(ops)``); ``target(step, tensor)`` is called with the
        tensor an in-place op is about to write (with ``replay`` only: it may
        change its values in place). The mutation and ``backward()`` are left
        to the caller (:meth:`GraphRun.mutate`).
        """
        if target is not None and not replay:
            raise ValueError("target= needs replay=True (it may write the tensor in place)")
        dmap = dtype_map or (lambda d: d)
        nodes: list[torch.Tensor] = []
        hidden: list[torch.Tensor | None] = []
        outer = torch.no_grad() if replay else contextlib.nullcontext()
        with outer:
            for i, leaf in enumerate(self.leaves):
                spec = leaf.spec
                if dmap(spec.dtype) != spec.dtype:
                    spec = dataclasses.replace(spec, dtype=dmap(spec.dtype))
                if replay:
                    t = leaf_values[i] if leaf_values is not None else spec.build(device)
                    hidden.append(None)
                elif leaf.no_grad:
                    with torch.no_grad():
                        t = spec.build(device, requires_grad=leaf.requires_grad)
                    hidden.append(t._base)
                else:
                    t = spec.build(device, requires_grad=leaf.requires_grad, leaf=True)
                    hidden.append(t._base)
                nodes.append(t)
            for step, op in enumerate(self.ops):
                if on_step is not None:
                    on_step(step)
                args = [nodes[j] for j in op.args]
                if target is not None and op.kind in INPLACE_OPS:
                    target(step, args[0])
                if read is not None and op.kind not in _ALIASING:
                    first = 1 if op.kind in INPLACE_OPS else 0
                    for pos in range(first, len(args)):
                        args[pos] = read(step, pos, args[pos])
                with _mode(op.mode, replay):
                    nodes.append(apply_op(op, args, dmap))
            for j in self.retain:
                if not replay:
                    nodes[j].retain_grad()
            if on_step is not None:
                on_step(len(self.ops))
            out = nodes[self.output]
            if read is not None:
                out = read(len(self.ops), 0, out)
            loss = scalar_loss(out, weighted=self.weighted)
        return GraphRun(self, nodes, hidden, loss, replay)

    def build(self, device: str | torch.device = "cpu") -> list[torch.Tensor]:
        """Run the forward pass on ``device``; returns every node's tensor."""
        return self.run(device).nodes

    def promoted(self) -> Graph:
        """The same program with every floating dtype float64 and every
        complex dtype complex128 (leaf values are exactly representable)."""

        def leaf(lf: Leaf) -> Leaf:
            return dataclasses.replace(
                lf, spec=dataclasses.replace(lf.spec, dtype=promote_dtype(lf.spec.dtype))
            )

        def op(o: Op) -> Op:
            if o.kind == "to":
                return dataclasses.replace(o, params=(promote_dtype(o.params[0]),))
            return o

        return dataclasses.replace(
            self, leaves=tuple(leaf(lf) for lf in self.leaves), ops=tuple(op(o) for o in self.ops)
        )

    # ------------------------------------------------------------------ rendering

    def to_program(self, device: str = "cpu") -> str:
        """A short Python script running this graph (forward, retain_grad,
        loss, mutation, backward); paste it to reproduce by hand."""
        lines = [
            "import torch",
            "from strategies import TensorSpec",
            "from strategies.graphs import scalar_loss, where_mask",
            f"device = {device!r}",
        ]
        blocks: list[tuple[str, list[str]]] = []

        def emit(mode: str, line: str) -> None:
            if blocks and blocks[-1][0] == mode:
                blocks[-1][1].append(line)
            else:
                blocks.append((mode, [line]))

        for i, leaf in enumerate(self.leaves):
            if leaf.no_grad:
                rg = ", requires_grad=True" if leaf.requires_grad else ""
                emit("no_grad", f"n{i} = {leaf.spec!r}.build(device{rg})")
            else:
                rg = ", requires_grad=True, leaf=True" if leaf.requires_grad else ""
                emit("grad", f"n{i} = {leaf.spec!r}.build(device{rg})")
        for k, op in enumerate(self.ops):
            emit(op.mode, f"n{len(self.leaves) + k} = {render_op(op)}")
        for mode, body in blocks:
            if mode == "grad":
                lines.extend(body)
            else:
                ctx = "torch.no_grad()" if mode == "no_grad" else "torch.inference_mode()"
                lines.append(f"with {ctx}:")
                lines.extend("    " + b for b in body)
        for j in self.retain:
            lines.append(f"n{j}.retain_grad()")
        w = "" if self.weighted else ", weighted=False"
        lines.append(f"loss = scalar_loss(n{self.output}{w})")
        m = self.mutation
        if m is not None:
            line = render_mutation(m)
            if m.alias in ("view", "self"):
                lines.append("with torch.no_grad():")
                line = "    " + line
            lines.append(line)
        lines.append("loss.backward()")
        return "\n".join(lines)


#: The class (the ``graph_op`` domain value, ``conformance/domains.toml``) of
#: each op kind that has one; copies and in-place ops have none.
OP_CLASS: dict[str, str] = {
    **dict.fromkeys(UNARY_OPS, "unary"),
    **dict.fromkeys((*BINARY_OPS, "matmul"), "binary"),
    **dict.fromkeys(REDUCTION_OPS, "reduction"),
    **dict.fromkeys(VIEW_OPS, "view"),
    **dict.fromkeys(MULTI_INPUT_OPS, "multi_input"),
    **dict.fromkeys(MULTI_OUTPUT_OPS, "multi_output"),
}


def op_classes(graph: Graph) -> frozenset[str]:
    """The kinds of operation ``graph`` contains, as ``graph_op`` domain
    values: ``unary``, ``binary`` (``matmul`` included), ``reduction``,
    ``view``, ``multi_input`` (:data:`MULTI_INPUT_OPS`), ``multi_output``
    (:data:`MULTI_OUTPUT_OPS`); copies and in-place ops add none."""
    return frozenset(OP_CLASS[op.kind] for op in graph.ops if op.kind in OP_CLASS)


# --------------------------------------------------------------------------- execution

_ALIASING = frozenset(VIEW_OPS) | {"detach", "data"}


def promote_dtype(d: torch.dtype) -> torch.dtype:
    """float16/bfloat16/float32/float64 -> float64; complex -> complex128; others unchanged."""
    if d.is_complex:
        return torch.complex128
    if d.is_floating_point:
        return torch.float64
    return d


def _mode(mode: str, replay: bool):
    if replay or mode == "grad":
        return contextlib.nullcontext()
    return torch.no_grad() if mode == "no_grad" else torch.inference_mode()


def _view(t: torch.Tensor, kind: str, params: tuple) -> torch.Tensor:
    """``t`` viewed by view kind ``kind`` (:data:`VIEW_OPS` but ``reshape``) with
    ``params`` as an :class:`Op` holds them (``slice``: ``(dim, start, step)``, to
    the end of ``dim``; ``expand``: ``(shape,)``), through ``tensors.VIEW_FUNCTIONS``."""
    if kind == "slice":
        dim, start, step = params
        return VIEW_FUNCTIONS["slice"](t, dim, start, None, step)
    return VIEW_FUNCTIONS[kind](t, *params)


def apply_view(t: torch.Tensor, view: tuple) -> torch.Tensor:
    """Apply the view an in-place op or a :class:`Mutation` writes through:
    ``('slice', dim, start, step)``, ``('select', dim, i)`` or
    ``('transpose', d0, d1)``; ``()`` returns ``t``."""
    if not view:
        return t
    if view[0] not in ("slice", "select", "transpose"):
        raise ValueError(f"unknown view {view!r}")
    return _view(t, view[0], view[1:])


def apply_op(op: Op, args: list[torch.Tensor], dmap=lambda d: d) -> torch.Tensor:
    """Run one op on real tensors (the same code :func:`render_op` prints)."""
    k, p = op.kind, op.params
    if k in UNARY_OPS:
        return getattr(torch, k)(args[0])
    if k in BINARY_OPS:
        return getattr(torch, k)(args[0], args[1])
    if k in REDUCTION_OPS:
        f = getattr(args[0], k)
        return f() if p[0] is None else f(p[0])
    if k == "matmul":
        return torch.matmul(args[0], args[1])
    if k == "cat":
        return torch.cat([args[0], args[1]], p[0])
    if k == "stack":
        return torch.stack([args[0], args[1]], p[0])
    if k == "where":
        shape = torch.broadcast_shapes(args[0].shape, args[1].shape)
        return torch.where(where_mask(shape, p[0], args[0].device), args[0], args[1])
    if k == "index_put":
        index = torch.tensor(p[0], dtype=torch.long, device=args[0].device)
        return args[0].index_put((index,), args[1])
    if k == "split":
        parts = args[0].split(p[1], p[0])
        return torch.add(parts[p[2]], parts[p[3]])
    if k == "unbind":
        parts = args[0].unbind(p[0])
        return torch.add(parts[p[1]], parts[p[2]])
    a = args[0]
    if k == "reshape":
        return a.reshape(p[0])
    if k in VIEW_OPS:
        return _view(a, k, p)
    if k == "clone":
        return a.clone()
    if k == "detach":
        return a.detach()
    if k == "data":
        return a.data
    if k == "copy_into":
        return torch.empty_like(a).copy_(a)
    if k == "to":
        return a.to(dmap(p[0]), copy=True)
    if k in INPLACE_OPS:
        target = apply_view(a, p[0])
        other = args[1] if len(args) > 1 else p[1]
        return getattr(target, k)(other)
    raise ValueError(f"unknown op kind {k!r}")


def where_mask(shape, phase: int, device="cpu") -> torch.Tensor:
    """The condition of a generated ``where``: ``True`` at the flat positions
    ``e`` of ``shape`` with ``(e + phase) % 2 == 0``."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, device=device) + phase) % 2 == 0).reshape(tuple(shape))


def _view_text(view: tuple) -> str:
    if not view:
        return ""
    kind = view[0]
    if kind == "slice":
        _, dim, start, step = view
        return "[" + ":, " * dim + f"{start or ''}::{step}" + "]"
    if kind == "select":
        return f".select({view[1]}, {view[2]})"
    return f".transpose({view[1]}, {view[2]})"


def render_op(op: Op) -> str:
    """The Python expression of ``op`` over nodes named ``n<i>``."""
    k, p = op.kind, op.params
    a = [f"n{j}" for j in op.args]
    if k in UNARY_OPS:
        return f"torch.{k}({a[0]})"
    if k in BINARY_OPS or k == "matmul":
        return f"torch.{k}({a[0]}, {a[1]})"
    if k in REDUCTION_OPS:
        return f"{a[0]}.{k}({'' if p[0] is None else p[0]})"
    if k in ("cat", "stack"):
        return f"torch.{k}([{a[0]}, {a[1]}], {p[0]})"
    if k == "where":
        shape = f"torch.broadcast_shapes({a[0]}.shape, {a[1]}.shape)"
        return f"torch.where(where_mask({shape}, {p[0]}, device), {a[0]}, {a[1]})"
    if k == "index_put":
        return f"{a[0]}.index_put((torch.tensor({list(p[0])!r}, device=device),), {a[1]})"
    if k == "split":
        return f"torch.add(*[{a[0]}.split({p[1]}, {p[0]})[i] for i in ({p[2]}, {p[3]})])"
    if k == "unbind":
        return f"torch.add(*[{a[0]}.unbind({p[0]})[i] for i in ({p[1]}, {p[2]})])"
    if k in ("slice",):
        return a[0] + _view_text(("slice", *p))
    if k == "transpose":
        return f"{a[0]}.transpose({p[0]}, {p[1]})"
    if k == "expand":
        return f"{a[0]}.expand{tuple(p[0])!r}" if len(p[0]) != 1 else f"{a[0]}.expand({p[0][0]})"
    if k == "reshape":
        return f"{a[0]}.reshape({tuple(p[0])!r})"
    if k == "unsqueeze":
        return f"{a[0]}.unsqueeze({p[0]})"
    if k == "select":
        return f"{a[0]}.select({p[0]}, {p[1]})"
    if k in ("clone", "detach"):
        return f"{a[0]}.{k}()"
    if k == "data":
        return f"{a[0]}.data"
    if k == "copy_into":
        return f"torch.empty_like({a[0]}).copy_({a[0]})"
    if k == "to":
        return f"{a[0]}.to(torch.{dtype_name(p[0])}, copy=True)"
    if k in INPLACE_OPS:
        other = a[1] if len(a) > 1 else repr(p[1])
        return f"{a[0]}{_view_text(p[0])}.{k}({other})"
    raise ValueError(f"unknown op kind {k!r}")


def render_mutation(m: Mutation) -> str:
    alias = {
        "data": f"n{m.node}.data",
        "detach": f"n{m.node}.detach()",
        "view": f"n{m.node}{_view_text(m.view)}",
        "self": f"n{m.node}",
    }[m.alias]
    arg = "" if m.method == "zero_" else repr(m.value)
    return f"{alias}.{m.method}({arg})"


def scalar_loss(t: torch.Tensor, weighted: bool = True) -> torch.Tensor:
    """Reduce ``t`` to a real scalar: ``(t * w).sum()`` with fixed weights
    ``w = 1, 2, 3, 1, 2, 3, ...`` (exact in every dtype) so that every element
    gets its own upstream gradient, or plain ``t.sum()``; the real part for
    complex ``t``."""
    if weighted:
        if t.dtype.is_complex:
            wdt = t.real.dtype
        elif t.dtype.is_floating_point:
            wdt = t.dtype
        else:
            wdt = torch.get_default_dtype()
        w = (torch.arange(t.numel(), device=t.device) % 3 + 1).to(wdt).reshape(t.shape)
        t = t * w
    s = t.sum()
    return s.real if s.is_complex() else s


@dataclass
class GraphRun:
    """The tensors of one execution: ``nodes[i]`` is node ``i``; ``hidden[i]``
    is leaf ``i``'s base tensor when the leaf is a view (else None)."""

    graph: Graph
    nodes: list[torch.Tensor]
    hidden: list[torch.Tensor | None]
    loss: torch.Tensor
    replay: bool = False

    def alias(self) -> torch.Tensor:
        """The alias the graph's mutation writes through (a new one per call)."""
        m = self.graph.mutation
        t = self.nodes[m.node]
        if m.alias == "data":
            return t.data
        if m.alias == "detach":
            return t.detach()
        if m.alias == "view":
            return apply_view(t, m.view)
        return t

    def mutate(self) -> None:
        """Apply the graph's :class:`Mutation` (no-op when it has none)."""
        m = self.graph.mutation
        if m is None:
            return
        ctx = (
            torch.no_grad()
            if m.alias in ("view", "self") or self.replay
            else contextlib.nullcontext()
        )
        with ctx:
            a = self.alias()
            if m.method == "zero_":
                a.zero_()
            else:
                getattr(a, m.method)(m.value)


# --------------------------------------------------------------------------- static model


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
class TState:
    """Modelled state of one tensor object."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    rg: bool
    vertex: Vertex | None
    inference: bool
    vc: int  # version-counter class
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
    states: list[TState]
    reads: dict[tuple[int, int], bool]
    bumps: dict[int, list[int]]
    acc: list[Vertex | None]
    disabled_views: set[int]  # roots that have a view made in no_grad/inference
    loss_vertex: Vertex | None = None
    out_rg: bool = False
    #: Steps whose in-place op torch refuses with "a leaf Variable that
    #: requires grad is being used in an in-place operation": the op writes
    #: directly into a lazy view (:attr:`TState.lazy`). The strategy never
    #: draws one; hand-written graphs may have them.
    leaf_inplace_errors: list[int] = field(default_factory=list)
    #: Objects that were lazy when ``retain_grad()`` ran (after the ops,
    #: before the loss): ``retain_grad()`` is a silent no-op on them.
    lazy_at_retain: frozenset[int] = frozenset()

    def state(self, node: int) -> TState:
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
        return self.state(m.node).vc

    def real_leaves(self) -> list[int]:
        """Leaves with a gradient accumulator (user-created, requiring grad)."""
        return [i for i, a in enumerate(self.acc) if a is not None]

    def lazy(self, node: int) -> bool:
        """Is ``node`` a lazy view (:attr:`TState.lazy`) once the graph ran,
        loss included (the loss records the output, so it is never lazy)?"""
        return self.state(node).lazy


class _Modeller:
    """Incremental static model; used by :func:`analyze` and by the strategy."""

    def __init__(self) -> None:
        self.states: list[TState] = []
        self.obj: list[int] = []
        self.reads: dict[tuple[int, int], bool] = {}
        self.bumps: dict[int, list[int]] = {}
        self.acc: list[Vertex | None] = []
        self.disabled_views: set[int] = set()
        self.leaf_inplace_errors: list[int] = []
        self._ids = itertools.count()
        self.n_leaves = 0

    # -- helpers
    def s(self, node: int) -> TState:
        return self.states[self.obj[node]]

    def _new_obj(self, st_: TState) -> int:
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
                TState(
                    shape=tuple(spec.base_shape), dtype=spec.dtype,
                    rg=leaf.no_grad and leaf.requires_grad, vertex=None, inference=False,
                    vc=vc, storage=sto, root=root, view_ok=True, is_view=False, fresh=False,
                    overlap=False, cut=False, mode="grad",
                )
            )  # fmt: skip
        oid = len(self.states)
        self.states.append(
            TState(
                shape=tuple(spec.shape), dtype=spec.dtype, rg=leaf.requires_grad, vertex=vertex,
                inference=False, vc=vc, storage=sto, root=root, view_ok=not leaf.no_grad,
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
        shape, dtype = _probe_result(op, ins)
        if k in INPLACE_OPS:
            self._inplace(op, step, ins, shape)
            return
        a = ins[0]
        # differentiable value reads (position -> connected?)
        if k not in _ALIASING:
            recorded = mode == "grad" and not _is_int(dtype)
            for pos, s in enumerate(ins):
                self.reads[(step, pos)] = recorded and s.vertex is not None and s.vertex.live
        if k in VIEW_OPS:
            inference = a.inference
            if mode == "grad":
                rg = a.rg
                if rg:  # recorded: torch materializes the input's grad_fn
                    a.lazy = False
                vertex = Vertex.op([a.vertex]) if rg else None
            elif a.inference:
                rg, vertex = False, None
            else:
                # A view made with grad disabled reports its view root's
                # requires_grad (issue #11390) but records no vertex.
                rg, vertex = self.states[a.root].rg, None
                self.disabled_views.add(a.root)
            root = a.root if not a.inference else len(self.states)
            st_ = TState(
                shape=shape, dtype=dtype, rg=rg, vertex=vertex, inference=inference,
                vc=a.vc, storage=a.storage, root=root,
                view_ok=a.view_ok and mode == "grad", is_view=True, fresh=False,
                overlap=a.overlap or k == "expand", cut=a.cut, mode=mode,
            )  # fmt: skip
        elif k in ("detach", "data"):
            st_ = TState(
                shape=shape, dtype=dtype, rg=False, vertex=None, inference=a.inference,
                vc=a.vc if k == "detach" else self.new_class(), storage=a.storage,
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
                rg = any(s.rg for s in differentiable)
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
            st_ = TState(
                shape=shape, dtype=dtype, rg=rg, vertex=vertex, inference=inference,
                vc=self.new_class(), storage=self.new_class(), root=len(self.states),
                view_ok=True, is_view=False, fresh=k != "matmul", overlap=False, cut=False,
                mode=mode,
            )  # fmt: skip
        self.obj.append(self._new_obj(st_))

    def _inplace(self, op: Op, step: int, ins: list[TState], view_shape) -> None:
        t = ins[0]
        other = ins[1] if len(ins) > 1 else None
        if other is not None:
            self.reads[(step, 1)] = other.vertex is not None and other.vertex.live
        self.bumps.setdefault(t.vc, []).append(step)
        root_id = t.root
        root = self.states[root_id]
        other_rg = other is not None and other.rg and not _is_int(other.dtype)
        new_rg = root.rg or other_rg
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
        was_rg = {i: self.states[i].rg for i in family}
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
                s.rg = True
                s.vertex = new_root_vertex if i == root_id else Vertex.op([new_root_vertex])
                # A view that had no grad_fn gets none until something asks
                # for it; the written view itself is re-based (it gets one).
                if i != root_id and not was_rg[i] and not (i == target and not view):
                    s.lazy = True
        if view:
            rs = self.states[root_id]
            st_ = TState(
                shape=view_shape, dtype=t.dtype, rg=rs.rg,
                vertex=Vertex.op([rs.vertex]) if rs.rg else None, inference=False,
                vc=t.vc, storage=t.storage, root=root_id, view_ok=True, is_view=True,
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
        loss_vertex = Vertex.op([out.vertex]) if out.rg else None
        lazy_at_retain = frozenset(o for o, s in enumerate(self.states) if s.lazy)
        if out.rg:
            out.lazy = False  # the loss records the output
        return GraphModel(
            graph=graph, obj=self.obj, states=self.states, reads=self.reads, bumps=self.bumps,
            acc=self.acc, disabled_views=self.disabled_views, loss_vertex=loss_vertex,
            out_rg=out.rg, leaf_inplace_errors=list(self.leaf_inplace_errors),
            lazy_at_retain=lazy_at_retain,
        )  # fmt: skip


def _is_int(d: torch.dtype) -> bool:
    return not (d.is_floating_point or d.is_complex)


def _probe(s: TState) -> torch.Tensor:
    return torch.ones(s.shape, dtype=s.dtype)


def _probe_result(op: Op, ins: list[TState]) -> tuple[tuple[int, ...], torch.dtype]:
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
    - lazy views (``TState.lazy``): a view made in grad mode while its root
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
    m = _Modeller()
    for leaf in graph.leaves:
        m.add_leaf(leaf)
    for step, op in enumerate(graph.ops):
        m.add_op(op, step)
    return m.finish(graph)


# --------------------------------------------------------------------------- strategies


@functools.cache
def _leaf_specs(dtypes: tuple, views) -> st.SearchStrategy[TensorSpec]:
    return tensor_specs(
        dtype=list(dtypes),
        shape=shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
        views=views,
        max_views=2,
    )


_REAL_VALUE = st.sampled_from(LEAF_VALUES)
_COMPLEX_VALUE = st.builds(complex, _REAL_VALUE, _REAL_VALUE)


@functools.cache
def _leaf_values(dtype: torch.dtype, n: int):
    part = _COMPLEX_VALUE if dtype.is_complex else _REAL_VALUE
    return st.lists(part, min_size=n, max_size=n)


@st.composite
def leaves(draw, *, dtypes: Sequence[torch.dtype] = DIFFERENTIABLE, requires_grad=None,
           no_grad: bool = True, views: bool | Sequence[str] = True) -> Leaf:  # fmt: skip
    """One :class:`Leaf`: a small generated tensor spec (1-3 dims of sides 1-3,
    views included; zero-size tensors are left out because ``amax`` has no
    identity and the graphs are about autograd, not empty reductions), with
    storage values from :data:`LEAF_VALUES`."""
    spec = draw(_leaf_specs(tuple(dtypes), views if isinstance(views, bool) else tuple(views)))
    values = draw(_leaf_values(spec.dtype, len(spec.storage)))
    spec = dataclasses.replace(spec, storage=tuple(values))
    rg = draw(st.sampled_from([True, True, False])) if requires_grad is None else requires_grad
    ng = draw(st.sampled_from([False, False, False, True])) if no_grad else False
    return Leaf(spec, requires_grad=rg, no_grad=ng)


def _pick(draw, candidates: Sequence[int]) -> int:
    """Pick a node, shrinking towards the most recent one."""
    cands = sorted(candidates, reverse=True)
    return cands[draw(st.integers(0, len(cands) - 1))]


def _broadcasts_to(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    if len(src) > len(dst):
        return False
    return all(a in (1, b) for a, b in zip(reversed(src), reversed(dst), strict=False))


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b), strict=False))


def _matmul_ok(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    if not a or not b:
        return False
    k_a = a[-1]
    k_b = b[0] if len(b) == 1 else b[-2]
    if k_a != k_b:
        return False
    if len(a) > 2 or len(b) > 2:
        ba = a[:-2] if len(a) >= 2 else ()
        bb = b[:-2] if len(b) >= 2 else ()
        return _broadcastable(ba, bb)
    return True


def _draw_view(draw, shape: tuple[int, ...], kinds=("slice", "select", "transpose")) -> tuple:
    """A view sub-op for an in-place target or a mutation alias."""
    usable = [
        k for k in kinds if (k != "transpose" and shape) or (k == "transpose" and len(shape) >= 2)
    ]
    if not usable:
        return ()
    kind = draw(st.sampled_from(usable))
    if kind == "slice":
        dim = draw(st.integers(0, len(shape) - 1))
        start = draw(st.integers(0, shape[dim] - 1))
        return ("slice", dim, start, draw(st.sampled_from([2, 1, 3])))
    if kind == "select":
        dim = draw(st.integers(0, len(shape) - 1))
        return ("select", dim, draw(st.integers(0, shape[dim] - 1)))
    d0, d1 = draw(st.permutations(range(len(shape))))[:2]
    return ("transpose", min(d0, d1), max(d0, d1))


def _view_shape(shape: tuple[int, ...], view: tuple) -> tuple[int, ...]:
    return tuple(apply_view(torch.empty(shape), view).shape)


MAX_DIMS = 4


def _draw_op(draw, m: _Modeller, mode: str, allow_inplace: bool) -> Op | None:
    op = _draw_op_unchecked(draw, m, mode, allow_inplace)
    return op if op is not None and _has_kernel(op, m) else None


def _has_kernel(op: Op, m: _Modeller) -> bool:
    """Can torch run ``op`` on the modelled inputs (a kernel for the dtype
    combination, and not the experimental complex32 result)?"""
    try:
        with warnings.catch_warnings():  # "ComplexHalf support is experimental"
            warnings.simplefilter("ignore")
            _, dtype = _probe_result(op, [m.s(j) for j in op.args])
    except RuntimeError:  # no kernel for this dtype combination
        return False
    return dtype != torch.complex32  # e.g. float16 tensor * complex 0-d: experimental dtype


def _draw_view_op(
    draw, a: int, shape: tuple[int, ...], mode: str, expand: bool = True
) -> Op | None:
    """A view op of node ``a`` (of ``shape``), or None when none applies
    (``expand=False``: never ``expand``, so the view does not overlap)."""
    nd = len(shape)
    kinds = ["slice", "select"] if nd else []
    if nd >= 2:
        kinds.append("transpose")
    if nd < MAX_DIMS:
        kinds += ["expand", "unsqueeze", "reshape"] if expand else ["unsqueeze", "reshape"]
    elif 1 in shape:
        kinds.append("reshape")
    if not kinds:
        return None
    k = draw(st.sampled_from(kinds))
    if k == "slice":
        dim = draw(st.integers(0, nd - 1))
        start = draw(st.integers(0, shape[dim] - 1))
        return Op(k, (a,), (dim, start, draw(st.sampled_from([2, 3, 1]))), mode)
    if k == "select":
        dim = draw(st.integers(0, nd - 1))
        return Op(k, (a,), (dim, draw(st.integers(0, shape[dim] - 1))), mode)
    if k == "transpose":
        d0, d1 = draw(st.permutations(range(nd)))[:2]
        return Op(k, (a,), (min(d0, d1), max(d0, d1)), mode)
    if k == "unsqueeze":
        return Op(k, (a,), (draw(st.integers(0, nd)),), mode)
    if k == "expand":
        ones = [i for i, s in enumerate(shape) if s == 1]
        if ones and draw(st.booleans()):
            i = draw(st.sampled_from(ones))
            new = list(shape)
            new[i] = draw(st.sampled_from([2, 3]))
            return Op(k, (a,), (tuple(new),), mode)
        return Op(k, (a,), ((draw(st.sampled_from([2, 3])), *shape),), mode)
    # reshape: only inserting or removing size-1 dims, which is a view for
    # any strides (a general reshape may copy, and torch says not to rely
    # on which, so its aliasing could not be modelled).
    ones = [i for i, s in enumerate(shape) if s == 1]
    if ones and (nd >= MAX_DIMS or draw(st.booleans())):
        i = draw(st.sampled_from(ones))
        new = shape[:i] + shape[i + 1 :]
    else:
        i = draw(st.integers(0, nd))
        new = shape[:i] + (1,) + shape[i:]
    return Op(k, (a,), (tuple(new),), mode)


def _draw_op_unchecked(draw, m: _Modeller, mode: str, allow_inplace: bool) -> Op | None:
    n = len(m.obj)
    nodes = list(range(n))
    states = [m.s(i) for i in nodes]

    def is_int(i):
        return _is_int(states[i].dtype)

    def usable_in_grad(idxs: Sequence[int], kind: str) -> bool:
        """Outside inference mode an inference tensor may only meet a tensor
        requiring grad in an op that saves nothing (add/sub)."""
        if mode == "inference":
            return True
        if any(states[i].inference for i in idxs) and any(states[i].rg for i in idxs):
            return mode == "no_grad" or kind in ("add", "sub")
        return True

    cats = ["unary", "binary", "reduce", "view", "copy", "unary", "binary", "view", "matmul"]
    cats += ["multi_input", "multi_output"]
    if allow_inplace and mode == "grad":
        cats += ["inplace", "inplace", "inplace"]
    cat = draw(st.sampled_from(cats))
    if cat == "unary":
        a = _pick(draw, nodes)
        kinds = [k for k in UNARY_OPS if not (k == "relu" and states[a].dtype.is_complex)]
        k = draw(st.sampled_from(kinds))
        if not usable_in_grad([a], k):
            return None
        return Op(k, (a,), (), mode)
    if cat == "binary":
        a = _pick(draw, nodes)
        partners = [b for b in nodes if _broadcastable(states[a].shape, states[b].shape)]
        b = _pick(draw, partners)
        if draw(st.booleans()):
            a, b = b, a
        cplx = states[a].dtype.is_complex or states[b].dtype.is_complex
        kinds = [k for k in BINARY_OPS if not (k == "maximum" and cplx)]
        k = draw(st.sampled_from(kinds))
        if not usable_in_grad([a, b], k):
            return None
        return Op(k, (a, b), (), mode)
    if cat == "reduce":
        a = _pick(draw, nodes)
        s = states[a]
        kinds = [
            k
            for k in REDUCTION_OPS
            if not (k == "mean" and is_int(a)) and not (k == "amax" and s.dtype.is_complex)
        ]
        k = draw(st.sampled_from(kinds))
        dim = draw(st.sampled_from([None, *range(len(s.shape))]))
        if not usable_in_grad([a], k):
            return None
        return Op(k, (a,), (dim,), mode)
    if cat == "matmul":
        pairs = [
            (a, b)
            for a in nodes
            for b in nodes
            if states[a].dtype == states[b].dtype
            and not is_int(a)
            and _matmul_ok(states[a].shape, states[b].shape)
        ]
        if not pairs:
            return None
        a, b = pairs[draw(st.integers(0, len(pairs) - 1))]
        if not usable_in_grad([a, b], "matmul"):
            return None
        return Op("matmul", (a, b), (), mode)
    if cat == "view":
        a = _pick(draw, nodes)
        return _draw_view_op(draw, a, states[a].shape, mode)
    if cat == "multi_input":
        return _draw_multi_input_op(draw, states, mode, usable_in_grad)
    if cat == "multi_output":
        a = _pick(draw, nodes)
        shape = states[a].shape
        if not shape or not usable_in_grad([a], "multi_output"):
            return None
        dim = draw(st.integers(0, len(shape) - 1))
        if draw(st.booleans()):
            n = shape[dim]
            i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
            return Op("unbind", (a,), (dim, i, j), mode)
        size = draw(st.sampled_from([d for d in range(1, shape[dim] + 1) if shape[dim] % d == 0]))
        n = shape[dim] // size
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        return Op("split", (a,), (dim, size, i, j), mode)
    if cat == "copy":
        a = _pick(draw, nodes)
        k = draw(st.sampled_from(COPY_OPS))
        if k == "to":
            d = states[a].dtype
            if d.is_complex:
                targets = [c for c in COMPLEX if c != d]
            else:
                # the integer cast cuts the graph: drawn as often as all complex targets
                targets = [c for c in FLOATING + COMPLEX + (INT_DTYPE, INT_DTYPE) if c != d]
                if _is_int(d):
                    targets = list(FLOATING)
            return Op(k, (a,), (draw(st.sampled_from(targets)),), mode)
        return Op(k, (a,), (), mode)
    # in-place (grad mode only)
    return _draw_inplace_op(draw, m, nodes, mode)


def _draw_multi_input_op(draw, states: list[TState], mode: str, usable_in_grad) -> Op | None:
    """A ``cat``, ``stack``, ``where`` or ``index_put`` of two nodes whose
    shapes fit (None when the drawn kind has no fitting pair)."""
    nodes = range(len(states))
    k = draw(st.sampled_from(MULTI_INPUT_OPS))
    sh = [s.shape for s in states]
    if k == "cat":
        pairs = [
            (a, b, d)
            for a in nodes
            for b in nodes
            for d in range(len(sh[a]))
            if len(sh[a]) == len(sh[b])
            and all(x == y for e, (x, y) in enumerate(zip(sh[a], sh[b], strict=True)) if e != d)
        ]
    elif k == "stack":
        pairs = [
            (a, b, d)
            for a in nodes
            for b in nodes
            if sh[a] == sh[b] and len(sh[a]) < MAX_DIMS
            for d in range(len(sh[a]) + 1)
        ]
    elif k == "where":
        # Both real or both complex: torch.where's backward does not take the
        # real part of a complex gradient for a real input (2.13 raises
        # "Expected isFloatingType(grad.scalar_type()) || (input_is_complex ==
        # grad_is_complex)", the family of pytorch#76785), which is no claim of
        # this area; cat and stack handle it.
        pairs = [
            (a, b, p)
            for a in nodes
            for b in nodes
            if _broadcastable(sh[a], sh[b])
            and states[a].dtype.is_complex == states[b].dtype.is_complex
            for p in (0, 1)
        ]
    else:
        pairs = [
            (a, b, None)
            for a in nodes
            for b in nodes
            if sh[a]
            and states[a].dtype == states[b].dtype
            and len(sh[b]) <= len(sh[a])
            and _broadcasts_to(sh[b], (1, *sh[a][1:]))
        ]
    if not pairs:
        return None
    a, b, p = pairs[draw(st.integers(0, len(pairs) - 1))]
    if not usable_in_grad([a, b], k):
        return None
    if k == "index_put":
        rows = draw(st.permutations(range(sh[a][0])))
        p = tuple(rows[: draw(st.integers(1, len(rows)))])
    return Op(k, (a, b), (p,), mode)


def _draw_inplace_op(
    draw,
    m: _Modeller,
    nodes: Sequence[int],
    mode: str,
    operand: Callable[[int], bool] | None = None,
) -> Op | None:
    """An in-place op on a node of ``nodes`` (or a view sub-op of it) with an
    operand from ``nodes`` (restricted to ``operand(o)`` when given: then
    never a Python scalar), or None when the draw finds none.

    Never directly into a lazy view (torch refuses it:
    :attr:`GraphModel.leaf_inplace_errors`); through a view sub-op of one is
    fine (taking the sub-view materializes its grad_fn), so a lazy target
    always gets one, and a 0-d lazy view (no sub-view) is no target."""
    states = [m.s(i) for i in range(len(m.obj))]
    targets = [
        i for i in nodes if m.inplace_root_ok(i) and not (states[i].lazy and not states[i].shape)
    ]
    if not targets:
        return None
    t = _pick(draw, targets)
    ts = states[t]
    k = draw(st.sampled_from(INPLACE_OPS))
    sub = k == "copy_" or ts.lazy or draw(st.booleans())
    view = _draw_view(draw, ts.shape) if sub else ()
    if k == "copy_" and not view:
        return None
    vshape = _view_shape(ts.shape, view)
    others = [
        o
        for o in range(len(m.obj))
        if _broadcasts_to(states[o].shape, vshape)
        and states[o].storage != ts.storage
        and not states[o].inference
        and (
            torch.can_cast(torch.promote_types(ts.dtype, states[o].dtype), ts.dtype)
            if k != "copy_"
            else not (states[o].dtype.is_complex and not ts.dtype.is_complex)
        )
        and (operand is None or operand(o))
    ]
    if k != "copy_" and operand is None and (not others or draw(st.booleans())):
        scalar = draw(st.sampled_from([2.0, -1.5, 0.5]))
        return Op(k, (t,), (view, scalar), mode)
    if not others:
        return None
    return Op(k, (t, _pick(draw, others)), (view, None), mode)


@st.composite
def graphs(
    draw,
    *,
    min_ops: int = 1,
    max_ops: int = 12,
    max_leaves: int = 3,
    dtypes: Sequence[torch.dtype] = DIFFERENTIABLE,
    regions: bool = True,
    inplace: bool = True,
    mutation: bool = False,
    aliases: Sequence[str] = ALIASES,
    retain: bool = True,
    requires_grad: bool | None = None,
    need: Callable[[GraphModel], bool] | None = None,
) -> Graph:
    """Strategy for :class:`Graph`.

    Args:
        min_ops, max_ops: number of ops (1-12 by default).
        max_leaves: 1..max_leaves leaves, drawn by :func:`leaves`.
        dtypes: leaf dtypes (floating and complex by default; ``.to`` may
            introduce others, int32 included).
        regions: allow ops under ``no_grad`` / ``inference_mode`` (the last op
            always runs in grad mode).
        inplace: allow in-place ops (on intermediates, through views of them).
        mutation: add a post-forward :class:`Mutation` through an alias.
        aliases: the aliases the mutation may write through (:data:`ALIASES`).
        retain: call ``retain_grad()`` on some non-leaf nodes.
        requires_grad: force every leaf's flag (None: drawn).
        need: keep only graphs whose :class:`GraphModel` satisfies it.
    """
    n_leaves = draw(st.integers(1, max_leaves))
    lv = tuple(
        draw(leaves(dtypes=dtypes, requires_grad=requires_grad, no_grad=regions))
        for _ in range(n_leaves)
    )
    m = _Modeller()
    for leaf in lv:
        m.add_leaf(leaf)
    n_ops = draw(st.integers(min_ops, max_ops))
    ops: list[Op] = []
    mode = "grad"
    attempts = 0
    while len(ops) < n_ops and attempts < 4 * n_ops + 8:
        attempts += 1
        last = len(ops) == n_ops - 1
        if regions and not last:
            if mode == "grad":
                mode = draw(st.sampled_from(["grad"] * 4 + ["no_grad", "inference"]))
            else:
                mode = draw(st.sampled_from([mode, mode, "grad"]))
        else:
            mode = "grad"
        op = _draw_op(draw, m, mode, inplace)
        if op is None:
            continue
        m.add_op(op, len(ops))
        ops.append(op)
    if not ops:
        from hypothesis import reject

        reject()
    output = len(lv) + len(ops) - 1
    weighted = draw(st.sampled_from([True, True, False]))
    retained: tuple[int, ...] = ()
    if retain:
        # Not on lazy views: retain_grad() is a silent no-op on them
        # (GraphModel.lazy_at_retain; pinned by graphs.lazy-view-grad-fn).
        cands = sorted(
            {
                i
                for i in range(len(lv), len(lv) + len(ops))
                if not m.s(i).is_leaf and m.s(i).rg and not m.s(i).lazy
            }
        )
        if cands:
            retained = tuple(
                sorted(draw(st.lists(st.sampled_from(cands), max_size=2, unique=True)))
            )
    mut = None
    if mutation:
        mut = draw(_mutations(m, tuple(aliases)))
    g = Graph(tuple(lv), tuple(ops), output, weighted, retained, mut)
    if need is not None:
        from hypothesis import assume

        assume(need(analyze(g)))
    return g


@st.composite
def lazy_view_graphs(
    draw, *, dtypes: Sequence[torch.dtype] = DIFFERENTIABLE, max_views: int = 3, max_tail: int = 4
) -> Graph:
    """Strategy for graphs that make lazy views (:attr:`TState.lazy`) by
    construction, which :func:`graphs` does only about once in a thousand:

    1. leaf ``n0`` (not requiring grad), leaf ``n1`` (0-d, same dtype,
       requiring grad) and possibly a third leaf drawn by :func:`leaves`;
    2. a unary op on ``n0`` in grad mode: a fresh root not requiring grad;
    3. 1..``max_views`` views, in grad mode, of the root or of each other
       (the first one not ``expand``: it does not overlap);
    4. an in-place op on the root or one of those views (directly, or
       through a view sub-op) whose operand requires grad: the root starts
       to require grad, and every view of step 3 it did not write directly
       becomes lazy;
    5. 0..``max_tail`` ops drawn as :func:`graphs` draws grad-mode ops: they
       may read some views (materializing their grad_fn), write through
       them, or leave them alone.

    The output is the last node; nothing is retained, no mutation."""
    d = draw(st.sampled_from(list(dtypes)))
    lv = [draw(leaves(dtypes=(d,), requires_grad=False, no_grad=False))]
    value = draw(_COMPLEX_VALUE if d.is_complex else _REAL_VALUE)
    lv.append(Leaf(TensorSpec(dtype=d, base_shape=(), storage=(value,)), requires_grad=True))
    if draw(st.booleans()):
        lv.append(draw(leaves(dtypes=dtypes, no_grad=False)))
    m = _Modeller()
    for leaf in lv:
        m.add_leaf(leaf)
    ops: list[Op] = []

    def add(op: Op | None) -> bool:
        if op is None:
            return False
        m.add_op(op, len(ops))
        ops.append(op)
        return True

    unary = [k for k in UNARY_OPS if not (k == "relu" and d.is_complex)]
    add(Op(draw(st.sampled_from(unary)), (0,)))
    root = len(lv)
    family = [root]
    for k in range(draw(st.integers(1, max_views))):
        a = _pick(draw, family)
        # the first view never overlaps: a valid in-place target, and a probe
        if add(_draw_view_op(draw, a, m.s(a).shape, "grad", expand=k > 0)):
            family.append(len(lv) + len(ops) - 1)
    for _ in range(4):  # a few tries: a drawn combination may have no kernel
        op = _draw_inplace_op(draw, m, family, "grad", operand=lambda o: m.s(o).rg)
        if op is not None and _has_kernel(op, m):
            add(op)
            break
    for _ in range(draw(st.integers(0, max_tail))):
        add(_draw_op(draw, m, "grad", True))
    return Graph(tuple(lv), tuple(ops), len(lv) + len(ops) - 1)


@st.composite
def _mutations(draw, m: _Modeller, aliases: tuple[str, ...] = ALIASES) -> Mutation | None:
    nodes = [
        i
        for i in range(len(m.obj))
        if not m.s(i).inference and not m.s(i).overlap and m.s(i).dtype in DIFFERENTIABLE
    ]
    if not nodes:
        return None
    node = _pick(draw, nodes)
    alias = draw(st.sampled_from(aliases))
    view = ()
    if alias == "view":
        view = _draw_view(draw, m.s(node).shape)
        if not view:
            return None
    method = draw(st.sampled_from(["mul_", "add_", "zero_"]))
    value = draw(st.sampled_from([2.0, -1.0, 0.5])) if method != "zero_" else 2.0
    return Mutation(node, alias, method, value, view)


@st.composite
def silent_graphs(
    draw, *, dtypes: Sequence[torch.dtype] = DIFFERENTIABLE, max_ops: int = 6
) -> Graph:
    """A chain ``x -> f1 -> ... -> fk`` of unary ops on one leaf requiring
    grad, then a write through ``.data`` of one node of the chain after the
    forward pass (the setting of the 0.4 migration guide's warning)."""
    # No expanded leaf: a write through .data of an overlapping tensor raises.
    views = ("offset", "slice", "permute", "unsqueeze", "select")
    leaf = draw(leaves(dtypes=dtypes, requires_grad=True, no_grad=False, views=views))
    k = draw(st.integers(1, max_ops))
    ops = []
    for i in range(k):
        kinds = [u for u in UNARY_OPS if not (u == "relu" and leaf.spec.dtype.is_complex)]
        ops.append(Op(draw(st.sampled_from(kinds)), (i,)))
    node = draw(st.integers(0, k))
    method = draw(st.sampled_from(["mul_", "add_", "zero_"]))
    value = draw(st.sampled_from([2.0, -1.0, 0.5])) if method != "zero_" else 2.0
    return Graph(
        (leaf,), tuple(ops), k, draw(st.booleans()), (), Mutation(node, "data", method, value)
    )
