"""Properties of NumPy interop (claims in ``claims/numpy.toml``): ``torch.from_numpy``,
``Tensor.numpy`` and NumPy inputs to ``torch.tensor``/``as_tensor``/``asarray``.

NumPy arrays live in host memory, so every claim is registered ``devices = ["cpu"]``.
Arrays are drawn with ``hypothesis.extra.numpy`` and then viewed through a drawn
transpose and positive-step slicing (offsets, steps), so non-contiguous arrays occur.
What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance import evidence
from conformance.checks import (
    capture_warnings,
    first_index,
    raises_with,
    run_fresh_interpreter,
    same_bits,
    sentinel_for,
    shares_storage,
)
from strategies import (
    ALL_DTYPES,
    COMPLEX,
    DIFFERENTIABLE,
    TensorSpec,
    grid_examples,
    numpy_dtype,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    DOMAIN_SPEC_COMPLEX,
    domain_examples,
    layout_kinds,
    tensor_kind_of,
)
from strategies.dtypes import dtype_family

#: NumPy dtype -> torch dtype, for every torch dtype NumPy can hold (not bfloat16).
NP_TO_TORCH: dict[np.dtype, torch.dtype] = {
    numpy_dtype(d): d for d in ALL_DTYPES if d != torch.bfloat16
}
NP_DTYPES: tuple[np.dtype, ...] = tuple(NP_TO_TORCH)
#: The dtypes the from_numpy docstring lists.
DOCUMENTED_NP_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(n)
    for n in (
        "float64",
        "float32",
        "float16",
        "complex64",
        "complex128",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
    )
)
#: Native-order dtypes torch cannot hold.
FOREIGN_NP_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(n) for n in ("longdouble", "clongdouble", "U1", "O", "M8[s]", "m8[s]", "V4")
)
NUMPY_DTYPES_NO_BF16 = tuple(d for d in ALL_DTYPES if d != torch.bfloat16)
NP_DIFFERENTIABLE = tuple(d for d in DIFFERENTIABLE if d != torch.bfloat16)


def _np_elements(dt: np.dtype) -> st.SearchStrategy:
    """Finite values for ``dt`` (bounded like the tensor strategies)."""
    if dt.kind == "f":
        return hnp.from_dtype(
            dt, allow_nan=False, allow_infinity=False, min_value=-1e3, max_value=1e3
        )
    if dt.kind == "c":
        return hnp.from_dtype(dt, allow_nan=False, allow_infinity=False, max_magnitude=1e3)
    return hnp.from_dtype(dt)


@dataclass(frozen=True)
class NdCase:
    """A base ndarray and the view taken of it: ``base.transpose(perm)[index]``;
    ``misaligned`` places the copy of the base one byte into a buffer (so
    ``flags.aligned`` is False for items wider than a byte), ``read_only``
    clears the view's ``flags.writeable``."""

    base: np.ndarray = field(compare=False)
    perm: tuple[int, ...] | None = None
    index: tuple[slice, ...] | None = None
    misaligned: bool = False
    read_only: bool = False

    def build(self) -> np.ndarray:
        """A fresh copy of the base, viewed through ``perm`` then ``index``."""
        if self.misaligned:
            raw = np.zeros(self.base.nbytes + 1, dtype=np.uint8)[1:]
            a = raw.view(self.base.dtype).reshape(self.base.shape)
            a[...] = self.base
        else:
            a = self.base.copy()
        if self.perm is not None:
            a = a.transpose(self.perm)
        if self.index is not None:
            a = a[self.index]
        if self.read_only:
            a.flags.writeable = False
        return a


@st.composite
def nd_cases(draw, *, dtypes=NP_DTYPES, min_side: int = 0, views: bool = True) -> NdCase:
    """ndarrays of 0-4 dims of ``dtypes`` (mostly non-empty; zero-size sides only when
    ``min_side=0``), viewed - when ``views`` - through a non-identity transpose and/or
    positive-step slices with offsets, so most multi-element draws are non-contiguous."""
    dt = draw(st.sampled_from(dtypes))
    shape = draw(
        st.one_of(
            hnp.array_shapes(min_dims=0, max_dims=4, min_side=max(1, min_side), max_side=4),
            hnp.array_shapes(min_dims=2, max_dims=3, min_side=max(2, min_side), max_side=4),
            hnp.array_shapes(min_dims=1, max_dims=4, min_side=min_side, max_side=4),
        )
    )
    base = draw(hnp.arrays(dt, shape, elements=_np_elements(dt)))
    perm = index = None
    kind = draw(st.sampled_from(["transpose+slice", "slice", "transpose", "plain"]))
    if views and base.ndim >= 2 and "transpose" in kind:
        perm = tuple(draw(st.permutations(range(base.ndim)).filter(lambda q: list(q) != sorted(q))))
    if views and base.ndim >= 1 and "slice" in kind:
        sides = base.transpose(perm).shape if perm else base.shape
        index = tuple(
            slice(
                draw(st.integers(0, max(0, min(1, side - min_side)))),
                None,
                draw(st.sampled_from([2, 1, 3])),
            )
            for side in sides
        )
    return NdCase(base=base, perm=perm, index=index)


def _grid_array(dt: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Distinct small values (alternating for bool) in ``dt``, shaped ``shape``."""
    n = int(np.prod(shape, dtype=np.int64))
    values = np.arange(1, n + 1).reshape(shape)
    if dt.kind == "b":
        values = values % 2
    elif dt.kind == "c":
        values = values + 1j * values
    return np.asarray(values).astype(dt)  # asarray: 0-d arithmetic gives a NumPy scalar


#: Layout families of :func:`nd_grid_examples`: (base shape, perm, index).
ND_GRID_LAYOUTS: tuple[tuple[tuple[int, ...], tuple | None, tuple | None], ...] = (
    ((2, 3), None, None),  # C-contiguous
    ((3, 2), (1, 0), None),  # transposed (Fortran order)
    ((2, 5), None, (slice(0, None, 1), slice(1, None, 2))),  # offset + step
    ((), None, None),  # 0-d
    ((0, 3), None, None),  # zero-size
)


def nd_grid_examples(param: str = "case", dtypes=NP_DTYPES, where=None, per_dtype=None, **fixed):
    """One explicit ``@example`` per (NumPy dtype, layout of :data:`ND_GRID_LAYOUTS`).

    The ndarray counterpart of :func:`strategies.grid_examples`: 100 random
    draws cover dtype x layout unevenly (a C-contiguous float32 array may never
    come up), so a torch that is wrong for one dtype on one layout - a fast
    path gone wrong - could slip through. ``where`` (``ndarray -> bool``,
    applied to the built array) keeps only the layouts a claim covers;
    ``per_dtype`` (``np.dtype -> dict``) gives arguments that depend on the
    array's dtype (a ``dtype=`` equal to it, say); ``fixed`` gives the test's
    other ``@given`` arguments. Place it above ``@given``.
    """
    from hypothesis import example

    def decorate(fn):
        for dt in dtypes:
            extra = per_dtype(dt) if per_dtype is not None else {}
            for shape, perm, index in ND_GRID_LAYOUTS:
                case = NdCase(base=_grid_array(dt, shape), perm=perm, index=index)
                if where is not None and not where(case.build()):
                    continue
                fn = example(**{param: case}, **fixed, **extra)(fn)
        return fn

    return decorate


#: Dtypes of :func:`nd_kind_examples` (items wider than one byte, so that an
#: array one byte into a buffer is misaligned).
_KIND_DTYPES: tuple[np.dtype, ...] = tuple(np.dtype(n) for n in ("float64", "int16", "complex64"))


def nd_kind_examples(
    param: str = "case", *, misaligned=True, read_only=True, dtypes=_KIND_DTYPES, **fixed
):
    """Explicit ``@example`` arrays of the ``ndarray_kind`` values the grid of
    :func:`nd_grid_examples` lacks (issue 29): a misaligned array
    (``flags.aligned`` False) and a read-only one, each C-contiguous (2, 3) and
    non-contiguous (an offset, stepped view), for each of ``dtypes`` (items wider
    than a byte). ``fixed`` gives the test's other ``@given`` arguments. Place it
    above ``@given``."""
    flags = [f for f, on in (("misaligned", misaligned), ("read_only", read_only)) if on]

    def decorate(fn):
        for dt in dtypes:
            for shape, index in (((2, 3), None), ((2, 5), (slice(0, None), slice(1, None, 2)))):
                for flag in flags:
                    case = NdCase(base=_grid_array(dt, shape), index=index, **{flag: True})
                    fn = example(**{param: case}, **fixed)(fn)
        return fn

    return decorate


def _ndarray_features(a: np.ndarray) -> None:
    """Report the ``ndarray_kind`` and ``writeable`` domain values of ``a``."""
    evidence.features(ndarray_kind=evidence.ndarray_kinds(a), writeable=bool(a.flags.writeable))


def _nonempty_nd(a: np.ndarray) -> bool:
    """At least 1-d and non-empty (the layouts the ndarray-sharing tests of
    asarray cover; 0-d arrays have their own claims)."""
    return a.ndim >= 1 and a.size > 0


def _np_addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _strides_match(t: torch.Tensor, a: np.ndarray) -> bool:
    """Element strides agree on every dim of size > 1 (others carry no information)."""
    if t.shape != a.shape:
        return False
    if not a.size:
        return True
    return all(
        ts == s // a.itemsize
        for ts, s, n in zip(t.stride(), a.strides, a.shape, strict=True)
        if n > 1
    )


def _sentinel(a: np.ndarray):
    """A value representable in ``a``'s dtype that differs from ``a``'s first element."""
    return sentinel_for(torch.from_numpy(np.ascontiguousarray(a[first_index(a)]).copy()))


def _array_write_seen_in_tensor(a: np.ndarray, t: torch.Tensor) -> bool:
    """Write a new value into ``a``'s first element; True when ``t`` reads it too."""
    a[first_index(a)] = _sentinel(a)
    return t[first_index(t)].item() == a[first_index(a)].item()


def _tensor_write_seen_in_array(t: torch.Tensor, a: np.ndarray) -> bool:
    """Write a new value into ``t``'s first element; True when ``a`` reads it too."""
    with torch.no_grad():
        t[first_index(t)] = _sentinel(a)
    return a[first_index(a)].item() == t[first_index(t)].item()


def _same_values(t: torch.Tensor, a: np.ndarray) -> bool:
    return t.shape == a.shape and np.array_equal(t.detach().numpy(force=True), a)


def _build_tensor(spec, requires_grad=False):
    return spec.build("cpu", requires_grad=requires_grad and spec.dtype in DIFFERENTIABLE)


# ------------------------------------------------------------ ndarray -> tensor


@pytest.mark.claim("numpy.tensor-copies-ndarray")
@pytest.mark.observes("detach", "tensor")
@nd_grid_examples(direction="array-write")
@nd_kind_examples(direction="tensor-write")
@given(case=nd_cases(), direction=st.sampled_from(["array-write", "tensor-write"]))
def test_tensor_of_ndarray_copies(device, case, direction):
    """Every layout of the grid, and misaligned and read-only arrays (a read-only
    array is checked by a write through the tensor only).

    Kills: torch.tensor(ndarray) that aliases the array (like from_numpy, maybe only
    for one dtype, layout or kind of array), changes its dtype or values, or returns a
    tensor with autograd state."""
    a = case.build()
    _ndarray_features(a)
    if not a.flags.writeable:
        direction = "tensor-write"
    t = torch.tensor(a)
    assert t.dtype == NP_TO_TORCH[a.dtype], f"torch.tensor({a.dtype} array) is {t.dtype}"
    assert _same_values(t, a), "torch.tensor(ndarray) changed the values"
    assert t.is_leaf and not t.requires_grad, "torch.tensor(ndarray) has autograd state"
    if a.size:
        assert t.data_ptr() != _np_addr(a), "torch.tensor(ndarray) shares the array's memory"
        if direction == "array-write":
            assert not _array_write_seen_in_tensor(a, t), "array write seen in torch.tensor(a)"
        else:
            assert not _tensor_write_seen_in_array(t, a), "torch.tensor(a) write seen in array"


_REAL_NP_DTYPES = tuple(d for d in NP_DTYPES if d.kind != "c")


@pytest.mark.claim("numpy.tensor-dtype-override")
@pytest.mark.observes("tensor", "to")
@nd_grid_examples(dtypes=_REAL_NP_DTYPES, target=torch.float64, cap=100)
@nd_grid_examples(dtypes=_REAL_NP_DTYPES, per_dtype=lambda dt: {"target": NP_TO_TORCH[dt]}, cap=100)
@nd_kind_examples(dtypes=(np.dtype("float64"), np.dtype("int16")), target=torch.float32, cap=100)
@given(
    case=nd_cases(dtypes=_REAL_NP_DTYPES),
    target=st.sampled_from(ALL_DTYPES),
    cap=st.integers(0, 100),
)
def test_tensor_of_ndarray_dtype_override(device, case, target, cap):
    """Every NumPy dtype and layout of the grid, with a converting dtype= and with
    the array's own dtype.

    Misaligned and read-only arrays too (the values are set before the array is
    made read-only).

    Kills: a dtype= that is ignored for ndarray input (the array's dtype wins), or a
    result aliasing the array (e.g. a from_numpy fast path when nothing converts)."""
    a = dataclasses.replace(case, read_only=False).build()
    # Values 0..100 convert exactly into every dtype: the claim is the override, not
    # out-of-range or complex->real conversion rules.
    a[...] = np.minimum(np.abs(a.astype(np.float64)), cap).astype(a.dtype)
    a.flags.writeable = not case.read_only
    _ndarray_features(a)
    t = torch.tensor(a, dtype=target)
    assert t.dtype == target, f"torch.tensor(a, dtype={target}) gave {t.dtype}"
    ref = torch.tensor(a.astype(np.float64).tolist(), dtype=torch.float64).to(target)
    assert t.shape == a.shape and same_bits(t, ref.reshape(a.shape)), (
        "torch.tensor(a, dtype=d) values differ from a converted to d"
    )
    if a.size:
        assert t.data_ptr() != _np_addr(a), "torch.tensor(a, dtype=d) shares the array's memory"


@pytest.mark.claim("numpy.from-numpy-shares-memory")
@pytest.mark.observes("detach")
@nd_grid_examples(direction="array-write", writeable=True)
@nd_grid_examples(direction="tensor-write", writeable=True)
# Every grid array read-only too (issue 29): the sentence speaks of every
# ndarray, and torch documents only a warning for non-writable ones.
@nd_grid_examples(direction="address-only", writeable=False)
@nd_kind_examples(read_only=False, direction="tensor-write", writeable=True)
@given(
    case=nd_cases(),
    direction=st.sampled_from(["array-write", "tensor-write"]),
    writeable=st.booleans(),
)
def test_from_numpy_shares_memory_both_ways(device, case, direction, writeable):
    """Kills: from_numpy that copies (always, or for non-contiguous/offset arrays, or
    for read-only arrays), or changes dtype, shape or strides. A read-only array
    (``flags.writeable`` False) is checked for its address and values only: torch
    warns that writing through the tensor is undefined behaviour."""
    import warnings

    a = case.build()
    a.flags.writeable = writeable
    _ndarray_features(a)
    with warnings.catch_warnings():
        # torch warns (once per process) that the array is not writable
        warnings.simplefilter("ignore", UserWarning)
        t = torch.from_numpy(a)
    assert t.dtype == NP_TO_TORCH[a.dtype], f"from_numpy({a.dtype} array) is {t.dtype}"
    assert _strides_match(t, a), "from_numpy changed shape or strides"
    assert _same_values(t, a), "from_numpy changed the values"
    if a.size:  # an empty array has no element to share
        assert t.data_ptr() == _np_addr(a), "from_numpy result is not at the array's address"
        if not writeable:
            return
        if direction == "array-write":
            assert _array_write_seen_in_tensor(a, t), "array write not seen in from_numpy(a)"
        else:
            assert _tensor_write_seen_in_array(t, a), "from_numpy(a) write not seen in array"


@pytest.mark.claim("numpy.as-tensor-shares-memory")
@pytest.mark.observes("clone")
@nd_grid_examples(direction="array-write", target=None)
@nd_grid_examples(per_dtype=lambda dt: {"target": NP_TO_TORCH[dt]}, direction="tensor-write")
@nd_grid_examples(direction="array-write", target=torch.float64)
@nd_kind_examples(direction="array-write", target=None)
@given(
    case=nd_cases(),
    direction=st.sampled_from(["array-write", "tensor-write"]),
    target=st.one_of(st.none(), st.sampled_from(ALL_DTYPES)),
)
def test_as_tensor_of_ndarray_shares_unless_converted(device, case, direction, target):
    """Every layout of the grid, and misaligned and read-only arrays. A shared
    read-only array is checked for its address only (torch.from_numpy's docstring:
    writing through such a tensor is undefined behaviour); a converted copy of one
    is checked without writing to the array.

    Kills: as_tensor(ndarray) that copies although nothing needs converting (for some
    kind of array), or that aliases when a dtype conversion was asked for."""
    a = case.build()
    _ndarray_features(a)
    same = target is None or target == NP_TO_TORCH[a.dtype]
    with capture_warnings():  # complex -> real casts warn; a read-only array warns once
        t = torch.as_tensor(a, dtype=target)
    want = NP_TO_TORCH[a.dtype] if target is None else target
    assert t.dtype == want, f"as_tensor(a, dtype={target}) gave {t.dtype}"
    if not a.size:
        return
    if same:
        assert t.data_ptr() == _np_addr(a), "as_tensor(ndarray) does not share the array's memory"
        if not a.flags.writeable:
            return
        if direction == "array-write":
            assert _array_write_seen_in_tensor(a, t), "array write not seen in as_tensor(a)"
        else:
            assert _tensor_write_seen_in_array(t, a), "as_tensor(a) write not seen in array"
    else:
        snapshot = t.clone()
        assert t.data_ptr() != _np_addr(a), "as_tensor(a, dtype=other) shares the array's memory"
        if a.flags.writeable:
            a[first_index(a)] = _sentinel(a)
        assert same_bits(t, snapshot), "as_tensor(a, dtype=other): array write seen in tensor"


@pytest.mark.claim("numpy.from-numpy-no-dtype-argument")
@given(
    case=nd_cases(views=False),
    target=st.sampled_from(ALL_DTYPES),
    how=st.sampled_from(["keyword", "positional"]),
)
def test_from_numpy_takes_no_dtype(device, case, target, how):
    """Kills: a from_numpy that grew a dtype argument (it would then no longer be the
    always-sharing constructor the tutorial describes)."""
    a = case.build()
    with raises_with(TypeError, "from_numpy"):
        if how == "keyword":
            torch.from_numpy(a, dtype=target)
        else:
            torch.from_numpy(a, target)


@pytest.mark.claim("numpy.from-numpy-not-resizable")
@nd_grid_examples(extra=1)
@nd_kind_examples(extra=1)
@given(case=nd_cases(), extra=st.integers(1, 16))
def test_from_numpy_storage_cannot_grow(device, case, extra):
    """Every layout of the grid, misaligned and read-only arrays.

    Kills: a from_numpy tensor whose storage can be reallocated (the array would
    silently stop sharing memory with it)."""
    a = case.build()
    _ndarray_features(a)
    with capture_warnings():  # a read-only array warns once per process
        t = torch.from_numpy(a)
    needed = t.untyped_storage().nbytes() // t.element_size() + extra
    with raises_with(RuntimeError, "Trying to resize storage that is not resizable"):
        t.resize_(needed)


@st.composite
def _negative_stride_cases(draw):
    case = draw(nd_cases(min_side=1, views=True).filter(lambda c: c.base.ndim >= 1))
    a = case.build()
    axis = draw(st.integers(0, a.ndim - 1))
    index = [slice(None)] * a.ndim
    index[axis] = slice(None, None, -1)
    return case, tuple(index)


def _negative_stride_examples(fn):
    """Issue 29: one explicit reversed array per ``ndarray_kind`` the claim
    declares, for each constructor: a C-contiguous (1, 6) array reversed along
    its size-1 axis (NumPy calls it contiguous, yet its stride is negative), a
    (2, 3) array reversed along its last axis (non-contiguous), and that array
    read-only and misaligned (float64 one byte into a buffer)."""
    reverse_first = (slice(None, None, -1), slice(None))
    reverse_last = (slice(None), slice(None, None, -1))
    dt = np.dtype("float64")
    drawn = (
        (NdCase(base=_grid_array(dt, (1, 6))), reverse_first),
        (NdCase(base=_grid_array(dt, (2, 3))), reverse_last),
        (NdCase(base=_grid_array(dt, (2, 3)), read_only=True), reverse_last),
        (NdCase(base=_grid_array(dt, (2, 3)), misaligned=True), reverse_last),
    )
    for d in drawn:
        for via in ("from_numpy", "as_tensor", "asarray", "tensor"):
            fn = example(drawn=d, via=via)(fn)
    return fn


@pytest.mark.claim("numpy.negative-strides-rejected")
@_negative_stride_examples
@given(
    drawn=_negative_stride_cases(),
    via=st.sampled_from(["from_numpy", "as_tensor", "asarray", "tensor"]),
)
def test_negative_strides_are_rejected(device, drawn, via):
    """Kills: a constructor that accepts negative strides (silently copying, or building
    a tensor with a negative stride), or raises something other than ValueError."""
    case, index = drawn
    a = case.build()[index]
    assert any(s < 0 for s in a.strides)
    _ndarray_features(a)
    fn = {
        "from_numpy": torch.from_numpy,
        "as_tensor": torch.as_tensor,
        "asarray": torch.asarray,
        "tensor": torch.tensor,
    }[via]
    with raises_with(ValueError, "At least one stride in the given numpy array is negative"):
        fn(a)


_READ_ONLY_CODE = textwrap.dedent(
    """
    import json, warnings
    import numpy as np, torch
    needle = {needle!r}
    counts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        def count():
            return sum(needle in str(w.message) for w in caught)
        w = np.arange(6.0).reshape(2, 3)
        torch.from_numpy(w); torch.as_tensor(w); torch.asarray(w)
        counts.append(count())
        r = np.arange(6.0).reshape(2, 3)
        r.flags.writeable = False
        torch.from_numpy(r)
        counts.append(count())
        r2 = np.ones(4, dtype=np.int32)
        r2.flags.writeable = False
        torch.from_numpy(r); torch.from_numpy(r2); torch.as_tensor(r2); torch.asarray(r2)
        counts.append(count())
        cats = sorted({{w.category.__name__ for w in caught if needle in str(w.message)}})
    print(json.dumps({{"counts": counts, "categories": cats}}))
    """
)


@pytest.mark.claim("numpy.read-only-warns-once")
def test_read_only_array_warns_once_per_process(device):
    """Kills: a read-only conversion that never warns, warns for writable arrays, or warns
    on every call. Runs in a fresh interpreter: the warning is once per process."""
    code = _READ_ONLY_CODE.format(needle="The given NumPy array is not writable")
    out = run_fresh_interpreter(code)
    counts = out["counts"]
    assert counts[0] == 0, "a writable array triggered the read-only warning"
    assert counts[1] == 1, "from_numpy(read-only array) did not warn"
    assert counts[2] == 1, "read-only warning fired more than once per process"
    assert out["categories"] == ["UserWarning"], f"warning category {out['categories']}"


@pytest.mark.claim("numpy.from-numpy-documented-dtypes")
@example(dt=np.dtype("float32"), size=2)
@example(dt=np.dtype("int16"), size=0)
@given(
    dt=st.sampled_from(
        DOCUMENTED_NP_DTYPES
        + tuple(np.dtype(n) for n in ("uint16", "uint32", "uint64"))
        + FOREIGN_NP_DTYPES
    ),
    size=st.integers(0, 3),
)
def test_from_numpy_accepts_exactly_the_documented_dtypes(device, dt, size):
    """The docstring's list as stated (stale since uint16/32/64 arrived in torch 2.3:
    recorded in expectations). Kills: a from_numpy dropping a documented dtype."""
    a = np.zeros(size, dtype=dt)
    _ndarray_features(a)
    try:
        torch.from_numpy(a)
        accepted = True
    except TypeError:
        accepted = False
    if dt in DOCUMENTED_NP_DTYPES:
        assert accepted, f"from_numpy rejected documented dtype {dt}"
    else:
        assert not accepted, f"from_numpy accepted {dt}, outside its documented dtype list"


@pytest.mark.claim("numpy.from-numpy-dtype-set")
@example(dt=np.dtype("float32"), swapped=True, size=2)
@example(dt=np.dtype("int16"), swapped=False, size=0)
@example(dt=np.dtype("float64"), swapped=False, size=3)
@given(
    dt=st.sampled_from(
        DOCUMENTED_NP_DTYPES
        + tuple(np.dtype(n) for n in ("uint16", "uint32", "uint64"))
        + FOREIGN_NP_DTYPES
    ),
    swapped=st.booleans(),
    size=st.integers(0, 3),
)
def test_from_numpy_dtype_set(device, dt, swapped, size):
    """Pins the accepted set and the errors. Kills: from_numpy losing a supported dtype,
    accepting a foreign one, or accepting a byte-swapped array (it would misread it)."""
    if swapped:
        dt = dt.newbyteorder()
    a = np.zeros(size, dtype=dt)
    _ndarray_features(a)
    native = dt.isnative
    supported = np.dtype(dt.newbyteorder("=")) in NP_DTYPES
    if supported and native:
        t = torch.from_numpy(a)
        assert t.dtype == NP_TO_TORCH[np.dtype(dt)], f"from_numpy({dt}) gave {t.dtype}"
    elif supported:
        with raises_with(ValueError, "byte order"):
            torch.from_numpy(a)
    elif native:
        with raises_with(TypeError, "can't convert np.ndarray of type"):
            torch.from_numpy(a)
    else:
        # Unsupported *and* byte-swapped: both checks apply and the claim
        # names no precedence (the byte-order check ran first until torch
        # 2.9, the dtype check since): either rejection is the claim.
        with pytest.raises((TypeError, ValueError)) as e:
            torch.from_numpy(a)
        text = str(e.value)
        assert "can't convert np.ndarray of type" in text or "byte order" in text, text


@pytest.mark.claim("numpy.asarray-ndarray-shares-unless-converted")
@nd_grid_examples(where=_nonempty_nd, copy=None, explicit=False)
@nd_grid_examples(where=_nonempty_nd, copy=False, explicit=True)
@nd_kind_examples(copy=None, explicit=False)
@given(
    case=nd_cases(min_side=1).filter(lambda c: c.base.ndim >= 1),
    copy=st.sampled_from([None, False]),
    explicit=st.booleans(),
)
def test_asarray_of_ndarray_shares_by_default(device, case, copy, explicit):
    """Every non-empty layout of the grid, and misaligned and read-only arrays (a
    read-only one is checked for its address only: writing through a tensor that
    shares it is undefined behaviour per torch.from_numpy's docstring).

    Kills: asarray(ndarray) that copies by default or under copy=False (for some
    kind of array). (0-d arrays are a separate claim: asarray-zero-dim-ndarray.)"""
    a = case.build()
    _ndarray_features(a)
    kwargs = {"dtype": NP_TO_TORCH[a.dtype]} if explicit else {}
    with capture_warnings():  # a read-only array warns once per process
        t = torch.asarray(a, copy=copy, **kwargs)
    assert t.dtype == NP_TO_TORCH[a.dtype], f"asarray gave {t.dtype}"
    assert t.data_ptr() == _np_addr(a), f"asarray(a, copy={copy}) does not share memory"
    if a.flags.writeable:
        assert _array_write_seen_in_tensor(a, t), "array write not seen in asarray(a)"


@pytest.mark.claim("numpy.asarray-ndarray-shares-unless-converted")
@pytest.mark.observes("clone")
@nd_grid_examples(where=_nonempty_nd, copy=True, target=torch.float64)
@nd_grid_examples(where=_nonempty_nd, copy=False, target=torch.complex128)
@nd_grid_examples(where=_nonempty_nd, copy=None, target=torch.int16)
@nd_kind_examples(copy=True, target=torch.float32)
@given(
    case=nd_cases(min_side=1).filter(lambda c: c.base.ndim >= 1),
    copy=st.sampled_from([None, False, True]),
    target=st.sampled_from(ALL_DTYPES),
)
def test_asarray_of_ndarray_copies_when_converting_or_asked(device, case, copy, target):
    """Kills: asarray(ndarray) that aliases despite copy=True or a dtype change, or that
    silently copies under copy=False instead of raising."""
    a = case.build()
    _ndarray_features(a)
    converts = target != NP_TO_TORCH[a.dtype]
    if copy is False:
        if converts:
            with raises_with(ValueError, "can't alias"):
                torch.asarray(a, dtype=target, copy=False)
        return
    if copy is None and not converts:
        return  # the sharing case, tested above
    with capture_warnings():  # complex -> real casts warn
        t = torch.asarray(a, dtype=target, copy=copy)
    assert t.dtype == target, f"asarray(a, dtype={target}) gave {t.dtype}"
    assert t.data_ptr() != _np_addr(a), "asarray(a) shares memory despite copy/conversion"
    if a.flags.writeable:
        snapshot = t.clone()
        a[first_index(a)] = _sentinel(a)
        assert same_bits(t, snapshot), "array write seen in a copying asarray(a)"


def _dtype_examples(param: str, make, per_dtype=None, **fixed):
    """One explicit ``@example`` per NumPy dtype: ``param`` is ``make(dtype)``
    (a 0-d array case, a NumPy scalar), the other arguments ``fixed`` and
    ``per_dtype(dtype)``. The dtype grid of the claims whose layout is fixed."""
    from hypothesis import example

    def decorate(fn):
        for dt in NP_DTYPES:
            extra = per_dtype(dt) if per_dtype is not None else {}
            fn = example(**{param: make(dt)}, **fixed, **extra)(fn)
        return fn

    return decorate


def _zero_dim_case(dt: np.dtype) -> NdCase:
    return NdCase(base=_grid_array(dt, ()))


def _numpy_scalar(dt: np.dtype) -> np.generic:
    return _grid_array(dt, (1,)).reshape(-1)[0]


def _own(dt: np.dtype) -> dict:
    return {"target": NP_TO_TORCH[dt]}


def _zero_dim_kind_examples(param: str = "case", **fixed):
    """Issue 29: 0-d arrays that are also read-only or misaligned (items wider
    than a byte, one byte into a buffer), one explicit ``@example`` each for
    the dtypes of :func:`nd_kind_examples`; ``fixed`` gives the test's other
    arguments."""

    def decorate(fn):
        for dt in _KIND_DTYPES:
            for flag in ("read_only", "misaligned"):
                case = NdCase(base=_grid_array(dt, ()), **{flag: True})
                fn = example(**{param: case}, **fixed)(fn)
        return fn

    return decorate


def _zero_dim_cases():
    return nd_cases(min_side=1, views=False).map(
        lambda c: NdCase(base=c.base.reshape(-1)[:1].reshape(()))
    )


@pytest.mark.claim("numpy.asarray-zero-dim-ndarray")
@_dtype_examples("case", _zero_dim_case)
@_zero_dim_kind_examples()
@given(case=_zero_dim_cases())
def test_asarray_of_zero_dim_ndarray_shares(device, case):
    """The ndarray rules applied to 0-d arrays (every NumPy dtype torch has; read-only
    and misaligned ones too). Deviates: they are handled like NumPy scalars and copied,
    even under copy=False (recorded in expectations)."""
    a = case.build()
    _ndarray_features(a)
    t = torch.asarray(a, copy=False)
    assert t.dim() == 0 and t.dtype == NP_TO_TORCH[a.dtype], "asarray(0-d array) shape/dtype"
    assert t.data_ptr() == _np_addr(a), "asarray(0-d array, copy=False) does not share memory"


@pytest.mark.claim("numpy.asarray-zero-dim-ndarray-copies")
@_dtype_examples("case", _zero_dim_case, copy=None, target=None)
@_dtype_examples("case", _zero_dim_case, copy=False, target=None)
@_dtype_examples("case", _zero_dim_case, copy=True, target=None)
@_dtype_examples("case", _zero_dim_case, _own, copy=False)
@_dtype_examples("case", _zero_dim_case, copy=True, target=torch.float64)
@_zero_dim_kind_examples(copy=False, target=None)
@_zero_dim_kind_examples(copy=True, target=torch.int32)
@given(
    case=_zero_dim_cases(),
    copy=st.sampled_from([None, False, True]),
    target=st.one_of(st.none(), st.sampled_from(ALL_DTYPES)),
)
def test_asarray_of_zero_dim_ndarray_pinned(device, case, copy, target):
    """Pins what asarray does with a 0-d ndarray: a copy whatever copy= says, and a
    "can't alias" ValueError when copy is not None and the dtype changes. Kills: any
    change to that (a fix included, which should then update the claims). Read-only and
    misaligned 0-d arrays too."""
    a = case.build()
    _ndarray_features(a)
    converts = target is not None and target != NP_TO_TORCH[a.dtype]
    if copy is not None and converts:
        with raises_with(ValueError, "can't alias"):
            torch.asarray(a, dtype=target, copy=copy)
        return
    with capture_warnings():
        t = torch.asarray(a, dtype=target, copy=copy)
    assert t.dim() == 0 and t.dtype == (target or NP_TO_TORCH[a.dtype]), "0-d asarray dtype"
    assert t.data_ptr() != _np_addr(a), f"asarray(0-d array, copy={copy}) shares memory"


def _scalar_features(s: np.generic) -> None:
    """Report the dtype family of the NumPy scalar ``s`` (issue 29: the claims
    speak of NumPy scalars of every dtype torch has); a ``dtype=`` argument
    would otherwise give its own family."""
    evidence.features(dtype_family=dtype_family(NP_TO_TORCH[np.dtype(type(s))]))


def _numpy_scalars():
    return nd_cases(min_side=1, views=False).map(lambda c: c.base.reshape(-1)[0])


@pytest.mark.claim("numpy.asarray-numpy-scalar-copies")
@_dtype_examples("s", _numpy_scalar, copy=None, target=None)
@_dtype_examples("s", _numpy_scalar, copy=False, target=None)
@_dtype_examples("s", _numpy_scalar, copy=None, target=torch.float64)
@_dtype_examples("s", _numpy_scalar, copy=None, target=torch.int16)
@given(
    s=_numpy_scalars(),
    copy=st.sampled_from([None, False]),
    target=st.one_of(st.none(), st.sampled_from(ALL_DTYPES)),
)
def test_asarray_of_numpy_scalar(device, s, copy, target):
    """Kills: asarray(np scalar) that is not 0-d/CPU, ignores dtype=, or pretends to
    alias under copy=False."""
    assert isinstance(s, np.generic)
    _scalar_features(s)
    if copy is False:
        with pytest.raises((ValueError, RuntimeError), match="can't alias NumPy scalars"):
            torch.asarray(s, copy=False)
        return
    with capture_warnings():
        t = torch.asarray(s, dtype=target)
    want = target or NP_TO_TORCH[np.dtype(type(s))]
    assert t.dim() == 0 and t.device.type == "cpu", "asarray(np scalar) is not a 0-d CPU tensor"
    assert t.dtype == want, f"asarray({type(s).__name__}, dtype={target}) is {t.dtype}"
    if target is None:
        assert t.item() == s.item(), "asarray(np scalar) changed the value"


@pytest.mark.claim("numpy.asarray-numpy-scalar-copies")
@_dtype_examples("s", _numpy_scalar, target=None)
@_dtype_examples("s", _numpy_scalar, _own)
@given(s=_numpy_scalars(), target=st.one_of(st.none(), st.sampled_from(ALL_DTYPES)))
def test_asarray_of_numpy_scalar_copy_true(device, s, target):
    """copy=True is what a NumPy scalar gets anyway, so it must also accept dtype=.
    Deviates: a dtype change raises "can't alias" (recorded in expectations)."""
    _scalar_features(s)
    evidence.features(converts=target not in (None, NP_TO_TORCH[np.dtype(type(s))]))
    with capture_warnings():
        t = torch.asarray(s, dtype=target, copy=True)
    want = target or NP_TO_TORCH[np.dtype(type(s))]
    assert t.dim() == 0 and t.dtype == want, f"asarray(np scalar, copy=True) is {t.dtype}"


@pytest.mark.claim("numpy.asarray-numpy-scalar-copy-true-dtype-raises")
@_dtype_examples("s", _numpy_scalar, target=None)
@_dtype_examples("s", _numpy_scalar, target=torch.float64)
@_dtype_examples("s", _numpy_scalar, target=torch.int16)
@given(s=_numpy_scalars(), target=st.one_of(st.none(), st.sampled_from(ALL_DTYPES)))
def test_asarray_of_numpy_scalar_copy_true_pinned(device, s, target):
    """Pins asarray(np scalar, dtype=, copy=True): "can't alias" exactly when the
    dtype changes, a 0-d CPU copy otherwise. Kills: any change either way."""
    _scalar_features(s)
    own = NP_TO_TORCH[np.dtype(type(s))]
    if target is not None and target != own:
        with raises_with(ValueError, "can't alias"):
            torch.asarray(s, dtype=target, copy=True)
        return
    with capture_warnings():
        t = torch.asarray(s, dtype=target, copy=True)
    assert t.dim() == 0 and t.dtype == own and t.device.type == "cpu", (
        f"asarray(np scalar, copy=True) is {t.dtype} on {t.device}"
    )


# ------------------------------------------------------------ tensor -> ndarray


@pytest.mark.claim("numpy.numpy-shares-storage")
@grid_examples(
    dtypes=NUMPY_DTYPES_NO_BF16, grid_values="all", direction="array-write", inference=False
)
@grid_examples(dtypes=NUMPY_DTYPES_NO_BF16, direction="tensor-write", inference=False)
@grid_examples(dtypes=(torch.float32,), direction="array-write", inference=True)
@given(
    spec=tensor_specs(dtype=NUMPY_DTYPES_NO_BF16),
    direction=st.sampled_from(["array-write", "tensor-write"]),
    inference=st.just(False),
)
def test_numpy_shares_storage(device, spec, direction, inference):
    """Every dtype and layout of the grid; an inference tensor (made in
    ``torch.inference_mode()``, converted outside it) for every layout, checked by
    a write to the array (an in-place write to an inference tensor outside the mode
    raises).

    Kills: Tensor.numpy() that copies (always, or for views with offsets, steps,
    permutations or stride-0 expands, or for inference tensors), or changes
    dtype/strides."""
    if inference:
        with torch.inference_mode():
            t = spec.build("cpu")
    else:
        t = spec.build("cpu")
    evidence.features(tensor_kind="inference" if inference else "plain")
    a = t.numpy()
    assert NP_TO_TORCH[a.dtype] == t.dtype, f"{t.dtype}.numpy() is {a.dtype}"
    assert _strides_match(t, a), "numpy() changed shape or strides"
    if t.numel():
        assert _np_addr(a) == t.data_ptr(), "numpy() result is not at the tensor's address"
        if direction == "array-write":
            assert _array_write_seen_in_tensor(a, t), "ndarray write not seen in the tensor"
        else:
            assert _tensor_write_seen_in_array(t, a), "tensor write not seen in t.numpy()"


def _flagged(spec, why: str) -> torch.Tensor:
    if why == "requires_grad":
        return spec.build("cpu", requires_grad=True)
    if why == "conj":
        return spec.build("cpu").conj()
    return spec.build("cpu").conj().imag  # a real view with the negative bit set


@st.composite
def _refused(draw) -> tuple[str, TensorSpec, bool]:
    """``(why, spec, leaf)``: a reason ``numpy()`` must refuse, and a spec of
    every dtype and strided layout that reason covers: ``requires_grad``
    over every differentiable dtype (leaves and non-leaf views), ``conj``
    over the complex dtypes, ``bf16`` over bfloat16 tensors."""
    why = draw(st.sampled_from(["requires_grad", "conj", "bf16"]))
    dtype = {"requires_grad": DIFFERENTIABLE, "conj": COMPLEX, "bf16": (torch.bfloat16,)}[why]
    spec = draw(tensor_specs(dtype=dtype, values="all"), label="spec")
    return why, spec, draw(st.booleans(), label="leaf")


@pytest.mark.claim("numpy.numpy-refuses-grad-conj-dtype")
# Issue 29: every layout and differentiable family as a leaf requiring grad, a
# non-leaf view, a conjugate view and a bfloat16 tensor, explicitly.
@domain_examples("case", DIFFERENTIABLE, make=lambda spec: ("requires_grad", spec, True))
@example(case=("requires_grad", DOMAIN_SPEC, False))
@example(case=("conj", DOMAIN_SPEC_COMPLEX, False))
@example(case=("bf16", dataclasses.replace(DOMAIN_SPEC, dtype=torch.bfloat16), False))
@given(case=_refused())
def test_numpy_refuses_grad_conj_and_bfloat16(device, case):
    """Every dtype and layout each condition covers: a tensor that requires
    grad (leaf or non-leaf view, any differentiable dtype), a conjugate view
    (any complex dtype), a bfloat16 tensor (any layout). A bfloat16 tensor
    that requires grad fails two conditions; the docstring does not say
    which is checked first, so either error counts as the refusal.

    Kills: numpy() that silently detaches (for some dtype, for leaves or for
    views), silently resolves the conjugate (a copy that breaks the sharing
    promise), or reinterprets bfloat16 bits."""
    why, spec, leaf = case
    evidence.features(why=why, dtype=spec.dtype, leaf=leaf, view=spec.is_view)
    if why == "requires_grad":
        t = spec.build("cpu", requires_grad=True, leaf=leaf)
        refusals = [(RuntimeError, "requires grad")]
        if spec.dtype == torch.bfloat16:
            refusals.append((TypeError, "BFloat16"))
    elif why == "conj":
        t = spec.build("cpu").conj()
        refusals = [(RuntimeError, "conjugate bit set")]
    else:
        t = spec.build("cpu")
        refusals = [(TypeError, "BFloat16")]
    evidence.features(
        layout=layout_kinds(t),
        dtype_family=dtype_family(t.dtype),
        math_bit="conj" if t.is_conj() else "none",
        tensor_kind=tensor_kind_of(t),
    )
    with torch.enable_grad():
        try:
            t.numpy()
        except tuple(e for e, _ in refusals) as e:
            assert any(isinstance(e, et) and m in str(e) for et, m in refusals), (
                f"numpy() refused a {why} tensor with an unexpected error: {type(e).__name__}: {e}"
            )
        else:
            raise AssertionError(f"numpy() did not refuse a {why} tensor ({spec.dtype})")


@pytest.mark.claim("numpy.numpy-refuses-neg-bit")
# Issue 29: every layout of the complex tensor whose conj().imag is converted.
@domain_examples(dtypes=COMPLEX)
@given(spec=tensor_specs(dtype=COMPLEX))
def test_numpy_refuses_neg_bit(device, spec):
    """Every layout of the complex tensor whose ``conj().imag`` (a real view with
    the negative bit set) is converted.

    Kills: numpy() that ignores the negative bit (an array with the wrong sign)."""
    t = _flagged(spec, "neg")
    assert t.is_neg()
    with raises_with(RuntimeError, "negative bit set"):
        t.numpy()


@pytest.mark.claim("numpy.numpy-refuses-grad-under-no-grad")
# Issue 29: every layout and differentiable family NumPy holds (a spec without
# views builds a leaf), and a non-leaf view.
@domain_examples(dtypes=NP_DIFFERENTIABLE)
@example(spec=DOMAIN_SPEC)
@given(spec=tensor_specs(dtype=NP_DIFFERENTIABLE))
def test_numpy_refuses_grad_even_under_no_grad(device, spec):
    """The docstring's condition as stated (no grad-mode exception). Deviates: the check
    is skipped under no_grad (recorded in expectations). Kills, once fixed: a regression
    back to the grad-mode-dependent check."""
    t = spec.build("cpu", requires_grad=True)
    evidence.features(tensor_kind=tensor_kind_of(t))
    with torch.no_grad():
        with raises_with(RuntimeError, "requires grad"):
            t.numpy()


@pytest.mark.claim("numpy.numpy-no-grad-converts")
@grid_examples(dtypes=NP_DIFFERENTIABLE)
@given(spec=tensor_specs(dtype=NP_DIFFERENTIABLE))
def test_numpy_under_no_grad_converts_and_shares(device, spec):
    """Pins the no_grad exception. Kills: a change either way (refusing under no_grad, or
    copying instead of sharing)."""
    t = spec.build("cpu", requires_grad=True)
    with torch.no_grad():
        a = t.numpy()
    assert a.shape == tuple(t.shape), "numpy() under no_grad changed the shape"
    if t.numel():
        assert _np_addr(a) == t.data_ptr(), "numpy() under no_grad does not share storage"


@pytest.mark.claim("numpy.numpy-force")
@pytest.mark.observes("detach")
@grid_examples(dtypes=NUMPY_DTYPES_NO_BF16, why="plain")
@grid_examples(dtypes=NUMPY_DTYPES_NO_BF16, why="requires_grad")
@grid_examples(dtypes=COMPLEX, why="conj")
@grid_examples(dtypes=COMPLEX, why="neg")
@given(
    spec=tensor_specs(dtype=NUMPY_DTYPES_NO_BF16),
    why=st.sampled_from(["plain", "requires_grad", "conj", "neg"]),
)
def test_numpy_force(device, spec, why):
    """Kills: force=True that still refuses, forgets to resolve the conjugate/negative bit
    (wrong values), copies a plain or requires-grad CPU tensor, or aliases a tensor whose
    bit had to be resolved."""
    if why in ("conj", "neg") and spec.dtype not in COMPLEX:
        why = "plain"
    if why == "requires_grad" and spec.dtype not in DIFFERENTIABLE:
        why = "plain"
    t = _flagged(spec, why) if why != "plain" else spec.build("cpu")
    evidence.features(
        math_bit="conj" if t.is_conj() else "neg" if t.is_neg() else "none",
        tensor_kind="non_leaf" if t.grad_fn else "leaf" if t.requires_grad else "plain",
    )
    a = t.numpy(force=True)
    ref = t.detach().cpu().resolve_conj().resolve_neg()
    assert a.shape == tuple(ref.shape) and np.array_equal(a, ref.numpy()), (
        "numpy(force=True) values differ from detach().cpu().resolve_conj().resolve_neg()"
    )
    if t.numel():
        if why in ("plain", "requires_grad"):
            assert _np_addr(a) == t.data_ptr(), f"numpy(force=True) copied a {why} CPU tensor"
        else:
            assert not shares_storage(torch.from_numpy(a), t), (
                f"numpy(force=True) shares storage despite the {why} bit"
            )
