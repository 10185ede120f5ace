"""The tolerances of the gradient-value checks, stated once.

Gradients are judged against two oracles (``conformance/test_graphs.py``,
``test_gradient_values_match_finite_differences``):

1. **float64 backward vs finite differences.** The graph promoted to float64
   (every float16/bfloat16/float32 leaf value is exactly representable in
   float64, so the promoted program starts from the very same numbers) is
   differentiated by autograd and compared with central finite differences
   of a float64 replay (no autograd): the independent oracle for the backward
   formulas. Tolerance: ``|got - ref| <= FD_RTOL * max(max|ref|, 1) + u``,
   ``u`` the measured truncation error of the differences.
2. **low precision vs float64 backward.** The graph run in its own dtypes is
   differentiated by autograd and compared element by element with the
   float64 autograd gradient of the promoted graph (not with finite
   differences):

       |got - ref| <= atol + rtol * |ref|,   (rtol, atol) = gradient_tolerance(dtype, graph, M)

   where ``dtype`` is the least precise floating dtype in the graph
   (complex64 counts as float32), ``eps = torch.finfo(dtype).eps``,
   ``n = len(graph.ops) + 1`` (the loss included) and ``M`` the *magnitude*,
   the larger of

   - the largest ``|gradient|`` flowing into or out of any node of the
     float64 backward graph (at least 1, the loss's own seed): rounding
     errors of a backward pass are relative to the values it multiplies and
     sums, not to its (possibly cancelled) result, hence the absolute term;
   - the *saved-value sensitivity*: how far the float64 gradient moves, per
     ``eps``, when every tensor backward reads is scaled by ``1 +- eps``
     (``1 - tanh(x)**2`` and ``s * (1 - s)`` cancel near saturation and
     what follows may amplify that; one factor for all keeps every branch).

   Then

   - linear graphs (only the ops in :data:`LINEAR_OPS`: views, copies,
     add/sub/neg, sum/mean, ``add_``/``copy_``, ``mul_`` by a scalar): the
     gradient is a sum of products of the loss weights 1, 2, 3 and the
     graph's scalars, exact in the dtype but for the rounding of a
     ``mean``'s ``1/n`` or of a product too long for the mantissa:
     ``rtol = LINEAR_ULPS * eps`` (one ulp, ``LINEAR_ULPS = 1``),
     ``atol = rtol * M``;
   - every other graph: ``rtol = K * eps * n``, ``atol = rtol * M`` with
     ``K = 4``: each op of the forward or backward pass contributes a few
     roundings, each at most ``eps / 2`` of the values involved. (Measured
     over some 5,000 generated graphs, the worst error was 0.07 of this bound.)

   For float32 and a 12-op graph that is ``rtol = 6.2e-6``, 300 times tighter
   than the 2e-3 the suite used before, so a gradient off by a relative 1e-3
   (about 8000 float32 epsilons) fails (``tests/test_gradient_oracle.py``).

Inputs the rule cannot judge are *counted, not dropped*:
``evidence.tally("ill-conditioned: <reason>")`` (a value overflows in the
low-precision dtype, a forward value of the low-precision run already differs
from its float64 counterpart by more than :data:`FORWARD_SHARE` of the
budget - a cancellation or an exp amplifying rounding -, a relu/abs/maximum/
amax takes another branch than in float64, or finite differences cannot be
trusted near a kink). The float64 cross-check still runs where it can.

:data:`RULES` states the rule per dtype for the report.
"""

from __future__ import annotations

import torch

__all__ = [
    "K",
    "LINEAR_ULPS",
    "FD_RTOL",
    "FORWARD_SHARE",
    "LINEAR_OPS",
    "RULES",
    "is_linear",
    "gradient_tolerance",
    "close",
    "excess",
]

#: Roundings allowed per op (in units of the dtype's epsilon) for non-linear graphs.
K: float = 4.0
#: Roundings allowed per op for linear graphs (see :data:`LINEAR_OPS`).
LINEAR_ULPS: float = 1.0
#: float64 autograd vs float64 central finite differences (plus their truncation error).
FD_RTOL: float = 1e-6
#: A low-precision forward value may use this share of the gradient budget
#: (relative to ``max(|value|, 1)``); beyond it the graph is ill-conditioned in that dtype.
FORWARD_SHARE: float = 0.25

#: Op kinds whose backward is linear in the upstream gradient and does not
#: read any forward value: the gradient of a graph made only of them is a
#: sum of products of constants.
LINEAR_OPS: frozenset[str] = frozenset(
    {
        "add", "sub", "neg", "sum", "mean",
        "slice", "transpose", "expand", "reshape", "unsqueeze", "select",
        "clone", "detach", "data", "copy_into", "to",
        "mul_", "add_", "copy_",  # mul_ by a scalar only: see is_linear
    }
)  # fmt: skip

#: dtype name -> the rule in words (for the report).
RULES: dict[str, str] = {
    "float64": f"vs finite differences: |err| <= {FD_RTOL:g} * max(|ref|, 1) + FD truncation error",
    "complex128": f"vs finite differences: |err| <= {FD_RTOL:g} * max(|ref|, 1) + FD truncation error",
    **{
        name: (
            f"vs float64 autograd: |err| <= rtol * (M + |ref|), rtol = {K:g} * eps * n_ops "
            f"({LINEAR_ULPS:g} * eps if the graph is linear), eps = {torch.finfo(d).eps:.3g}, "
            "M = max(largest |gradient| in the float64 backward, its change per eps "
            "when the saved tensors are scaled by 1 +- eps)"
        )
        for name, d in (
            ("float32", torch.float32),
            ("complex64", torch.float32),
            ("float16", torch.float16),
            ("bfloat16", torch.bfloat16),
        )
    },
}


def _real(dtype: torch.dtype) -> torch.dtype:
    if dtype == torch.complex64:
        return torch.float32
    if dtype == torch.complex128:
        return torch.float64
    return dtype


def is_linear(graph) -> bool:
    """Is every op of ``graph`` in :data:`LINEAR_OPS` (``mul_`` only by a
    Python scalar: by a tensor its gradient reads the forward values)?"""
    return all(
        op.kind in LINEAR_OPS and not (op.kind == "mul_" and len(op.args) > 1) for op in graph.ops
    )


def gradient_tolerance(dtype: torch.dtype, graph, magnitude: float = 1.0) -> tuple[float, float]:
    """``(rtol, atol)`` for a gradient of ``graph`` computed in ``dtype`` (its
    least precise floating dtype; complex64 counts as float32) against the
    float64 autograd gradient: ``rtol = LINEAR_ULPS * eps`` for linear graphs
    (:func:`is_linear`), ``rtol = K * eps * (len(graph.ops) + 1)`` otherwise,
    and ``atol = rtol * max(magnitude, 1)`` (``magnitude``: ``M`` of the
    module docstring). For float64 itself (the finite
    difference cross-check) ``rtol = FD_RTOL`` and ``atol = FD_RTOL * max(magnitude, 1)``.
    """
    d = _real(dtype)
    if d == torch.float64:
        return FD_RTOL, FD_RTOL * max(magnitude, 1.0)
    eps = torch.finfo(d).eps
    rtol = LINEAR_ULPS * eps if is_linear(graph) else K * eps * (len(graph.ops) + 1)
    return rtol, rtol * max(magnitude, 1.0)


def excess(got: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> float:
    """``max |got - ref| / (atol + rtol * |ref|)`` over the elements, in
    float64 (``<= 1``: within tolerance). NaN in either counts as infinite
    unless both are NaN at the same place."""
    ref = ref.detach().to(torch.complex128 if ref.is_complex() else torch.float64)
    got = got.detach().to(ref.dtype)
    if got.shape != ref.shape:
        return float("inf")
    if got.numel() == 0:
        return 0.0
    both_nan = torch.isnan(got) & torch.isnan(ref)
    err = (got - ref).abs()
    allowed = atol + rtol * ref.abs()
    ratio = torch.where(both_nan | (err == 0), torch.zeros_like(err), err / allowed)
    ratio = torch.where(torch.isnan(ratio), torch.full_like(ratio, float("inf")), ratio)
    return ratio.max().item()


def close(got: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> bool:
    """Does ``got`` match ``ref`` element by element within ``atol + rtol * |ref|``?"""
    return excess(got, ref, rtol, atol) <= 1.0
