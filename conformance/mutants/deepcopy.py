"""Mutants of the ``deepcopy`` area (copy.deepcopy / copy.copy of tensors, Parameters,
modules); claims in ``conformance/claims/deepcopy.toml``, tests in
``conformance/test_deepcopy.py``.

Tensor mutants patch ``torch.Tensor.__deepcopy__`` (or define ``torch.Tensor.__copy__``,
which torch lacks); Parameter mutants patch ``torch.nn.Parameter.__deepcopy__``, which
overrides the tensor one. For the claims torch 2.13 deviates from everywhere (Parameter
sharing, Parameter ``.grad``), the mutants break them in a *different* way, which the
tests tell apart from the recorded failure (a changed failure signature).

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, domain_mutants, other_dtype
from conformance.mutants.base import Mutant
from conformance.mutants.patching import refused, torch, wrap


def _deepcopy_contiguous_channels_last(orig, self, memo):
    if (
        self.dim() == 4
        and not self.is_contiguous()
        and self.is_contiguous(memory_format=torch.channels_last)
    ):
        if id(self) in memo:
            return memo[id(self)]
        out = orig(self.contiguous(), memo)
        memo[id(self)] = out
        return out
    return orig(self, memo)


def _witness_deepcopy_contiguous_channels_last():
    import copy

    t = torch.zeros(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
    assert copy.deepcopy(t).stride() == t.stride()


def _deepcopy_offset_int64_views_unshared(orig, self, memo):
    if self.storage_offset() and self.dtype == torch.int64 and id(self) not in memo:
        out = self.clone()
        memo[id(self)] = out
        return out
    return orig(self, memo)


def _witness_deepcopy_offset_int64_views_unshared():
    import copy

    b = torch.arange(6)
    cb, cv = copy.deepcopy([b, b[2:]])
    assert cv.untyped_storage().data_ptr() == cb.untyped_storage().data_ptr()


def _deepcopy_nonleaf_views_allowed(orig, self, memo):
    if not self.is_leaf and self._base is not None:
        out = orig(self.detach(), memo)
        out.requires_grad_(self.requires_grad)
        return out
    return orig(self, memo)


def _witness_deepcopy_nonleaf_views_allowed():
    import copy

    r = torch.ones(3, requires_grad=True)
    with refused(RuntimeError, "a non-leaf view was deep-copied"):
        copy.deepcopy(r[1:])


def _deepcopy_drops_requires_grad_complex(orig, self, memo):
    out = orig(self, memo)
    if self.is_complex() and out.requires_grad and type(out) is torch.Tensor:
        out.requires_grad_(False)
    return out


def _witness_deepcopy_drops_requires_grad_complex():
    import copy

    t = torch.ones(2, dtype=torch.complex64, requires_grad=True)
    assert copy.deepcopy(t).requires_grad


def _deepcopy_grad_shared_f32(orig, self, memo):
    out = orig(self, memo)
    if self.dtype == torch.float32 and self.grad is not None and type(self) is torch.Tensor:
        out.grad = self.grad
    return out


def _witness_deepcopy_grad_shared_f32():
    import copy

    t = torch.ones(2, requires_grad=True)
    t.grad = torch.ones(2)
    assert copy.deepcopy(t).grad is not t.grad


def _deepcopy_version_shared_0d(orig, self, memo):
    if self.dim() == 0 and self.is_leaf and type(self) is torch.Tensor:
        out = self.detach().requires_grad_(self.requires_grad)
        memo[id(self)] = out
        return out
    return orig(self, memo)


def _witness_deepcopy_version_shared_0d():
    import copy

    t = torch.tensor(1.0)
    c = copy.deepcopy(t)
    c.add_(1)
    assert t._version == 0


def _deepcopy_conj_view_raw_bits_c64(orig, self, memo):
    if self.is_conj() and self.dtype == torch.complex64:
        return orig(self.conj(), memo)
    return orig(self, memo)


def _witness_deepcopy_conj_view_raw_bits_c64():
    import copy

    c = torch.tensor([1 + 2j], dtype=torch.complex64).conj()
    assert copy.deepcopy(c).imag.item() == -2.0


def _patch_copy_copy_clones_non_contiguous():
    import copy as _copy

    def __copy__(self):
        if not self.is_contiguous():
            out = self.detach().clone(memory_format=torch.contiguous_format)
            return (
                out.requires_grad_(self.requires_grad)
                if out.is_floating_point() or out.is_complex()
                else out
            )
        return _copy._reconstruct(self, None, *self.__reduce_ex__(4))

    torch.Tensor.__copy__ = __copy__


def _witness_copy_copy_clones_non_contiguous():
    import copy

    t = torch.arange(6.0).reshape(2, 3).t()
    assert copy.copy(t).data_ptr() == t.data_ptr()


def _patch_copy_copy_uint32_works():
    import copy as _copy

    def __copy__(self):
        if self.dtype == torch.uint32 and type(self) is torch.Tensor:
            out = torch.empty(0, dtype=self.dtype, device=self.device)
            return out.set_(
                self.untyped_storage(), self.storage_offset(), self.shape, self.stride()
            )
        return _copy._reconstruct(self, None, *self.__reduce_ex__(4))

    torch.Tensor.__copy__ = __copy__


def _witness_copy_copy_uint32_works():
    import copy

    with refused(AttributeError, "copy.copy of a uint32 tensor worked"):
        copy.copy(torch.zeros(2, dtype=torch.uint32))


def _parameter_deepcopy_aliases_2d(orig, self, memo):
    if self.dim() == 2:
        memo[id(self)] = self
        return self
    return orig(self, memo)


def _witness_parameter_deepcopy_aliases_2d():
    import copy

    p = torch.nn.Parameter(torch.ones(2, 2))
    assert copy.deepcopy(p) is not p


def _parameter_deepcopy_memoizes_storage_f64(orig, self, memo):
    if self.dtype != torch.float64:
        return orig(self, memo)
    if id(self) in memo:
        return memo[id(self)]
    data = torch.Tensor.__deepcopy__(self.detach(), memo)
    out = torch.nn.Parameter(data, self.requires_grad)
    memo[id(self)] = out
    return out


def _witness_parameter_deepcopy_memoizes_storage_f64():
    import copy

    p = torch.nn.Parameter(torch.zeros(10, dtype=torch.float64)[2:5])
    assert copy.deepcopy(p).storage_offset() == 0


def _parameter_deepcopy_aliases_grad_f32(orig, self, memo):
    out = orig(self, memo)
    if self.dtype == torch.float32 and self.grad is not None:
        out.grad = self.grad
    return out


def _witness_parameter_deepcopy_aliases_grad_f32():
    import copy

    p = torch.nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    assert copy.deepcopy(p).grad is not p.grad


def _parameter_deepcopy_keeps_grad_0d(orig, self, memo):
    out = orig(self, memo)
    if self.dim() == 0 and self.grad is not None:
        out.grad = self.grad.clone()
    return out


def _witness_parameter_deepcopy_keeps_grad_0d():
    import copy

    p = torch.nn.Parameter(torch.tensor(1.0))
    p.grad = torch.tensor(2.0)
    assert copy.deepcopy(p).grad is None


def _patch_module_deepcopy_unties_2d_parameters():
    import copy as _copy

    def __deepcopy__(self, memo):
        out = self.__class__.__new__(self.__class__)
        memo[id(self)] = out
        for k, v in self.__dict__.items():
            if k == "_parameters":
                v = type(v)(
                    (
                        n,
                        _copy.deepcopy(p, {})
                        if p is not None and p.dim() == 2
                        else _copy.deepcopy(p, memo),
                    )
                    for n, p in v.items()
                )
            else:
                v = _copy.deepcopy(v, memo)
            object.__setattr__(out, k, v)
        return out

    torch.nn.Module.__deepcopy__ = __deepcopy__


def _witness_module_deepcopy_unties_2d_parameters():
    import copy

    m = torch.nn.Module()
    m.a = torch.nn.Linear(2, 2)
    m.b = torch.nn.Linear(2, 2)
    m.b.weight = m.a.weight
    c = copy.deepcopy(m)
    assert c.a.weight is c.b.weight


def _deepcopy_sparse_densifies(orig, self, memo):
    if self.layout == torch.sparse_coo:
        out = self.to_dense()
        memo[id(self)] = out
        return out
    return orig(self, memo)


def _witness_deepcopy_sparse_densifies():
    import copy

    assert copy.deepcopy(torch.eye(2).to_sparse()).layout == torch.sparse_coo


def _deepcopy_shared_1d_stays_shared(orig, self, memo):
    out = orig(self, memo)
    if self.dim() == 1 and self.is_shared() and not out.is_shared():
        out.share_memory_()
    return out


def _witness_deepcopy_shared_1d_stays_shared():
    import copy

    t = torch.arange(3.0).share_memory_()
    assert not copy.deepcopy(t).is_shared()


def _parameter_deepcopy_under_no_grad_frozen(orig, self, memo):
    out = orig(self, memo)
    if not torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
        out.requires_grad_(False)
    return out


def _witness_parameter_deepcopy_under_no_grad_frozen():
    import copy

    p = torch.nn.Parameter(torch.ones(2))
    with torch.no_grad():
        assert copy.deepcopy(p).requires_grad


def _parameter_deepcopy_in_inference_mode_normal(orig, self, memo):
    if torch.is_inference_mode_enabled():
        with torch.inference_mode(False):
            return orig(self, memo)
    return orig(self, memo)


def _witness_parameter_deepcopy_in_inference_mode_normal():
    import copy

    p = torch.nn.Parameter(torch.ones(2))
    with torch.inference_mode():
        assert copy.deepcopy(p).is_inference()


def _deepcopy_parameter_flips_requires_grad(orig, self, memo):
    c = orig(self, memo)
    if c.dtype.is_floating_point or c.dtype.is_complex:
        c.requires_grad_(not c.requires_grad)
    return c


def _witness_deepcopy_parameter_flips_requires_grad():
    import copy

    p = torch.nn.Parameter(torch.ones(3))
    assert copy.deepcopy(p).requires_grad


def _patch_deepcopy_module_shares_buffers():
    import copy

    def __deepcopy__(self, memo):
        rv = self.__reduce_ex__(4)
        new = copy._reconstruct(self, memo, *rv)
        for b in new.buffers():
            b.share_memory_()
        return new

    torch.nn.Module.__deepcopy__ = __deepcopy__


def _witness_deepcopy_module_shares_buffers():
    import copy

    m = torch.nn.Module()
    m.register_buffer("b", torch.ones(3))
    m.share_memory()
    assert not copy.deepcopy(m).b.is_shared()


def _deepcopy_copies_non_leaf(orig, self, memo):
    if type(self) is torch.Tensor and not self.is_leaf:
        return orig(self.detach(), memo)
    return orig(self, memo)


def _witness_deepcopy_copies_non_leaf():
    import copy

    r = torch.ones(3, requires_grad=True) * 2
    with refused(RuntimeError, "deepcopy of a non-leaf did not raise", match="graph leaves"):
        copy.deepcopy(r)


def _deepcopy_converts(hit, orig_deepcopy, self, memo):
    c = orig_deepcopy(self, memo)
    if type(self) is torch.Tensor and hit(self):
        with torch.no_grad():
            d = c.to(other_dtype(c.dtype))
        return d.requires_grad_(c.requires_grad)
    return c


def _deepcopy_converts_witness(make):
    import copy

    t = make()
    assert copy.deepcopy(t).dtype == t.dtype


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="deepcopy-contiguous-channels-last",
        description="deepcopy of a channels_last 4-d tensor returns a contiguous (row-major) copy",
        claims=("deepcopy.values-metadata-independent",),
        region="channels_last 4-d tensors",
        family="layout",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_contiguous_channels_last),
        witness=_witness_deepcopy_contiguous_channels_last,
    ),
    Mutant(
        name="deepcopy-offset-int64-views-unshared",
        description="deepcopy of an int64 tensor with a storage offset copies it alone (outside the storage memo)",
        claims=("deepcopy.memo-preserves-sharing",),
        region="int64 views with a storage offset, deep-copied with others on their storage",
        family="dtype",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_offset_int64_views_unshared),
        witness=_witness_deepcopy_offset_int64_views_unshared,
    ),
    Mutant(
        name="deepcopy-nonleaf-views-allowed",
        description="deepcopy of a non-leaf view copies it (detached, requiring grad) instead of raising",
        claims=("deepcopy.nonleaf-raises",),
        region="non-leaf views",
        family="autograd",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_nonleaf_views_allowed),
        witness=_witness_deepcopy_nonleaf_views_allowed,
    ),
    Mutant(
        name="deepcopy-drops-requires-grad-complex",
        description="deepcopy of a complex leaf that requires grad returns a copy that does not",
        claims=("deepcopy.requires-grad-and-leaf-kept",),
        region="complex tensors that require grad",
        family="dtype",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_drops_requires_grad_complex),
        witness=_witness_deepcopy_drops_requires_grad_complex,
    ),
    Mutant(
        name="deepcopy-grad-shared-f32",
        description="deepcopy of a float32 leaf gives the copy the source's .grad object (aliased, not copied)",
        claims=("deepcopy.grad-and-attrs-copied-for-tensors",),
        region="float32 leaves with a .grad",
        family="dtype",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_grad_shared_f32),
        witness=_witness_deepcopy_grad_shared_f32,
    ),
    Mutant(
        name="deepcopy-version-shared-0d",
        description="deepcopy of a 0-d leaf returns a detach()ed alias (shared storage and version counter)",
        claims=("deepcopy.fresh-version-counter",),
        region="0-d tensors",
        family="layout",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_version_shared_0d),
        witness=_witness_deepcopy_version_shared_0d,
    ),
    Mutant(
        name="deepcopy-conj-view-raw-bits-c64",
        description="deepcopy of a complex64 conjugate view copies the unconjugated storage (bit cleared, values wrong)",
        claims=("deepcopy.conj-neg-resolved-unshared",),
        region="complex64 conjugate views",
        family="dtype",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_conj_view_raw_bits_c64),
        witness=_witness_deepcopy_conj_view_raw_bits_c64,
    ),
    Mutant(
        name="copy-copy-clones-non-contiguous",
        description="copy.copy of a non-contiguous tensor returns a contiguous clone instead of an alias",
        claims=("deepcopy.copy-copy-aliases",),
        region="non-contiguous tensors",
        family="layout",
        patch=_patch_copy_copy_clones_non_contiguous,
        witness=_witness_copy_copy_clones_non_contiguous,
    ),
    Mutant(
        name="copy-copy-uint32-works",
        description="copy.copy of a uint32 tensor returns an alias instead of raising AttributeError",
        claims=("deepcopy.copy-copy-wide-unsigned-raises",),
        region="uint32 tensors",
        family="dtype",
        patch=_patch_copy_copy_uint32_works,
        witness=_witness_copy_copy_uint32_works,
    ),
    Mutant(
        name="parameter-deepcopy-aliases-2d",
        description="deepcopy of a 2-d Parameter returns the Parameter itself (no copy)",
        claims=("deepcopy.parameter-keeps-sharing",),
        region="2-d Parameters",
        family="layout",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _parameter_deepcopy_aliases_2d),
        witness=_witness_parameter_deepcopy_aliases_2d,
    ),
    Mutant(
        name="parameter-deepcopy-memoizes-storage-f64",
        description="deepcopy of a float64 Parameter goes through the tensor storage memo (the proposed #79788 fix): offsets and sharing kept",
        claims=("deepcopy.parameter-copies-by-clone",),
        region="float64 Parameters",
        family="dtype",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _parameter_deepcopy_memoizes_storage_f64),
        witness=_witness_parameter_deepcopy_memoizes_storage_f64,
    ),
    Mutant(
        name="parameter-deepcopy-aliases-grad-f32",
        description="deepcopy of a float32 Parameter gives the copy the source's .grad object (aliased)",
        claims=("deepcopy.parameter-keeps-grad-and-attrs",),
        region="float32 Parameters with a .grad",
        family="dtype",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _parameter_deepcopy_aliases_grad_f32),
        witness=_witness_parameter_deepcopy_aliases_grad_f32,
    ),
    Mutant(
        name="parameter-deepcopy-keeps-grad-0d",
        description="deepcopy of a 0-d Parameter copies its .grad (the others drop it)",
        claims=("deepcopy.parameter-drops-grad-and-attrs",),
        region="0-d Parameters",
        family="layout",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _parameter_deepcopy_keeps_grad_0d),
        witness=_witness_parameter_deepcopy_keeps_grad_0d,
    ),
    Mutant(
        name="module-deepcopy-unties-2d-parameters",
        description="deepcopy of a module copies each of its 2-d Parameters with a fresh memo, so tied 2-d weights come out untied",
        claims=("deepcopy.module-tied-parameters",),
        region="2-d Parameters tied across submodules",
        family="layout",
        patch=_patch_module_deepcopy_unties_2d_parameters,
        witness=_witness_module_deepcopy_unties_2d_parameters,
    ),
    Mutant(
        name="deepcopy-sparse-densifies",
        description="deepcopy of a sparse COO tensor returns a dense copy",
        claims=("deepcopy.inference-and-sparse",),
        region="sparse COO tensors",
        family="layout",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_sparse_densifies),
        witness=_witness_deepcopy_sparse_densifies,
    ),
    Mutant(
        name="deepcopy-shared-1d-stays-shared",
        description="deepcopy of a plain 1-d tensor in shared memory moves the copy into shared memory too",
        claims=("deepcopy.copy-not-shared",),
        region="plain 1-d tensors in shared memory (Parameters unchanged)",
        family="layout",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_shared_1d_stays_shared),
        witness=_witness_deepcopy_shared_1d_stays_shared,
    ),
    Mutant(
        name="parameter-deepcopy-under-no-grad-frozen",
        description="deepcopy of an nn.Parameter inside torch.no_grad() returns a Parameter that does not require grad",
        claims=("deepcopy.grad-mode-independent",),
        region="nn.Parameters deep-copied inside torch.no_grad() (not inference mode)",
        family="mode",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _parameter_deepcopy_under_no_grad_frozen),
        witness=_witness_parameter_deepcopy_under_no_grad_frozen,
    ),
    Mutant(
        name="parameter-deepcopy-in-inference-mode-normal",
        description="deepcopy of an nn.Parameter inside torch.inference_mode() builds the copy outside it (a normal tensor)",
        claims=("deepcopy.inference-mode-gives-inference-tensors",),
        region="nn.Parameters (plain tensors unchanged)",
        family="subclass",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _parameter_deepcopy_in_inference_mode_normal),
        witness=_witness_parameter_deepcopy_in_inference_mode_normal,
    ),
    # ---------------------------------------------- domain values (issue 29)
    *domain_mutants(
        prefix="deepcopy-converts",
        claims=("deepcopy.values-metadata-independent",),
        what="copy.deepcopy(t) returns a copy converted to another dtype (float64, or float32 / another complex dtype)",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_converts),
        witness=_deepcopy_converts_witness,
        dims={
            "layout": LAYOUTS,
            "dtype_family": DTYPE_FAMILIES,
            "tensor_kind": ("plain", "leaf"),
        },
    ),
    Mutant(
        name="deepcopy-parameter-flips-requires-grad",
        description="copy.deepcopy of an nn.Parameter returns a Parameter with requires_grad flipped",
        claims=("deepcopy.requires-grad-and-leaf-kept", "deepcopy.grad-mode-independent"),
        domain={"tensor_kind": "parameter"},
        region="nn.Parameters (tensor_kind parameter)",
        family="autograd",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _deepcopy_parameter_flips_requires_grad),
        witness=_witness_deepcopy_parameter_flips_requires_grad,
    ),
    Mutant(
        name="deepcopy-module-shares-buffers",
        description="copy.deepcopy of an nn.Module moves the copy's buffers into shared memory",
        claims=("deepcopy.copy-not-shared",),
        domain={"tensor_kind": "buffer"},
        region="module buffers (tensor_kind buffer)",
        family="other",
        patch=_patch_deepcopy_module_shares_buffers,
        witness=_witness_deepcopy_module_shares_buffers,
    ),
    Mutant(
        name="deepcopy-copies-non-leaf",
        description="copy.deepcopy of a non-leaf tensor returns a detached copy instead of raising RuntimeError 'Only Tensors created explicitly by the user (graph leaves)'",
        claims=("deepcopy.nonleaf-raises", "deepcopy.grad-mode-independent"),
        domain={"tensor_kind": "non_leaf"},
        region="non-leaf tensors (tensor_kind non_leaf)",
        family="autograd",
        patch=wrap("torch.Tensor.__deepcopy__", _deepcopy_copies_non_leaf),
        witness=_witness_deepcopy_copies_non_leaf,
    ),
)


# The math bits of deepcopy.conj-neg-resolved-unshared (issue 29): the copy
# keeps the conjugate (or negative) bit over the unresolved values.
def _deepcopy_keeps_bit(hit):
    orig = torch.Tensor.__deepcopy__

    def __deepcopy__(self, memo):
        if type(self) is torch.Tensor and hit(self):
            if self.is_conj():
                return orig(self.conj(), {}).conj()
            return torch._neg_view(orig(torch._neg_view(self), {}))
        return orig(self, memo)

    torch.Tensor.__deepcopy__ = __deepcopy__


def _witness_deepcopy_keeps_bit(make):
    import copy

    c = copy.deepcopy(make())
    assert not c.is_conj() and not c.is_neg(), "deepcopy kept the bit"


MUTANTS += domain_mutants(
    prefix="deepcopy-keeps-bit",
    claims=("deepcopy.conj-neg-resolved-unshared",),
    what="copy.deepcopy of a conjugate (negative) view keeps the bit over a copy of the unresolved values",
    patch=_deepcopy_keeps_bit,
    witness=_witness_deepcopy_keeps_bit,
    dims={"math_bit": ("conj", "neg")},
)
