"""The gradient oracle of ``graphs.gradient-values`` catches silent wrong gradients.

A float32 gradient off by a relative 1e-3 (thousands of float32 epsilons,
far inside the 2e-3 the suite used to allow) must fail the comparison with the
float64 autograd gradient under the rule of :mod:`conformance.tolerances`,
while the true float32 gradient passes, on a few representative graphs.
"""

from __future__ import annotations

import pytest
import torch

from conformance.test_graphs import float64_reference, low_precision_tolerance
from conformance.tolerances import (
    RULES,
    K,
    close,
    excess,
    gradient_tolerance,
    is_linear,
)
from strategies import TensorSpec
from strategies.graphs import Graph, Leaf, Op, analyze


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
}  # fmt: skip


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
