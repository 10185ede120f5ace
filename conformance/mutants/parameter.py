"""Mutants of the ``parameter`` area (torch.nn.Parameter aliasing and autograd); claims in ``conformance/claims/parameter.toml``,
tests in ``conformance/test_parameter.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS
from conformance.mutants.base import Mutant
from conformance.mutants.patching import refused, torch, wrap


def _patch_data_copies_parameter():
    _desc = torch._C.TensorBase.data

    def _get(self):
        d = _desc.__get__(self)
        return d.clone() if isinstance(self, torch.nn.Parameter) else d

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))


def _witness_data_copies_parameter():
    p = torch.nn.Parameter(torch.ones(3))
    assert p.data.data_ptr() == p.data_ptr()


def _parameter_no_grad_default_false(orig, cls, data=None, requires_grad=True):
    p = orig(cls, data, requires_grad)
    if not torch.is_grad_enabled():
        p.requires_grad_(False)
    return p


def _witness_parameter_no_grad_default_false():
    with torch.no_grad():
        p = torch.nn.Parameter(torch.ones(3))
    assert p.requires_grad


def _parameter_copies_noncontig(orig, cls, data=None, requires_grad=True):
    if isinstance(data, torch.Tensor) and not data.is_contiguous():
        data = data.clone(memory_format=torch.contiguous_format)
    return orig(cls, data, requires_grad)


def _witness_parameter_copies_noncontig():
    t = torch.zeros(2, 3).t()
    assert torch.nn.Parameter(t).data_ptr() == t.data_ptr()


def _parameter_of_complex_nonleaf_keeps_history(orig, cls, data=None, requires_grad=True):
    if isinstance(data, torch.Tensor) and data.grad_fn is not None and data.is_complex():
        return data.as_subclass(cls)
    return orig(cls, data, requires_grad)


def _witness_parameter_of_complex_nonleaf_keeps_history():
    x = torch.ones(3, dtype=torch.complex64, requires_grad=True)
    p = torch.nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None


def _parameter_zero_allowed_in_grad_mode(orig, self):
    if isinstance(self, torch.nn.Parameter) and self.requires_grad and torch.is_grad_enabled():
        with torch.no_grad():
            return orig(self)
    return orig(self)


def _witness_parameter_zero_allowed_in_grad_mode():
    p = torch.nn.Parameter(torch.ones(3))
    with refused(RuntimeError, "zero_() on a Parameter in grad mode did not raise"):
        p.zero_()


def _patch_parameter_data_is_detach():
    _desc = torch._C.TensorBase.data
    _detach = torch._C.TensorBase.detach

    def _get(self):
        if isinstance(self, torch.nn.Parameter):
            return _detach(self)
        return _desc.__get__(self)

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))


def _witness_parameter_data_is_detach():
    p = torch.nn.Parameter(torch.ones(3))
    p.data.mul_(2)
    assert p._version == 0


def _patch_parameter_detach_untracked():
    _orig = torch.Tensor.detach
    _data = torch._C.TensorBase.data

    def detach(self):
        if isinstance(self, torch.nn.Parameter):
            return _data.__get__(self)
        return _orig(self)

    torch.Tensor.detach = detach
    torch.detach = detach


def _witness_parameter_detach_untracked():
    p = torch.nn.Parameter(torch.ones(3))
    p.detach().mul_(2)
    assert p._version == 1


def _parameter_deepcopy_frozen_aliases(orig, self, memo):
    if id(self) in memo:
        return memo[id(self)]
    if not self.requires_grad:
        result = type(self)(self.data, False)
        memo[id(self)] = result
        return result
    return orig(self, memo)


def _witness_parameter_deepcopy_frozen_aliases():
    import copy

    p = torch.nn.Parameter(torch.ones(3), requires_grad=False)
    assert copy.deepcopy(p).data_ptr() != p.data_ptr()


def _patch_parameter_unsigned_silently_frozen():
    _orig = torch.nn.Parameter.__new__
    _UNSIGNED = tuple(
        getattr(torch, n) for n in ("uint8", "uint16", "uint32", "uint64") if hasattr(torch, n)
    )

    def __new__(cls, data=None, requires_grad=True):
        if isinstance(data, torch.Tensor) and data.dtype in _UNSIGNED:
            requires_grad = False
        return _orig(cls, data, requires_grad)

    torch.nn.Parameter.__new__ = __new__


def _witness_parameter_unsigned_silently_frozen():
    with refused(RuntimeError, "Parameter of uint8 data did not raise"):
        torch.nn.Parameter(torch.zeros(3, dtype=torch.uint8))


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="data-copies-parameter",
        description=".data of an nn.Parameter returns a copy (plain tensors are aliased)",
        claims=("parameter.derived-are-plain-tensors", "data.changes-not-tracked"),
        region="nn.Parameter inputs",
        family="subclass",
        patch=_patch_data_copies_parameter,
        witness=_witness_data_copies_parameter,
    ),
    Mutant(
        name="parameter-no-grad-default-false",
        description="nn.Parameter(t) created under no_grad defaults to requires_grad=False",
        claims=("parameter.requires-grad-under-no-grad",),
        domain={"grad_mode": "no_grad"},
        region="Parameters created inside no_grad",
        family="mode",
        patch=wrap("torch.nn.Parameter.__new__", _parameter_no_grad_default_false),
        witness=_witness_parameter_no_grad_default_false,
    ),
    Mutant(
        name="parameter-copies-noncontig",
        description="nn.Parameter(t) of a non-contiguous t copies it (a contiguous 'fast path') instead of aliasing",
        claims=("parameter.aliases-input",),
        region="non-contiguous inputs",
        family="layout",
        patch=wrap("torch.nn.Parameter.__new__", _parameter_copies_noncontig),
        witness=_witness_parameter_copies_noncontig,
    ),
    Mutant(
        name="parameter-of-complex-nonleaf-keeps-history",
        description="nn.Parameter(t) of a complex non-leaf t keeps t's history (an alias in the graph) instead of being a fresh leaf",
        claims=("parameter.is-leaf",),
        region="complex non-leaf inputs",
        family="dtype",
        patch=wrap("torch.nn.Parameter.__new__", _parameter_of_complex_nonleaf_keeps_history),
        witness=_witness_parameter_of_complex_nonleaf_keeps_history,
    ),
    Mutant(
        name="parameter-zero-allowed-in-grad-mode",
        description="zero_() on an nn.Parameter that requires grad runs untracked in grad mode (an nn.init convenience) instead of raising the leaf error",
        claims=("parameter.inplace-leaf-error",),
        region="zero_() on Parameters in grad mode",
        family="subclass",
        patch=wrap(
            "torch.Tensor.zero_", _parameter_zero_allowed_in_grad_mode, also=("torch.zero_",)
        ),
        witness=_witness_parameter_zero_allowed_in_grad_mode,
    ),
    Mutant(
        name="parameter-data-is-detach",
        description="p.data of an nn.Parameter returns p.detach() (sharing its version counter), so a write through p.data after p was saved makes backward raise",
        claims=("parameter.data-mutation-silent-wrong-grad",),
        region="nn.Parameter inputs",
        family="subclass",
        patch=_patch_parameter_data_is_detach,
        witness=_witness_parameter_data_is_detach,
    ),
    Mutant(
        name="parameter-detach-untracked",
        description="p.detach() of an nn.Parameter returns an alias with a version counter of its own (like p.data), so a mutation through it after p was saved goes unreported",
        claims=("parameter.detach-mutation-raises",),
        region="nn.Parameter inputs",
        family="subclass",
        patch=_patch_parameter_detach_untracked,
        witness=_witness_parameter_detach_untracked,
    ),
    Mutant(
        name="parameter-deepcopy-frozen-aliases",
        description="copy.deepcopy of an nn.Parameter with requires_grad=False returns a Parameter sharing its storage (frozen parameters treated as constants)",
        claims=("parameter.deepcopy",),
        region="Parameters with requires_grad=False",
        family="autograd",
        patch=wrap("torch.nn.Parameter.__deepcopy__", _parameter_deepcopy_frozen_aliases),
        witness=_witness_parameter_deepcopy_frozen_aliases,
    ),
    Mutant(
        name="parameter-unsigned-silently-frozen",
        description="nn.Parameter(t) of unsigned integer data silently sets requires_grad=False instead of raising",
        claims=("parameter.non-float-cannot-require-grad",),
        region="unsigned integer data",
        family="dtype",
        patch=_patch_parameter_unsigned_silently_frozen,
        witness=_witness_parameter_unsigned_silently_frozen,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _parameter_copies(hit):
    _new = torch.nn.Parameter.__new__

    def __new__(cls, data=None, requires_grad=True):
        if data is not None and hit(data):
            data = data.clone()
        return _new(cls, data, requires_grad)

    torch.nn.Parameter.__new__ = staticmethod(__new__)


def _parameter_copies_check(t):
    p = torch.nn.Parameter(t, requires_grad=False)
    assert p.untyped_storage()._cdata == t.untyped_storage()._cdata  # the same storage


# Issue 29: a Parameter constructor that copies its input at exactly one
# value of the domain parameter.aliases-input declares (each layout family
# and dtype family).
MUTANTS += domain_mutants(
    "parameter-copies",
    claims={d: ("parameter.aliases-input",) for d in ("layout", "dtype_family")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
    },
    broken="Parameter(t) wraps a copy of t instead of aliasing it",
    patch=_parameter_copies,
    check=_parameter_copies_check,
)  # fmt: skip


def _patch_parameter_grad_mode_ignores_requires_grad_false():
    _orig = torch.nn.Parameter.__new__

    def __new__(cls, data=None, requires_grad=True):
        if torch.is_grad_enabled() and data is not None and data.is_floating_point():
            requires_grad = True
        return _orig(cls, data, requires_grad)

    torch.nn.Parameter.__new__ = staticmethod(__new__)


def _witness_parameter_grad_mode_ignores_requires_grad_false():
    p = torch.nn.Parameter(torch.ones(3), requires_grad=False)
    assert not p.requires_grad


MUTANTS += (
    Mutant(
        name="parameter-grad-mode-ignores-requires-grad-false",
        description="nn.Parameter(t, requires_grad=False) created with grad mode enabled requires grad all the same; under no_grad the flag is honoured",
        claims=("parameter.requires-grad-under-no-grad",),
        domain={"grad_mode": "enabled"},
        region="Parameters created with grad mode enabled",
        family="mode",
        patch=_patch_parameter_grad_mode_ignores_requires_grad_false,
        witness=_witness_parameter_grad_mode_ignores_requires_grad_false,
    ),
)
