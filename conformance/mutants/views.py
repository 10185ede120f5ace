"""Mutants of the ``views`` area (View ops, reshape/flatten/expand/view(dtype), storage identity and detach_); claims in ``conformance/claims/views.toml``,
tests in ``conformance/test_views.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, TENSOR_KINDS, is_dense
from conformance.mutants.base import Mutant
from conformance.mutants.patching import accepted, refused, torch, wrap


def _patch_detach__noop():
    def detach_(self):
        return self

    torch.Tensor.detach_ = detach_
    torch.detach_ = detach_


def _witness_detach__noop():
    y = torch.ones(3, requires_grad=True) * 2
    y.detach_()
    assert y.requires_grad is False and y.grad_fn is None


def _detach__views_allowed(orig, self):
    if self._is_view():
        return self
    return orig(self)


def _witness_detach__views_allowed():
    v = torch.ones(4)[1:]
    with refused(RuntimeError, "detach_ of a view did not raise"):
        v.detach_()


def _expand_copies(orig, self, *sizes, **kwargs):
    return orig(self, *sizes, **kwargs).clone()


def _witness_expand_copies():
    x = torch.arange(3.0)
    assert x.expand(2, 3).stride() == (0, 1)


def _patch_reshape_copies_noncontig():
    _orig = torch.Tensor.reshape

    def reshape(self, *shape):
        if not self.is_contiguous():
            return _orig(self.clone(memory_format=torch.contiguous_format), *shape)
        return _orig(self, *shape)

    torch.Tensor.reshape = reshape
    torch.reshape = lambda input, shape: reshape(input, shape)


def _witness_reshape_copies_noncontig():
    x = torch.zeros(4, 3).t()
    assert x.reshape(3, 2, 2).data_ptr() == x.data_ptr()


def _flatten_noop_copies(orig, self, start_dim=0, end_dim=-1, *args):
    out = orig(self, start_dim, end_dim, *args)
    return out.clone() if out is self else out


def _witness_flatten_noop_copies():
    x = torch.zeros(2, 3)
    assert torch.flatten(x, 0, 0) is x


def _flatten_0d_returns_self(orig, self, *args, **kwargs):
    if self.dim() == 0:
        return self
    return orig(self, *args, **kwargs)


def _witness_flatten_0d_returns_self():
    x = torch.tensor(1.0)
    assert torch.flatten(x).shape == (1,)


def _patch_data_ptr_ignores_offset():
    def data_ptr(self):
        return self.untyped_storage().data_ptr()

    torch.Tensor.data_ptr = data_ptr


def _witness_data_ptr_ignores_offset():
    x = torch.zeros(4)
    assert x[1:].data_ptr() == x.data_ptr() + x.element_size()


def _real_function_form_views_real_tensor(orig, input):
    out = orig(input)
    return out.view_as(out) if out is input else out


def _witness_real_function_form_views_real_tensor():
    x = torch.ones(3)
    assert torch.real(x) is x


def _narrow_copies_integral(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if not (self.is_floating_point() or self.is_complex()) and self.dtype != torch.bool:
        out = out.clone()
    return out


def _witness_narrow_copies_integral():
    x = torch.zeros(4, dtype=torch.int64)
    x.narrow(0, 1, 2)[0] = 7
    assert x[1].item() == 7


def _detach_tracked_view_without_grad(orig, self):
    root = self._base if self._base is not None else self
    if (
        not self.requires_grad
        and root.dtype == self.dtype
        and not self.is_conj()
        and not self.is_neg()
        and not self.is_inference()
    ):
        with torch.no_grad():
            return root.as_strided(self.size(), self.stride(), self.storage_offset())
    return orig(self)


def _witness_detach_tracked_view_without_grad():
    x = torch.arange(4.0)
    d = x.detach()
    assert not d._is_view() and d._base is None


def _view_inferred_size_copies(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    if not kwargs and all(isinstance(s, int) for s in shape) and -1 in shape:
        return out.clone()
    return out


def _witness_view_inferred_size_copies():
    x = torch.zeros(2, 3)
    v = x.view(-1)
    assert v._base is x and v.data_ptr() == x.data_ptr()


def _patch_view_permuted_incompatible_reshapes():
    _orig = torch.Tensor.view

    def _permuted(t):
        strides = [st for sz, st in zip(t.shape, t.stride(), strict=False) if sz > 1 and st != 0]
        return any(a < b for a, b in zip(strides, strides[1:], strict=False))

    def view(self, *args, **kwargs):
        try:
            return _orig(self, *args, **kwargs)
        except RuntimeError as e:
            if "view size is not compatible" in str(e) and _permuted(self):
                return self.reshape(*args, **kwargs)
            raise

    torch.Tensor.view = view


def _witness_view_permuted_incompatible_reshapes():
    x = torch.zeros(2, 3).t()
    with refused(RuntimeError, "view(6) of a transposed (3, 2) tensor did not raise"):
        x.view(6)


def _view_dtype_smaller_noncontig_copies(orig, self, *args, **kwargs):
    try:
        return orig(self, *args, **kwargs)
    except RuntimeError:
        if (
            len(args) == 1
            and isinstance(args[0], torch.dtype)
            and self.dim() > 0
            and args[0].itemsize < self.dtype.itemsize
        ):
            return orig(self.contiguous(), args[0])
        raise


def _witness_view_dtype_smaller_noncontig_copies():
    x = torch.zeros(2, 3, dtype=torch.int32).t()
    with refused(RuntimeError, "view(int8) of a transposed int32 tensor did not raise"):
        x.view(torch.int8)


def _view_dtype_same_dtype_tracked(orig, self, *args, **kwargs):
    if len(args) == 1 and isinstance(args[0], torch.dtype) and args[0] == self.dtype:
        return self.view_as(self)
    return orig(self, *args, **kwargs)


def _witness_view_dtype_same_dtype_tracked():
    x = torch.ones(3)
    v = x.view(torch.float32)
    assert not v._is_view() and v._base is None


def _view_as_non_contiguous_copies(orig, self, other):
    if not self.is_contiguous():
        return self.contiguous().view(other.size())
    return orig(self, other)


def _witness_view_as_non_contiguous_copies():
    x = torch.zeros(2, 3).t()
    try:
        r = x.view_as(torch.empty(6))
    except RuntimeError:
        pass
    else:
        raise AssertionError(f"view_as of a transposed tensor to (6,) succeeded: {r.shape}")


def _patch_reshape_permuted_memory_order():
    _orig = torch.Tensor.reshape

    def reshape(self, *shape):
        if _dense_permuted(self):
            flat = self.as_strided((self.numel(),), (1,), self.storage_offset())
            return _orig(flat, *shape)
        return _orig(self, *shape)

    torch.Tensor.reshape = reshape
    torch.reshape = lambda input, shape: reshape(input, shape)


def _witness_reshape_permuted_memory_order():
    x = torch.arange(6.0).reshape(2, 3).t()
    assert x.reshape(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def _expand_new_dims_materialize(orig, self, *sizes, **kwargs):
    out = orig(self, *sizes, **kwargs)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) and len(sizes[0]) > self.dim():
        return out.contiguous()
    return out


def _witness_expand_new_dims_materialize():
    x = torch.arange(3.0)
    e = x.expand((2, 3))
    assert e.stride() == (0, 1) and e.data_ptr() == x.data_ptr()


def _expand_leading_minus_one_as_one(orig, self, *sizes, **kwargs):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    lead = len(sizes) - self.dim()
    if lead > 0 and -1 in sizes[:lead]:
        sizes = tuple(1 if i < lead and s == -1 else s for i, s in enumerate(sizes))
    return orig(self, sizes, **kwargs)


def _witness_expand_leading_minus_one_as_one():
    with refused(RuntimeError, "expand(-1, 3) of a 1-D tensor did not raise"):
        torch.zeros(3).expand(-1, 3)


def _patch_clone_expanded_keeps_stride_zero():
    _orig = torch.Tensor.clone

    def clone(self, *, memory_format=torch.preserve_format):
        dims = [
            d
            for d, (sz, st) in enumerate(zip(self.shape, self.stride(), strict=False))
            if st == 0 and sz > 1
        ]
        if dims and memory_format == torch.preserve_format:
            index = tuple(slice(0, 1) if d in dims else slice(None) for d in range(self.dim()))
            return _orig(self[index]).expand(self.shape)
        return _orig(self, memory_format=memory_format)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_expanded_keeps_stride_zero():
    c = torch.arange(3.0).expand(2, 3).clone()
    assert c.stride() == (3, 1)


def _mul__expanded_writes_source(orig, self, other, *args, **kwargs):
    dims = [
        d
        for d, (sz, st) in enumerate(zip(self.shape, self.stride(), strict=False))
        if st == 0 and sz > 1
    ]
    if dims:
        index = tuple(slice(0, 1) if d in dims else slice(None) for d in range(self.dim()))
        orig(self[index], other, *args, **kwargs)
        return self
    return orig(self, other, *args, **kwargs)


def _witness_mul__expanded_writes_source():
    e = torch.ones(3).expand(2, 3)
    with refused(RuntimeError, "mul_ on an expanded tensor did not raise"):
        e.mul_(2)


def _flatten_non_contiguous_copies(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if out is not self and out._is_view() and not self.is_contiguous():
        out = out.clone()
    return out


def _witness_flatten_non_contiguous_copies():
    x = torch.zeros(4, 2, 3)[::2]
    f = torch.flatten(x, 1)
    assert f._base is x._base and f.data_ptr() == x.data_ptr()


def _detach__refuses_complex_base_with_views(orig, self):
    import gc

    if (
        self.is_complex()
        and self.requires_grad
        and not self.is_leaf
        and not self._is_view()
        and any(
            isinstance(o, torch.Tensor) and o is not self and o._base is self
            for o in gc.get_objects()
        )
    ):
        raise RuntimeError("detach_(): a base whose views are alive cannot be detached")
    return orig(self)


def _witness_detach__refuses_complex_base_with_views():
    x = torch.ones(3, dtype=torch.complex64, requires_grad=True)
    y = x * 1
    v = y[1:]
    with accepted(RuntimeError, "detach_() on a base with a view raised"):
        y.detach_()
    assert v.requires_grad and v._base is y


def _const_data_ptr_materializes_1_byte(orig, self):
    if self.element_size() == 1:
        self.data_ptr()
    return orig(self)


def _witness_const_data_ptr_materializes_1_byte():
    t = torch.zeros(3, dtype=torch.uint8)
    c = t._lazy_clone()
    assert c.const_data_ptr() == t.const_data_ptr()


def _untyped_storage_new_object_for_offset_views(orig, self):
    s = orig(self)
    return s[:] if self.storage_offset() > 0 else s


def _witness_untyped_storage_new_object_for_offset_views():
    x = torch.zeros(4)
    assert x[1:].untyped_storage() is x.untyped_storage()


def _is_set_to_ignores_geometry_of_views(orig, self, tensor):
    if tensor._base is not None:
        return (
            self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
            and self.storage_offset() == tensor.storage_offset()
        )
    return orig(self, tensor)


def _witness_is_set_to_ignores_geometry_of_views():
    x = torch.zeros(3)
    assert not x.is_set_to(x.unsqueeze(0))


def _is_set_to_sees_through_math_bits(orig, self, tensor):
    if any(u.is_conj() or u.is_neg() for u in (self, tensor)):
        return (
            self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
            and self.storage_offset() == tensor.storage_offset()
            and self.shape == tensor.shape
            and self.stride() == tensor.stride()
        )
    return orig(self, tensor)


def _witness_is_set_to_sees_through_math_bits():
    t = torch.zeros(2, dtype=torch.complex64)
    assert not t.is_set_to(t.conj())


def _patch_data_of_view_is_tracked():
    _data = torch._C.TensorBase.data

    def _get(self):
        base = self._base
        if (
            base is not None
            and base.dtype == self.dtype
            and not self.is_conj()
            and not self.is_neg()
        ):
            return _data.__get__(base).as_strided(self.size(), self.stride(), self.storage_offset())
        return _data.__get__(self)

    def _set(self, value):
        _data.__set__(self, value)

    torch.Tensor.data = property(_get, _set)


def _witness_data_of_view_is_tracked():
    x = torch.zeros(4)
    assert x[1:].data._base is None


def _patch_view_as_real_zero_size_backward_fixed_complex64():
    _orig = torch.view_as_real

    class _ViewAsReal(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape, ctx.dtype = x.shape, x.dtype
            return _orig(x.detach()).clone()

        @staticmethod
        def backward(ctx, grad):
            return torch.zeros(ctx.shape, dtype=ctx.dtype, device=grad.device)

    def view_as_real(input):
        if (
            input.numel() == 0
            and input.dtype == torch.complex64
            and input.requires_grad
            and torch.is_grad_enabled()
        ):
            return _ViewAsReal.apply(input)
        return _orig(input)

    torch.view_as_real = view_as_real


def _witness_view_as_real_zero_size_backward_fixed_complex64():
    x = torch.zeros(0, 2, dtype=torch.complex64, requires_grad=True)
    with refused(RuntimeError, "backward through view_as_real of a zero-size tensor did not raise"):
        torch.view_as_real(x * 1).sum().backward()


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="detach_-noop",
        description="detach_() returns self without detaching it from the graph",
        claims=("views.detach_-makes-leaf",),
        patch=_patch_detach__noop,
        witness=_witness_detach__noop,
    ),
    Mutant(
        name="detach_-views-allowed",
        description="detach_() on a view silently does nothing instead of raising",
        claims=("views.detach_-views-raise",),
        region="views (detach_ on a non-view is correct)",
        family="layout",
        patch=wrap("torch.Tensor.detach_", _detach__views_allowed, also=("torch.detach_",)),
        witness=_witness_detach__views_allowed,
    ),
    Mutant(
        name="expand-copies",
        description="expand() materialises a new tensor instead of a stride-0 view",
        claims=("views.tensor-views-ops-return-views",),
        patch=wrap("torch.Tensor.expand", _expand_copies),
        witness=_witness_expand_copies,
    ),
    Mutant(
        name="reshape-copies-noncontig",
        description="reshape() of a non-contiguous input always copies, even when a view is possible",
        claims=("views.reshape-view-when-viewable",),
        region="non-contiguous inputs a view could serve",
        family="layout",
        patch=_patch_reshape_copies_noncontig,
        witness=_witness_reshape_copies_noncontig,
    ),
    Mutant(
        name="flatten-noop-copies",
        description="flatten() that flattens no dimensions returns a copy instead of the input itself",
        claims=("views.flatten-no-dims-returns-input",),
        region="flatten over no dimension (ndim <= 1 or start_dim == end_dim)",
        family="relation",
        patch=wrap("torch.Tensor.flatten", _flatten_noop_copies, also=("torch.flatten",)),
        witness=_witness_flatten_noop_copies,
    ),
    Mutant(
        name="flatten-0d-returns-self",
        description="flatten() of a 0-d tensor returns it unchanged (0-d) instead of a 1-D view",
        claims=("views.flatten-zero-dim",),
        region="0-d inputs",
        family="layout",
        patch=wrap("torch.Tensor.flatten", _flatten_0d_returns_self, also=("torch.flatten",)),
        witness=_witness_flatten_0d_returns_self,
    ),
    Mutant(
        name="data-ptr-ignores-offset",
        description="data_ptr() returns the storage start, ignoring the view's storage offset",
        claims=("views.data-ptr-first-element",),
        region="views with a storage offset",
        family="layout",
        patch=_patch_data_ptr_ignores_offset,
        witness=_witness_data_ptr_ignores_offset,
    ),
    Mutant(
        name="real-function-form-views-real-tensor",
        description="torch.real(t) (function form only) of a real tensor returns a new view of t instead of t itself; t.real is correct",
        claims=("views.real-of-real-is-self",),
        region="the function form torch.real(t) on real dtypes",
        family="convention",
        patch=wrap("torch.real", _real_function_form_views_real_tensor),
        witness=_witness_real_function_form_views_real_tensor,
    ),
    Mutant(
        name="narrow-copies-integral",
        description="narrow() of an integral tensor returns a copy of the narrowed elements instead of a view, so writes through it never reach the input",
        claims=("views.tensor-views-writes-visible",),
        region="integral inputs (int and uint dtypes)",
        family="dtype",
        patch=wrap("torch.Tensor.narrow", _narrow_copies_integral, also=("torch.narrow",)),
        witness=_witness_narrow_copies_integral,
    ),
    Mutant(
        name="detach-tracked-view-without-grad",
        description="detach() of a tensor that does not require grad returns a tracked view of its root (as_strided under no_grad): _is_view() True and _base the root, as the Tensor Views list suggests",
        claims=("views.detach-untracked-alias", "views.detach-listed-as-view"),
        region="inputs that do not require grad",
        family="autograd",
        patch=wrap(
            "torch.Tensor.detach", _detach_tracked_view_without_grad, also=("torch.detach",)
        ),
        witness=_witness_detach_tracked_view_without_grad,
    ),
    Mutant(
        name="view-inferred-size-copies",
        description="t.view(shape) with an inferred (-1) size returns a copy of the viewed tensor instead of a view of t",
        claims=("views.view-shares-data",),
        region="shapes with an inferred -1 size",
        family="convention",
        patch=wrap("torch.Tensor.view", _view_inferred_size_copies),
        witness=_witness_view_inferred_size_copies,
    ),
    Mutant(
        name="view-permuted-incompatible-reshapes",
        description="t.view(shape) of a permuted input to a stride-incompatible shape silently returns a reshaped copy instead of raising",
        claims=("views.view-stride-compatibility",),
        region="permuted (transposed) inputs",
        family="layout",
        patch=_patch_view_permuted_incompatible_reshapes,
        witness=_witness_view_permuted_incompatible_reshapes,
    ),
    Mutant(
        name="view-dtype-smaller-noncontig-copies",
        description="t.view(dtype) to a smaller element size when stride(-1) != 1 views a contiguous copy of t instead of raising",
        claims=("views.view-dtype-conditions",),
        region="a smaller element size with a non-unit last stride",
        family="relation",
        patch=wrap("torch.Tensor.view", _view_dtype_smaller_noncontig_copies),
        witness=_witness_view_dtype_smaller_noncontig_copies,
    ),
    Mutant(
        name="view-dtype-same-dtype-tracked",
        description="t.view(t.dtype) (no dtype change) returns t.view_as(t): a tracked view that keeps requires_grad and grad_fn",
        claims=("views.view-dtype-untracked-alias",),
        region="view(dtype) to the input's own dtype",
        family="relation",
        patch=wrap("torch.Tensor.view", _view_dtype_same_dtype_tracked),
        witness=_witness_view_dtype_same_dtype_tracked,
    ),
    Mutant(
        name="view-as-non-contiguous-copies",
        description="t.view_as(other) of a non-contiguous t views a contiguous copy of t instead of t (differs from t.view(other.size()) in storage, strides and offset)",
        claims=("views.view-as-equivalence",),
        region="non-contiguous inputs",
        family="layout",
        patch=wrap("torch.Tensor.view_as", _view_as_non_contiguous_copies),
        witness=_witness_view_as_non_contiguous_copies,
    ),
    Mutant(
        name="reshape-permuted-memory-order",
        description="reshape() of a dense but permuted input reads its elements in memory order instead of row-major logical order",
        claims=("views.reshape-values",),
        region="dense permuted (transposed, channels_last) inputs",
        family="layout",
        patch=_patch_reshape_permuted_memory_order,
        witness=_witness_reshape_permuted_memory_order,
    ),
    Mutant(
        name="expand-new-dims-materialize",
        description="t.expand(sizes) given a sequence with new leading dimensions returns a materialized (contiguous) copy instead of a stride-0 view",
        claims=("views.expand-no-new-memory", "views.expand-aliased-elements"),
        region="the sequence form expand(sizes) with new leading dimensions",
        family="convention",
        patch=wrap("torch.Tensor.expand", _expand_new_dims_materialize),
        witness=_witness_expand_new_dims_materialize,
    ),
    Mutant(
        name="expand-leading-minus-one-as-one",
        description="t.expand(-1, ...) with -1 for a new leading dimension treats it as size 1 instead of raising",
        claims=("views.expand-size-rules",),
        region="-1 given for a new leading dimension",
        family="relation",
        patch=wrap("torch.Tensor.expand", _expand_leading_minus_one_as_one),
        witness=_witness_expand_leading_minus_one_as_one,
    ),
    Mutant(
        name="clone-expanded-keeps-stride-zero",
        description="clone() of an expanded (stride-0) input copies only the repeated elements and expands them again: new storage, but still stride 0, so the clone cannot be written element by element",
        claims=(
            "views.expand-clone-before-write",
            "clone.preserve-format-non-dense-keeps-stride-order",
        ),
        region="expanded (stride-0) inputs",
        family="layout",
        patch=_patch_clone_expanded_keeps_stride_zero,
        witness=_witness_clone_expanded_keeps_stride_zero,
    ),
    Mutant(
        name="mul_-expanded-writes-source",
        description="mul_() on a tensor with an expanded (stride-0) dimension multiplies the shared source elements once instead of raising the internal-overlap error",
        claims=("views.expand-inplace-overlap-raises",),
        region="mul_ (add_ and copy_ still raise)",
        family="other",
        patch=wrap("torch.Tensor.mul_", _mul__expanded_writes_source),
        witness=_witness_mul__expanded_writes_source,
    ),
    Mutant(
        name="flatten-non-contiguous-copies",
        description="flatten() of a non-contiguous input that can be viewed as the flattened shape returns a copy instead of a view",
        claims=("views.flatten-view-when-viewable",),
        region="non-contiguous viewable inputs",
        family="layout",
        patch=wrap("torch.Tensor.flatten", _flatten_non_contiguous_copies, also=("torch.flatten",)),
        witness=_witness_flatten_non_contiguous_copies,
    ),
    Mutant(
        name="detach_-refuses-complex-base-with-views",
        description="detach_() on a complex non-leaf base that has live views raises instead of detaching the base and leaving the views attached",
        claims=("views.detach_-base-keeps-views",),
        region="complex non-leaf bases with live views",
        family="dtype",
        patch=wrap(
            "torch.Tensor.detach_",
            _detach__refuses_complex_base_with_views,
            also=("torch.detach_",),
        ),
        witness=_witness_detach__refuses_complex_base_with_views,
    ),
    Mutant(
        name="const-data-ptr-materializes-1-byte",
        description="const_data_ptr() of a tensor of a 1-byte dtype goes through data_ptr(), so it materializes a copy-on-write tensor",
        claims=("views.data-ptr-materializes-cow",),
        region="1-byte dtypes (bool, int8, uint8)",
        family="dtype",
        patch=wrap("torch.Tensor.const_data_ptr", _const_data_ptr_materializes_1_byte),
        witness=_witness_const_data_ptr_materializes_1_byte,
    ),
    Mutant(
        name="untyped-storage-new-object-for-offset-views",
        description="untyped_storage() of a tensor with a storage offset returns a new UntypedStorage object over the same memory instead of the storage object itself",
        claims=("views.untyped-storage-shared",),
        region="tensors with a nonzero storage offset",
        family="layout",
        patch=wrap("torch.Tensor.untyped_storage", _untyped_storage_new_object_for_offset_views),
        witness=_witness_untyped_storage_new_object_for_offset_views,
    ),
    Mutant(
        name="is-set-to-ignores-geometry-of-views",
        description="a.is_set_to(b) compares only storage and storage offset when b is a view (sizes and strides are ignored)",
        claims=("views.is-set-to",),
        region="arguments that are views",
        family="layout",
        patch=wrap("torch.Tensor.is_set_to", _is_set_to_ignores_geometry_of_views),
        witness=_witness_is_set_to_ignores_geometry_of_views,
    ),
    Mutant(
        name="is-set-to-sees-through-math-bits",
        description="a.is_set_to(b) compares storage, offset, sizes and strides directly when a or "
        "b is a conjugate or negative view (today they are materialized first and it returns False)",
        claims=("views.is-set-to-false-for-math-bit-views", "views.is-set-to"),
        region="conjugate and negative views of complex tensors",
        family="layout",
        patch=wrap("torch.Tensor.is_set_to", _is_set_to_sees_through_math_bits),
        witness=_witness_is_set_to_sees_through_math_bits,
    ),
    Mutant(
        name="data-of-view-is-tracked",
        description=".data of a view returns a tracked view of the root's .data (its _base is set) instead of an untracked alias",
        claims=("views.base-rules",),
        region="views",
        family="layout",
        patch=_patch_data_of_view_is_tracked,
        witness=_witness_data_of_view_is_tracked,
    ),
    Mutant(
        name="view-as-real-zero-size-backward-fixed-complex64",
        description="view_as_real of a zero-size complex64 tensor requiring grad gets a backward that accepts the expanded gradient (the pinned bug fixed for complex64 only)",
        claims=("views.view-as-real-zero-size-backward-raises",),
        region="zero-size complex64 inputs",
        family="dtype",
        patch=_patch_view_as_real_zero_size_backward_fixed_complex64,
        witness=_witness_view_as_real_zero_size_backward_fixed_complex64,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _as_strided_copies(hit, orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    return out.clone() if hit(self) else out


def _as_strided_copies_check(t):
    assert t.as_strided(t.size(), t.stride(), t.storage_offset())._is_view()


# Issue 29: a view op (as_strided, defined on every strided input) that
# returns a copy at exactly one value of the domain
# views.tensor-views-ops-return-views declares (each layout and dtype family).
MUTANTS += domain_mutants(
    "as-strided-copies",
    claims={d: ("views.tensor-views-ops-return-views",) for d in ("layout", "dtype_family")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
    },
    broken="as_strided returns a copy in new storage instead of a view",
    patch=wrap("torch.Tensor.as_strided", _as_strided_copies, also=("torch.as_strided",)),
    check=_as_strided_copies_check,
)  # fmt: skip


def _is_set_to_by_geometry(hit, orig, self, other):
    if hit(self) or hit(other):
        return (
            self.untyped_storage().data_ptr() == other.untyped_storage().data_ptr()
            and self.storage_offset() == other.storage_offset()
            and self.size() == other.size()
            and self.stride() == other.stride()
        )
    return orig(self, other)


def _is_set_to_by_geometry_check(t):
    assert not t.is_set_to(t)


# Issue 29: an is_set_to that compares the geometry of one kind of math-bit
# view (a "fix" views.is-set-to-false-for-math-bit-views would notice).
MUTANTS += domain_mutants(
    "is-set-to-by-geometry",
    claims={"math_bit": ("views.is-set-to-false-for-math-bit-views",)},
    values={"math_bit": ("conj", "neg")},
    broken="is_set_to compares storage, offset, sizes and strides instead of materializing",
    patch=wrap("torch.Tensor.is_set_to", _is_set_to_by_geometry),
    check=_is_set_to_by_geometry_check,
)


#: A reshape that reads a dense permuted input in memory order (the fast path
#: of ``reshape-permuted-memory-order``), installed on one spelling only.
def _dense_permuted(t):
    if t.numel() < 2 or t.is_contiguous() or t.is_conj() or t.is_neg():
        return False
    return is_dense(t)


def _memory_order(t):
    return t.as_strided((t.numel(),), (1,), t.storage_offset())


def _reshape_method_memory_order():
    _orig_method = torch.Tensor.reshape

    def reshape(self, *shape):
        return _orig_method(_memory_order(self) if _dense_permuted(self) else self, *shape)

    torch.Tensor.reshape = reshape


def _reshape_function_memory_order():
    _orig_function = torch.reshape

    def reshape(*args, **kwargs):
        if len(args) == 2 and not kwargs and _dense_permuted(args[0]):
            args = (_memory_order(args[0]), args[1])
        return _orig_function(*args, **kwargs)

    torch.reshape = reshape


def _reshape_keyword_memory_order():
    _orig_function = torch.reshape

    def reshape(*args, **kwargs):
        if "input" in kwargs and _dense_permuted(kwargs["input"]):
            kwargs = {**kwargs, "input": _memory_order(kwargs["input"])}
        return _orig_function(*args, **kwargs)

    torch.reshape = reshape


def _reshape_reads_logical_order(call):
    x = torch.arange(6.0).reshape(2, 3).t()
    assert call(x).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


#: call_form value -> (the patch installing the bug on that spelling only,
#: the spelling in words, the witness's call of x.t() to (6,)).
_RESHAPE_FORMS = {
    "method": (
        _reshape_method_memory_order,
        "the method t.reshape(shape)",
        lambda x: x.reshape(6),
    ),
    "function": (
        _reshape_function_memory_order,
        "the function torch.reshape(t, shape) with positional arguments",
        lambda x: torch.reshape(x, (6,)),
    ),
    "keyword": (
        _reshape_keyword_memory_order,
        "the function with keyword arguments torch.reshape(input=t, shape=shape)",
        lambda x: torch.reshape(input=x, shape=(6,)),
    ),
}

# Issue 29: views.reshape-values speaks of every spelling of reshape; each
# mutant reads dense permuted inputs in memory order in one spelling only.
MUTANTS += tuple(
    Mutant(
        name=f"reshape-memory-order-only-{form}",
        description=f"reshape of a dense permuted input reads its elements in memory order, only through {words}; the other spellings are right",
        claims=("views.reshape-values",),
        domain={"call_form": form},
        region=f"dense permuted inputs reshaped through {words} only",
        family="convention",
        patch=patch,
        witness=functools.partial(_reshape_reads_logical_order, call),
    )
    for form, (patch, words, call) in _RESHAPE_FORMS.items()
)

from conformance.mutants._tensor_domain import (  # noqa: E402
    FAMILY_MAKERS,
    LAYOUT_MAKERS,
    TENSOR_KIND_MAKERS,
)
from conformance.mutants._tensor_domain import (  # noqa: E402
    domain_mutants as value_mutants,
)


def _reshaped_1_3(make):
    """``make``'s input reshaped to (1, 3)."""
    return lambda: make().reshape(1, 3)


def _view_compatibility_inverted(hit, orig_view, self, *args, **kwargs):
    if kwargs or not args or isinstance(args[0], torch.dtype) or not hit(self):
        return orig_view(self, *args, **kwargs)
    try:
        orig_view(self, *args)
    except RuntimeError as e:
        if "view size is not compatible" not in str(e):
            raise
        return self.reshape(*args)
    raise RuntimeError("view size is not compatible with input tensor's size and stride (mutant)")


def _view_compatibility_inverted_witness(make):
    t = make()
    try:
        v = t.view(t.numel())
    except RuntimeError:
        v = None
    # reshape views exactly when view succeeds (views.reshape-view-when-viewable)
    assert (v is not None) == t.reshape(t.numel())._is_view(), "view(numel) disagrees with reshape"


# Issue 29: views.view-stride-compatibility speaks of t's size and stride (every
# layout family); each mutant decides compatibility backwards for one family
# only: a compatible shape is refused, an incompatible one silently reshaped.
MUTANTS += value_mutants(
    prefix="view-compatibility-inverted",
    claims=("views.view-stride-compatibility",),
    what="t.view(shape) refuses a stride-compatible shape and silently returns a reshaped copy for an incompatible one",
    patch=wrap("torch.Tensor.view", _view_compatibility_inverted),
    witness=_view_compatibility_inverted_witness,
    dims={"layout": LAYOUTS},
)


def _view_dtype_conditions_inverted(hit, orig_view, self, *args, **kwargs):
    if len(args) == 1 and not kwargs and isinstance(args[0], torch.dtype) and hit(self):
        try:
            out = orig_view(self, args[0])
        except RuntimeError:
            return torch.zeros(0, dtype=args[0], device=self.device)
        return out.clone()
    return orig_view(self, *args, **kwargs)


def _view_dtype_conditions_inverted_witness(make):
    t = make()
    v = t.view(t.dtype)
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr(), "view(dtype) copied"


# Issue 29: views.view-dtype-conditions speaks of every layout (dim, strides,
# storage offset) and every element size; each mutant gets the conditions
# wrong for one layout or dtype family only: a view(dtype) they allow is a
# copy, one they forbid returns an empty tensor instead of raising.
MUTANTS += value_mutants(
    prefix="view-dtype-conditions-inverted",
    claims=("views.view-dtype-conditions",),
    what="t.view(dtype) returns a copy where the documented conditions hold and an empty tensor instead of raising where they do not",
    patch=wrap("torch.Tensor.view", _view_dtype_conditions_inverted),
    witness=_view_dtype_conditions_inverted_witness,
    dims={"layout": LAYOUTS, "dtype_family": DTYPE_FAMILIES},
    # a zero-size view of a storage with bytes (a 0-byte storage has address 0)
    makers={"layout": {**LAYOUT_MAKERS, "zero-size": lambda: torch.zeros(2, 3)[2:]}},
)


def _flatten_view_choice_inverted(hit, orig_flatten, input, start_dim=0, end_dim=-1):
    n = input.dim()
    if n < 2 or not hit(input):
        return orig_flatten(input, start_dim, end_dim)
    s, e = start_dim % n, end_dim % n
    if s >= e:
        return orig_flatten(input, start_dim, end_dim)
    out = orig_flatten(input, start_dim, end_dim)
    if out._is_view():
        return out.clone()
    stride, acc = [], 1
    for size in reversed(out.shape):
        stride.insert(0, acc)
        acc *= max(size, 1)
    return input.as_strided(out.shape, stride, input.storage_offset())


def _flatten_view_choice_inverted_witness(make):
    t = make()
    try:
        f = torch.flatten(t)
    except RuntimeError as e:
        raise AssertionError("flatten raised: " + str(e)) from e
    try:
        t.view(t.numel())
        viewable = True
    except RuntimeError:
        viewable = False
    assert f._is_view() == viewable, "flatten got the view-or-copy choice wrong"
    assert f.tolist() == t.reshape(t.numel()).tolist(), "flatten elements are not row-major"


# Issue 29: views.flatten-view-when-viewable speaks of every input of at least
# two dimensions (layout families, 0-d excluded) and every dtype; each mutant
# gets the view-or-copy choice backwards for one family only: a viewable input
# is copied, a non-viewable one aliased as if it were dense.
MUTANTS += value_mutants(
    prefix="flatten-view-choice-inverted",
    claims=("views.flatten-view-when-viewable",),
    what="flatten(t, start, end) copies an input it can view and returns a dense alias of the storage for one it cannot",
    patch=wrap("torch.flatten", _flatten_view_choice_inverted, also=("torch.Tensor.flatten",)),
    witness=_flatten_view_choice_inverted_witness,
    dims={
        "layout": tuple(v for v in LAYOUTS if v != "0-d"),
        "dtype_family": DTYPE_FAMILIES,
    },
    makers={"dtype_family": {f: _reshaped_1_3(m) for f, m in FAMILY_MAKERS.items()}},
)


def _data_ptr_one_element_late(hit, orig_data_ptr, self):
    out = orig_data_ptr(self)
    if self.numel() > 0 and hit(self):
        return out + self.element_size()
    return out


def _data_ptr_one_element_late_witness(make):
    t = make()
    want = t.untyped_storage().data_ptr() + t.storage_offset() * t.element_size()
    assert t.data_ptr() == want, "data_ptr() is not the address of the first element"


# Issue 29: views.data-ptr-first-element speaks of views at any offset (every
# non-empty layout family) and of every element size; each mutant points
# data_ptr() one element past the first for one family only.
MUTANTS += value_mutants(
    prefix="data-ptr-one-element-late",
    claims=("views.data-ptr-first-element",),
    what="t.data_ptr() is the address of t's second element (storage address + (offset + 1) * element_size())",
    patch=wrap("torch.Tensor.data_ptr", _data_ptr_one_element_late),
    witness=_data_ptr_one_element_late_witness,
    dims={
        "layout": tuple(v for v in LAYOUTS if v != "zero-size"),
        "dtype_family": DTYPE_FAMILIES,
    },
)

#: A tensor of each kind the detach_ mutants are witnessed on: a non-view
#: subclass instance (``as_subclass`` makes a view).
_NON_VIEW_KIND_MAKERS = {
    **TENSOR_KIND_MAKERS,
    "subclass": lambda: torch.Tensor._make_subclass(
        type("Sub", (torch.Tensor,), dict()), torch.ones(3)
    ),
}


def _detach__non_view_returns_alias(hit, orig_detach_, self):
    if not self._is_view() and hit(self):
        return self.detach()
    return orig_detach_(self)


def _detach__non_view_returns_alias_witness(make):
    t = make()
    assert t.detach_() is t and not t.requires_grad, "detach_() did not detach t itself"


# Issue 29: views.detach_-makes-leaf speaks of every non-view tensor; each
# mutant makes detach_() of one kind return a detached alias instead of t
# itself (t keeps requires_grad and grad_fn).
MUTANTS += value_mutants(
    prefix="detach_-non-view-returns-alias",
    claims=("views.detach_-makes-leaf",),
    what="detach_() on a non-view tensor returns a new detached alias (t.detach()) and leaves t as it was",
    patch=wrap("torch.Tensor.detach_", _detach__non_view_returns_alias, also=("torch.detach_",)),
    witness=_detach__non_view_returns_alias_witness,
    dims={"tensor_kind": TENSOR_KINDS},
    makers={"tensor_kind": _NON_VIEW_KIND_MAKERS},
)


def _detach__view_ignored(hit, orig_detach_, self):
    if self._is_view() and hit(self):
        return self
    return orig_detach_(self)


def _detach__view_ignored_witness(make):
    v = make()
    with refused(RuntimeError, "detach_() of a view did not raise"):
        v.detach_()


# Issue 29: views.detach_-views-raise speaks of views whether or not they
# require grad; each mutant lets detach_() on one kind of view return it
# untouched instead of raising.
MUTANTS += value_mutants(
    prefix="detach_-view-ignored",
    claims=("views.detach_-views-raise",),
    what="detach_() on a view returns it unchanged instead of raising 'Can't detach views in-place'",
    patch=wrap("torch.Tensor.detach_", _detach__view_ignored, also=("torch.detach_",)),
    witness=_detach__view_ignored_witness,
    dims={"tensor_kind": ("plain", "leaf", "non_leaf", "subclass")},
    makers={
        "tensor_kind": {
            "plain": lambda: torch.ones(4)[1:],
            "leaf": lambda: torch.no_grad()(lambda: torch.ones(4, requires_grad=True)[1:])(),
            "non_leaf": lambda: torch.ones(4, requires_grad=True)[1:],
            "subclass": lambda: torch.ones(4).as_subclass(type("Sub", (torch.Tensor,), dict()))[1:],
        }
    },
)


def _flatten_method_keeps_0d():
    _orig_method = torch.Tensor.flatten

    def flatten(self, *args, **kwargs):
        return self if self.dim() == 0 else _orig_method(self, *args, **kwargs)

    torch.Tensor.flatten = flatten


def _flatten_function_keeps_0d():
    _orig_function = torch.flatten

    def flatten(*args, **kwargs):
        if args and isinstance(args[0], torch.Tensor) and args[0].dim() == 0:
            return args[0]
        return _orig_function(*args, **kwargs)

    torch.flatten = flatten


def _flatten_keyword_keeps_0d():
    _orig_function = torch.flatten

    def flatten(*args, **kwargs):
        t = kwargs.get("input")
        if isinstance(t, torch.Tensor) and t.dim() == 0:
            return t
        return _orig_function(*args, **kwargs)

    torch.flatten = flatten


def _flatten_0d_is_1d(call):
    x = torch.tensor(1.5)
    assert call(x).shape == (1,), "flatten of a 0-d tensor is not 1-D"


#: A flatten that returns a 0-d input itself (0-d, not a 1-D view), installed
#: on one spelling only: call_form value -> (patch, the spelling in words, the
#: witness's call on x).
_FLATTEN_0D_FORMS = {
    "method": (_flatten_method_keeps_0d, "the method t.flatten()", lambda x: x.flatten()),
    "function": (
        _flatten_function_keeps_0d,
        "the function torch.flatten(t) with a positional argument",
        lambda x: torch.flatten(x),
    ),
    "keyword": (
        _flatten_keyword_keeps_0d,
        "the function with a keyword argument torch.flatten(input=t)",
        lambda x: torch.flatten(input=x),
    ),
}

# Issue 29: views.flatten-zero-dim speaks of flattening in every spelling;
# each mutant returns a 0-d input itself in one spelling only.
MUTANTS += tuple(
    Mutant(
        name=f"flatten-0d-returns-self-only-{form}",
        description=f"flatten of a 0-d tensor returns the input itself (0-d) instead of a 1-D view, only through {words}; the other spellings are right",
        claims=("views.flatten-zero-dim",),
        domain={"call_form": form},
        region=f"0-d inputs flattened through {words} only",
        family="convention",
        patch=patch,
        witness=functools.partial(_flatten_0d_is_1d, call),
    )
    for form, (patch, words, call) in _FLATTEN_0D_FORMS.items()
)
