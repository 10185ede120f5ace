"""Meta-tests of ``strategies.views.VIEWS``, the one table every strategy makes views with.

A reproducer is only as good as the agreement between the code it prints and
the code that ran, and a strategy that plans shapes with a wrong shape rule
draws inputs other than it claims. So for every kind, on drawn tensors and
arguments: ``code`` evaluates to the same view ``apply`` returns (shape,
strides, offset, storage, ``grad_fn``), ``shape`` predicts torch's shape
without calling torch, and both refuse the same requests.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import tensor_specs
from strategies.views import VIEWS, resolve_sizes


@st.composite
def _arguments(draw, kind: str, shape: tuple[int, ...]) -> tuple:
    """Arguments for ``kind`` on a tensor of ``shape``: mostly valid, sometimes not."""
    n = len(shape)
    dim = st.integers(-n, n - 1) if n else st.sampled_from([0, -1])
    if kind == "slice":
        start = draw(st.one_of(st.none(), st.integers(-4, 4)))
        stop = draw(st.one_of(st.none(), st.integers(-4, 4)))
        return (
            draw(st.integers(0, n - 1)) if n else 0,
            start,
            stop,
            draw(st.sampled_from([None, 1, 2, 3])),
        )
    if kind == "select":
        return (draw(dim), draw(st.integers(-4, 4)))
    if kind == "transpose":
        return (draw(dim), draw(dim))
    if kind == "permute":
        return (tuple(draw(st.permutations(range(n)))),)
    if kind == "unsqueeze":
        return (draw(st.integers(-n - 1, n)),)
    if kind == "expand":
        lead = draw(st.lists(st.integers(0, 3), max_size=2))
        rest = [
            draw(st.sampled_from([-1, s, s + 1, 2] if s == 1 else [-1, s, s + 1])) for s in shape
        ]
        return (tuple(lead + rest),)
    numel = 1
    for s in shape:
        numel *= s
    target = draw(st.sampled_from([(numel,), (-1,), (1, numel), (numel, -1), (2, -1), (-1, -1)]))
    return (target,)


def _torch_result(kind, t, args):
    try:
        return VIEWS[kind].apply(t, *args), None
    except (RuntimeError, IndexError) as e:  # torch's refusals of a bad request
        return None, e


@pytest.mark.parametrize("kind", sorted(VIEWS))
@settings(max_examples=60, deadline=None, database=None)
@given(data=st.data(), requires_grad=st.booleans())
def test_code_shape_and_apply_agree(kind, data, requires_grad):
    spec = data.draw(tensor_specs(dtype=torch.float64), label="spec")
    t = spec.build("cpu", requires_grad=requires_grad)
    args = data.draw(_arguments(kind, tuple(t.shape)), label="args")
    out, error = _torch_result(kind, t, args)
    if kind == "view":  # the shape rule speaks of the shape only, not of the strides
        try:
            predicted = VIEWS[kind].shape(tuple(t.shape), *args)
        except ValueError:
            predicted = None
        assert (predicted is None) <= (error is not None), (args, error)
        if out is not None:
            assert tuple(out.shape) == predicted
        return
    try:
        predicted = VIEWS[kind].shape(tuple(t.shape), *args)
    except ValueError as refused:
        assert error is not None, (
            f"{kind}{args} on {tuple(t.shape)}: the rule refused ({refused}), torch did not"
        )
        return
    assert error is None, (
        f"{kind}{args} on {tuple(t.shape)}: torch refused ({error}), the rule gave {predicted}"
    )
    assert tuple(out.shape) == predicted, f"{kind}{args} on {tuple(t.shape)}"
    assert out.untyped_storage().data_ptr() == t.untyped_storage().data_ptr(), "not a view"
    printed = eval(VIEWS[kind].code("x", *args), {"x": t})  # noqa: S307 - our own printed code
    assert (printed.shape, printed.stride(), printed.storage_offset()) == (
        out.shape,
        out.stride(),
        out.storage_offset(),
    ), f"{VIEWS[kind].code('x', *args)} is not what apply ran"
    assert type(printed.grad_fn) is type(out.grad_fn), (
        VIEWS[kind].code("x", *args),
        printed.grad_fn,
        out.grad_fn,
    )


def test_a_dim_0_slice_prints_a_tuple_index():
    """``x[0::1]`` and ``x[0::1,]`` take different paths in torch; what runs is the tuple."""
    assert VIEWS["slice"].code("x", 0, 0, None, 1) == "x[0::1,]"
    assert VIEWS["slice"].code("x", 1, None, 3, None) == "x[:, :3]"


def test_resolve_sizes():
    assert resolve_sizes((2, -1), 6) == (2, 3)
    for bad in ((-1, -1), (4, -1), (0, -1), (5,)):
        with pytest.raises(ValueError):
            resolve_sizes(bad, 6)
