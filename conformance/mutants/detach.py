"""Mutants of the ``detach`` area (Tensor.detach and Tensor.detach_); claims in ``conformance/claims/detach.toml``,
tests in ``conformance/test_detach.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, TENSOR_KINDS
from conformance.mutants.base import Mutant
from conformance.mutants.patching import accepted, torch, wrap


def _detach_copies_call(orig, self):
    return orig(self).clone()


def _witness_detach_copies():
    x = torch.arange(6.0)
    assert x.detach().data_ptr() == x.data_ptr()
    assert torch.detach(x).data_ptr() == x.data_ptr()


def _detach_copies_noncontig_f64(orig, self):
    out = orig(self)
    if self.dtype == torch.float64 and not self.is_contiguous():
        out = out.clone()
    return out


def _witness_detach_copies_noncontig_f64():
    x = torch.arange(6.0, dtype=torch.float64).reshape(2, 3).t()
    assert x.detach().data_ptr() == x.data_ptr()


def _detach_copies_expanded(orig, self):
    out = orig(self)
    if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride(), strict=False)):
        out = out.clone()
    return out


def _witness_detach_copies_expanded():
    x = torch.arange(3.0).expand(2, 3)
    d = x.detach()
    assert d.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert d.stride() == x.stride()


def _detach_copies_zero_size(orig, self):
    out = orig(self)
    if self.numel() == 0:
        out = torch.empty_strided(self.shape, self.stride(), dtype=self.dtype, device=self.device)
    return out


def _witness_detach_copies_zero_size():
    x = torch.empty(0, 3)
    assert x.detach().untyped_storage() is x.untyped_storage()


def _detach_copies_0d(orig, self):
    out = orig(self)
    return out.clone() if self.dim() == 0 else out


def _witness_detach_copies_0d():
    x = torch.tensor(3.0)
    assert x.detach().data_ptr() == x.data_ptr()


def _detach_copies_channels_last(orig, self):
    out = orig(self)
    if (
        self.dim() == 4
        and not self.is_contiguous()
        and self.is_contiguous(memory_format=torch.channels_last)
    ):
        out = out.clone()
    return out


def _witness_detach_copies_channels_last():
    x = torch.zeros(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
    assert x.detach().data_ptr() == x.data_ptr()


def _detach_copies_bool(orig, self):
    out = orig(self)
    return out.clone() if self.dtype == torch.bool else out


def _witness_detach_copies_bool():
    x = torch.tensor([True, False])
    assert x.detach().data_ptr() == x.data_ptr()


def _detach_function_copies(orig, input):
    return orig(input).clone()


def _witness_detach_function_copies():
    x = torch.arange(4.0)
    assert torch.detach(x).data_ptr() == x.data_ptr()


def _detach_keeps_grad_nonleaf(orig, self):
    out = orig(self)
    if self.requires_grad and not self.is_leaf:
        out.requires_grad_(True)
    return out


def _witness_detach_keeps_grad_nonleaf():
    x = torch.ones(3, requires_grad=True) * 2
    assert x.detach().requires_grad is False


def _detach_copies_parameter(orig, self):
    out = orig(self)
    return out.clone() if isinstance(self, torch.nn.Parameter) else out


def _witness_detach_copies_parameter():
    p = torch.nn.Parameter(torch.ones(3))
    assert p.detach().data_ptr() == p.data_ptr()


def _detach_own_version_counter(data, self):
    return data.__get__(self)


def _witness_detach_own_version_counter():
    x = torch.ones(3)
    x.detach().add_(1)
    assert x._version == 1


def _detach_resolves_math_bits(orig, self):
    out = orig(self)
    if out.is_conj() or out.is_neg():
        return out.resolve_conj().resolve_neg()
    return out


def _witness_detach_resolves_math_bits():
    z = torch.tensor([1 + 2j, 3 - 1j])
    for v in (z.conj(), z.conj().imag):
        assert v.detach().data_ptr() == v.data_ptr()


def _detach_returns_zeros(orig, self):
    return torch.zeros_like(orig(self))


def _witness_detach_returns_zeros():
    x = torch.arange(1.0, 4.0)
    assert x.detach().tolist() == [1.0, 2.0, 3.0]
    assert torch.detach(x).tolist() == [1.0, 2.0, 3.0]


def _detach_lazy_clone_requires_grad(orig, self):
    out = orig(self)
    if self.requires_grad:
        out = out._lazy_clone()
    return out


def _witness_detach_lazy_clone_requires_grad():
    x = torch.zeros(3, requires_grad=True)
    d = x.detach()
    d[0] = 5.0
    assert x[0].item() == 5.0


def _detach_keeps_tangent_complex(orig, self):
    import torch.autograd.forward_ad as _fwad

    out = orig(self)
    if self.is_complex() and _fwad._current_level >= 0:
        tangent = _fwad.unpack_dual(self).tangent
        if tangent is not None:
            out = _fwad.make_dual(out, tangent)
    return out


def _witness_detach_keeps_tangent_complex():
    import torch.autograd.forward_ad as fwad

    p = torch.ones(3, dtype=torch.complex64)
    with fwad.dual_level():
        d = fwad.make_dual(p, torch.ones_like(p))
        assert fwad.unpack_dual(d.detach()).tangent is None


def _patch_detach_result_refuses_set_():
    _orig = torch.Tensor.detach
    _set = torch.Tensor.set_

    def detach(self):
        out = _orig(self)
        out._mutant_detached = True
        return out

    def set_(self, *args, **kwargs):
        if getattr(self, "_mutant_detached", False):
            raise RuntimeError("set_ is not allowed on a Tensor created from .data or .detach()")
        return _set(self, *args, **kwargs)

    torch.Tensor.detach = detach
    torch.detach = detach
    torch.Tensor.set_ = set_


def _witness_detach_result_refuses_set_():
    d = torch.zeros(2, 3).detach()
    with accepted(RuntimeError, "set_ on a detach() result raised"):
        out = d.set_(torch.ones(3))
    assert out is d and d.shape == (3,)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="detach-copies",
        description="detach() returns a copy instead of an alias of the input's storage",
        claims=("detach.shares-storage",),
        patch=wrap("torch.Tensor.detach", _detach_copies_call, also=("torch.detach",)),
        witness=_witness_detach_copies,
    ),
    Mutant(
        name="detach-copies-noncontig-f64",
        description="detach() copies, but only for non-contiguous float64 inputs",
        claims=("detach.shares-storage",),
        region="non-contiguous float64 inputs",
        family="layout",
        patch=wrap("torch.Tensor.detach", _detach_copies_noncontig_f64, also=("torch.detach",)),
        witness=_witness_detach_copies_noncontig_f64,
    ),
    Mutant(
        name="detach-copies-expanded",
        description="detach() materialises expanded (stride-0) inputs instead of aliasing them",
        claims=("detach.shares-storage",),
        region="expanded (stride-0) inputs",
        family="layout",
        patch=wrap("torch.Tensor.detach", _detach_copies_expanded, also=("torch.detach",)),
        witness=_witness_detach_copies_expanded,
    ),
    Mutant(
        name="detach-copies-zero-size",
        description="detach() of a zero-size tensor returns a fresh empty tensor (new storage)",
        claims=("detach.shares-storage",),
        region="zero-size inputs",
        family="layout",
        patch=wrap("torch.Tensor.detach", _detach_copies_zero_size, also=("torch.detach",)),
        witness=_witness_detach_copies_zero_size,
    ),
    Mutant(
        name="detach-copies-0d",
        description="detach() of a 0-d tensor copies the scalar",
        claims=("detach.shares-storage",),
        region="0-d inputs",
        family="layout",
        patch=wrap("torch.Tensor.detach", _detach_copies_0d, also=("torch.detach",)),
        witness=_witness_detach_copies_0d,
    ),
    Mutant(
        name="detach-copies-channels-last",
        description="detach() copies channels_last (non-contiguous 4-D) inputs",
        claims=("detach.shares-storage",),
        region="channels_last 4-D inputs",
        family="layout",
        patch=wrap("torch.Tensor.detach", _detach_copies_channels_last, also=("torch.detach",)),
        witness=_witness_detach_copies_channels_last,
    ),
    Mutant(
        name="detach-copies-bool",
        description="detach() copies bool tensors (a dtype family)",
        claims=("detach.shares-storage",),
        region="bool inputs",
        family="dtype",
        patch=wrap("torch.Tensor.detach", _detach_copies_bool, also=("torch.detach",)),
        witness=_witness_detach_copies_bool,
    ),
    Mutant(
        name="detach-function-copies",
        description="torch.detach(t) (function form only) copies; t.detach() is correct",
        claims=("detach.shares-storage",),
        region="the function form torch.detach(t) only",
        family="convention",
        patch=wrap("torch.detach", _detach_function_copies),
        witness=_witness_detach_function_copies,
    ),
    Mutant(
        name="detach-keeps-grad-nonleaf",
        description="detach() of a non-leaf that requires grad returns a tensor that still requires grad",
        claims=("detach.is-leaf", "detach.never-requires-grad"),
        region="non-leaf inputs that require grad",
        family="autograd",
        patch=wrap("torch.Tensor.detach", _detach_keeps_grad_nonleaf, also=("torch.detach",)),
        witness=_witness_detach_keeps_grad_nonleaf,
    ),
    Mutant(
        name="detach-copies-parameter",
        description="detach() of an nn.Parameter snapshots it (copy); plain tensors are aliased",
        claims=("detach.parameter-sees-optimizer-step",),
        region="nn.Parameter inputs",
        family="subclass",
        patch=wrap("torch.Tensor.detach", _detach_copies_parameter, also=("torch.detach",)),
        witness=_witness_detach_copies_parameter,
    ),
    Mutant(
        name="detach-own-version-counter",
        description="detach() aliases the storage but gets its own version counter (like .data)",
        claims=("detach.inplace-error-when-saved", "graphs.version-error-predicted"),
        patch=wrap(
            "torch.Tensor.detach",
            _detach_own_version_counter,
            also=("torch.detach",),
            original="torch._C.TensorBase.data",
        ),
        witness=_witness_detach_own_version_counter,
    ),
    Mutant(
        name="detach-resolves-math-bits",
        description="detach() of a conjugate or negative-bit view resolves the bit into new memory (same values, no longer an alias of its input)",
        claims=("detach.shares-storage",),
        domain=(("math_bit", "conj"), ("math_bit", "neg")),
        region="conjugate and negative-bit views (t.conj(), t.conj().imag of a complex t)",
        family="layout",
        patch=wrap("torch.Tensor.detach", _detach_resolves_math_bits, also=("torch.detach",)),
        witness=_witness_detach_resolves_math_bits,
    ),
    Mutant(
        name="detach-returns-zeros",
        description="detach() returns a tensor of zeros (same dtype, shape and device) instead of the input's values",
        claims=("detach.keeps-dtype-and-values",),
        patch=wrap("torch.Tensor.detach", _detach_returns_zeros, also=("torch.detach",)),
        witness=_witness_detach_returns_zeros,
    ),
    Mutant(
        name="detach-lazy-clone-requires-grad",
        description="detach() of a tensor that requires grad returns a copy-on-write (lazy) clone: it reads the same values but a write through either one is no longer seen by the other",
        claims=("detach.writes-visible-both-ways",),
        region="inputs that require grad",
        family="autograd",
        patch=wrap("torch.Tensor.detach", _detach_lazy_clone_requires_grad, also=("torch.detach",)),
        witness=_witness_detach_lazy_clone_requires_grad,
    ),
    Mutant(
        name="detach-keeps-tangent-complex",
        description="detach() of a complex forward-mode AD dual tensor keeps its tangent (real dtypes drop it)",
        claims=("detach.drops-forward-ad-tangent",),
        region="complex dual tensors",
        family="dtype",
        patch=wrap("torch.Tensor.detach", _detach_keeps_tangent_complex, also=("torch.detach",)),
        witness=_witness_detach_keeps_tangent_complex,
    ),
    Mutant(
        name="detach-result-refuses-set_",
        description="set_() on the result of detach() raises again, as before 'Always allow tensor metadata changes' (PR #83590); resize_, resize_as_ and transpose_ are still allowed",
        claims=("detach.metadata-change-allowed", "detach.metadata-change-raises"),
        region="set_ (one of the four metadata changes) on a detach() result",
        family="other",
        patch=_patch_detach_result_refuses_set_,
        witness=_witness_detach_result_refuses_set_,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _detach_copies(hit, orig, self):
    out = orig(self)
    return out.clone() if hit(self) else out


def _detach_copies_check(t):
    assert t.detach().untyped_storage()._cdata == t.untyped_storage()._cdata  # the same storage


# Issue 29: a detach that copies at exactly one value of the domain
# detach.shares-storage declares (every tensor: each layout family, dtype
# family and tensor kind, and tensors without a math bit; the conjugate and
# negative-bit views are detach-resolves-math-bits).
MUTANTS += domain_mutants(
    "detach-copies",
    claims={d: ("detach.shares-storage",) for d in ("layout", "dtype_family", "tensor_kind", "math_bit")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
        "tensor_kind": TENSOR_KINDS,
        "math_bit": ("none",),
    },
    broken="detach() returns a copy in new storage instead of an alias",
    patch=wrap("torch.Tensor.detach", _detach_copies, also=("torch.detach",)),
    check=_detach_copies_check,
)  # fmt: skip


def _patch_detach_copies_only_method():
    _orig = torch.Tensor.detach
    torch.Tensor.detach = lambda self: _orig(self).clone()


def _witness_detach_copies_only_method():
    t = torch.arange(3.0)
    assert t.detach().data_ptr() == t.data_ptr()


def _patch_detach_copies_only_function():
    _orig = torch.detach
    torch.detach = lambda input: _orig(input).clone()


def _witness_detach_copies_only_function():
    t = torch.arange(3.0)
    assert torch.detach(t).data_ptr() == t.data_ptr()


MUTANTS += (
    Mutant(
        name="detach-copies-only-method",
        description="t.detach() returns a copy; torch.detach(t) still aliases",
        claims=("detach.shares-storage",),
        domain={"call_form": "method"},
        region="the method form t.detach() only",
        family="convention",
        patch=_patch_detach_copies_only_method,
        witness=_witness_detach_copies_only_method,
    ),
    Mutant(
        name="detach-copies-only-function",
        description="torch.detach(t) returns a copy; t.detach() still aliases",
        claims=("detach.shares-storage",),
        domain={"call_form": "function"},
        region="the function form torch.detach(t) only",
        family="convention",
        patch=_patch_detach_copies_only_function,
        witness=_witness_detach_copies_only_function,
    ),
)


def _detach_requires_grad(hit, orig, self):
    out = orig(self)
    if hit(self) and (out.is_floating_point() or out.is_complex()):
        if out.is_inference():  # cannot require grad outside inference mode: a normal copy can
            out = out.clone()
        out.requires_grad_(True)
    return out


def _detach_requires_grad_check(t):
    assert not t.detach().requires_grad and not torch.detach(t).requires_grad


# Issue 29: a detach whose result requires grad for exactly one tensor kind
# (detach.never-requires-grad: "whatever t's autograd state").
MUTANTS += domain_mutants(
    "detach-requires-grad",
    claims={"tensor_kind": ("detach.never-requires-grad",)},
    values={"tensor_kind": TENSOR_KINDS},
    broken="detach() of a floating or complex tensor returns a result that requires grad",
    patch=wrap("torch.Tensor.detach", _detach_requires_grad, also=("torch.detach",)),
    check=_detach_requires_grad_check,
)
