"""The strategies make what they claim: every layout family, every dtype,
runnable reprs, and the documented build semantics."""

from __future__ import annotations

import collections
import math
import types

import numpy as np
import pytest
import torch
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from conformance.checks import same_bits
from strategies import (
    ALL_DTYPES,
    COMPLEX,
    DIFFERENTIABLE,
    FLOATING,
    INTEGRAL,
    LAYOUT_KINDS,
    TensorSpec,
    dtypes,
    is_dense,
    layout_grid,
    layout_kinds,
    shapes,
    tensor_specs,
    tensors,
)
from strategies.tensors import special_values


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


# --------------------------------------------------------------- value classes
# Element values: "bounded" (finite, |x| <= 1e3: the default, for arithmetic),
# "finite" (the whole finite range with its special values) and "all" (also
# NaN and +-Inf). Found with hypothesis.find over a bounded number of draws.

#: find() settings: the first match is enough (no shrinking).
_FIND = settings(max_examples=300, derandomize=True, database=None, phases=[Phase.generate])


def _floats_of(spec: TensorSpec) -> list[float]:
    """Every floating component of the spec's storage (both parts of a complex)."""
    out: list[float] = []
    for v in spec.storage:
        out.extend((v.real, v.imag) if isinstance(v, complex) else (v,))
    return out


def _component(dtype: torch.dtype) -> torch.dtype:
    return {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(dtype, dtype)


def _is_subnormal(x: float, dtype: torch.dtype) -> bool:
    return x != 0 and math.isfinite(x) and abs(x) < torch.finfo(_component(dtype)).tiny


_SPECIAL_CLASSES = {
    "-0.0": lambda x, dt: x == 0 and math.copysign(1.0, x) < 0,
    "nan": lambda x, dt: math.isnan(x),
    "+inf": lambda x, dt: x == math.inf,
    "-inf": lambda x, dt: x == -math.inf,
    "subnormal": _is_subnormal,
    "max": lambda x, dt: x == torch.finfo(_component(dt)).max,
    "-max": lambda x, dt: x == -torch.finfo(_component(dt)).max,
}


@pytest.mark.parametrize("dtype", FLOATING + COMPLEX, ids=str)
@pytest.mark.parametrize("cls", sorted(_SPECIAL_CLASSES))
def test_values_all_reaches_every_special_float_class(dtype, cls):
    pred = _SPECIAL_CLASSES[cls]
    spec = find(
        tensor_specs(dtype=dtype, values="all"),
        lambda s: any(pred(x, dtype) for x in _floats_of(s)),
        settings=_FIND,
    )
    assert any(pred(x, dtype) for x in _floats_of(spec))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("part", ["real", "imag"])
@pytest.mark.parametrize("cls", ["-0.0", "nan", "+inf", "subnormal", "max"])
def test_values_all_makes_each_complex_part_special(dtype, part, cls):
    pred = _SPECIAL_CLASSES[cls]
    find(
        tensor_specs(dtype=dtype, values="all"),
        lambda s: any(pred(getattr(v, part), dtype) for v in s.storage),
        settings=_FIND,
    )


@pytest.mark.parametrize("dtype", INTEGRAL, ids=str)
@pytest.mark.parametrize("values", ["finite", "all"])
def test_values_reach_integer_extremes(dtype, values):
    info = torch.iinfo(dtype)
    for extreme in (info.min, info.max):
        find(
            tensor_specs(dtype=dtype, values=values),
            lambda s, e=extreme: e in s.storage,
            settings=_FIND,
        )


def test_values_all_reaches_both_bools():
    for b in (False, True):
        find(
            tensor_specs(dtype=torch.bool, values="all"),
            lambda s, b=b: b in s.storage,
            settings=_FIND,
        )


@pytest.mark.parametrize("dtype", FLOATING + COMPLEX, ids=str)
def test_values_finite_reaches_extremes_but_never_nan_or_inf(dtype):
    find(
        tensor_specs(dtype=dtype, values="finite"),
        lambda s: any(_is_subnormal(x, dtype) for x in _floats_of(s)),
        settings=_FIND,
    )
    find(
        tensor_specs(dtype=dtype, values="finite"),
        lambda s: any(x == torch.finfo(_component(dtype)).max for x in _floats_of(s)),
        settings=_FIND,
    )
    for s in _draw_many(tensor_specs(dtype=dtype, values="finite"), 200):
        assert all(math.isfinite(x) for x in _floats_of(s)), s
        t = s.build()
        assert bool(torch.isfinite(t).all()), s


@pytest.mark.parametrize("dtype", FLOATING + COMPLEX, ids=str)
def test_values_bounded_stays_within_1e3(dtype):
    for s in _draw_many(tensor_specs(dtype=dtype), 200):
        assert all(abs(x) <= 1e3 for x in _floats_of(s)), s
        t = s.build()
        parts = torch.view_as_real(t.resolve_conj()) if t.is_complex() else t
        assert bool((parts.abs() <= 1e3).all())


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_special_values_are_exact_in_their_dtype(dtype):
    """Storage values drawn with values="all" are representable exactly: the
    built tensor read back holds the same numbers (sign of zero included),
    so a spec's repr says what the tensor holds. bfloat16 draws land on its
    own grid, not on float32's."""
    for s in _draw_many(tensor_specs(dtype=dtype, values="all"), 100):
        back = s.build_base().reshape(-1).tolist()
        for want, got in zip(s.storage, back, strict=True):
            for w, g in zip(_floats_of_value(want), _floats_of_value(got), strict=True):
                if isinstance(w, float) and math.isnan(w):
                    assert math.isnan(g), (s, w, g)
                else:
                    assert w == g and math.copysign(1, w) == math.copysign(1, g), (s, w, g)


def _floats_of_value(v):
    return (v.real, v.imag) if isinstance(v, complex) else (v,)


@given(tensor_specs(values="all"))
def test_repr_with_special_values_rebuilds_the_same_bits(spec):
    again = eval(repr(spec), {"torch": torch, "TensorSpec": TensorSpec})
    assert same_bits(spec.build(), again.build()), repr(spec)


def test_repr_spells_out_special_values():
    nan_payload = np.array([0x7FF8000000000001], dtype=np.uint64).view(np.float64)[0].item()
    spec = TensorSpec(
        dtype=torch.complex128,
        base_shape=(4,),
        storage=(complex(-0.0, math.inf), complex(math.nan, 1.0), complex(nan_payload, -0.0), 1j),
    )
    text = repr(spec)
    assert "complex(-0.0, float('inf'))" in text and "complex(float('nan'), 1.0)" in text
    assert "torch.tensor(9221120237041090561).view(torch.float64).item()" in text
    again = eval(text, {"torch": torch, "TensorSpec": TensorSpec})
    assert same_bits(again.build(), spec.build())
    floats = TensorSpec(
        dtype=torch.float64, base_shape=(4,), storage=(-0.0, -math.inf, -math.nan, 5e-324)
    )
    assert "storage=[-0.0, float('-inf'), float('-nan'), 5e-324]" in repr(floats)
    assert same_bits(eval(repr(floats), {"torch": torch, "TensorSpec": TensorSpec}).build(),
                     floats.build())  # fmt: skip

    shown: list[str] = []  # Hypothesis prints falsifying examples through _repr_pretty_
    floats._repr_pretty_(types.SimpleNamespace(text=shown.append), False)
    assert shown == [repr(floats)], "falsifying examples do not print the runnable repr"


@pytest.mark.parametrize("bad", ["nan", "ALL", None, 3])
def test_unknown_values_raise_when_the_strategy_is_made(bad):
    with pytest.raises(InvalidArgument, match="must be one of 'bounded', 'finite', 'all'"):
        tensor_specs(values=bad)  # not drawn from: raised at creation
    with pytest.raises(InvalidArgument):
        layout_grid(values=bad)
    with pytest.raises(InvalidArgument):
        special_values(torch.float32, bad)


@pytest.mark.parametrize("values", ["finite", "all"])
def test_layout_grid_with_special_values(values):
    specs = layout_grid((torch.float16, torch.bfloat16, torch.complex64), values=values)
    first = [s.storage[0] for s in specs if s.storage]
    assert all(isinstance(v, complex) or math.copysign(1, v) < 0 for v in first)  # -0.0 leads
    for s in specs:
        assert same_bits(
            s.build(), eval(repr(s), {"torch": torch, "TensorSpec": TensorSpec}).build()
        )
        bits = [np.array(v, dtype=np.complex128).tobytes() for v in s.storage]
        assert len(set(bits)) == len(bits), f"grid values are not distinct: {s}"
    six = [s for s in specs if s.dtype == torch.float16 and len(s.storage) >= 6][0]
    has_nan = any(math.isnan(v) for v in six.storage)
    assert has_nan is (values == "all")
    assert layout_grid((torch.float32,)) == layout_grid((torch.float32,), values="bounded")
