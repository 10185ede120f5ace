"""The autograd graph: ``grad_fn`` nodes, gradient edges and the backward engine.

A :class:`Node` is one ``grad_fn``: the stable prefix of its class name
(``CloneBackward``, ``CopySlices``, ...), its input edges (a :class:`Node`,
a leaf's :class:`Accumulate`, or ``None`` for an input that does not require
grad), the tensors it saves, and its gradient formula: a function mapping
the gradient of its output to the gradients of its inputs (NumPy arrays).

:func:`run_backward` executes a graph the way torch's engine does: nodes in
dependency order, the ready node with the highest sequence number first
(``AccumulateGrad`` before everything else), contributions to one node
summed before it runs, a retained non-leaf's ``.grad`` set by a pre-hook
of its grad_fn, and a node's saved tensors checked when it runs (modified:
"modified by an inplace operation"; released by an earlier backward: "a
second time") and released after it ran. An error stops the pass where it
happens: what ran before it (accumulated gradients, released tensors) stays.

Gradient values are computed twice: rounded to each node's dtype after every
node (as torch computes them) and in float64/complex128 without rounding.
An element is *specified* when both agree bit for bit after the final
conversion and it is not NaN; elsewhere (rounding that depends on the
order of accumulation, NaN signs and payloads) the model takes torch's value.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from conformance.model.state import Saved, TensorModel
from conformance.model.values import convert, decode

__all__ = [
    "Node",
    "Accumulate",
    "Outcome",
    "domain",
    "fit",
    "run_backward",
    "view_backward",
    "positions_backward",
    "sum_to",
]

#: Sequence numbers of nodes, in creation order (torch's per-thread counter).
_SEQ = itertools.count()


def domain(dtype: str) -> type:
    """The NumPy type gradients of ``dtype`` are computed in."""
    return np.complex128 if dtype.startswith("complex") else np.float64


def fit(x: np.ndarray, dtype: str, rounded: bool) -> np.ndarray:
    """A gradient as one of ``dtype``: the real part for a real dtype, a zero
    imaginary part added for a complex one, rounded to ``dtype`` when
    ``rounded``."""
    x = np.asarray(x)
    if x.dtype.kind == "c" and not dtype.startswith("complex"):
        x = x.real
    x = x.astype(domain(dtype))
    if rounded:
        with np.errstate(all="ignore"):
            x = decode(convert(x, dtype), dtype).astype(domain(dtype))
    return x


def sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``at::sum_to``: sum the leading dims of ``g`` and the dims where
    ``shape`` has 1 and ``g`` not; to ``()`` it sums everything. Sums start
    from +0, as torch's reductions do (a -0.0 becomes +0.0)."""
    if len(shape) == 0:
        return np.add.reduce(g.reshape(-1), initial=0).reshape(())
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i for i in range(lead, g.ndim) if shape[i - lead] == 1 and g.shape[i] != 1
    )
    if axes:
        g = np.add.reduce(g, axis=axes, keepdims=True, initial=0)
    return g.reshape(shape)


def view_backward(kind: str, args: tuple, parent_shape: tuple[int, ...]) -> Callable:
    """The gradient formula of a view op (``kind`` with its ``args``) of a
    parent of ``parent_shape``."""

    def fn(g, rnd):
        if kind == "slice":
            dim, start, step, n = args
            out = np.zeros(parent_shape, dtype=g.dtype)
            index = [slice(None)] * len(parent_shape)
            index[dim] = slice(start, start + step * n, step) if n else slice(0, 0)
            out[tuple(index)] = g
            return (out,)
        if kind == "select":
            dim, index = args
            out = np.zeros(parent_shape, dtype=g.dtype)
            ix = [slice(None)] * len(parent_shape)
            ix[dim] = index
            out[tuple(ix)] = g
            return (out,)
        if kind == "permute":
            (dims,) = args
            return (np.transpose(g, np.argsort(dims)) if g.ndim else g,)
        if kind == "unsqueeze":
            (dim,) = args
            return (g.reshape(parent_shape),)
        if kind == "expand":
            return (sum_to(g, parent_shape),)
        if kind == "reshape":
            return (g.reshape(parent_shape),)
        raise ValueError(kind)

    return fn


def positions_backward(view_pos: np.ndarray, base_pos: np.ndarray) -> Callable:
    """The gradient formula of a view given by buffer positions: each view
    element adds into the base element at the same position (the base must
    not overlap itself: see :attr:`Node.overlapping`)."""
    index = {int(p): i for i, p in enumerate(base_pos.reshape(-1))}
    flat = np.array([index[int(p)] for p in view_pos.reshape(-1)], dtype=np.int64)
    shape = base_pos.shape
    overlapping = len(np.unique(flat)) != len(flat)

    def fn(g, rnd):
        # as_strided_backward: a copy into zeros, an index_add when the view
        # overlaps itself (then a -0.0 becomes +0.0)
        out = np.zeros(int(np.prod(shape)), dtype=g.dtype)
        if overlapping:
            np.add.at(out, flat, g.reshape(-1))
        else:
            out[flat] = g.reshape(-1)
        return (out.reshape(shape),)

    return fn


@dataclass(eq=False)
class Accumulate:
    """``AccumulateGrad`` of a leaf: adds the gradient into ``tensor.grad``."""

    tensor: TensorModel
    seq: float = float("inf")


@dataclass(eq=False)
class Node:
    """One grad_fn (see the module docstring).

    ``names`` are the accepted stable prefixes of ``type(grad_fn).__name__``
    (the first is the one torch 2.13 uses); ``inputs`` are ``(edge, dtype,
    shape)`` per input; ``fn(grad, rnd)`` returns one gradient per input,
    where ``rnd(x, dtype)`` rounds an intermediate result to ``dtype``.
    ``overlapping``: the formula reads a base that overlaps itself, where
    torch's as_strided arithmetic is not modelled (gradients unspecified).
    """

    names: tuple[str, ...]
    inputs: tuple[tuple[object | None, str, tuple[int, ...]], ...]
    fn: Callable
    saved: tuple[Saved, ...] = ()
    overlapping: bool = False
    #: a complex multiplication: the signs of zero parts depend on the kernel
    zero_signs: bool = False
    seq: int = field(default_factory=lambda: next(_SEQ))
    graph: frozenset = field(init=False)

    def __post_init__(self) -> None:
        reach: set = set(self.saved)
        for edge, _, _ in self.inputs:
            if isinstance(edge, Node):
                reach |= edge.graph
        self.graph = frozenset(reach)

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def edges(self) -> list:
        return [e for e, _, _ in self.inputs if e is not None]


@dataclass
class Outcome:
    """What a backward pass did.

    ``accumulated``: ``{leaf: (exact, rounded)}`` gradients summed for each
    leaf whose AccumulateGrad ran (in logical shape); ``retained``: the same
    for retained non-leaves, in the order their hooks ran; ``error``: the
    message key of the error that stopped the pass (``"stale"``, ``"freed"``,
    ``"moved"``) or ``None``; ``ambiguous``: leaves whose accumulation may or
    may not have run before the error (ties in torch's ready queue);
    ``overlapping``: a formula the model does not compute exactly ran;
    ``zero_signs``: a complex multiplication ran (signs of zeros unspecified).
    """

    accumulated: list = field(default_factory=list)
    retained: list = field(default_factory=list)
    error: str | None = None
    ambiguous: set = field(default_factory=set)
    overlapping: bool = False
    zero_signs: bool = False


def run_backward(
    root: Node,
    seed: np.ndarray,
    *,
    has_grad_fn: Callable[[TensorModel], bool],
    requires_grad: Callable[[TensorModel], bool],
    retained_by: Callable[[Node], list[TensorModel]],
) -> Outcome:
    """Run ``root`` with gradient ``seed`` (see the module docstring).

    ``has_grad_fn(leaf)`` says whether a leaf has since been moved into the
    graph interior, ``requires_grad(leaf)`` whether its AccumulateGrad adds
    anything, ``retained_by(node)`` which tensors retain the grad flowing into
    ``node`` (their current grad_fn). Saved tensors of the nodes that ran are
    marked freed.
    """
    deps: dict[int, int] = {}
    todo = [root]
    seen = {id(root)}
    while todo:
        n = todo.pop()
        for e in n.edges if isinstance(n, Node) else ():
            deps[id(e)] = deps.get(id(e), 0) + 1
            if id(e) not in seen:
                seen.add(id(e))
                todo.append(e)

    out = Outcome()
    buffers: dict[int, list] = {id(root): [seed, seed.copy()]}
    order = itertools.count()
    heap: list = [(-root.seq, next(order), root)]
    pushed_at: dict[int, int] = {}
    accumulates: list[Accumulate] = []

    def exact_rnd(x, dtype):
        return fit(x, dtype, False)

    def rounded_rnd(x, dtype):
        return fit(x, dtype, True)

    while heap:
        _, tick, n = heapq.heappop(heap)
        exact, rounded = buffers.pop(id(n))
        if isinstance(n, Accumulate):
            leaf = n.tensor
            if has_grad_fn(leaf):
                out.error = "moved"
                # AccumulateGrads made ready by the same node run in an
                # unspecified order: those may or may not have run.
                mine = pushed_at.get(id(n))
                out.ambiguous |= {
                    a.tensor for a in accumulates if a is not n and pushed_at.get(id(a)) == mine
                }
                return out
            if requires_grad(leaf):
                out.accumulated.append((leaf, (exact, rounded)))
            continue
        for t in retained_by(n):
            out.retained.append((t, (exact, rounded)))
        if any(s.freed for s in n.saved):
            out.error = "freed"
            return out
        if any(s.stale for s in n.saved):
            out.error = "stale"
            return out
        out.overlapping |= n.overlapping
        out.zero_signs |= n.zero_signs
        with np.errstate(all="ignore"):
            ge = n.fn(exact, exact_rnd)
            gr = n.fn(rounded, rounded_rnd)
        for s in n.saved:
            s.freed = True
        for (edge, dtype, _shape), e, r in zip(n.inputs, ge, gr, strict=True):
            if edge is None:
                continue
            if np.shape(e) != tuple(_shape):  # validate_outputs: reduce a broadcast gradient
                e, r = sum_to(np.asarray(e), _shape), sum_to(np.asarray(r), _shape)
            e = fit(e, dtype, False)
            r = fit(r, dtype, True)
            slot = buffers.get(id(edge))
            if slot is None:
                buffers[id(edge)] = [e, r]
            else:
                with np.errstate(all="ignore"):
                    slot[0] = slot[0] + e
                    slot[1] = fit(slot[1] + r, dtype, True)
            deps[id(edge)] -= 1
            if deps[id(edge)] == 0:
                if isinstance(edge, Accumulate):
                    pushed_at[id(edge)] = tick
                    accumulates.append(edge)
                heapq.heappush(heap, (-edge.seq, next(order), edge))
    return out
