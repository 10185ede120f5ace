"""The strategies make what they claim: every layout family, every dtype,
runnable reprs, and the documented build semantics."""

from __future__ import annotations

import collections
import math
import types

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from conformance.checks import same_bits
from conformance.model.generated_graphs import analyze
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    COMPLEX,
    DIFFERENTIABLE,
    FLOATING,
    GRID_LAYOUTS,
    INTEGRAL,
    LAYOUT_KINDS,
    NON_OVERLAPPING_VIEWS,
    VIEW_KINDS,
    TensorSpec,
    dtypes,
    graphs,
    grid_examples,
    is_dense,
    layout_grid,
    layout_kinds,
    shapes,
    silent_graphs,
    small_int_specs,
    tensor_specs,
    tensors,
)
from strategies.dtypes import BOOL, SIGNED_INTS, UNSIGNED_INTS, dtype_name
from strategies.graphs import ALIASES, INPLACE_OPS, VIEW_OPS, lazy_view_graphs
from strategies.layouts import (
    channels_last_contiguous_specs,
    non_dense_specs,
    not_row_major_specs,
)
from strategies.tensors import VALUE_CLASSES, special_values


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


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_occurs(dtype):
    """Each dtype is reachable by tensor_specs() (searched with find, so the
    result does not hang on one derandomized sample of 300 draws)."""
    spec = find(
        tensor_specs(),
        lambda s: s.dtype == dtype,
        settings=settings(
            max_examples=3000, database=None, derandomize=True, phases=[Phase.generate]
        ),
    )
    assert spec.build().dtype == dtype


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


# --------------------------------------------------------------- every parameterisation
# The tests above mostly draw with the defaults. Here each argument of each
# public strategy of ``strategies/`` is exercised with each of its values
# (dtype families, view kinds and layouts, min_side, channels_last,
# requires_grad/leaf combinations, value classes; the graph strategies'
# options), so a strategy that ignores or mishandles an argument - and with
# it the inputs a property asks for - is caught. Draw counts stay small:
# these run in CI on two cores.

#: Every dtype family :func:`strategies.dtypes` knows, with its dtypes.
_DTYPE_FAMILIES = {
    "bool": BOOL,
    "signed": SIGNED_INTS,
    "unsigned": UNSIGNED_INTS,
    "integral": INTEGRAL,
    "floating": FLOATING,
    "complex": COMPLEX,
    "differentiable": DIFFERENTIABLE,
    "arithmetic": ARITHMETIC,
    "all": ALL_DTYPES,
}


def test_dtype_families_are_all_listed():
    from strategies.dtypes import _FAMILIES

    assert {k: tuple(v) for k, v in _FAMILIES.items()} == _DTYPE_FAMILIES


def test_differentiable_is_the_models_name_set_in_dtype_order():
    """DIFFERENTIABLE is derived from the reference model's names; the order
    (FLOATING, then COMPLEX) is what sampled_from shrinks towards."""
    from conformance.model import DIFFERENTIABLE as NAMES

    assert DIFFERENTIABLE == FLOATING + COMPLEX
    assert {dtype_name(d) for d in DIFFERENTIABLE} == NAMES


@pytest.mark.parametrize("family", sorted(_DTYPE_FAMILIES))
def test_dtypes_draws_exactly_each_family(family):
    members = _DTYPE_FAMILIES[family]
    assert set(_draw_many(dtypes(family), 12 * len(members))) == set(members)


def test_dtypes_union_and_default():
    assert set(_draw_many(dtypes("bool", "complex"), 40)) == {torch.bool, *COMPLEX}
    assert set(_draw_many(dtypes(), 200)) == set(ALL_DTYPES)


@pytest.mark.parametrize("family", sorted(_DTYPE_FAMILIES))
def test_tensor_specs_draw_every_dtype_of_a_family(family):
    """Only the family's dtypes, and each of them (found, not sampled)."""
    members = _DTYPE_FAMILIES[family]
    strategy = tensor_specs(dtype=members, shape=(2,), views=False)
    for s in _draw_many(strategy, 40):
        assert s.dtype in members and s.build().dtype == s.dtype
    for d in members:
        find(strategy, lambda s, d=d: s.dtype == d, settings=_FIND)


def test_tensor_specs_dtype_forms():
    """A dtype, a sequence, a strategy, or None (every dtype)."""
    assert {s.dtype for s in _draw_many(tensor_specs(dtype=torch.int16), 20)} == {torch.int16}
    assert {s.dtype for s in _draw_many(tensor_specs(dtype=[torch.uint8, torch.float16]), 40)} == {
        torch.uint8,
        torch.float16,
    }
    assert {s.dtype for s in _draw_many(tensor_specs(dtype=dtypes("complex")), 40)} == set(COMPLEX)
    for d in ALL_DTYPES:
        find(tensor_specs(dtype=None, shape=(2,), views=False), lambda s, d=d: s.dtype == d,
             settings=_FIND)  # fmt: skip


#: The layout family a spec drawn with only this view kind shows (beyond the
#: base's own); ``unsqueeze``/``select`` views need not change the layout family.
_VIEW_KIND_LAYOUT = {
    "offset": "offset",
    "slice": "stepped",
    "permute": "permuted",
    "expand": "expanded",
    "unsqueeze": None,
    "select": None,
}


@pytest.mark.parametrize("kind", VIEW_KINDS)
def test_tensor_specs_each_view_kind_alone(kind):
    specs = _draw_many(tensor_specs(dtype=torch.float32, views=(kind,)), 120)
    assert all(op[0] == kind for s in specs for op in s.views), kind
    assert any(s.views for s in specs), f"views=({kind!r},) never drew a {kind} view"
    for s in specs:
        t = s.build()
        assert t._is_view() == s.is_view and tuple(t.shape) == s.shape
    want = _VIEW_KIND_LAYOUT[kind]
    if want is not None:
        assert any(want in layout_kinds(s.build()) for s in specs if s.views), (kind, want)


def test_tensor_specs_non_overlapping_views_never_overlap():
    specs = _draw_many(tensor_specs(dtype=torch.float32, views=NON_OVERLAPPING_VIEWS), 300)
    assert {op[0] for s in specs for op in s.views} == set(NON_OVERLAPPING_VIEWS)
    # A zero-size channels_last base has stride 0 on dimensions of size > 1
    # (torch's strides of an empty tensor): no element, so nothing overlaps.
    built = [s.build() for s in specs]
    assert not any("expanded" in layout_kinds(t) for t in built if t.numel())


@pytest.mark.parametrize(("views", "max_views"), [(False, 2), (True, 0), (True, 1), (True, 3)])
def test_tensor_specs_views_false_and_max_views(views, max_views):
    specs = _draw_many(tensor_specs(dtype=torch.float64, views=views, max_views=max_views), 150)
    longest = max(len(s.views) for s in specs)
    if not views or max_views == 0:
        assert longest == 0
        assert all(not s.build()._is_view() for s in specs)
    else:
        assert longest == max_views, f"max_views={max_views}: longest chain {longest}"


_FOUR_D = shapes(min_dims=4, max_dims=4, min_side=1, max_side=3)


@pytest.mark.parametrize("channels_last", [True, False, None])
def test_tensor_specs_channels_last_argument(channels_last):
    specs = _draw_many(
        tensor_specs(dtype=torch.float32, shape=_FOUR_D, views=False, channels_last=channels_last),
        60,
    )
    flags = {s.channels_last for s in specs}
    assert flags == ({True, False} if channels_last is None else {channels_last})
    for s in specs:
        t = s.build()
        assert t.is_contiguous(memory_format=torch.channels_last) or not s.channels_last
        if s.channels_last and "channels_last" not in layout_kinds(t):
            assert 1 in t.shape[1:] or t.numel() == 0  # size-1 dims: both formats at once
    assert channels_last is False or any("channels_last" in layout_kinds(s.build()) for s in specs)


@pytest.mark.parametrize("min_side", [0, 1, 2])
@pytest.mark.parametrize("views", [False, True])
def test_tensor_specs_min_side(min_side, views):
    """``shape`` is the built tensor's shape, views or not: min_side bounds it,
    and only min_side=0 draws zero-size tensors."""
    specs = _draw_many(
        tensor_specs(dtype=torch.float32, shape=shapes(min_side=min_side), views=views), 150
    )
    assert all(min(s.shape, default=min_side) >= min_side for s in specs)
    zero = [s for s in specs if "zero-size" in layout_kinds(s.build())]
    assert bool(zero) is (min_side == 0)


def test_tensor_specs_fixed_shape_with_views():
    for s in _draw_many(tensor_specs(shape=(2, 0, 3)), 60):
        assert s.shape == (2, 0, 3) and tuple(s.build().shape) == (2, 0, 3)


@pytest.mark.parametrize(
    ("kwargs", "check"),
    [
        ({"min_dims": 2, "max_dims": 3}, lambda s: 2 <= len(s) <= 3),
        ({"min_side": 1, "max_side": 2}, lambda s: all(1 <= x <= 2 for x in s)),
        ({"min_dims": 0, "max_dims": 0}, lambda s: s == ()),
        ({"min_dims": 1, "min_side": 0, "max_side": 0}, lambda s: len(s) >= 1 and set(s) == {0}),
    ],
)
def test_shapes_bounds(kwargs, check):
    drawn = _draw_many(shapes(**kwargs), 60)
    assert all(check(s) for s in drawn), (kwargs, [s for s in drawn if not check(s)][:3])


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("leaf", [False, True])
def test_tensors_every_requires_grad_leaf_combination(requires_grad, leaf):
    """``tensors(requires_grad=, leaf=)``: requires_grad restricts the dtypes to
    differentiable ones; a view is a non-leaf with a grad_fn unless ``leaf``;
    without requires_grad, ``leaf`` changes nothing."""
    drawn = _draw_many(tensors(requires_grad=requires_grad, leaf=leaf), 100)
    assert any(t._is_view() for t in drawn) and any(not t._is_view() for t in drawn)
    for t in drawn:
        assert t.requires_grad is requires_grad
        if requires_grad:
            assert t.dtype in DIFFERENTIABLE
            nonleaf = t._is_view() and not leaf
            assert t.is_leaf is not nonleaf and (t.grad_fn is None) is not nonleaf
        else:
            assert t.is_leaf and t.grad_fn is None
    if not requires_grad:
        assert {t.dtype for t in drawn} - set(DIFFERENTIABLE), "non-differentiable dtypes drawn"


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_spec_build_every_autograd_combination(dtype):
    """``TensorSpec.build`` with each (requires_grad, leaf) on a view spec of every
    dtype: integral and bool dtypes refuse requires_grad; ``leaf`` alone is a no-op."""
    spec = layout_grid((dtype,))[4]  # transposed-stepped: a view of a hidden base
    assert spec.is_view
    plain, flagged_only = spec.build(), spec.build(leaf=True)
    for t in (plain, flagged_only):
        assert not t.requires_grad and t.is_leaf and t._is_view()
    if dtype not in DIFFERENTIABLE:
        for leaf in (False, True):
            with pytest.raises(ValueError, match="cannot require gradients"):
                spec.build(requires_grad=True, leaf=leaf)
        return
    nonleaf, leaf_view = spec.build(requires_grad=True), spec.build(requires_grad=True, leaf=True)
    assert nonleaf.requires_grad and not nonleaf.is_leaf and nonleaf._base.requires_grad
    assert leaf_view.requires_grad and leaf_view.is_leaf and not leaf_view._base.requires_grad
    for t in (nonleaf, leaf_view):
        assert t.stride() == plain.stride() and t.storage_offset() == plain.storage_offset()


def test_requires_grad_with_a_non_differentiable_dtype_raises_when_drawn():
    with pytest.raises(ValueError, match="requires_grad=True asked for non-differentiable"):
        _draw_many(tensor_specs(dtype=torch.int32, requires_grad=True), 1)
    drawn = _draw_many(tensor_specs(requires_grad=True), 60)
    assert {s.dtype for s in drawn} <= set(DIFFERENTIABLE)
    for d in DIFFERENTIABLE:
        find(tensor_specs(requires_grad=True, shape=(2,), views=False),
             lambda s, d=d: s.dtype == d, settings=_FIND)  # fmt: skip


@pytest.mark.parametrize("values", VALUE_CLASSES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_value_class_of_every_dtype_builds_exactly(values, dtype):
    """Each (value class, dtype) draws storage the built tensor holds exactly, and
    stays in its class (bounded: |x| <= 1e3 for floating/complex; finite: no NaN
    or Inf)."""
    for s in _draw_many(tensor_specs(dtype=dtype, values=values, shape=(3,), views=False), 25):
        back = s.build_base().reshape(-1).tolist()
        for want, got in zip(s.storage, back, strict=True):
            for w, g in zip(_floats_of_value(want), _floats_of_value(got), strict=True):
                if isinstance(w, float) and math.isnan(w):
                    assert values == "all" and math.isnan(g), (s, w, g)
                else:
                    assert w == g and math.copysign(1, w) == math.copysign(1, g), (s, w, g)
                    if values != "all" and isinstance(w, float):
                        assert math.isfinite(w), s
                    if values == "bounded" and isinstance(w, float):
                        assert abs(w) <= 1e3, s


@pytest.mark.parametrize("values", VALUE_CLASSES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_special_values_of_each_class(values, dtype):
    sv = special_values(dtype, values)
    if values == "bounded":
        assert sv == []
        return
    floats = [x for v in sv for x in _floats_of_value(v) if isinstance(x, float)]
    finite = all(math.isfinite(x) for x in floats)
    assert finite is (values == "finite" or not (dtype.is_floating_point or dtype.is_complex))
    if values == "all" and (dtype.is_floating_point or dtype.is_complex):
        assert any(math.isnan(x) for x in floats) and any(math.isinf(x) for x in floats)
    if dtype in INTEGRAL:
        info = torch.iinfo(dtype)
        assert {info.min, info.max} <= set(sv)


@pytest.mark.parametrize("hi", [1, 3, 100])
def test_small_int_specs(hi):
    base = tensor_specs(dtype=[torch.bool] if hi == 1 else ALL_DTYPES)
    for s in _draw_many(small_int_specs(base, hi), 60):
        assert all(0 <= v <= hi for v in s.storage), s
        t = s.build()
        assert tuple(t.shape) == s.shape and t.dtype == s.dtype


@pytest.mark.parametrize("values", VALUE_CLASSES)
def test_layout_grid_covers_every_dtype_and_layout(values):
    specs = layout_grid(values=values)
    assert len(specs) == len(ALL_DTYPES) * len(GRID_LAYOUTS)
    assert {s.dtype for s in specs} == set(ALL_DTYPES)
    for dtype in (torch.bool, torch.uint8, torch.bfloat16, torch.complex128):
        for (name, *_), s in zip(GRID_LAYOUTS, layout_grid((dtype,), values=values), strict=True):
            assert _GRID_LAYOUT_KINDS[name] <= layout_kinds(s.build()), (name, dtype)


#: The layout families each grid entry must show.
_GRID_LAYOUT_KINDS = {
    "contiguous": {"contiguous"},
    "offset": {"offset"},
    "stepped": {"stepped"},
    "transposed": {"permuted"},
    "transposed-stepped": {"permuted", "stepped"},
    "select-inner": {"offset", "stepped"},
    "expanded": {"expanded"},
    "unsqueezed-permuted": {"permuted"},
    "channels_last": {"channels_last"},
    "channels_last-sliced": {"offset", "stepped"},
    "0-d": {"0-d"},
    "0-d-view": {"0-d", "offset"},
    "zero-size": {"zero-size"},
    "zero-size-view": {"zero-size", "offset"},
}


def test_grid_layout_kinds_table_is_complete():
    assert set(_GRID_LAYOUT_KINDS) == {name for name, *_ in GRID_LAYOUTS}
    assert set().union(*_GRID_LAYOUT_KINDS.values()) == set(LAYOUT_KINDS)


@pytest.mark.parametrize("grid_values", VALUE_CLASSES)
def test_grid_examples_arguments(grid_values):
    """``grid_examples(param, dtypes, where, grid_values, **fixed)``: one explicit
    example per kept grid spec, under ``param``, with ``fixed`` passed through."""
    seen = []

    @settings(phases=[Phase.explicit], database=None)
    @grid_examples("t", dtypes=(torch.float16, torch.int8), where=lambda s: s.is_view,
                   grid_values=grid_values, other=7)  # fmt: skip
    @given(t=tensor_specs(), other=st.integers())
    def collect(t, other):
        seen.append((t, other))

    collect()
    want = [s for s in layout_grid((torch.float16, torch.int8), values=grid_values) if s.is_view]
    assert sorted(map(repr, (t for t, _ in seen))) == sorted(map(repr, want))
    assert {o for _, o in seen} == {7}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("values", VALUE_CLASSES)
def test_non_dense_specs_arguments(requires_grad, values):
    shape = shapes(min_dims=2, max_dims=2, min_side=1, max_side=3)
    specs = _draw_many(non_dense_specs(shape=shape, requires_grad=requires_grad, values=values), 40)
    for s in specs:
        t = s.build(requires_grad=requires_grad)
        assert t.numel() > 0 and not is_dense(t), s
        assert t.dim() == 2
        assert not requires_grad or s.dtype in DIFFERENTIABLE
    if values == "all":
        assert any(
            math.isnan(x) for s in specs if s.dtype in FLOATING for x in _floats_of(s)
        ) or any(s.dtype not in FLOATING for s in specs)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_not_row_major_specs_arguments(requires_grad):
    specs = _draw_many(not_row_major_specs(requires_grad=requires_grad, values="finite"), 60)
    for s in specs:
        t = s.build(requires_grad=requires_grad)
        assert not (t.is_contiguous() and t.storage_offset() == 0) or t.numel() <= 1, s
        assert not requires_grad or t.requires_grad
    assert any(is_dense(s.build()) for s in specs) and any(not is_dense(s.build()) for s in specs)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_channels_last_contiguous_specs_arguments(requires_grad):
    specs = _draw_many(channels_last_contiguous_specs(requires_grad=requires_grad), 60)
    kinds = set()
    for s in specs:
        t = s.build(requires_grad=requires_grad)
        assert t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last), s
        assert not requires_grad or (t.requires_grad and s.dtype in DIFFERENTIABLE)
        kinds.add("base" if not s.views else s.views[0][0])
    assert kinds == {"base", "offset", "permute"}, kinds


# --------------------------------------------------------------- graph strategies' arguments


def _graph_draws(strategy, n=30):
    seen = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(x):
        seen.append(x)

    collect()
    return seen


def test_graphs_op_count_and_leaves_bounds():
    for g in _graph_draws(graphs(min_ops=3, max_ops=4, max_leaves=1)):
        assert len(g.leaves) == 1 and 1 <= len(g.ops) <= 4
    counts = {len(g.ops) for g in _graph_draws(graphs(min_ops=3, max_ops=4, max_leaves=1))}
    assert counts & {3, 4}


@pytest.mark.parametrize("dtype", DIFFERENTIABLE, ids=str)
def test_graphs_dtypes_argument(dtype):
    for g in _graph_draws(graphs(dtypes=(dtype,), max_ops=3), 15):
        assert {lf.spec.dtype for lf in g.leaves} == {dtype}


def test_graphs_regions_inplace_retain_flags_off():
    for g in _graph_draws(graphs(regions=False, inplace=False, retain=False)):
        assert all(op.mode == "grad" for op in g.ops)
        assert not any(lf.no_grad for lf in g.leaves)
        assert not any(op.kind in INPLACE_OPS for op in g.ops)
        assert g.retain == () and g.mutation is None


@pytest.mark.parametrize("requires_grad", [False, True])
def test_graphs_requires_grad_argument(requires_grad):
    for g in _graph_draws(graphs(requires_grad=requires_grad, max_ops=4), 20):
        assert all(lf.requires_grad is requires_grad for lf in g.leaves)
        if not requires_grad:
            assert not analyze(g).out_rg


@pytest.mark.parametrize("alias", ALIASES)
def test_graphs_mutation_aliases_argument(alias):
    drawn = _graph_draws(graphs(mutation=True, aliases=(alias,), max_ops=4), 25)
    assert any(g.mutation is not None for g in drawn)
    assert all(g.mutation.alias == alias for g in drawn if g.mutation is not None)


def test_graphs_need_argument():
    for g in _graph_draws(graphs(need=lambda m: m.out_rg, max_ops=4), 20):
        assert analyze(g).out_rg


@pytest.mark.parametrize("dtype", [torch.float16, torch.complex128], ids=str)
def test_silent_graphs_arguments(dtype):
    for g in _graph_draws(silent_graphs(dtypes=(dtype,), max_ops=2), 20):
        assert g.leaves[0].spec.dtype == dtype and 1 <= len(g.ops) <= 2
        assert not any(v[0] == "expand" for v in g.leaves[0].spec.views)


@pytest.mark.parametrize(("max_views", "max_tail"), [(1, 0), (3, 4)])
def test_lazy_view_graphs_arguments(max_views, max_tail):
    drawn = _graph_draws(lazy_view_graphs(dtypes=(torch.float32,), max_views=max_views,
                                          max_tail=max_tail), 25)  # fmt: skip
    for g in drawn:
        assert g.leaves[0].spec.dtype == torch.float32 and not g.leaves[0].requires_grad
        views = [op for op in g.ops[1 : 1 + max_views] if op.kind in VIEW_OPS]
        assert len(views) <= max_views
        assert len(g.ops) <= 1 + max_views + 1 + max_tail
    models = [analyze(g) for g in drawn]
    assert any(any(m.lazy(i) for i in range(g.n_nodes)) for g, m in zip(drawn, models, strict=True))


def test_domain_examples_make_builds_each_example_from_its_spec():
    """``domain_examples(..., make=...)`` adds one explicit example per
    :func:`domain_grid` spec its ``where`` keeps, with ``make(spec)`` as the
    parameter's value; the grid predicates say what they keep."""
    from strategies.domains import (
        domain_examples,
        domain_grid,
        non_empty,
        not_expanded,
        writable_non_empty,
    )

    seen = []

    @settings(phases=[Phase.explicit], database=None)
    @domain_examples("case", where=writable_non_empty, make=lambda s: ("fill_", s), k=2)
    @given(case=st.none(), k=st.integers())
    def record(case, k):
        seen.append((case, k))

    record()
    want = domain_grid(where=writable_non_empty)
    assert sorted(map(repr, seen)) == sorted(repr((("fill_", s), 2)) for s in want)
    assert all(non_empty(s) and not_expanded(s) for s in want)
    assert any(not not_expanded(s) for s in domain_grid())
    assert any(not non_empty(s) for s in domain_grid())
