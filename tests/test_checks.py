"""The observation helpers observe what they claim: ``same_bits`` compares
raw bytes (so -0.0, NaN payloads and subnormals count) over every dtype and
strided layout, and ``assert_same_bits`` says where and how values differ."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance.checks import (
    assert_same_bits,
    assert_same_computed_values,
    bits_difference,
    element_bytes,
    same_bits,
    sentinel_for,
    writes_visible,
)
from strategies import ALL_DTYPES, DIFFERENTIABLE


def _from_bits(bits: list[int], dtype: torch.dtype) -> torch.Tensor:
    """A tensor of ``dtype`` holding exactly the bit patterns ``bits``
    (built through an integer view, so no float conversion touches them)."""
    int_dtype = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[
        torch.empty((), dtype=dtype).element_size()
    ]
    width = torch.empty((), dtype=int_dtype).element_size() * 8
    signed = [
        b - (1 << width) if int_dtype != torch.uint8 and b >> (width - 1) else b for b in bits
    ]
    return torch.tensor(signed, dtype=int_dtype).view(dtype)


def test_negative_zero_differs_from_zero():
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        a = torch.tensor([1.0, -0.0], dtype=dt)
        b = torch.tensor([1.0, 0.0], dtype=dt)
        assert torch.equal(a, b)  # what == sees
        assert not same_bits(a, b)
        assert same_bits(a, a.clone())


def test_nan_equals_the_same_nan_and_not_another_payload():
    nan = torch.tensor([float("nan"), 1.0])
    assert not torch.equal(nan, nan)  # what == sees
    assert same_bits(nan, nan) and same_bits(nan, nan.clone())
    quiet, payload, negative = _from_bits([0x7FC00000, 0x7FC00001, 0xFFC00000], torch.float32)
    assert quiet.isnan() and payload.isnan() and negative.isnan()
    assert not same_bits(quiet, payload)
    assert not same_bits(quiet, negative)
    h1, h2 = _from_bits([0x7E00, 0x7E01], torch.float16)
    assert not same_bits(h1, h2)
    d1, d2 = _from_bits([0x7FF8000000000000, 0x7FF0000000000001], torch.float64)
    assert not same_bits(d1, d2) and same_bits(d2, d2.clone())


def test_subnormals_are_compared_as_stored():
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        fi = torch.finfo(dt)
        sub = torch.tensor([fi.tiny * fi.eps, fi.tiny / 2], dtype=dt)
        assert (sub != 0).all() and same_bits(sub, sub.clone())
        assert not same_bits(sub, torch.zeros_like(sub))
        assert not same_bits(sub, sub * 1.5)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype(dtype):
    n = 6
    base = torch.arange(n).to(dtype) if dtype != torch.bool else torch.arange(n) % 2 == 0
    assert same_bits(base, base.clone())
    other = base.clone()
    other[3] = not bool(base[3]) if dtype == torch.bool else 5 if base[3].item() != 5 else 4
    assert not same_bits(base, other)
    why = bits_difference(other, base)
    assert why is not None and "index (3,)" in why and "1 of 6 elements" in why


def test_complex_parts_each_count():
    a = torch.tensor([complex(1.0, 0.0), complex(-0.0, 2.0)], dtype=torch.complex64)
    b = torch.tensor([complex(1.0, -0.0), complex(-0.0, 2.0)], dtype=torch.complex64)
    c = torch.tensor([complex(1.0, 0.0), complex(0.0, 2.0)], dtype=torch.complex64)
    assert torch.equal(a, b) and torch.equal(a, c)
    assert not same_bits(a, b) and not same_bits(a, c) and same_bits(a, a.clone())
    why = bits_difference(b, a)
    assert "re 0x3f800000, im 0x80000000" in why and "re 0x3f800000, im 0x00000000" in why


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.t(),
        lambda x: x[:, ::2],
        lambda x: x[1:, 1:],
        lambda x: x[:, 1],
        lambda x: x[0, 2],
        lambda x: x[:0],
        lambda x: x[:1].expand(4, 3, 4).transpose(0, 2),
        lambda x: x.reshape(1, 3, 2, 2).contiguous(memory_format=torch.channels_last),
    ],
    ids=["transposed", "stepped", "offset", "column", "0-d", "zero-size", "expanded", "nhwc"],
)
def test_strided_layouts_compare_logical_order(make):
    x = torch.tensor(
        [[-0.0, 1.0, float("nan"), float("inf")], [2.0, -3.0, 4e-45, -0.0], [5.0, 6.0, 7.0, 8.0]]
    )
    v = make(x)
    dense = torch.empty(v.shape, dtype=v.dtype)
    dense.copy_(v)  # contiguous copy in logical order
    assert same_bits(v, dense) and same_bits(dense, v)
    assert element_bytes(v).shape == (v.numel(), 4)
    if v.numel() > 1:
        flipped = dense.flatten().flip(0).reshape(v.shape)
        if not same_bits(flipped, dense):  # not a palindrome
            assert not same_bits(v, flipped)


def test_conj_and_neg_views_compare_what_they_mean():
    z = torch.tensor([complex(1.0, 2.0), complex(-0.0, 0.0), complex(float("nan"), -0.0)])
    zc = z.conj()
    assert zc.is_conj()
    assert same_bits(zc, zc.resolve_conj())
    assert not same_bits(zc, z)
    # The imaginary part of a conjugate view is a real view with the negative bit.
    im = zc.imag
    assert im.is_neg()
    assert same_bits(im, im.resolve_neg())
    assert same_bits(im, torch.tensor([-2.0, -0.0, 0.0]))
    assert not same_bits(im, z.imag)
    n = torch._neg_view(torch.tensor([1, -2, 3]))
    assert n.is_neg() and same_bits(n, torch.tensor([-1, 2, -3]))


def test_shape_and_dtype_mismatch():
    a = torch.zeros(2, 3)
    assert not same_bits(a, torch.zeros(3, 2))
    assert not same_bits(a, torch.zeros(6))
    assert not same_bits(a, torch.zeros(2, 3, dtype=torch.float64))
    assert not same_bits(a, torch.zeros(2, 3, dtype=torch.int32))  # same bytes, other dtype
    assert bits_difference(a, torch.zeros(3, 2)) == "got shape (2, 3), want (3, 2)"
    assert "dtype torch.float32, want torch.int32" in bits_difference(
        a, torch.zeros(2, 3, dtype=torch.int32)
    )


def test_observing_changes_nothing():
    x = torch.tensor([1.0, -0.0], requires_grad=True)
    y = x * 1
    v = y._version
    assert same_bits(y, y)
    assert y._version == v and y.grad_fn is not None


def test_meta_and_sparse_are_refused():
    with pytest.raises(ValueError, match="meta"):
        same_bits(torch.empty(2, device="meta"), torch.empty(2, device="meta"))
    s = torch.eye(2).to_sparse()
    with pytest.raises(TypeError, match="strided"):
        same_bits(s, s)


def test_assert_same_bits_message_states_claim_and_first_difference():
    got = torch.tensor([[1.0, 0.0], [float("nan"), 2.0]])
    want = torch.tensor([[1.0, -0.0], [float("nan"), 3.0]])
    with pytest.raises(AssertionError) as info:
        assert_same_bits(got, want, "clone() keeps the values")
    msg = str(info.value)
    assert msg.startswith("clone() keeps the values: ")
    assert "2 of 4 elements differ bit for bit" in msg
    assert "index (0, 1): got 0.0 (0x00000000), want -0.0 (0x80000000)" in msg
    assert_same_bits(want, want.clone(), "never raised")
    with pytest.raises(AssertionError, match=r"x: got shape \(4,\), want \(2, 2\)"):
        assert_same_bits(got.reshape(-1), want, "x")
    bf = _from_bits([0x8000], torch.bfloat16)
    with pytest.raises(AssertionError, match=r"got -0.0 \(0x8000\), want 0.0 \(0x0000\)"):
        assert_same_bits(bf, torch.zeros(1, dtype=torch.bfloat16), "bf16")


@pytest.mark.parametrize("dtype", DIFFERENTIABLE, ids=str)
@pytest.mark.parametrize("first", [float("nan"), float("inf"), -0.0, 7.0, -3.0, 5.0])
def test_sentinel_differs_from_special_first_elements(dtype, first):
    value = complex(first, first) if dtype.is_complex else first
    t = torch.full((2,), value, dtype=dtype)
    s = sentinel_for(t)
    stored = torch.tensor(s, dtype=dtype).item()
    assert stored == stored and stored != t[0].item()  # finite, and recognisably different
    if dtype.is_complex:  # every part differs: a write shows through .real and .imag views
        assert stored.real != t[0].item().real and stored.imag != t[0].item().imag
    alias = t[:]
    assert writes_visible(t, alias)


def test_element_bytes_reads_without_copy_ops():
    x = torch.arange(6, dtype=torch.int16).reshape(2, 3).t()
    rows = element_bytes(x)
    assert rows.dtype == np.uint8 and rows.shape == (6, 2)
    assert rows.copy().view(np.int16).reshape(-1).tolist() == [0, 3, 1, 4, 2, 5]


def test_computed_values_tolerate_only_nan_sign_and_payload():
    """assert_same_computed_values: any NaN matches any NaN (per real
    component); everything else - -0.0, infinities, a NaN against a number,
    shape and dtype - is compared as assert_same_bits does."""
    bits = _from_bits([0x7FC00000, 0x7FC12345, 0xFFC00000], torch.float32)
    quiet, payload, negative = (b.reshape(1) for b in bits)
    assert_same_computed_values(quiet, payload, "payload")
    assert_same_computed_values(quiet, negative, "sign")
    z = torch.complex(quiet, negative)
    assert_same_computed_values(z, torch.complex(payload, quiet), "complex parts")
    with pytest.raises(AssertionError, match="^zero: 1 of 1 elements differ"):
        assert_same_computed_values(torch.tensor([-0.0]), torch.tensor([0.0]), "zero")
    with pytest.raises(AssertionError, match="^nan vs 1: 1 of 1 elements differ"):
        assert_same_computed_values(quiet, torch.tensor([1.0]), "nan vs 1")
    with pytest.raises(AssertionError, match="^re nan, im 1: 1 of 1 elements differ"):
        assert_same_computed_values(
            torch.complex(quiet, torch.tensor([1.0])), torch.complex(quiet, quiet), "re nan, im 1"
        )
    with pytest.raises(AssertionError, match="dtype"):
        assert_same_computed_values(quiet, quiet.double(), "dtype")
    assert_same_computed_values(torch.tensor([1, 2]), torch.tensor([1, 2]), "ints")
