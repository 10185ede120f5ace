"""Generated autograd programs as plain records: the op tables, :class:`Leaf`,
:class:`Op`, :class:`Mutation` and :class:`Graph` (a short autograd program
whose ``repr`` is runnable Python), the executor that runs one on real torch
(:meth:`Graph.run`, :func:`apply_op`) and the renderer that prints it as a
script (:meth:`Graph.to_program`).

The strategies that draw them are :mod:`strategies.graphs`; the static model
of what torch documents for them is :mod:`conformance.model.generated_graphs`.
Both import the records from here.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from strategies._repr import params_repr, tuple_repr
from strategies.dtypes import dtype_name
from strategies.tensors import TensorSpec
from strategies.views import VIEWS

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
    "ALIASING_OPS",
    "Leaf",
    "Op",
    "Mutation",
    "Graph",
    "GraphRun",
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
                if read is not None and op.kind not in ALIASING_OPS:
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

#: The op kinds whose result aliases their input (views, ``detach``, ``.data``).
ALIASING_OPS = frozenset(VIEW_OPS) | {"detach", "data"}


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


def view_call(kind: str, params: tuple) -> tuple:
    """The :data:`strategies.views.VIEWS` arguments of a graph's view kind
    ``kind`` (:data:`VIEW_OPS` but ``reshape``) with ``params`` as an :class:`Op`
    holds them (``slice``: ``(dim, start, step)``, to the end of ``dim``)."""
    if kind == "slice":
        dim, start, step = params
        return (dim, start, None, step)
    return tuple(params)


def _view(t: torch.Tensor, kind: str, params: tuple) -> torch.Tensor:
    """``t`` viewed by view kind ``kind`` with ``params`` (:func:`view_call`)."""
    return VIEWS[kind].apply(t, *view_call(kind, params))


def _view_expr(x: str, kind: str, params: tuple) -> str:
    """The code :func:`_view` runs, on the tensor named ``x``."""
    return VIEWS[kind].code(x, *view_call(kind, params))


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


def _view_text(x: str, view: tuple) -> str:
    """The code :func:`apply_view` runs on the tensor named ``x``."""
    return _view_expr(x, view[0], view[1:]) if view else x


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
    if k == "reshape":
        return f"{a[0]}.reshape({tuple(p[0])!r})"
    if k in VIEW_OPS:
        return _view_expr(a[0], k, p)
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
        return f"{_view_text(a[0], p[0])}.{k}({other})"
    raise ValueError(f"unknown op kind {k!r}")


def render_mutation(m: Mutation) -> str:
    alias = {
        "data": f"n{m.node}.data",
        "detach": f"n{m.node}.detach()",
        "view": _view_text(f"n{m.node}", m.view),
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
