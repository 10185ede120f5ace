"""The gradient oracle of ``graphs.gradient-values`` catches silent wrong gradients.

A float32 gradient off by a relative 1e-3 (thousands of float32 epsilons,
far inside the 2e-3 the suite used to allow) must fail the comparison with the
float64 autograd gradient under the rule of :mod:`conformance.tolerances`,
while the true float32 gradient passes, on a few representative graphs.
"""

from __future__ import annotations

import pytest
import torch

from conformance.model.generated_graphs import analyze
from conformance.test_graphs import (
    finite_differences,
    float64_reference,
    low_precision_tolerance,
)
from conformance.tolerances import (
    RULES,
    K,
    close,
    excess,
    gradient_tolerance,
    is_linear,
)
from strategies import TensorSpec
from strategies.graphs import Graph, Leaf, Op


def _leaf(shape, values, dtype=torch.float32, **kw) -> Leaf:
    return Leaf(TensorSpec(dtype=dtype, base_shape=shape, storage=values, **kw), requires_grad=True)


GRAPHS = {
    # exp, broadcasting mul and a reduction
    "exp-mul-sum": Graph(
        leaves=(_leaf((2, 3), [0.5, -1.25, 1.5, -0.75, 0.25, 1.75]), _leaf((3,), [0.875, -0.375, 1.125])),
        ops=(Op("exp", (0,)), Op("mul", (2, 1)), Op("sum", (3,), (1,))),
        output=4,
    ),
    # tanh / sigmoid / matmul
    "tanh-matmul-sigmoid": Graph(
        leaves=(_leaf((2, 2), [0.5, -1.25, 1.5, -0.75]), _leaf((2, 3), [0.25, 1.75, -1.5, 0.875, -0.375, 1.125])),
        ops=(Op("tanh", (0,)), Op("matmul", (2, 1)), Op("sigmoid", (3,)), Op("mean", (4,), (None,))),
        output=5,
    ),
    # a view chain with an in-place op through a view (CopySlices) and sin/square
    "inplace-view": Graph(
        leaves=(_leaf((3, 2), [0.5, -1.25, 1.5, -0.75, 0.25, 1.75]),),
        ops=(
            Op("square", (0,)),
            Op("mul_", (1,), (("slice", 0, 1, 2), -1.5)),
            Op("transpose", (1,), (0, 1)),
            Op("sin", (3,)),
        ),
        output=4,
    ),
    # a linear graph: the gradient is exact up to one ulp
    "linear": Graph(
        leaves=(_leaf((3, 3), [0.5, -1.25, 1.5, -0.75, 0.25, 1.75, -1.5, 0.875, -0.375]),),
        ops=(Op("slice", (0,), (1, 0, 2)), Op("mean", (1,), (1,)), Op("neg", (2,)), Op("mul_", (3,), ((), 0.5))),
        output=4,
    ),
    # multi-input ops (cat, index_put, where, stack) after a sin and a mul
    "multi-input": Graph(
        leaves=(_leaf((2, 3), [0.5, -1.25, 1.5, -0.75, 0.25, 1.75]), _leaf((2, 3), [0.875, -0.375, 1.125, -1.875, 0.625, 2.0])),
        ops=(
            Op("sin", (0,)), Op("mul", (2, 1)), Op("cat", (3, 1), (0,)),
            Op("index_put", (4, 2), ((3, 0),)), Op("where", (5, 4), (1,)), Op("stack", (6, 6), (1,)),
        ),
        output=7,
    ),
    # multi-output ops (unbind, split) of a tanh
    "multi-output": Graph(
        leaves=(_leaf((2, 4), [0.5, -1.25, 1.5, -0.75, 0.25, 1.75, -1.5, 0.875]),),
        ops=(Op("tanh", (0,)), Op("unbind", (1,), (1, 0, 3)), Op("split", (1,), (1, 2, 1, 0)), Op("mul", (2, 3))),
        output=4,
    ),
}  # fmt: skip

# Linear graphs of the multi-input and multi-output ops, and each leaf's
# gradient derived by hand (loss weights w = 1, 2, 3, 1, 2, 3, ... over the
# output's elements): the float64 reference and the finite differences of
# the oracle must both find it, whatever torch's backward of the op.
_W3 = [1.0, 2.0, 3.0]
HAND_DERIVED = {
    # cat([x, y], 0) of two (2, 3): every element its own weight
    "cat": (
        Graph(leaves=(_leaf((2, 3), [0.5] * 6), _leaf((2, 3), [1.5] * 6)),
              ops=(Op("cat", (0, 1), (0,)),), output=2),
        {0: [_W3, _W3], 1: [_W3, _W3]},
    ),
    # stack([x, y], 1) of two (3,): output (3, 2), weights 1 2 / 3 1 / 2 3
    "stack": (
        Graph(leaves=(_leaf((3,), [0.5] * 3), _leaf((3,), [1.5] * 3)),
              ops=(Op("stack", (0, 1), (1,)),), output=2),
        {0: [1.0, 3.0, 2.0], 1: [2.0, 1.0, 3.0]},
    ),
    # where(mask, x, y), mask True at even flat positions (phase 0)
    "where": (
        Graph(leaves=(_leaf((2, 3), [0.5] * 6), _leaf((2, 3), [1.5] * 6)),
              ops=(Op("where", (0, 1), (0,)),), output=2),
        {0: [[1.0, 0.0, 3.0], [0.0, 2.0, 0.0]], 1: [[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]},
    ),
    # x.index_put(([2, 0],), v) of x (3, 2) and v (2,): rows 2 and 0 replaced
    "index_put": (
        Graph(leaves=(_leaf((3, 2), [0.5] * 6), _leaf((2,), [1.5] * 2)),
              ops=(Op("index_put", (0, 1), ((2, 0),)),), output=2),
        {0: [[0.0, 0.0], [3.0, 1.0], [0.0, 0.0]], 1: [1.0 + 2.0, 2.0 + 3.0]},
    ),
    # x.unbind(1)[0] + x.unbind(1)[2] of x (2, 3): output (2,), weights 1 2
    "unbind": (
        Graph(leaves=(_leaf((2, 3), [0.5] * 6),), ops=(Op("unbind", (0,), (1, 0, 2)),), output=1),
        {0: [[1.0, 0.0, 1.0], [2.0, 0.0, 2.0]]},
    ),
    # x.split(2, 0)[1] + x.split(2, 0)[1] of x (4,): the second chunk twice
    "split": (
        Graph(leaves=(_leaf((4,), [0.5] * 4),), ops=(Op("split", (0,), (0, 2, 1, 1)),), output=1),
        {0: [0.0, 0.0, 2.0, 4.0]},
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(HAND_DERIVED))
def test_multi_input_and_output_gradients_match_hand_derived(name):
    """The oracle's two float64 gradients of a multi-input / multi-output op
    (autograd of the promoted graph, and central finite differences of the
    replay, which never runs torch's backward) equal the hand-derived one."""
    graph, want = HAND_DERIVED[name]
    model = analyze(graph)
    leaves = model.real_leaves()
    reference = float64_reference(graph, "cpu", leaves)
    fd, why = finite_differences(graph, model, "cpu")
    assert fd is not None, why
    for i, w in want.items():
        expected = torch.tensor(w, dtype=torch.float64)
        assert torch.equal(reference.grads[i], expected), (name, i, reference.grads[i])
        g, uncertainty = fd[i]
        assert (g - expected).abs().max().item() <= 1e-6 + uncertainty, (name, i, g)


def _float32_grads(graph: Graph, leaves: list[int]) -> dict[int, torch.Tensor]:
    run = graph.run("cpu")
    run.loss.backward()
    return {i: run.nodes[i].grad for i in leaves}


def _judge(name: str):
    graph = GRAPHS[name]
    leaves = analyze(graph).real_leaves()
    assert leaves, f"{name}: no leaf requires grad"
    reference = float64_reference(graph, "cpu", leaves)
    rtol, atol, _ = low_precision_tolerance(graph, "cpu", reference, torch.float32)
    return graph, leaves, reference, rtol, atol


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_true_float32_gradient_passes(name):
    graph, leaves, reference, rtol, atol = _judge(name)
    got = _float32_grads(graph, leaves)
    for i in leaves:
        assert got[i].dtype == torch.float32
        assert close(got[i], reference.grads[i], rtol, atol), (
            f"{name}: the true float32 gradient of n{i} fails "
            f"({excess(got[i], reference.grads[i], rtol, atol):.2f} x the tolerance)"
        )


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("where", ["all", "one"])
def test_float32_gradient_off_by_1e_3_fails(name, where):
    """A relative 1e-3 error - in every element, or in one element only - is caught."""
    graph, leaves, reference, rtol, atol = _judge(name)
    got = _float32_grads(graph, leaves)
    for i in leaves:
        g = got[i].clone()
        if where == "all":
            g *= 1 + 1e-3
        else:
            k = int(g.abs().reshape(-1).argmax())
            g.view(-1)[k] *= 1 + 1e-3
        assert not close(g, reference.grads[i], rtol, atol), (
            f"{name}: a float32 gradient of n{i} off by 1e-3 passes "
            f"(rtol={rtol:.1e}, atol={atol:.1e})"
        )


def test_rule_is_stated_per_dtype_and_scales_with_eps():
    g = GRAPHS["exp-mul-sum"]
    n = len(g.ops) + 1
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        rtol, atol = gradient_tolerance(dtype, g, 2.0)
        assert rtol == pytest.approx(K * torch.finfo(dtype).eps * n)
        assert atol == pytest.approx(2 * rtol)
    assert is_linear(GRAPHS["linear"]) and not is_linear(g)
    rtol, _ = gradient_tolerance(torch.float32, GRAPHS["linear"])
    assert rtol == torch.finfo(torch.float32).eps
    assert gradient_tolerance(torch.float32, g)[0] < 2e-3 / 100
    assert {"float32", "float16", "bfloat16", "float64"} <= set(RULES)
