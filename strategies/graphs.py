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

The records, the executor and the renderer live in
:mod:`strategies.graph_programs` (re-exported here); the static model of what
torch documents for such a program (:func:`conformance.model.generated_graphs.analyze`)
lives with the other reference models. The strategies build each program
through that model's incremental :class:`~conformance.model.generated_graphs.Modeller`
so that they draw only programs torch accepts (no in-place op on a leaf that
requires grad, none on a view made in ``no_grad`` mode, nor directly into a
lazy view); the properties in ``conformance/test_graphs.py`` compare real
torch against the model. :func:`lazy_view_graphs` draws programs built to
make lazy views.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch
from hypothesis import strategies as st

from strategies.dtypes import COMPLEX, DIFFERENTIABLE, FLOATING
from strategies.graph_programs import (  # re-exported: the records of the programs drawn here
    ALIASES,
    BINARY_OPS,
    COPY_OPS,
    GRAD_MODES,
    INPLACE_OPS,
    INT_DTYPE,
    LEAF_VALUES,
    MULTI_INPUT_OPS,
    MULTI_OUTPUT_OPS,
    OP_KINDS,
    REDUCTION_OPS,
    SAVES_INPUT,
    SAVES_RESULT,
    UNARY_OPS,
    VIEW_OPS,
    Graph,
    GraphRun,
    Leaf,
    Mutation,
    Op,
    op_classes,
    promote_dtype,
    scalar_loss,
    view_call,
    where_mask,
)
from strategies.tensors import TensorSpec, shapes, tensor_specs
from strategies.views import VIEWS

if TYPE_CHECKING:  # the model imports the records, and strategies/__init__ imports this module
    from conformance.model.generated_graphs import GraphModel, Modeller, TensorState

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
    "scalar_loss",
    "promote_dtype",
    "op_classes",
    "where_mask",
    "graphs",
    "silent_graphs",
    "lazy_view_graphs",
]


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
    """The shape of :func:`apply_view` ``(t, view)`` for ``t`` of ``shape``, by the shape rule."""
    if not view:
        return tuple(shape)
    return VIEWS[view[0]].shape(tuple(shape), *view_call(view[0], view[1:]))


MAX_DIMS = 4


def _draw_op(draw, m: Modeller, mode: str, allow_inplace: bool) -> Op | None:
    op = _draw_op_unchecked(draw, m, mode, allow_inplace)
    return op if op is not None and _has_kernel(op, m) else None


def _has_kernel(op: Op, m: Modeller) -> bool:
    """Can torch run ``op`` on the modelled inputs (a kernel for the dtype
    combination, and not the experimental complex32 result)?"""
    from conformance.model.generated_graphs import probe_result

    try:
        with warnings.catch_warnings():  # "ComplexHalf support is experimental"
            warnings.simplefilter("ignore")
            _, dtype = probe_result(op, [m.s(j) for j in op.args])
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


def _draw_op_unchecked(draw, m: Modeller, mode: str, allow_inplace: bool) -> Op | None:
    from conformance.model.generated_graphs import is_int_dtype

    n = len(m.obj)
    nodes = list(range(n))
    states = [m.s(i) for i in nodes]

    def is_int(i):
        return is_int_dtype(states[i].dtype)

    def usable_in_grad(idxs: Sequence[int], kind: str) -> bool:
        """Outside inference mode an inference tensor may only meet a tensor
        requiring grad in an op that saves nothing (add/sub)."""
        if mode == "inference":
            return True
        if any(states[i].inference for i in idxs) and any(states[i].requires_grad for i in idxs):
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
                if is_int_dtype(d):
                    targets = list(FLOATING)
            return Op(k, (a,), (draw(st.sampled_from(targets)),), mode)
        return Op(k, (a,), (), mode)
    # in-place (grad mode only)
    return _draw_inplace_op(draw, m, nodes, mode)


def _draw_multi_input_op(draw, states: list[TensorState], mode: str, usable_in_grad) -> Op | None:
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
    m: Modeller,
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
    from conformance.model.generated_graphs import Modeller, analyze

    n_leaves = draw(st.integers(1, max_leaves))
    lv = tuple(
        draw(leaves(dtypes=dtypes, requires_grad=requires_grad, no_grad=regions))
        for _ in range(n_leaves)
    )
    m = Modeller()
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
                if not m.s(i).is_leaf and m.s(i).requires_grad and not m.s(i).lazy
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
    """Strategy for graphs that make lazy views (:attr:`TensorState.lazy`) by
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
    from conformance.model.generated_graphs import Modeller

    d = draw(st.sampled_from(list(dtypes)))
    lv = [draw(leaves(dtypes=(d,), requires_grad=False, no_grad=False))]
    value = draw(_COMPLEX_VALUE if d.is_complex else _REAL_VALUE)
    lv.append(Leaf(TensorSpec(dtype=d, base_shape=(), storage=(value,)), requires_grad=True))
    if draw(st.booleans()):
        lv.append(draw(leaves(dtypes=dtypes, no_grad=False)))
    m = Modeller()
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
        op = _draw_inplace_op(draw, m, family, "grad", operand=lambda o: m.s(o).requires_grad)
        if op is not None and _has_kernel(op, m):
            add(op)
            break
    for _ in range(draw(st.integers(0, max_tail))):
        add(_draw_op(draw, m, "grad", True))
    return Graph(tuple(lv), tuple(ops), len(lv) + len(ops) - 1)


@st.composite
def _mutations(draw, m: Modeller, aliases: tuple[str, ...] = ALIASES) -> Mutation | None:
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
