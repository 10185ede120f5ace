"""The strategies make what they claim: every layout family, every dtype,
runnable reprs, and the documented build semantics."""

from __future__ import annotations

import collections

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import (
    ALL_DTYPES,
    DIFFERENTIABLE,
    LAYOUT_KINDS,
    TensorSpec,
    dtypes,
    is_dense,
    layout_kinds,
    shapes,
    tensor_specs,
    tensors,
)


def _draw_many(strategy, n=300):
    seen = []

    @settings(max_examples=n, derandomize=True, database=None)
    @given(strategy)
    def collect(x):
        seen.append(x)

    collect()
    return seen


def test_every_layout_family_occurs():
    specs = _draw_many(tensor_specs())
    counts = collections.Counter(k for s in specs for k in layout_kinds(s.build()))
    missing = [k for k in LAYOUT_KINDS if counts[k] == 0]
    assert not missing, f"layout families never drawn: {missing} (counts {dict(counts)})"


def test_every_dtype_occurs():
    specs = _draw_many(tensor_specs())
    assert {s.dtype for s in specs} == set(ALL_DTYPES)


def test_every_view_kind_occurs():
    specs = _draw_many(tensor_specs())
    kinds = {op[0] for s in specs for op in s.views}
    assert kinds == {"offset", "slice", "permute", "expand", "unsqueeze", "select"}


def test_views_are_real_views_of_the_base():
    for s in _draw_many(tensor_specs(), 100):
        t = s.build()
        assert t._is_view() == s.is_view
        assert tuple(t.shape) == s.shape


@given(tensor_specs())
def test_repr_is_runnable_and_rebuilds_the_same_tensor(spec):
    again = eval(repr(spec), {"torch": torch, "TensorSpec": TensorSpec})
    a, b = spec.build(), again.build()
    assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
    assert torch.equal(a, b)


@given(tensor_specs(requires_grad=True), st.booleans())
def test_build_autograd_state(spec, leaf):
    t = spec.build(requires_grad=True, leaf=leaf)
    assert t.dtype in DIFFERENTIABLE and t.requires_grad
    assert t.is_leaf is (leaf or not spec.is_view)
    assert (t.grad_fn is None) is (leaf or not spec.is_view)


def test_build_rejects_grad_for_integral_dtypes():
    spec = TensorSpec(dtype=torch.int64, base_shape=(2,), storage=(1, 2))
    with pytest.raises(ValueError, match="cannot require gradients"):
        spec.build(requires_grad=True)


@given(tensor_specs(dtype=torch.float64, views=False, channels_last=False))
def test_fixed_dtype_and_no_views(spec):
    t = spec.build()
    assert t.dtype == torch.float64 and not spec.views and t.is_contiguous()


@given(
    tensors(
        dtype=torch.float32,
        shape=shapes(min_dims=4, max_dims=4, min_side=2),
        views=False,
        channels_last=True,
    )
)
def test_channels_last_is_drawn_when_forced(t):
    assert "channels_last" in layout_kinds(t)


def test_dtypes_families():
    assert set(_draw_many(dtypes("complex"), 50)) == {torch.complex64, torch.complex128}
    assert set(_draw_many(dtypes("differentiable"), 100)) == set(DIFFERENTIABLE)
    with pytest.raises(ValueError, match="unknown dtype family"):
        dtypes("quantized")


@pytest.mark.parametrize(
    ("make", "dense", "kinds"),
    [
        (lambda: torch.zeros(3, 4), True, {"contiguous"}),
        (lambda: torch.zeros(3, 4).t(), True, {"permuted"}),
        (lambda: torch.zeros(3, 4)[:, ::2], False, {"stepped"}),
        (lambda: torch.zeros(3, 4)[1:], True, {"offset"}),
        (lambda: torch.zeros(3, 1).expand(3, 4), False, {"expanded"}),
        (
            lambda: torch.zeros(2, 3, 4, 5).contiguous(memory_format=torch.channels_last),
            True,
            {"channels_last", "permuted"},
        ),
        (lambda: torch.zeros(()), True, {"0-d", "contiguous"}),
        (lambda: torch.zeros(0, 3), True, {"zero-size", "contiguous"}),
    ],
)
def test_layout_classifier(make, dense, kinds):
    t = make()
    assert is_dense(t) is dense
    assert layout_kinds(t) == frozenset(kinds)
