"""Unit tests of the reference model (``conformance/model/``) on its own.

No torch here: the geometry helpers are checked against hand-computed and
documented examples and against their defining properties, and the model's
rules are checked through short scripted sequences.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.model import (
    CLAIM_IDS,
    MSG,
    Model,
    Raises,
    broadcast_shapes,
    channels_last_strides,
    contiguous_strides,
    convert,
    expand_geometry,
    infer_dense_strides,
    is_contiguous,
    is_non_overlapping_and_dense,
    positions,
    view_strides,
)
from conformance.registry import default_registry
from tests.conftest import ROOT

# --------------------------------------------------------------------------
# The model module itself
# --------------------------------------------------------------------------


def test_model_does_not_import_torch():
    code = "import sys, conformance.model; assert 'torch' not in sys.modules, 'torch imported'"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_cited_claims_are_exactly_the_registered_sequences_claims():
    registered = {cid for cid, c in default_registry().claims.items() if c.area == "sequences"}
    assert set(CLAIM_IDS) == registered


def test_raises_matches_type_name_and_any_substring():
    r = Raises("RuntimeError", "first", "second", claim="sequences.copy-in-place")
    assert r.matches(RuntimeError("... second ..."))
    assert not r.matches(ValueError("first"))
    assert not r.matches(RuntimeError("neither"))


# --------------------------------------------------------------------------
# Geometry
# --------------------------------------------------------------------------


def test_contiguous_and_channels_last_strides():
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert contiguous_strides(()) == ()
    assert channels_last_strides((2, 3, 4, 5)) == (60, 1, 15, 3)


@pytest.mark.parametrize(
    ("shape", "strides", "contiguous", "dense"),
    [
        ((2, 3), (3, 1), True, True),
        ((3, 2), (1, 3), False, True),  # a transpose
        ((2, 3), (6, 2), False, False),  # a stepped slice
        ((2, 3), (0, 1), False, False),  # an expand
        ((3, 1), (1, 7), True, True),  # size-1 strides do not matter
        ((), (), True, True),
    ],
)
def test_contiguity_and_density(shape, strides, contiguous, dense):
    assert is_contiguous(shape, strides) is contiguous
    assert is_non_overlapping_and_dense(shape, strides) is dense


def test_infer_dense_strides_keeps_stride_order():
    # torch.randn(10, 8).t()[::2, ::2] has strides (2, 16); PyTorch's own
    # test_clone_not_memory_dense pins its clone's strides (1, 4).
    assert infer_dense_strides((4, 5), (2, 16)) == (1, 4)
    # expanded (stride 0) dims keep their row-major place
    assert infer_dense_strides((2, 3), (0, 1)) == (3, 1)
    assert infer_dense_strides((2, 3), (3, 0)) == (3, 1)
    assert infer_dense_strides((5,), (3,)) == (1,)


@st.composite
def geometries(draw):
    n = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    strides = tuple(draw(st.lists(st.integers(0, 12), min_size=n, max_size=n)))
    return shape, strides


@given(geometries())
def test_infer_dense_strides_is_dense_and_order_preserving(geometry):
    """Kills: a stride inference that is not dense or reorders distinct strides."""
    shape, strides = geometry
    out = infer_dense_strides(shape, strides)
    assert is_non_overlapping_and_dense(shape, out)
    sized = [d for d in range(len(shape)) if shape[d] > 1 and strides[d] != 0]
    for a, b in itertools.combinations(sized, 2):
        if strides[a] < strides[b]:
            assert out[a] < out[b]


@given(geometries(), st.data())
def test_view_strides_address_the_same_elements_in_row_major_order(geometry, data):
    """The defining property of view(): when it succeeds, the view visits the
    same memory positions as the input, in row-major order.

    Kills: a view rule that accepts an incompatible shape or computes wrong strides."""
    shape, strides = geometry
    n = math.prod(shape)
    targets = [s for k in range(4) for s in itertools.product(range(1, n + 1), repeat=k)]
    target = data.draw(st.sampled_from([s for s in targets if math.prod(s) == n]))
    out = view_strides(shape, strides, target)
    if out is not None:
        before = positions(0, shape, strides).reshape(-1)
        after = positions(0, target, out).reshape(-1)
        assert before.tolist() == after.tolist()
    if is_contiguous(shape, strides):
        assert out is not None and is_contiguous(target, out)


def test_view_strides_documented_cases():
    assert view_strides((2, 3), (3, 1), (3, 2)) == (2, 1)
    assert view_strides((3, 2), (1, 3), (6,)) is None  # a transpose cannot be flattened
    assert view_strides((2, 3), (6, 2), (2, 3, 1)) == (6, 2, 2)
    assert view_strides((), (), (1, 1)) == (1, 1)


def test_expand_geometry():
    assert expand_geometry((3, 1), (1, 1), (3, 4)) == ((3, 4), (1, 0))
    assert expand_geometry((3, 1), (1, 1), (-1, 4)) == ((3, 4), (1, 0))
    assert expand_geometry((3,), (1,), (2, 3)) == ((2, 3), (0, 1))
    assert expand_geometry((), (), (2, 3)) == ((2, 3), (0, 0))
    assert MSG["expand"] in expand_geometry((3, 2), (2, 1), (3, 4))
    assert "leading, non-existing dimension" in expand_geometry((3,), (1,), (-1, 3))


def test_broadcast_shapes():
    assert broadcast_shapes((2, 3), (3,)) == (2, 3)
    assert broadcast_shapes((2, 1), (1, 4)) == (2, 4)
    assert broadcast_shapes((2, 3), (4,)) is None


def test_convert_follows_cpp_casts():
    assert convert(np.array([-1.5, 2.5]), "int64").tolist() == [-1, 2]
    assert convert(np.array([1 + 2j]), "float32").tolist() == [1.0]
    assert convert(np.array([0j, 1j]), "bool").tolist() == [False, True]
    assert convert(np.array([0.0, -0.5]), "bool").tolist() == [False, True]


# --------------------------------------------------------------------------
# Aliasing, writes and version counters
# --------------------------------------------------------------------------


def _fresh(m, shape=(2, 3), dtype="float32", rg=False):
    n = math.prod(shape)
    return m.fresh(dtype, shape, [float(i) for i in range(n)], requires_grad=rg)


def test_writes_through_any_alias_are_seen_by_every_alias():
    m = Model()
    t = _fresh(m)
    v = m.transpose(t, 0, 1)
    d = m.detach(v)
    e = m.expand(m.select(t, 1, 0), (4, 2))  # column 0, expanded
    a = m.numpy(m.data(t))
    m.setitem(d, 0, 7.0)  # d[0] is column 0 of t
    assert m.values(t).tolist() == [[7.0, 1.0, 2.0], [7.0, 4.0, 5.0]]
    assert m.values(e).tolist() == [[7.0, 7.0]] * 4
    m.np_write(a, 1, -1.0)
    assert m.values(v).tolist() == [[7.0, -1.0], [1.0, -1.0], [2.0, -1.0]]


def test_version_counters_shared_by_views_and_detach_not_by_copies():
    m = Model()
    t = _fresh(m)
    view, det, data, clone = m.slice(t, 1, 0, 2), m.detach(t), m.data(t), m.clone(t)
    m.inplace(view, "add_", 1)
    assert [x.counter.version for x in (t, view, det, data, clone)] == [1, 1, 1, 0, 0]
    assert t.counter is det.counter and data.counter is not t.counter
    m.np_write(m.numpy(t), None, 0.0)  # NumPy writes bump nothing
    assert t.counter.version == 1


def test_identity_results():
    m = Model()
    t = _fresh(m)
    assert m.to(t, "float32") is t
    assert m.to(t, "float32", copy=True) is not t
    assert m.contiguous(t) is t
    assert m.contiguous(m.transpose(t, 0, 1)).storage is not t.storage
    assert m.as_tensor(t) is t and m.asarray(t) is t and m.asarray(t, copy=False) is t
    with pytest.raises(Raises, match="can't alias tensor with dtype"):
        m.asarray(t, copy=False, dtype="int64")


def test_clone_strides_observed_and_documented():
    for docs, expected in ((False, (1, 4)), (True, (5, 1))):
        m = Model(docs=docs)
        t = _fresh(m, (10, 8))
        s = m.slice(m.slice(m.transpose(t, 0, 1), 0, 0, 2), 1, 0, 2)
        assert (s.shape, s.strides) == ((4, 5), (2, 16))
        assert m.clone(s).strides == expected
    with pytest.raises(Raises, match="required rank 4"):
        Model().clone(_fresh(Model()), "channels_last")


def test_detach_observed_untracked_documented_view():
    m = Model()
    t = _fresh(m)
    v = m.slice(t, 0, 1, 1)
    assert m.detach(v).base is None
    m.docs = True
    assert m.detach(v).base is t


def test_setitem_into_an_expanded_target_raises_on_cpu_and_fills_on_cuda():
    # CPU: the scalar is copied (overlap check); CUDA: filled from the
    # host-side scalar, without the check (observed on torch 2.11 CUDA)
    for device, raises in (("cpu", True), ("cuda", False)):
        m = Model(device=device)
        e = m.expand(m.fresh("float32", (1,), [0.0]), (2, 2))
        if raises:
            with pytest.raises(Raises, match="more than one element"):
                m.setitem(e, 0, 3.0)
            assert m.values(e).tolist() == [[0.0, 0.0], [0.0, 0.0]]
        else:
            m.setitem(e, 0, 3.0)
            assert m.values(e).tolist() == [[3.0, 3.0], [3.0, 3.0]]
            assert m.cited[:1] == ["sequences.index-assignment-in-place"]
            assert "sequences.write-overlap-raises" in m.cited
    with pytest.raises(ValueError, match="device must be"):
        Model(device="xla")


def test_missing_kernels_raise_not_implemented_for_arithmetic_and_products():
    assert ("add_", "uint16") in Model().missing_kernels
    assert ("mul_", "uint16") not in Model().missing_kernels
    m = Model(device="cuda", missing_kernels={("mul_", "uint16")})
    t = m.fresh("uint16", (2,), [1, 2])
    with pytest.raises(Raises) as r:
        m.inplace(t, "mul_", 2)
    assert (r.value.exc, r.value.claim) == ("NotImplementedError", "sequences.dtype-support")
    with pytest.raises(Raises, match="not implemented for"):
        m.square(t)
    m.inplace(t, "add_", 1)  # not in this device's gaps
    assert m.values(t).tolist() == [2, 3]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nan_results_of_arithmetic_leave_sign_and_payload_to_torch(dtype):
    m = Model()
    t = m.fresh(dtype, (2,), [float("nan"), 1.0])
    m.inplace(t, "add_", 1)
    ((owner, pos),) = m.unspecified
    assert owner is t and pos == frozenset({int(t.positions()[0])})
    m2 = Model()
    s = m2.square(m2.fresh(dtype, (2,), [float("-nan"), 2.0]))
    ((owner, pos),) = m2.unspecified
    assert owner is s and len(pos) == 1


def test_copy_overlap_and_broadcast_errors():
    m = Model()
    t = _fresh(m)
    e = m.expand(m.select(t, 1, 0), (2, 2))
    with pytest.raises(Raises, match="more than one element"):
        m.copy_(e, t)
    flat = m.view(t, (6,))
    with pytest.raises(Raises, match="some elements of the input tensor"):
        m.copy_(m.slice(flat, 0, 1, 1), flat)  # checked before the shapes
    with pytest.raises(Raises, match="must match the size"):
        m.copy_(t, _fresh(m, (4,)))
    with pytest.raises(Raises, match="doesn't match the broadcast shape"):
        m.copy_(_fresh(m, (3,)), t)
    before = t.counter.version
    assert m.copy_(e, m.detach(e)) is e  # identical layouts of one storage: allowed
    assert t.counter.version == before + 1


def test_order_dependent_self_copy_is_left_unspecified():
    m = Model()
    t = _fresh(m, (6,))
    evens = m.slice(t, 0, 0, 2)  # positions 0, 2, 4 (not dense: no overlap error)
    m.copy_(evens, m.expand(m.select(t, 0, 1), (3,)))  # all read position 1
    assert m.unspecified == []
    t = _fresh(m, (6,))  # 0, 1, ..., 5
    evens = m.slice(t, 0, 0, 2)
    m.copy_(evens, m.select(m.view(t, (2, 3)), 0, 0))  # read positions 0, 1, 2
    # element 2 reads position 2, which element 1 writes: torch's element-wise
    # order decides what lands in position 4
    ((owner, unspecified),) = m.unspecified
    assert owner is evens and unspecified == frozenset({4})


# --------------------------------------------------------------------------
# Autograd
# --------------------------------------------------------------------------


def test_leaf_and_view_of_leaf_inplace_raise_before_writing():
    m = Model()
    x = _fresh(m, rg=True)
    with pytest.raises(Raises, match="a leaf Variable that requires grad") as e:
        m.inplace(x, "mul_", 2)
    assert e.value.claim == "sequences.leaf-inplace-raises"
    with pytest.raises(Raises, match="a view of a leaf Variable"):
        m.setitem(x, 0, 1.0)
    assert m.values(x).tolist() == [[0, 1, 2], [3, 4, 5]] and x.counter.version == 0
    m.inplace(x, "mul_", 2, grad=False)  # allowed under no_grad, still a leaf
    assert m.is_leaf(x) and m.requires_grad(x) and x.counter.version == 1


def test_copy_of_requiring_grad_src_into_a_view_rebases_the_base():
    m = Model()
    b = _fresh(m)
    v = m.slice(b, 1, 1, 1)
    w = m.select(b, 0, 0)  # another view, made before
    src = _fresh(m, (), rg=True)
    m.copy_(v, src)
    assert m.requires_grad(b) and not m.is_leaf(b)
    assert not m.is_leaf(v)
    assert m.requires_grad(w) and not m.grad_fn_is_none(w)  # rebuilt: the counter moved


def test_view_grad_fn_is_rebuilt_lazily_after_a_bump():
    m = Model()
    b = _fresh(m)
    v = m.select(b, 0, 1)
    m.requires_grad_(b, True)
    assert m.requires_grad(v) and m.is_leaf(v)  # no bump yet
    m.bump(b.counter)
    assert not m.is_leaf(v)
    m.detach_(b)
    assert m.requires_grad(v)  # its history stays
    with pytest.raises(Raises, match="Can't detach views in-place"):
        m.detach_(v)


def test_requires_grad_flag_rules():
    m = Model()
    with pytest.raises(Raises, match="can require gradients"):
        m.requires_grad_(_fresh(m, dtype="int64"), True)
    x = _fresh(m, rg=True)
    y = m.clone(x)
    with pytest.raises(Raises, match="only change requires_grad flags of leaf"):
        m.requires_grad_(y, False)
    assert m.requires_grad_(y, True) is y
    assert not m.requires_grad(m.to(x, "int64")) and m.requires_grad(m.to(x, "float64"))
    assert not m.requires_grad(m.clone(x, grad=False))


def test_saved_tensor_check_and_freed_graph():
    m = Model()
    x = _fresh(m, rg=True)
    y = m.square(x)
    m.backward(y)
    with pytest.raises(Raises, match="second time"):
        m.backward(y)
    y2 = m.square(x)
    m.inplace(m.data(x), "add_", 1)  # .data: unnoticed
    z = m.square(x)
    m.inplace(m.detach(x), "add_", 1)  # detach shares the counter: noticed
    with pytest.raises(Raises, match="modified by an inplace operation"):
        m.backward(z)
    with pytest.raises(Raises, match="modified by an inplace operation"):
        m.backward(y2)
    c = m.clone(x)
    m.backward(c)
    m.backward(c)  # no saved tensors: can run again
    with pytest.raises(Raises, match="does not require grad"):
        m.backward(_fresh(m))


def test_pinned_counters_protect_pending_saves():
    m = Model()
    x = _fresh(m, rg=True)
    y = m.square(x)
    assert m.pinned_counters() == {x.counter.id}
    m.backward(y)
    assert m.pinned_counters() == set()


# --------------------------------------------------------------------------
# NumPy
# --------------------------------------------------------------------------


def test_numpy_interop():
    m = Model()
    a = m.make_array("float64", (2, 3), list(range(6)))
    t = m.from_numpy(a)
    assert t.buffer is a.buffer and t.counter.version == 0
    with pytest.raises(Raises, match="negative"):
        m.from_numpy(m.np_flip(a))
    assert m.tensor_of_array(m.np_transpose(a)).strides == (1, 3)
    zero_d = m.make_array("float32", (), [1.5])
    assert m.asarray_array(zero_d, copy=False).buffer is not zero_d.buffer  # observed
    m.docs = True
    assert m.asarray_array(zero_d, copy=False).buffer is zero_d.buffer  # documented
    with pytest.raises(Raises, match="requires grad"):
        m.numpy(_fresh(m, rg=True))


# --------------------------------------------------------------------------
# Gradients, grad_fn types, inference tensors, zero-size tensors, dtypes
# --------------------------------------------------------------------------


def test_grad_populated_then_accumulated_in_place():
    m = Model()
    x = m.fresh("float32", (2,), [1.0, 2.0], requires_grad=True)
    y = m.clone(x)
    assert x.grad is None and y.grad is None
    m.backward(y)
    g = x.grad
    assert g.values.tolist() == [1.0, 1.0] and g.layout == ("strides", (1,))
    m.backward(m.square(x))  # d(x*x) = 2x, added in place into the same tensor
    assert x.grad is g and g.values.tolist() == [3.0, 5.0]
    assert y.grad is None  # a non-leaf that does not retain grad


def test_grad_of_non_dense_leaf_is_row_major_and_of_detached_leaf_is_none():
    m = Model()
    base = _fresh(m, (2, 4))
    leaf = m.requires_grad_(m.detach(m.slice(base, 1, 0, 2)), True)
    m.backward(m.clone(leaf))
    assert leaf.grad.layout == ("contiguous",) and base.grad is None


def test_retain_grad_new_tensor_each_backward_and_leaf_noop():
    m = Model()
    x = m.fresh("float64", (3,), [1.0, 2.0, 3.0], requires_grad=True)
    m.retain_grad(x)
    assert not x.retains_grad
    y = m.clone(x)
    m.retain_grad(y)
    m.backward(y)
    first = y.grad
    m.backward(y)
    assert y.grad is not first and y.grad.values.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(Raises, match=MSG["retain_rg"]):
        m.retain_grad(_fresh(m))


def test_saved_tensor_is_read_when_backward_runs():
    m = Model()
    x = m.fresh("float32", (1,), [3.0], requires_grad=True)
    s = m.square(x)
    m.inplace(m.data(x), "add_", 1)  # unnoticed: .data has its own counter
    m.backward(s)
    assert x.grad.values.tolist() == [8.0]


def test_grad_fn_names():
    m = Model()
    x = _fresh(m, rg=True)
    assert m.grad_fn_names(x) == ()
    assert m.grad_fn_names(m.clone(x)) == ("CloneBackward",)
    assert m.grad_fn_names(m.to(x, "float64")) == ("ToCopyBackward",)
    assert m.grad_fn_names(m.slice(x, 1, 1, 1)) == ("SliceBackward",)
    assert m.grad_fn_names(m.slice(x, 1, 0, 1)) == ("AliasBackward",)  # keeps everything
    y = m.clone(x)
    v = m.select(y, 0, 1)
    m.inplace(v, "add_", 1)
    assert m.grad_fn_names(y) == ("CopySlices",)
    assert m.grad_fn_names(v) == ("AsStridedBackward", "SelectBackward")


def test_copy_slices_is_released_by_a_backward():
    m = Model()
    y = m.clone(_fresh(m, rg=True))
    m.setitem(y, 0, 1.0)
    m.backward(y)
    with pytest.raises(Raises, match="a second time"):
        m.backward(y)


def test_backward_to_a_leaf_moved_into_the_graph_raises():
    m = Model()
    leaf = _fresh(m, rg=True)
    y = m.clone(leaf)
    m.requires_grad_(leaf, False)
    m.copy_(leaf, _fresh(m, rg=True))  # now a non-leaf with CopyBackwards
    with pytest.raises(Raises, match=MSG["moved"]):
        m.backward(y)


def test_inference_tensors():
    m = Model()
    t = m.fresh("float32", (2,), [1.0, 2.0], inference=True)
    assert t.inference and t.counter is None
    v = m.slice(t, 0, 1, 1)
    assert v.inference and v.counter is None and not m.is_view(v)
    with pytest.raises(Raises, match=MSG["inference_inplace"]):
        m.inplace(t, "fill_", 5.0)
    assert m.values(t).tolist() == [5.0, 5.0]  # written before the error
    m.inplace(t, "fill_", 6.0, grad=False, inference=True)  # allowed inside the mode
    d = m.detach(t)
    assert d.inference and d.counter is not None and d.counter.version == 0
    m.inplace(d, "add_", 1)
    assert d.counter.version == 1
    c = m.clone(t)
    assert not c.inference and c.counter.version == 1
    with pytest.raises(Raises, match=MSG["inference_rg"]):
        m.requires_grad_(t, True)
    n = _fresh(m)
    m.inplace(n, "add_", 1, grad=False, inference=True)  # a normal tensor is bumped
    assert n.counter.version == 1
    assert m.clone(n, inference=True).inference


def test_zero_size_geometry():
    assert view_strides((0, 3), (3, 1), (3, 0)) == (1, 1)
    assert view_strides((0, 3), (3, 1), (0, 3)) == (3, 1)
    assert is_non_overlapping_and_dense((2, 0), (0, 1))
    m = Model()
    t = _fresh(m, (3,))
    s = m.slice(t, 0, 5, 1)
    assert (s.shape, s.offset) == ((0,), 3)
    assert m.clone(m.expand(m.fresh("float32", (0,), []), (2, 0))).strides == (0, 1)


def test_bfloat16_values_and_conversions():
    from conformance.model.values import conversion_unspecified, decode

    bits = convert(np.array([1.5, -0.0, np.nan], dtype=np.float32), "bfloat16")
    assert bits.tolist() == [0x3FC0, 0x8000, 0x7FC0]
    assert decode(bits, "bfloat16")[:2].tolist() == [1.5, -0.0]
    assert convert(bits, "float32", "bfloat16")[:2].tolist() == [1.5, -0.0]
    assert convert(bits, "bfloat16", "bfloat16") is not bits
    assert conversion_unspecified(np.array([np.nan, 1.0]), "bfloat16").tolist() == [True, False]
    assert conversion_unspecified(np.array([300.0, 3.0, np.inf]), "int8").tolist() == [
        True,
        False,
        True,
    ]


def test_sums_of_gradients_start_from_plus_zero():
    from conformance.model.graph import sum_to

    g = np.array([[-0.0, -0.0]])
    assert np.signbit(sum_to(g, (1, 1))).tolist() == [[False]]
    assert np.signbit(sum_to(np.array(-0.0), ())).tolist() is False
    assert np.signbit(sum_to(g, (1, 2))).tolist() == [[True, True]]  # nothing to sum


def test_dtype_support_errors():
    m = Model()
    u = m.fresh("uint16", (2,), [1, 2])
    with pytest.raises(Raises, match=MSG["no_kernel"]) as e:
        m.inplace(u, "add_", 1)
    assert e.value.exc == "NotImplementedError"
    m.inplace(u, "mul_", 2)
    with pytest.raises(Raises, match=MSG["overflow"]):
        m.inplace(m.fresh("uint8", (1,), [1]), "fill_", -1.5)
    m.inplace(m.fresh("uint8", (1,), [1]), "fill_", -1)  # an int wraps
    with pytest.raises(Raises, match=MSG["numpy_bf16"]):
        m.numpy(m.fresh("bfloat16", (1,), [1.0]))
