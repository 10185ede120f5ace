"""The static graph model's lazy-view rule (``TensorState.lazy``) matches torch,
and the graph strategy never draws what that rule says torch refuses.

A view made in grad mode while its view root did not require grad has no
grad_fn; when the root starts to require grad (an in-place op with an
operand requiring grad), torch leaves the view without one until something
asks (``.grad_fn``, ``.is_leaf``, an op autograd records with the view as an
input). Until then torch's C++ ``is_leaf()`` is true for it: an in-place op
on it raises "a leaf Variable that requires grad is being used in an
in-place operation", ``.grad`` does not warn, ``retain_grad()`` does nothing.
"""

from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch
from hypothesis import given, settings

from conformance.model.generated_graphs import analyze
from strategies import TensorSpec
from strategies.graphs import Graph, Leaf, Op, graphs, lazy_view_graphs

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation"
NONLEAF_WARNING = "is not a leaf Tensor is being accessed"

_BASE = Leaf(TensorSpec(dtype=torch.float32, base_shape=(2, 3), storage=[0.5, -1.25, 1.5] * 2))
_X = Leaf(TensorSpec(dtype=torch.float32, base_shape=(), storage=[0.5]), requires_grad=True)
# n2 = exp(n0) (no grad), n3 = n2.select(0, 1) (a view without grad_fn),
# n4 = n2[::2].copy_(n1): n2 starts to require grad, n3 becomes lazy.
_PREFIX = (
    Op("exp", (0,)),
    Op("select", (2,), (0, 1)),
    Op("copy_", (2, 1), (("slice", 0, 0, 2), None)),
)


def _graph(*tail: Op) -> Graph:
    ops = _PREFIX + tail
    return Graph((_BASE, _X), ops, 2 + len(ops) - 1)


def _raises_leaf_error(graph: Graph) -> bool:
    try:
        graph.run("cpu")
    except RuntimeError as e:
        assert LEAF_ERROR in str(e), str(e)
        return True
    return False


@pytest.mark.parametrize(
    ("between", "lazy"),
    [
        ((), True),
        ((Op("detach", (3,)),), True),
        ((Op("data", (3,)),), True),
        ((Op("exp", (3,), mode="no_grad"),), True),
        ((Op("exp", (3,), mode="inference"),), True),
        ((Op("to", (3,), (torch.int32,)),), True),  # an integer cast records nothing
        ((Op("unsqueeze", (3,), (0,), mode="no_grad"),), True),
        ((Op("mul_", (2,), ((), 2.0)),), True),  # a write to the root does not help
        ((Op("exp", (3,)),), False),
        ((Op("add", (1, 3)),), False),  # as the second operand too
        ((Op("sum", (3,), (None,)),), False),
        ((Op("clone", (3,)),), False),
        ((Op("copy_into", (3,)),), False),
        ((Op("to", (3,), (torch.float64,)),), False),
        ((Op("unsqueeze", (3,), (0,)),), False),  # a view of it, in grad mode
        ((Op("add_", (2, 1), (("select", 0, 0), None)),), True),  # nor one through another view
    ],
)
def test_inplace_on_a_lazy_view_raises_unless_an_op_recorded_it(between, lazy):
    """The in-place op directly into n3 raises iff n3 is still lazy: the model
    predicts it (``leaf_inplace_errors``) and torch agrees."""
    g = _graph(*between, Op("mul_", (3,), ((), 2.0)))
    model = analyze(g)
    step = len(g.ops) - 1
    assert model.leaf_inplace_errors == ([step] if lazy else []), g.to_program()
    assert _raises_leaf_error(g) == lazy, g.to_program()


def test_a_write_through_a_view_of_a_lazy_view_is_fine_and_materializes_it():
    g = _graph(Op("mul_", (3,), (("slice", 0, 1, 2), 2.0)), Op("add_", (3,), ((), 1.0)))
    model = analyze(g)
    assert not model.leaf_inplace_errors
    assert not _raises_leaf_error(g)


def test_a_view_written_directly_is_rebased_not_lazy():
    # n3 = n2.select(0, 1) is written directly by an operand requiring grad:
    # torch gives it a grad_fn (rebase); n4, another view of n2, turns lazy.
    g = Graph(
        (_BASE, _X),
        (Op("exp", (0,)), Op("select", (2,), (0, 1)), Op("select", (2,), (0, 0)),
         Op("add_", (3, 1), ((), None))),
        5,
    )  # fmt: skip
    model = analyze(g)
    assert not model.lazy(3) and model.lazy(4)
    nodes = g.build("cpu")
    nodes[3].mul_(2)
    with pytest.raises(RuntimeError, match=LEAF_ERROR):
        nodes[4].mul_(2)


def test_the_loss_materializes_the_output_but_retain_grad_came_first():
    g = Graph((_BASE, _X), _PREFIX, output=3, retain=(3,))  # the lazy n3 is the output
    model = analyze(g)
    assert model.obj[3] in model.lazy_at_retain and not model.lazy(3)
    run = g.run("cpu")
    assert not run.nodes[3].retains_grad  # the no-op retain_grad()
    run.loss.backward()
    with pytest.warns(UserWarning, match=NONLEAF_WARNING):  # materialized by the loss
        assert run.nodes[3].grad is None


def _probes(g: Graph, model) -> list[int]:
    return [
        i
        for i in range(len(g.leaves), g.n_nodes)
        if (s := model.state(i)).is_view
        and s.requires_grad
        and s.view_ok
        and not (s.overlap or s.cut or s.inference)
        and model.states[s.root].fresh
    ]


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(g=lazy_view_graphs())
def test_model_predicts_lazy_views_exactly(g):
    """On generated lazy-view graphs: the forward pass never raises, and for
    every view that may be written, an in-place op raises iff the model says
    it is lazy, .grad warns iff it is not, and retain_grad() at retain time
    takes iff it was not lazy then."""
    model = analyze(g)
    assert not model.leaf_inplace_errors
    g.run("cpu")
    for i in _probes(g, model):
        t = g.build("cpu")[i]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t.grad  # noqa: B018
        warned = any(NONLEAF_WARNING in str(w.message) for w in caught)
        assert warned == (not model.lazy(i)), (i, g.to_program())
        t = g.build("cpu")[i]
        try:
            t.mul_(2)
            raised = False
        except RuntimeError as e:
            assert LEAF_ERROR in str(e), str(e)
            raised = True
        assert raised == model.lazy(i), (i, g.to_program())
        r = dataclasses.replace(g, retain=(i,)).run("cpu")
        assert r.nodes[i].retains_grad == (model.obj[i] not in model.lazy_at_retain)


def test_lazy_view_graphs_make_lazy_views_often():
    seen = []

    @settings(max_examples=200, derandomize=True, database=None, deadline=None)
    @given(lazy_view_graphs())
    def collect(g):
        seen.append(analyze(g))

    collect()
    lazy = sum(any(m.lazy(i) for i in range(m.graph.n_nodes)) for m in seen)
    assert lazy >= len(seen) // 3, f"only {lazy} of {len(seen)} graphs have a lazy view"
    probes = sum(bool(_probes(m.graph, m)) for m in seen)
    assert probes >= 0.9 * len(seen), f"only {probes} of {len(seen)} graphs have a view to probe"


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(g=graphs())
def test_graphs_never_write_into_or_retain_a_lazy_view(g):
    model = analyze(g)
    assert not model.leaf_inplace_errors, g.to_program()
    assert not any(model.obj[j] in model.lazy_at_retain for j in g.retain), g.to_program()
    g.run("cpu")
