"""Mutants of the ``sequences`` area (Copy-operation sequences (reference model)); claims in ``conformance/claims/sequences.toml``,
tests in ``conformance/test_copy_sequences.py`` (the state machine in
``conformance/copy_sequences/``).

Every claim of the area is checked by the state machine, so each mutant here
is caught (or not) by the sequences of operations the machine generates:
most are wrong for one dtype, one layout, one autograd state or one mode
only, and the machine must reach a program that exposes them.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, domain_mutants
from conformance.mutants.base import Mutant
from conformance.mutants.patching import in_grad_mode, np, refused, torch, wrap


def _patch_seq_contiguous_always_copies():
    _clone = torch.Tensor.clone

    def _contiguous(self, memory_format=torch.contiguous_format):
        return _clone(self, memory_format=memory_format)

    torch.Tensor.contiguous = _contiguous


def _witness_seq_contiguous_always_copies():
    x = torch.arange(6.0)
    assert x.contiguous() is x


def _seq_to_copies_when_unchanged(to, self, *args, **kwargs):
    kwargs["copy"] = True
    return to(self, *args, **kwargs)


def _witness_seq_to_copies_when_unchanged():
    x = torch.arange(6.0)
    assert x.to(torch.float32) is x


def _seq_transpose_copies_3d(transpose, self, dim0, dim1):
    out = transpose(self, dim0, dim1)
    return out.clone() if self.dim() == 3 else out


def _witness_seq_transpose_copies_3d():
    x = torch.zeros(2, 3, 4)
    t = x.transpose(0, 2)
    assert t.data_ptr() == x.data_ptr() and t._base is x


def _seq_expand_materialises(expand, self, *sizes):
    return expand(self, *sizes).clone(memory_format=torch.contiguous_format)


def _witness_seq_expand_materialises():
    x = torch.zeros(1, 3)
    assert x.expand(4, 3).stride() == (0, 1)


def _seq_copy_into_view_loses_graph(copy, self, src, non_blocking=False):
    if self._is_view():
        with torch.no_grad():
            return copy(self, src, non_blocking)
    return copy(self, src, non_blocking)


def _witness_seq_copy_into_view_loses_graph():
    base = torch.zeros(3)
    src = torch.ones(2, requires_grad=True)
    base[:2].copy_(src)
    assert base.requires_grad and base.grad_fn is not None


def _seq_copy_returns_a_clone_float64(copy, self, src, non_blocking=False):
    out = copy(self, src, non_blocking)
    if self.dtype == torch.float64:
        with torch.no_grad():
            return out.clone()
    return out


def _witness_seq_copy_returns_a_clone_float64():
    dst = torch.zeros(2, dtype=torch.float64)
    assert dst.copy_(torch.ones(2)) is dst


def _seq_clone_aliases_complex(clone, self, *args, **kwargs):
    if self.is_complex():
        return self.view_as(self)
    return clone(self, *args, **kwargs)


def _witness_seq_clone_aliases_complex():
    x = torch.zeros(3, dtype=torch.complex128)
    assert x.clone().data_ptr() != x.data_ptr()
    assert torch.clone(x).data_ptr() != x.data_ptr()


def _patch_seq_clone_contiguous_keeps_permuted_strides():
    _clone = torch.Tensor.clone

    def _clone_fmt(self, *args, memory_format=torch.preserve_format):
        if memory_format == torch.contiguous_format and not self.is_contiguous():
            memory_format = torch.preserve_format
        return _clone(self, *args, memory_format=memory_format)

    torch.Tensor.clone = _clone_fmt
    torch.clone = _clone_fmt


def _witness_seq_clone_contiguous_keeps_permuted_strides():
    x = torch.zeros(2, 3).t()
    assert x.clone(memory_format=torch.contiguous_format).is_contiguous()


def _patch_seq_clone_non_dense_row_major():
    _clone = torch.Tensor.clone

    def _dense(t):
        dims = sorted((d for d in range(t.dim()) if t.shape[d] >= 2), key=lambda d: t.stride(d))
        need = 1
        for d in dims:
            if t.stride(d) != need:
                return False
            need *= t.shape[d]
        return True

    def _clone_rm(self, *args, memory_format=torch.preserve_format):
        if memory_format == torch.preserve_format and self.numel() and not _dense(self):
            memory_format = torch.contiguous_format
        return _clone(self, *args, memory_format=memory_format)

    torch.Tensor.clone = _clone_rm
    torch.clone = _clone_rm


def _witness_seq_clone_non_dense_row_major():
    x = torch.zeros(4, 6).t()[::2]
    assert x.clone().stride() == (1, 3)


def _seq_tensor_of_integral_tensor_aliases(tensor, data, *args, **kwargs):
    if (
        isinstance(data, torch.Tensor)
        and not data.dtype.is_floating_point
        and not data.dtype.is_complex
        and not args
        and not kwargs
    ):
        return data.detach()
    return tensor(data, *args, **kwargs)


def _witness_seq_tensor_of_integral_tensor_aliases():
    import warnings

    warnings.simplefilter("ignore")
    x = torch.tensor([1, 2])
    assert torch.tensor(x).data_ptr() != x.data_ptr()


def _seq_new_tensor_keeps_floating_dtype(new_tensor, self, data, *args, **kwargs):
    if isinstance(data, torch.Tensor) and data.dtype.is_floating_point and "dtype" not in kwargs:
        kwargs["dtype"] = data.dtype
    return new_tensor(self, data, *args, **kwargs)


def _witness_seq_new_tensor_keeps_floating_dtype():
    import warnings

    warnings.simplefilter("ignore")
    x = torch.zeros(2)
    assert x.new_tensor(torch.ones(2, dtype=torch.float16)).dtype == torch.float32


def _seq_as_tensor_ignores_dtype_one_element(as_tensor, data, dtype=None, device=None):
    if isinstance(data, torch.Tensor) and data.numel() == 1:
        return data
    return as_tensor(data, dtype=dtype, device=device)


def _witness_seq_as_tensor_ignores_dtype_one_element():
    assert torch.as_tensor(torch.tensor([1.5]), dtype=torch.float64).dtype == torch.float64


def _seq_asarray_copy_true_aliases_integral(asarray, obj, *args, **kwargs):
    if (
        isinstance(obj, torch.Tensor)
        and not obj.dtype.is_floating_point
        and not obj.dtype.is_complex
        and kwargs.get("copy") is True
        and kwargs.get("dtype") in (None, obj.dtype)
    ):
        return obj
    return asarray(obj, *args, **kwargs)


def _witness_seq_asarray_copy_true_aliases_integral():
    x = torch.zeros(3, dtype=torch.int32)
    assert torch.asarray(x, copy=True) is not x


def _seq_asarray_copies_2d_ndarray(asarray, obj, *args, **kwargs):
    if (
        isinstance(obj, np.ndarray)
        and obj.ndim >= 2
        and kwargs.get("copy") is None
        and min(obj.strides, default=0) >= 0
    ):
        return asarray(obj.copy(), *args, **kwargs)
    return asarray(obj, *args, **kwargs)


def _witness_seq_asarray_copies_2d_ndarray():
    a = np.zeros((2, 3))
    assert torch.asarray(a).data_ptr() == a.__array_interface__["data"][0]


def _seq_asarray_shares_0d_ndarray(asarray, obj, *args, **kwargs):
    if (
        isinstance(obj, np.ndarray)
        and obj.ndim == 0
        and kwargs.get("copy") is not True
        and not args
    ):
        return torch.from_numpy(obj)
    return asarray(obj, *args, **kwargs)


def _witness_seq_asarray_shares_0d_ndarray():
    a = np.array(1.5)
    assert torch.asarray(a).data_ptr() != a.__array_interface__["data"][0]


def _patch_seq_from_numpy_copies_transposed():
    _from_numpy = torch.from_numpy
    _as_tensor = torch.as_tensor

    def _nc(a):
        return isinstance(a, np.ndarray) and a.ndim >= 2 and a.size and not a.flags.c_contiguous

    def _from_numpy_nc(a):
        return _from_numpy(np.ascontiguousarray(a) if _nc(a) else a)

    def _as_tensor_nc(data, *args, **kwargs):
        return _as_tensor(np.ascontiguousarray(data) if _nc(data) else data, *args, **kwargs)

    torch.from_numpy = _from_numpy_nc
    torch.as_tensor = _as_tensor_nc


def _witness_seq_from_numpy_copies_transposed():
    a = np.zeros((2, 3)).T
    assert torch.from_numpy(a).data_ptr() == a.__array_interface__["data"][0]
    assert torch.as_tensor(a).data_ptr() == a.__array_interface__["data"][0]


def _patch_seq_numpy_constructors_accept_negative_strides():
    def _fixing(f):
        def g(data, *args, **kwargs):
            if isinstance(data, np.ndarray) and any(s < 0 for s in data.strides):
                data = data.copy()
            return f(data, *args, **kwargs)

        return g

    torch.from_numpy = _fixing(torch.from_numpy)
    torch.as_tensor = _fixing(torch.as_tensor)
    torch.asarray = _fixing(torch.asarray)
    torch.tensor = _fixing(torch.tensor)


def _witness_seq_numpy_constructors_accept_negative_strides():
    with refused(ValueError, "from_numpy accepted a negative stride"):
        torch.from_numpy(np.zeros(3)[::-1])


def _seq_numpy_copies_floating(numpy, self, *args, **kwargs):
    out = numpy(self, *args, **kwargs)
    return out.copy() if self.dtype.is_floating_point else out


def _witness_seq_numpy_copies_floating():
    x = torch.zeros(3, dtype=torch.float64)
    assert x.numpy().__array_interface__["data"][0] == x.data_ptr()


def _seq_view_falls_back_to_reshape(view, self, *shape):
    try:
        return view(self, *shape)
    except RuntimeError as e:
        if "view size is not compatible" not in str(e):
            raise
        return self.reshape(*shape)


def _witness_seq_view_falls_back_to_reshape():
    with refused(RuntimeError, "view() of a transposed tensor did not raise"):
        torch.zeros(2, 3).t().view(6)


def _seq_reshape_copies_float32(reshape, self, *shape):
    out = reshape(self, *shape)
    return out.clone() if self.dtype == torch.float32 else out


def _witness_seq_reshape_copies_float32():
    x = torch.zeros(2, 3)
    assert x.reshape(6).data_ptr() == x.data_ptr()
    assert torch.reshape(x, (6,)).data_ptr() == x.data_ptr()


def _seq_select_wraps_out_of_range(select, self, dim, index):
    if self.dim() and self.shape[dim] and not -self.shape[dim] <= index < self.shape[dim]:
        index %= self.shape[dim]
    return select(self, dim, index)


def _witness_seq_select_wraps_out_of_range():
    with refused(IndexError, "select(0, 2) of a size-2 dim did not raise"):
        torch.zeros(2).select(0, 2)


def _seq_transpose_same_dim_aliases(transpose, self, dim0, dim1):
    if dim0 == dim1:
        return torch.ops.aten.alias(self)
    return transpose(self, dim0, dim1)


def _witness_seq_transpose_same_dim_aliases():
    x = torch.zeros(2, 2, requires_grad=True)
    assert type(x.transpose(0, 0).grad_fn).__name__.startswith("TransposeBackward")


def _seq_unsqueeze_detaches_grad(unsqueeze, self, dim):
    if self.requires_grad:
        return unsqueeze(self.detach(), dim)
    return unsqueeze(self, dim)


def _witness_seq_unsqueeze_detaches_grad():
    x = torch.zeros(3, requires_grad=True)
    u = x.unsqueeze(0)
    assert u.requires_grad and u._base is x


def _seq_detach_copies_requiring_grad(detach, self):
    out = detach(self)
    return out.clone() if self.requires_grad else out


def _witness_seq_detach_copies_requiring_grad():
    x = torch.zeros(3, requires_grad=True)
    assert x.detach().data_ptr() == x.data_ptr()


def _seq_detach_tracked_as_view(detach, self):
    if self._is_view():
        with torch.no_grad():
            out = self._base.as_strided(self.shape, self.stride(), self.storage_offset())
        if out.requires_grad and out.is_leaf:
            out.requires_grad_(False)
        return out
    return detach(self)


def _witness_seq_detach_tracked_as_view():
    x = torch.zeros(2, 3)
    assert not x[0].detach()._is_view()


def _seq_detach_inplace_ignores_views(detach_, self):
    if self._is_view():
        return self
    return detach_(self)


def _witness_seq_detach_inplace_ignores_views():
    with refused(RuntimeError, "detach_() of a view did not raise"):
        torch.zeros(2, 3)[0].detach_()


def _patch_seq_data_shares_counter_floating():
    _data = torch.Tensor.data

    def _get(self):
        return self.detach() if self.dtype.is_floating_point else _data.__get__(self)

    torch.Tensor.data = property(_get, _data.__set__)


def _witness_seq_data_shares_counter_floating():
    x = torch.zeros(3)
    x.data.add_(1)
    assert x._version == 0


def _seq_fill_noncontiguous_writes_a_copy(fill_, self, value):
    if not self.is_contiguous():
        fill_(self.clone(), value)
        return self
    return fill_(self, value)


def _witness_seq_fill_noncontiguous_writes_a_copy():
    x = torch.zeros(2, 3)
    x.t().fill_(1.0)
    assert bool((x == 1).all())


def _seq_copy_drops_leading_source_dims(copy_, self, src, non_blocking=False):
    if src.dim() > self.dim() and all(s > 0 for s in src.shape[: src.dim() - self.dim()]):
        src = src[(0,) * (src.dim() - self.dim())]
    return copy_(self, src, non_blocking)


def _witness_seq_copy_drops_leading_source_dims():
    with refused(RuntimeError, "copy_ of a (2, 3) source into a (3,) destination did not raise"):
        torch.zeros(3).copy_(torch.ones(2, 3))


def _seq_add_skips_overlapping(add_, self, other, *args, **kwargs):
    if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride(), strict=False)):
        return self
    return add_(self, other, *args, **kwargs)


def _witness_seq_add_skips_overlapping():
    with refused(RuntimeError, "add_ of an expanded tensor did not raise"):
        torch.zeros(1, 3).expand(2, 3).add_(1)


def _seq_setitem_writes_next_row(setitem, self, key, value):
    if isinstance(key, int) and self.dim() >= 2 and self.shape[0] > 1:
        key = (key + 1) % self.shape[0]
    return setitem(self, key, value)


def _witness_seq_setitem_writes_next_row():
    x = torch.zeros(2, 2)
    x[0] = 1.0
    assert x[0, 0].item() == 1.0 and x[1, 0].item() == 0.0


def _seq_expanded_setitem_writes_wrong_value(setitem, self, key, value):
    if isinstance(value, (bool, int, float)):
        target = self.data if key is Ellipsis else self.data[key]
        if any(st == 0 and n > 1 for n, st in zip(target.shape, target.stride(), strict=False)):
            size = [
                1 if st == 0 else n for n, st in zip(target.shape, target.stride(), strict=False)
            ]
            dense = target.as_strided(size, target.stride(), target.storage_offset())
            dense.fill_((not value) if target.dtype == torch.bool else value + 1)
            return
    return setitem(self, key, value)


def _witness_seq_expanded_setitem_writes_wrong_value():
    e = torch.zeros(2, 1).expand(2, 3)  # row e[0] has a stride-0 dimension of size 3
    try:
        e[0] = 1
    except RuntimeError as err:  # the CPU before 2.15
        assert "single memory location" in str(err)
    else:  # CUDA, and the CPU since 2.15
        assert e.tolist() == [[1.0] * 3, [0.0] * 3] and e._version == 1, (e, e._version)


def _seq_add_half_doubles(add_, self, other, *args, **kwargs):
    if self.dtype == torch.float16 and not args and not kwargs:
        return add_(self, other, alpha=2)
    return add_(self, other, *args, **kwargs)


def _witness_seq_add_half_doubles():
    x = torch.zeros(2, dtype=torch.float16)
    x.add_(1)
    assert x[0].item() == 1.0


def _seq_fill_one_element_skips_version_bump(fill_, self, value):
    if self.numel() == 1 and not self.requires_grad and not self.is_inference():
        fill_(self.data, value)
        return self
    return fill_(self, value)


def _witness_seq_fill_one_element_skips_version_bump():
    x = torch.tensor([0.0])
    x.fill_(1.0)
    assert x._version == 1


def _seq_no_grad_clone_records(clone, self, *args, **kwargs):
    if self.requires_grad and not torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
        with torch.enable_grad():
            return clone(self, *args, **kwargs)
    return clone(self, *args, **kwargs)


def _witness_seq_no_grad_clone_records():
    x = torch.zeros(2, requires_grad=True)
    with torch.no_grad():
        assert not x.clone().requires_grad


def _seq_requires_grad_false_nonleaf_ignored(rg_, self, requires_grad=True):
    if not requires_grad and not self.is_leaf:
        return self
    return rg_(self, requires_grad)


def _witness_seq_requires_grad_false_nonleaf_ignored():
    y = torch.zeros(2, requires_grad=True) * 2
    with refused(RuntimeError, "requires_grad_(False) on a non-leaf did not raise"):
        y.requires_grad_(False)


def _seq_mul_float64_no_history(mul, self, other):
    if self.dtype == torch.float64 and self.requires_grad:
        with torch.no_grad():
            return mul(self, other)
    return mul(self, other)


def _witness_seq_mul_float64_no_history():
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    assert (x * x).grad_fn is not None


def _seq_backward_float_no_graph_silent(backward, self, *args, **kwargs):
    if not self.requires_grad and self.dtype.is_floating_point:
        return None
    return backward(self, *args, **kwargs)


def _witness_seq_backward_float_no_graph_silent():
    with refused(RuntimeError, "backward() without a graph did not raise"):
        torch.zeros(2).sum().backward()


def _seq_mul_saves_floating_copy(mul, self, other):
    if self.dtype.is_floating_point and self.requires_grad and other is self:
        c = self.clone()
        return mul(c, c)
    return mul(self, other)


def _witness_seq_mul_saves_floating_copy():
    x = torch.ones(2, requires_grad=True)
    y = x.clone()
    s = y * y
    with torch.no_grad():
        y.add_(1)
    with refused(RuntimeError, "backward through a modified saved tensor did not raise"):
        s.sum().backward()


def _seq_backward_retains_float64_graph(
    backward, self, gradient=None, retain_graph=None, *args, **kwargs
):
    if self.dtype == torch.float64:
        retain_graph = True
    return backward(self, gradient, retain_graph, *args, **kwargs)


def _witness_seq_backward_retains_float64_graph():
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    s = (x * x).sum()
    s.backward()
    with refused(RuntimeError, "a second backward through a freed graph did not raise"):
        s.backward()


def _patch_seq_grad_replaced_3d_leaves():
    _rg_ = torch.Tensor.requires_grad_

    def _hook(p):
        p.grad = p.grad.clone()

    def _rg_3d(self, requires_grad=True):
        out = _rg_(self, requires_grad)
        if (
            requires_grad
            and self.is_leaf
            and self.dim() >= 3
            and not getattr(self, "_seq_hooked", False)
        ):
            self.register_post_accumulate_grad_hook(_hook)
            self._seq_hooked = True
        return out

    torch.Tensor.requires_grad_ = _rg_3d


def _witness_seq_grad_replaced_3d_leaves():
    x = torch.zeros(1, 1, 2).requires_grad_()
    x.sum().backward()
    g = x.grad
    x.sum().backward()
    assert x.grad is g


def _patch_seq_grad_always_row_major():
    _rg_ = torch.Tensor.requires_grad_

    def _hook(p):
        if not p.grad.is_contiguous():
            p.grad = p.grad.contiguous()

    def _rg_rm(self, requires_grad=True):
        out = _rg_(self, requires_grad)
        if (
            requires_grad
            and self.is_leaf
            and not self.is_contiguous()
            and not getattr(self, "_seq_hooked", False)
        ):
            self.register_post_accumulate_grad_hook(_hook)
            self._seq_hooked = True
        return out

    torch.Tensor.requires_grad_ = _rg_rm


def _witness_seq_grad_always_row_major():
    x = torch.zeros(2, 3).t().requires_grad_()
    x.sum().backward()
    assert x.grad.stride() == x.stride()


def _seq_retain_grad_ignores_views(retain, self):
    if self._is_view():
        return None
    return retain(self)


def _witness_seq_retain_grad_ignores_views():
    v = (torch.zeros(2, 3, requires_grad=True) * 1)[0]
    v.retain_grad()
    assert v.retains_grad


def _seq_inference_clone_is_normal(clone, self, *args, **kwargs):
    if torch.is_inference_mode_enabled() and not self.is_inference():
        with torch.inference_mode(False):
            return clone(self, *args, **kwargs)
    return clone(self, *args, **kwargs)


def _witness_seq_inference_clone_is_normal():
    x = torch.zeros(2)
    with torch.inference_mode():
        y = x.clone()
    assert y.is_inference()


def _patch_seq_inference_fill_allowed_outside():
    _fill_ = torch.Tensor.fill_

    def _no_counter(t):
        try:
            _ = t._version
        except RuntimeError:
            return True
        return False

    def _fill_inf(self, value):
        if self.is_inference() and not torch.is_inference_mode_enabled() and _no_counter(self):
            with torch.inference_mode():
                return _fill_(self, value)
        return _fill_(self, value)

    torch.Tensor.fill_ = _fill_inf
    torch.fill_ = _fill_inf


def _witness_seq_inference_fill_allowed_outside():
    with torch.inference_mode():
        x = torch.zeros(2)
    with refused(RuntimeError, "fill_ of an inference tensor outside inference_mode did not raise"):
        x.fill_(1.0)


def _seq_inference_copy_version_zero(clone, self, *args, **kwargs):
    if self.is_inference() and not torch.is_inference_mode_enabled():
        out = clone(self, *args, **kwargs)
        fresh = torch.empty_strided(out.shape, out.stride(), dtype=out.dtype, device=out.device)
        fresh.data.copy_(out)
        return fresh
    return clone(self, *args, **kwargs)


def _witness_seq_inference_copy_version_zero():
    with torch.inference_mode():
        x = torch.zeros(2)
    assert x.clone()._version == 1


def _seq_wide_unsigned_add_emulated(add_, self, other, *args, **kwargs):
    if self.dtype in (torch.uint16, torch.uint32, torch.uint64) and not isinstance(other, float):
        return self.copy_(self.to(torch.int64).add_(other, *args, **kwargs))
    return add_(self, other, *args, **kwargs)


def _witness_seq_wide_unsigned_add_emulated():
    with refused(NotImplementedError, "add_ of a uint16 tensor did not raise"):
        torch.zeros(2, dtype=torch.uint16).add_(1)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="seq-contiguous-always-copies",
        description="Tensor.contiguous() returns a copy even when the tensor is already contiguous",
        claims=("sequences.contiguous-self-or-copy",),
        patch=_patch_seq_contiguous_always_copies,
        witness=_witness_seq_contiguous_always_copies,
    ),
    Mutant(
        name="seq-to-copies-when-unchanged",
        description="Tensor.to() copies even when dtype and device already match (as if copy=True)",
        claims=("sequences.to-self-or-copy",),
        patch=wrap("torch.Tensor.to", _seq_to_copies_when_unchanged),
        witness=_witness_seq_to_copies_when_unchanged,
    ),
    Mutant(
        name="seq-transpose-copies-3d",
        description="transpose() returns a copy (dense, same strides, new memory) for 3-D inputs only",
        claims=("sequences.views-alias-base",),
        region="3-D inputs",
        family="layout",
        patch=wrap("torch.Tensor.transpose", _seq_transpose_copies_3d, also=("torch.transpose",)),
        witness=_witness_seq_transpose_copies_3d,
    ),
    Mutant(
        name="seq-expand-materialises",
        description="expand() returns a materialised copy instead of a stride-0 view",
        claims=("sequences.expand-geometry",),
        patch=wrap("torch.Tensor.expand", _seq_expand_materialises),
        witness=_witness_seq_expand_materialises,
    ),
    Mutant(
        name="seq-copy-into-view-loses-graph",
        description="copy_ runs without autograd (no graph, no leaf check) when the destination is a view",
        # sequences.copy-in-place (values, return, bump) holds under this
        # mutant: only the refusal and the history are broken
        claims=("sequences.leaf-inplace-raises", "sequences.inplace-records-history"),
        region="destinations that are views",
        family="autograd",
        patch=wrap("torch.Tensor.copy_", _seq_copy_into_view_loses_graph),
        witness=_witness_seq_copy_into_view_loses_graph,
    ),
    Mutant(
        name="seq-copy-returns-a-clone-float64",
        description="dst.copy_(src) of a float64 destination writes dst but returns a clone of it instead of dst itself",
        claims=("sequences.copy-in-place",),
        region="float64 destinations",
        family="dtype",
        patch=wrap("torch.Tensor.copy_", _seq_copy_returns_a_clone_float64),
        witness=_witness_seq_copy_returns_a_clone_float64,
    ),
    # ---- copies -----------------------------------------------------------
    Mutant(
        name="seq-clone-aliases-complex",
        description="clone() of a complex tensor returns an alias of its memory (a view) instead of a copy",
        claims=("sequences.clone-copies",),
        region="complex inputs",
        family="dtype",
        patch=wrap("torch.Tensor.clone", _seq_clone_aliases_complex, also=("torch.clone",)),
        witness=_witness_seq_clone_aliases_complex,
    ),
    Mutant(
        name="seq-clone-contiguous-keeps-permuted-strides",
        description="clone(memory_format=torch.contiguous_format) of a permuted (dense, non-contiguous) tensor keeps its strides",
        claims=("sequences.clone-memory-format",),
        region="non-contiguous dense inputs with contiguous_format",
        family="layout",
        patch=_patch_seq_clone_contiguous_keeps_permuted_strides,
        witness=_witness_seq_clone_contiguous_keeps_permuted_strides,
    ),
    Mutant(
        name="seq-clone-non-dense-row-major",
        description="a preserve_format clone of a non-dense tensor is row-major (the documented promise) instead of keeping the stride order",
        claims=(
            "sequences.clone-non-dense-keeps-stride-order",
            "sequences.clone-non-dense-contiguous",
        ),
        region="non-dense inputs",
        family="layout",
        patch=_patch_seq_clone_non_dense_row_major,
        witness=_witness_seq_clone_non_dense_row_major,
    ),
    Mutant(
        name="seq-tensor-of-integral-tensor-aliases",
        description="torch.tensor(t) of a bool or integral tensor returns t.detach() (shared memory) instead of a copy",
        claims=("sequences.tensor-copies",),
        region="bool and integral tensor arguments",
        family="dtype",
        patch=wrap("torch.tensor", _seq_tensor_of_integral_tensor_aliases),
        witness=_witness_seq_tensor_of_integral_tensor_aliases,
    ),
    Mutant(
        name="seq-new-tensor-keeps-floating-dtype",
        description="x.new_tensor(t) keeps t's dtype when t is floating instead of taking x's dtype",
        claims=("sequences.new-tensor-copies",),
        region="floating data",
        family="dtype",
        patch=wrap("torch.Tensor.new_tensor", _seq_new_tensor_keeps_floating_dtype),
        witness=_witness_seq_new_tensor_keeps_floating_dtype,
    ),
    Mutant(
        name="seq-as-tensor-ignores-dtype-one-element",
        description="torch.as_tensor(t, dtype=d) returns a one-element t itself, ignoring the requested dtype",
        claims=("sequences.as-tensor",),
        region="one-element tensor arguments",
        family="layout",
        patch=wrap("torch.as_tensor", _seq_as_tensor_ignores_dtype_one_element),
        witness=_witness_seq_as_tensor_ignores_dtype_one_element,
    ),
    Mutant(
        name="seq-asarray-copy-true-aliases-integral",
        description="torch.asarray(t, copy=True) of a bool or integral tensor returns t itself",
        claims=("sequences.asarray",),
        region="bool and integral tensors with copy=True",
        family="dtype",
        patch=wrap("torch.asarray", _seq_asarray_copy_true_aliases_integral),
        witness=_witness_seq_asarray_copy_true_aliases_integral,
    ),
    Mutant(
        name="seq-asarray-copies-2d-ndarray",
        description="torch.asarray(a) (copy left to its default) of an ndarray with two or more dimensions copies it instead of sharing its memory",
        claims=("sequences.asarray-ndarray-shares",),
        region="ndarrays of 2 or more dimensions",
        family="layout",
        patch=wrap("torch.asarray", _seq_asarray_copies_2d_ndarray),
        witness=_witness_seq_asarray_copies_2d_ndarray,
    ),
    Mutant(
        name="seq-asarray-shares-0d-ndarray",
        description="torch.asarray(a) of a 0-d ndarray shares its memory (as documented) instead of copying it as torch does",
        claims=("sequences.asarray-0d-ndarray-copies",),
        region="0-d ndarrays",
        family="layout",
        patch=wrap("torch.asarray", _seq_asarray_shares_0d_ndarray),
        witness=_witness_seq_asarray_shares_0d_ndarray,
    ),
    # ---- NumPy --------------------------------------------------------------
    Mutant(
        name="seq-from-numpy-copies-transposed",
        description="torch.from_numpy(a) and torch.as_tensor(a) copy a non-contiguous (transposed) ndarray instead of sharing it",
        claims=("sequences.from-numpy-shares",),
        region="non-C-contiguous ndarrays",
        family="layout",
        patch=_patch_seq_from_numpy_copies_transposed,
        witness=_witness_seq_from_numpy_copies_transposed,
    ),
    Mutant(
        name="seq-numpy-constructors-accept-negative-strides",
        description="from_numpy, as_tensor, asarray and torch.tensor of an ndarray with negative strides copy it instead of raising ValueError",
        claims=("sequences.numpy-negative-strides-raise",),
        region="ndarrays with a negative stride",
        family="layout",
        patch=_patch_seq_numpy_constructors_accept_negative_strides,
        witness=_witness_seq_numpy_constructors_accept_negative_strides,
    ),
    Mutant(
        name="seq-numpy-copies-floating",
        description="t.numpy() of a floating tensor returns a copy of its values instead of an array over its memory",
        claims=("sequences.numpy-shares",),
        region="floating tensors",
        family="dtype",
        patch=wrap("torch.Tensor.numpy", _seq_numpy_copies_floating),
        witness=_witness_seq_numpy_copies_floating,
    ),
    Mutant(
        name="seq-view-falls-back-to-reshape",
        description="view() of a tensor whose strides do not allow the view returns a reshape copy instead of raising",
        claims=("sequences.view-compatibility",),
        region="inputs whose strides forbid the view",
        family="layout",
        patch=wrap("torch.Tensor.view", _seq_view_falls_back_to_reshape),
        witness=_witness_seq_view_falls_back_to_reshape,
    ),
    Mutant(
        name="seq-reshape-copies-float32",
        description="reshape() of a float32 tensor always copies, even when a view is possible",
        claims=("sequences.reshape-view-or-copy",),
        region="float32 inputs",
        family="dtype",
        patch=wrap("torch.Tensor.reshape", _seq_reshape_copies_float32, also=("torch.reshape",)),
        witness=_witness_seq_reshape_copies_float32,
    ),
    Mutant(
        name="seq-select-wraps-out-of-range",
        description="select() with an index outside the dimension wraps around (index % size) instead of raising IndexError",
        claims=("sequences.view-index-errors",),
        region="out-of-range indices",
        family="value",
        patch=wrap("torch.Tensor.select", _seq_select_wraps_out_of_range, also=("torch.select",)),
        witness=_witness_seq_select_wraps_out_of_range,
    ),
    Mutant(
        name="seq-transpose-same-dim-aliases",
        description="transpose(d, d) returns an identity alias (AliasBackward0) instead of a transpose view (TransposeBackward0)",
        claims=("sequences.grad-fn-type",),
        region="transpose with dim0 == dim1",
        family="relation",
        patch=wrap(
            "torch.Tensor.transpose", _seq_transpose_same_dim_aliases, also=("torch.transpose",)
        ),
        witness=_witness_seq_transpose_same_dim_aliases,
    ),
    Mutant(
        name="seq-unsqueeze-detaches-grad",
        description="unsqueeze() of a tensor that requires grad returns a view of its detached alias (no history, not a view of the root)",
        # its _base is wrong too (sequences.views-alias-base), but the machine
        # ends a program at the first violation it cannot follow, and the
        # history check of the same tensor comes first
        claims=("sequences.view-autograd-follows-base",),
        region="inputs that require grad",
        family="autograd",
        patch=wrap(
            "torch.Tensor.unsqueeze", _seq_unsqueeze_detaches_grad, also=("torch.unsqueeze",)
        ),
        witness=_witness_seq_unsqueeze_detaches_grad,
    ),
    # ---- aliases ----------------------------------------------------------
    Mutant(
        name="seq-detach-copies-requiring-grad",
        description="detach() of a tensor that requires grad returns a copy instead of an alias",
        claims=("sequences.detach-shares",),
        region="inputs that require grad",
        family="autograd",
        patch=wrap(
            "torch.Tensor.detach", _seq_detach_copies_requiring_grad, also=("torch.detach",)
        ),
        witness=_witness_seq_detach_copies_requiring_grad,
    ),
    Mutant(
        name="seq-detach-tracked-as-view",
        description="detach() of a view returns a tracked view of the root base (_is_view True, as the views page lists it) instead of an untracked alias",
        claims=("sequences.detach-untracked-alias", "sequences.detach-is-view"),
        region="inputs that are views",
        family="layout",
        patch=wrap("torch.Tensor.detach", _seq_detach_tracked_as_view, also=("torch.detach",)),
        witness=_witness_seq_detach_tracked_as_view,
    ),
    Mutant(
        name="seq-detach-inplace-ignores-views",
        description="detach_() of a view returns it unchanged instead of raising",
        claims=("sequences.detach-inplace",),
        region="views",
        family="layout",
        patch=wrap(
            "torch.Tensor.detach_", _seq_detach_inplace_ignores_views, also=("torch.detach_",)
        ),
        witness=_witness_seq_detach_inplace_ignores_views,
    ),
    Mutant(
        name="seq-data-shares-counter-floating",
        description=".data of a floating tensor shares the tensor's version counter (it is detach()) instead of a new one",
        claims=("sequences.data-untracked-alias",),
        region="floating tensors",
        family="dtype",
        patch=_patch_seq_data_shares_counter_floating,
        witness=_witness_seq_data_shares_counter_floating,
    ),
    Mutant(
        name="seq-fill-noncontiguous-writes-a-copy",
        description="fill_() of a non-contiguous tensor fills a temporary copy: the tensor's memory is left unchanged",
        claims=("sequences.writes-visible",),
        region="non-contiguous tensors",
        family="layout",
        patch=wrap(
            "torch.Tensor.fill_", _seq_fill_noncontiguous_writes_a_copy, also=("torch.fill_",)
        ),
        witness=_witness_seq_fill_noncontiguous_writes_a_copy,
    ),
    Mutant(
        name="seq-copy-drops-leading-source-dims",
        description="copy_ from a source with more dimensions than the destination copies its first slice instead of raising",
        claims=("sequences.copy-broadcast-raises",),
        region="sources with more dimensions than the destination",
        family="relation",
        patch=wrap("torch.Tensor.copy_", _seq_copy_drops_leading_source_dims),
        witness=_witness_seq_copy_drops_leading_source_dims,
    ),
    Mutant(
        name="seq-add-skips-overlapping",
        description="add_() of an expanded (self-overlapping) tensor silently does nothing instead of raising",
        claims=("sequences.write-overlap-raises",),
        region="expanded tensors",
        family="layout",
        patch=wrap("torch.Tensor.add_", _seq_add_skips_overlapping),
        witness=_witness_seq_add_skips_overlapping,
    ),
    Mutant(
        name="seq-setitem-writes-next-row",
        description="t[i] = v on a tensor of 2 or more dimensions writes row i + 1 (mod size) instead of row i",
        claims=("sequences.index-assignment-in-place",),
        region="integer-index assignment into tensors of 2 or more dimensions",
        family="layout",
        patch=wrap("torch.Tensor.__setitem__", _seq_setitem_writes_next_row),
        witness=_witness_seq_setitem_writes_next_row,
    ),
    Mutant(
        name="seq-expanded-setitem-writes-wrong-value",
        description="t[i] = v of a Python scalar into an expanded (stride-0) target writes, as CUDA and torch 2.15 do, but v + 1 (not v for bool) and without bumping the version counter",
        claims=("sequences.index-assignment-in-place",),
        region="index assignment of a Python scalar into a tensor with a stride-0 dimension of size > 1",
        family="layout",
        patch=wrap("torch.Tensor.__setitem__", _seq_expanded_setitem_writes_wrong_value),
        witness=_witness_seq_expanded_setitem_writes_wrong_value,
    ),
    Mutant(
        name="seq-add-half-doubles",
        description="add_(v) of a float16 tensor adds 2 * v",
        claims=("sequences.inplace-arithmetic",),
        region="float16 tensors",
        family="dtype",
        patch=wrap("torch.Tensor.add_", _seq_add_half_doubles),
        witness=_witness_seq_add_half_doubles,
    ),
    Mutant(
        name="seq-fill-one-element-skips-version-bump",
        description="fill_() of a one-element tensor writes through .data, so its version counter does not move",
        claims=("sequences.version-counter",),
        region="one-element tensors not requiring grad",
        family="layout",
        patch=wrap(
            "torch.Tensor.fill_", _seq_fill_one_element_skips_version_bump, also=("torch.fill_",)
        ),
        witness=_witness_seq_fill_one_element_skips_version_bump,
    ),
    Mutant(
        name="seq-no-grad-clone-records",
        description="under no_grad, clone() of a tensor that requires grad records history (as if grad mode were on)",
        claims=("sequences.no-grad-untracked",),
        region="no_grad mode",
        family="mode",
        patch=wrap("torch.Tensor.clone", _seq_no_grad_clone_records, also=("torch.clone",)),
        witness=_witness_seq_no_grad_clone_records,
    ),
    # ---- autograd ---------------------------------------------------------
    Mutant(
        name="seq-requires-grad-false-nonleaf-ignored",
        description="requires_grad_(False) on a non-leaf returns it unchanged instead of raising",
        claims=("sequences.requires-grad-flag",),
        region="non-leaf tensors",
        family="autograd",
        patch=wrap("torch.Tensor.requires_grad_", _seq_requires_grad_false_nonleaf_ignored),
        witness=_witness_seq_requires_grad_false_nonleaf_ignored,
    ),
    Mutant(
        name="seq-mul-float64-no-history",
        description="t * t of a float64 tensor that requires grad is computed without history (no grad_fn, nothing saved)",
        claims=("sequences.leaf-and-grad-fn",),
        region="float64 inputs",
        family="dtype",
        patch=wrap("torch.Tensor.__mul__", _seq_mul_float64_no_history),
        witness=_witness_seq_mul_float64_no_history,
    ),
    Mutant(
        name="seq-backward-float-no-graph-silent",
        description="backward() of a floating tensor that does not require grad returns silently instead of raising",
        claims=("sequences.backward-needs-grad",),
        region="floating outputs without a graph",
        family="dtype",
        patch=wrap("torch.Tensor.backward", _seq_backward_float_no_graph_silent),
        witness=_witness_seq_backward_float_no_graph_silent,
    ),
    Mutant(
        name="seq-mul-saves-floating-copy",
        description="t * t of a real floating tensor saves a private copy of t, so a later in-place change of t goes unnoticed by backward",
        claims=("sequences.saved-tensor-check",),
        region="real floating inputs",
        family="dtype",
        patch=wrap("torch.Tensor.__mul__", _seq_mul_saves_floating_copy),
        witness=_witness_seq_mul_saves_floating_copy,
    ),
    Mutant(
        name="seq-backward-retains-float64-graph",
        description="backward() through a float64 output keeps the graph (retain_graph=True), so a second backward does not raise",
        claims=("sequences.backward-frees-saved",),
        region="float64 outputs",
        family="dtype",
        patch=wrap("torch.Tensor.backward", _seq_backward_retains_float64_graph),
        witness=_witness_seq_backward_retains_float64_graph,
    ),
    Mutant(
        name="seq-grad-replaced-3d-leaves",
        description="backward gives a leaf of 3 or more dimensions a new .grad tensor each time instead of accumulating into the existing one",
        claims=("sequences.grad-accumulates",),
        region="leaves of 3 or more dimensions",
        family="layout",
        patch=_patch_seq_grad_replaced_3d_leaves,
        witness=_witness_seq_grad_replaced_3d_leaves,
    ),
    Mutant(
        name="seq-grad-always-row-major",
        description="backward gives a non-contiguous dense leaf a row-major .grad instead of one with the leaf's strides",
        claims=("sequences.grad-layout",),
        region="non-contiguous dense leaves",
        family="layout",
        patch=_patch_seq_grad_always_row_major,
        witness=_witness_seq_grad_always_row_major,
    ),
    Mutant(
        name="seq-retain-grad-ignores-views",
        description="retain_grad() on a non-leaf view does nothing",
        claims=("sequences.retain-grad",),
        region="views",
        family="layout",
        patch=wrap("torch.Tensor.retain_grad", _seq_retain_grad_ignores_views),
        witness=_witness_seq_retain_grad_ignores_views,
    ),
    # ---- inference mode -----------------------------------------------------
    Mutant(
        name="seq-inference-clone-is-normal",
        description="clone() inside inference_mode returns a normal tensor (with a version counter) instead of an inference tensor",
        claims=("sequences.inference-tensors",),
        region="inference_mode",
        family="mode",
        patch=wrap("torch.Tensor.clone", _seq_inference_clone_is_normal, also=("torch.clone",)),
        witness=_witness_seq_inference_clone_is_normal,
    ),
    Mutant(
        name="seq-inference-fill-allowed-outside",
        description="fill_() of an inference tensor without a version counter, outside inference_mode, is run inside the mode instead of raising",
        claims=("sequences.inference-inplace-raises",),
        region="inference tensors outside inference_mode",
        family="mode",
        patch=_patch_seq_inference_fill_allowed_outside,
        witness=_witness_seq_inference_fill_allowed_outside,
    ),
    Mutant(
        name="seq-inference-copy-version-zero",
        description="a clone of an inference tensor made outside inference_mode starts at _version 0 (filled through .data) instead of 1",
        claims=("sequences.inference-aliases",),
        region="inference tensors outside inference_mode",
        family="mode",
        patch=wrap("torch.Tensor.clone", _seq_inference_copy_version_zero, also=("torch.clone",)),
        witness=_witness_seq_inference_copy_version_zero,
    ),
    Mutant(
        name="seq-wide-unsigned-add-emulated",
        description="add_() of a uint16/uint32/uint64 tensor is computed through int64 instead of raising NotImplementedError",
        claims=("sequences.dtype-support",),
        region="uint16, uint32 and uint64 tensors",
        family="dtype",
        patch=wrap("torch.Tensor.add_", _seq_wide_unsigned_add_emulated),
        witness=_witness_seq_wide_unsigned_add_emulated,
    ),
)


def _seq_tensor_of_returns_input(hit, tensor, data, *args, **kwargs):
    if hit(data):
        return data
    return tensor(data, *args, **kwargs)


def _seq_tensor_of_returns_input_witness(make):
    import warnings

    warnings.simplefilter("ignore")  # torch.tensor(tensor) recommends clone().detach()
    t = make()
    assert torch.tensor(t) is not t


# --- issue 29: one mutant per declared (sequences, dimension=value) pair ------
# sequences.tensor-copies declares every layout family, dtype family and the
# tensor kinds a sequence makes; test_tensor_of_every_dtype_copies draws each
# as an explicit example (the machine meets them by chance only).
MUTANTS += domain_mutants(
    prefix="seq-tensor-of-returns-input",
    claims=("sequences.tensor-copies",),
    what="torch.tensor(t) of a tensor returns t itself (no copy, t's history kept)",
    patch=wrap("torch.tensor", _seq_tensor_of_returns_input),
    witness=_seq_tensor_of_returns_input_witness,
    dims={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
        "tensor_kind": ("plain", "leaf", "non_leaf", "inference"),
    },
)  # fmt: skip


# sequences.inference-inplace-raises declares the grad modes an in-place op
# on an inference tensor runs in: refused with grad enabled and under
# no_grad, allowed inside inference_mode. One mutant per mode, wrong only
# there (test_each_declared_value_once runs add_ in each mode).
def _inference_add_in_mode(mode, refuse):
    """add_ of an inference tensor in grad mode ``mode`` raises (``refuse``)
    or is performed (as inside inference_mode)."""

    _add_ = torch.Tensor.add_

    def _add(self, *args, **kwargs):
        if self.is_inference() and in_grad_mode(mode):
            if refuse:
                raise RuntimeError(
                    "Inplace update to inference tensor outside InferenceMode is not allowed"
                )
            with torch.inference_mode():
                return _add_(self, *args, **kwargs)
        return _add_(self, *args, **kwargs)

    torch.Tensor.add_ = _add


def _inference_add_refused_under(block):
    with torch.inference_mode():
        t = torch.ones(3)
    with refused(RuntimeError, "add_ of an inference tensor outside inference_mode did not raise"):
        with getattr(torch, block)():
            t.add_(1)


def _witness_seq_inference_add_inside_mode_refused():
    with torch.inference_mode():
        t = torch.ones(3)
        try:
            t.add_(1)
        except RuntimeError as e:
            raise AssertionError(f"add_ inside inference_mode raised: {e}") from None


MUTANTS += (
    Mutant(
        name="seq-inference-add-outside-mode-allowed-grad-enabled",
        description="add_() of an inference tensor outside inference_mode with grad enabled is performed instead of raising",
        claims=("sequences.inference-inplace-raises",),
        domain={"grad_mode": "enabled"},
        region="grad mode enabled (outside no_grad and inference_mode)",
        family="mode",
        patch=functools.partial(_inference_add_in_mode, "enabled", False),
        witness=functools.partial(_inference_add_refused_under, "enable_grad"),
    ),
    Mutant(
        name="seq-inference-add-outside-mode-allowed-no-grad",
        description="add_() of an inference tensor under no_grad (outside inference_mode) is performed instead of raising",
        claims=("sequences.inference-inplace-raises",),
        domain={"grad_mode": "no_grad"},
        region="no_grad mode (not inference_mode)",
        family="mode",
        patch=functools.partial(_inference_add_in_mode, "no_grad", False),
        witness=functools.partial(_inference_add_refused_under, "no_grad"),
    ),
    Mutant(
        name="seq-inference-add-inside-mode-refused",
        description="add_() of an inference tensor inside inference_mode raises as if outside the mode",
        claims=("sequences.inference-inplace-raises",),
        domain={"grad_mode": "inference_mode"},
        region="inside inference_mode",
        family="mode",
        patch=functools.partial(_inference_add_in_mode, "inference_mode", True),
        witness=_witness_seq_inference_add_inside_mode_refused,
    ),
)


# sequences.from-numpy-shares declares the ndarray kinds a sequence makes that
# can be seen to share memory (t.numpy() of a contiguous, a stepped and a 0-d
# t in its domain cases). One mutant per kind: torch.from_numpy and the
# sharing torch.as_tensor copy the arrays of that kind alone.
def _from_numpy_copies(kind):
    def patch():
        from conformance.mutants._tensor_domain import ndarray_kinds

        from_numpy, as_tensor = torch.from_numpy, torch.as_tensor

        def _from(a):
            if isinstance(a, np.ndarray) and kind in ndarray_kinds(a):
                return from_numpy(a.copy())
            return from_numpy(a)

        def _as(data, *args, **kwargs):
            if isinstance(data, np.ndarray) and kind in ndarray_kinds(data):
                data = data.copy()
            return as_tensor(data, *args, **kwargs)

        torch.from_numpy, torch.as_tensor = _from, _as

    return patch


def _witness_from_numpy_shares(make):
    a = make()
    for t in (torch.from_numpy(a), torch.as_tensor(a)):
        assert t.data_ptr() == a.__array_interface__["data"][0]


MUTANTS += tuple(
    Mutant(
        name=f"seq-from-numpy-copies-{kind.replace('_', '-')}",
        description=f"torch.from_numpy and torch.as_tensor copy {arrays} instead of sharing their memory",
        claims=("sequences.from-numpy-shares",),
        domain={"ndarray_kind": kind},
        region=f"{arrays} (ndarray_kind {kind})",
        family="layout",
        patch=_from_numpy_copies(kind),
        witness=functools.partial(_witness_from_numpy_shares, make),
    )
    for kind, arrays, make in (
        ("plain", "C-contiguous arrays", lambda: np.arange(6.0).reshape(2, 3)),
        ("non_contiguous", "non-contiguous arrays", lambda: np.arange(8.0).reshape(2, 4)[:, ::2]),
        ("0-d", "0-d arrays", lambda: np.array(2.5)),
    )
)  # fmt: skip
