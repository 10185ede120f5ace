"""Mutants of the ``serialization`` area (torch.save / torch.load / pickle); claims in
``conformance/claims/serialization.toml``, tests in ``conformance/test_serialization.py``.

Save-side mutants patch ``torch.Tensor._reduce_ex_internal`` (what ``__reduce_ex__``
calls) or ``__reduce_ex__`` itself. Load-side mutants wrap the rebuild functions of
``torch._utils`` with ``functools.wraps``: ``torch.save`` pickles them *by name*, and the
``weights_only`` unpickler allows them by name, so the wrapper must keep the original's
``__module__`` and ``__qualname__``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, domain_mutants, other_dtype
from conformance.mutants.base import Mutant
from conformance.mutants.patching import in_grad_mode, refused, torch, wrap


def _save_materialises_2d_transposed(orig, self, proto):
    if self.dim() == 2 and not self.is_contiguous():
        return orig(self.contiguous(), proto)
    return orig(self, proto)


def _witness_save_materialises_2d_transposed():
    import io

    b = torch.arange(6.0).reshape(2, 3)
    buf = io.BytesIO()
    torch.save([b, b.t()], buf)
    buf.seek(0)
    lb, lt = torch.load(buf, weights_only=True)
    assert lt.stride() == (1, 3)


def _save_trims_offset_views_int(orig, self, proto):
    if not (self.is_floating_point() or self.is_complex()) and self.storage_offset():
        return orig(self.clone(), proto)
    return orig(self, proto)


def _witness_save_trims_offset_views_int():
    import io

    v = torch.arange(100)[10:12]
    buf = io.BytesIO()
    torch.save(v, buf)
    buf.seek(0)
    assert torch.load(buf, weights_only=True).untyped_storage().nbytes() == 800


def _patch_load_rebuilds_views_as_views_f32():
    import functools
    import weakref

    import torch._utils as _U

    _orig = _U._rebuild_tensor_v2
    _first = {}

    @functools.wraps(_orig)
    def _rebuild_tensor_v2(storage, storage_offset, size, stride, *args, **kwargs):
        t = _orig(storage, storage_offset, size, stride, *args, **kwargs)
        if t.dtype != torch.float32 or t.requires_grad:
            return t
        key = t.untyped_storage().data_ptr()
        ref = _first.get(key)
        first = ref() if ref is not None else None
        if first is None or first.untyped_storage().data_ptr() != key:
            _first[key] = weakref.ref(t)
            return t
        return first.as_strided(t.shape, t.stride(), t.storage_offset())

    _U._rebuild_tensor_v2 = _rebuild_tensor_v2


def _witness_load_rebuilds_views_as_views_f32():
    import io

    b = torch.arange(6.0)
    buf = io.BytesIO()
    torch.save([b, b[2:]], buf)
    buf.seek(0)
    lb, lv = torch.load(buf, weights_only=True)
    assert lv._base is None


def _patch_load_drops_requires_grad_f64():
    import functools

    import torch._utils as _U

    _orig = _U._rebuild_tensor_v2

    @functools.wraps(_orig)
    def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, *args, **kwargs):
        if storage.dtype == torch.float64:
            requires_grad = False
        return _orig(storage, storage_offset, size, stride, requires_grad, *args, **kwargs)

    _U._rebuild_tensor_v2 = _rebuild_tensor_v2


def _witness_load_drops_requires_grad_f64():
    import io

    buf = io.BytesIO()
    torch.save(torch.ones(2, dtype=torch.float64, requires_grad=True), buf)
    buf.seek(0)
    assert torch.load(buf, weights_only=True).requires_grad


def _patch_load_frozen_parameter_becomes_tensor():
    import functools

    import torch._utils as _U

    _orig = _U._rebuild_parameter
    _orig_state = _U._rebuild_parameter_with_state

    @functools.wraps(_orig)
    def _rebuild_parameter(data, requires_grad, backward_hooks):
        if not requires_grad:
            return data
        return _orig(data, requires_grad, backward_hooks)

    @functools.wraps(_orig_state)
    def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
        if not requires_grad:
            return data
        return _orig_state(data, requires_grad, backward_hooks, state)

    _U._rebuild_parameter = _rebuild_parameter
    _U._rebuild_parameter_with_state = _rebuild_parameter_with_state


def _witness_load_frozen_parameter_becomes_tensor():
    import io

    buf = io.BytesIO()
    torch.save(torch.nn.Parameter(torch.ones(2), requires_grad=False), buf)
    buf.seek(0)
    assert type(torch.load(buf, weights_only=True)) is torch.nn.Parameter


def _save_keeps_grad_parameter(orig, self, proto):
    import collections

    import torch._utils as _U

    if self.grad is None:
        return orig(self, proto)
    state = dict(_U._get_obj_state(self) or {})
    state["grad"] = self.grad
    return (
        _U._rebuild_parameter_with_state,
        (self.data, self.requires_grad, collections.OrderedDict(), state),
    )


def _witness_save_keeps_grad_parameter():
    import io

    p = torch.nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    buf = io.BytesIO()
    torch.save(p, buf)
    buf.seek(0)
    assert torch.load(buf, weights_only=True).grad is None


def _save_hook_warning_once_per_tensor(orig, tensor):
    import warnings

    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks and len(hooks) > 1:
        for k in hooks:
            warnings.warn(  # stacklevel 3: the caller, above wrap's wrapper
                f"backward hook {hooks[k]} on tensor will not be serialized.", stacklevel=3
            )
            return
    return orig(tensor)


def _witness_save_hook_warning_once_per_tensor():
    import io
    import warnings

    t = torch.ones(2, requires_grad=True)
    t.register_hook(lambda g: g)
    t.register_hook(lambda g: g)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.save(t, io.BytesIO())
    assert len([x for x in w if "will not be serialized" in str(x.message)]) == 2


def _patch_load_drops_neg_bit_0d():
    import functools

    import torch._utils as _U

    _orig = _U._rebuild_tensor_v2

    @functools.wraps(_orig)
    def _rebuild_tensor_v2(*args, **kwargs):
        t = _orig(*args, **kwargs)
        if t.dim() == 0 and t.is_neg():
            torch._C._set_neg(t, False)
        return t

    _U._rebuild_tensor_v2 = _rebuild_tensor_v2


def _witness_load_drops_neg_bit_0d():
    import io

    n = torch._neg_view(torch.tensor(2.0))
    buf = io.BytesIO()
    torch.save(n, buf)
    buf.seek(0)
    assert torch.load(buf, weights_only=True).item() == -2.0


def _save_mixed_dtype_allowed_integer(orig, self, proto):
    if not (self.is_floating_point() or self.is_complex()):
        return orig(self.clone(), proto)
    return orig(self, proto)


def _witness_save_mixed_dtype_allowed_integer():
    import io

    t = torch.zeros(3)
    with refused(RuntimeError, "mixed-dtype views saved"):
        torch.save([t, t.view(torch.int32)], io.BytesIO())


def _patch_load_default_weights_only_false():
    import functools

    _orig = torch.load

    @functools.wraps(_orig)
    def load(f, *args, **kwargs):
        if "weights_only" not in kwargs and "pickle_module" not in kwargs and len(args) < 2:
            kwargs["weights_only"] = False
        return _orig(f, *args, **kwargs)

    torch.load = load


def _witness_load_default_weights_only_false():
    import io
    import pickle

    buf = io.BytesIO()
    torch.save(slice(1, 2), buf)
    buf.seek(0)
    with refused(pickle.UnpicklingError, "torch.load() unpickled a slice by default"):
        torch.load(buf)


def _pickle_trims_offset_views_int64(orig, self, proto):
    if self.dtype == torch.int64 and self.storage_offset():
        return orig(self.clone(), proto)
    return orig(self, proto)


def _witness_pickle_trims_offset_views_int64():
    import pickle

    v = torch.arange(10)[3:]
    assert pickle.loads(pickle.dumps(v)).storage_offset() == 3


def _patch_load_canonicalises_nan_f16():
    import functools

    import torch._utils as _U

    _orig = _U._rebuild_tensor_v2

    @functools.wraps(_orig)
    def _rebuild_tensor_v2(*args, **kwargs):
        t = _orig(*args, **kwargs)
        if t.dtype == torch.float16 and t.numel() and not t.requires_grad:
            with torch.no_grad():
                t.masked_fill_(t.isnan(), float("nan"))
        return t

    _U._rebuild_tensor_v2 = _rebuild_tensor_v2


def _witness_load_canonicalises_nan_f16():
    import io

    t = torch.tensor([-float("nan")], dtype=torch.float16)
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    assert torch.load(buf, weights_only=True).view(torch.int16).item() == t.view(torch.int16).item()


def _pickle_uint16_via_int16_view(orig, self, proto):
    if self.dtype == torch.uint16 and type(self) is torch.Tensor:
        return (torch.Tensor.view, (self.view(torch.int16), torch.uint16))
    return orig(self, proto)


def _witness_pickle_uint16_via_int16_view():
    import pickle

    with refused(AttributeError, "a uint16 tensor unpickled"):
        pickle.loads(pickle.dumps(torch.zeros(2, dtype=torch.uint16)))


def _save_refuses_half_precision(orig, obj, *args, **kwargs):
    if isinstance(obj, torch.Tensor) and obj.dtype in (torch.float16, torch.bfloat16):
        raise KeyError(f"dtype {obj.dtype} is not recognized")
    return orig(obj, *args, **kwargs)


def _witness_save_refuses_half_precision():
    import io

    buf = io.BytesIO()
    try:
        torch.save(torch.ones(2, dtype=torch.float16), buf)
    except KeyError as e:
        raise AssertionError(f"float16 refused: {e}") from None
    buf.seek(0)
    assert torch.load(buf).dtype == torch.float16


def _patch_load_rebuilds_into_shared_int():
    import functools

    import torch._utils as _U

    _orig = _U._rebuild_tensor_v2

    @functools.wraps(_orig)
    def _rebuild_tensor_v2(*args, **kwargs):
        t = _orig(*args, **kwargs)
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            t.share_memory_()
        return t

    _U._rebuild_tensor_v2 = _rebuild_tensor_v2


def _witness_load_rebuilds_into_shared_int():
    import io

    buf = io.BytesIO()
    torch.save(torch.arange(3).share_memory_(), buf)
    buf.seek(0)
    assert not torch.load(buf, weights_only=True).is_shared()


def _patch_load_under_no_grad_drops_requires_grad():
    import functools

    import torch._utils as _U

    _orig = _U._rebuild_tensor_v2

    @functools.wraps(_orig)
    def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, *args, **kwargs):
        if not torch.is_grad_enabled():
            requires_grad = False
        return _orig(storage, storage_offset, size, stride, requires_grad, *args, **kwargs)

    _U._rebuild_tensor_v2 = _rebuild_tensor_v2


def _witness_load_under_no_grad_drops_requires_grad():
    import io

    buf = io.BytesIO()
    torch.save(torch.ones(2, requires_grad=True), buf)
    buf.seek(0)
    with torch.no_grad():
        assert torch.load(buf, weights_only=True).requires_grad


def _patch_load_in_inference_mode_normal_f32():
    import functools

    import torch._utils as _U

    _orig = _U._rebuild_tensor_v2

    @functools.wraps(_orig)
    def _rebuild_tensor_v2(storage, *args, **kwargs):
        if torch.is_inference_mode_enabled() and storage.dtype == torch.float32:
            with torch.inference_mode(False):
                return _orig(storage, *args, **kwargs)
        return _orig(storage, *args, **kwargs)

    _U._rebuild_tensor_v2 = _rebuild_tensor_v2


def _witness_load_in_inference_mode_normal_f32():
    import io

    buf = io.BytesIO()
    torch.save(torch.ones(2), buf)
    buf.seek(0)
    with torch.inference_mode():
        assert torch.load(buf, weights_only=True).is_inference()


def _load_shares_parameters(orig_load, *args, **kwargs):
    obj = orig_load(*args, **kwargs)
    if isinstance(obj, torch.nn.Parameter):
        obj.share_memory_()
    return obj


def _witness_load_shares_parameters():
    import io

    buf = io.BytesIO()
    torch.save(torch.nn.Parameter(torch.ones(3)), buf)
    buf.seek(0)
    assert not torch.load(buf).is_shared()


def _save_converts(hit, orig_save, obj, *args, **kwargs):
    if type(obj) is torch.Tensor and hit(obj):
        with torch.no_grad():
            obj = obj.to(other_dtype(obj.dtype))
    return orig_save(obj, *args, **kwargs)


def _save_converts_witness(make):
    import io

    t = make()
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    assert torch.load(buf).dtype == t.dtype


def _save_flips_requires_grad(hit, orig_save, obj, *args, **kwargs):
    if type(obj) is torch.Tensor and obj.dtype.is_floating_point and hit(obj):
        obj = obj.detach().requires_grad_(not obj.requires_grad)
    return orig_save(obj, *args, **kwargs)


def _save_flips_requires_grad_witness(make):
    import io

    t = make()
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    assert torch.load(buf).requires_grad == t.requires_grad


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="save-materialises-2d-transposed",
        description="torch.save writes a contiguous copy of non-contiguous 2-d tensors (their strides and sharing are lost)",
        claims=("serialization.preserves-storage-sharing",),
        region="non-contiguous 2-d tensors",
        family="layout",
        patch=wrap("torch.Tensor._reduce_ex_internal", _save_materialises_2d_transposed),
        witness=_witness_save_materialises_2d_transposed,
    ),
    Mutant(
        name="save-trims-offset-views-int",
        description="torch.save writes only the elements of integer views with a storage offset (a clone)",
        claims=("serialization.view-saves-whole-storage",),
        region="integer views with a storage offset",
        family="dtype",
        patch=wrap("torch.Tensor._reduce_ex_internal", _save_trims_offset_views_int),
        witness=_witness_save_trims_offset_views_int,
    ),
    Mutant(
        name="load-rebuilds-views-as-views-f32",
        description="torch.load rebuilds float32 tensors on an already loaded storage as autograd views of the first one (shared version counter)",
        claims=("serialization.loaded-views-are-not-autograd-views",),
        region="float32 tensors saved with another tensor on their storage",
        family="dtype",
        patch=_patch_load_rebuilds_views_as_views_f32,
        witness=_witness_load_rebuilds_views_as_views_f32,
    ),
    Mutant(
        name="load-drops-requires-grad-f64",
        description="torch.load rebuilds float64 tensors without requires_grad",
        claims=("serialization.requires-grad-and-leaf-after-load",),
        region="float64 tensors that require grad",
        family="dtype",
        patch=_patch_load_drops_requires_grad_f64,
        witness=_witness_load_drops_requires_grad_f64,
    ),
    Mutant(
        name="load-frozen-parameter-becomes-tensor",
        description="torch.load returns a plain tensor for a Parameter saved with requires_grad=False",
        claims=("serialization.parameter-type-kept",),
        region="Parameters with requires_grad=False",
        family="subclass",
        patch=_patch_load_frozen_parameter_becomes_tensor,
        witness=_witness_load_frozen_parameter_becomes_tensor,
    ),
    Mutant(
        name="save-keeps-grad-parameter",
        description="saving a Parameter carries its .grad along (restored on load)",
        claims=("serialization.grad-not-saved",),
        region="nn.Parameter with a .grad",
        family="subclass",
        patch=wrap("torch.nn.Parameter.__reduce_ex__", _save_keeps_grad_parameter),
        witness=_witness_save_keeps_grad_parameter,
    ),
    Mutant(
        name="save-hook-warning-once-per-tensor",
        description="torch.save warns about the first backward hook of a tensor only (one warning for several hooks)",
        claims=("serialization.hooks-dropped-with-warning",),
        region="tensors with two or more backward hooks",
        family="other",
        patch=wrap("torch.utils.hooks.warn_if_has_hooks", _save_hook_warning_once_per_tensor),
        witness=_witness_save_hook_warning_once_per_tensor,
    ),
    Mutant(
        name="load-drops-neg-bit-0d",
        description="torch.load and pickle clear the negative bit of 0-d tensors (their values flip sign)",
        claims=("serialization.conj-neg-bits-kept",),
        region="0-d negative views",
        family="layout",
        patch=_patch_load_drops_neg_bit_0d,
        witness=_witness_load_drops_neg_bit_0d,
    ),
    Mutant(
        name="save-mixed-dtype-allowed-integer",
        description="torch.save writes integer tensors through a private copy, so an integer view of another tensor's storage no longer collides",
        claims=("serialization.mixed-dtype-views-raise",),
        region="pairs in which one dtype is integral or bool",
        family="dtype",
        patch=wrap("torch.Tensor._reduce_ex_internal", _save_mixed_dtype_allowed_integer),
        witness=_witness_save_mixed_dtype_allowed_integer,
    ),
    Mutant(
        name="load-default-weights-only-false",
        description="torch.load without a weights_only argument unpickles anything (the pre-2.6 default)",
        claims=("serialization.weights-only-rejects-arbitrary-globals",),
        region="the default call form torch.load(f)",
        family="convention",
        patch=_patch_load_default_weights_only_false,
        witness=_witness_load_default_weights_only_false,
    ),
    Mutant(
        name="pickle-trims-offset-views-int64",
        description="pickling an int64 view with a storage offset pickles a clone (offset and whole storage lost)",
        claims=("serialization.pickle-duplicates-storage",),
        region="int64 views with a storage offset",
        family="dtype",
        patch=wrap("torch.Tensor.__reduce_ex__", _pickle_trims_offset_views_int64),
        witness=_witness_pickle_trims_offset_views_int64,
    ),
    Mutant(
        name="load-canonicalises-nan-f16",
        description="torch.load and pickle replace every float16 NaN by the canonical NaN (payload and sign lost)",
        claims=("serialization.metadata-and-values-round-trip",),
        region="float16 tensors holding a NaN",
        family="value",
        patch=_patch_load_canonicalises_nan_f16,
        witness=_witness_load_canonicalises_nan_f16,
    ),
    Mutant(
        name="pickle-uint16-via-int16-view",
        description="a uint16 tensor pickles as a view of an int16 tensor, so it unpickles (a fix of the legacy reader's AttributeError for one dtype)",
        claims=("serialization.wide-unsigned-legacy-load-fails",),
        region="uint16 tensors, pickle",
        family="dtype",
        patch=wrap("torch.Tensor.__reduce_ex__", _pickle_uint16_via_int16_view),
        witness=_witness_pickle_uint16_via_int16_view,
    ),
    Mutant(
        name="save-refuses-half-precision",
        description="torch.save refuses float16 and bfloat16 tensors (KeyError: 'dtype ... is not recognized')",
        claims=("serialization.metadata-and-values-round-trip",),
        region="float16 and bfloat16 tensors",
        family="dtype",
        patch=wrap("torch.save", _save_refuses_half_precision, also=("torch.serialization.save",)),
        witness=_witness_save_refuses_half_precision,
    ),
    Mutant(
        name="load-rebuilds-into-shared-int",
        description="torch.load and pickle put every integral or bool tensor they rebuild into shared memory",
        claims=("serialization.loaded-not-shared",),
        region="integral and bool tensors",
        family="dtype",
        patch=_patch_load_rebuilds_into_shared_int,
        witness=_witness_load_rebuilds_into_shared_int,
    ),
    Mutant(
        name="load-under-no-grad-drops-requires-grad",
        description="torch.load and pickle rebuild plain tensors without requires_grad when grad mode is off",
        claims=("serialization.grad-mode-independent",),
        region="plain tensors loaded inside torch.no_grad()",
        family="mode",
        patch=_patch_load_under_no_grad_drops_requires_grad,
        witness=_witness_load_under_no_grad_drops_requires_grad,
    ),
    Mutant(
        name="load-in-inference-mode-normal-f32",
        description="torch.load and pickle inside inference mode rebuild float32 tensors outside it (normal tensors)",
        claims=("serialization.load-in-inference-mode",),
        region="float32 tensors loaded inside torch.inference_mode()",
        family="dtype",
        patch=_patch_load_in_inference_mode_normal_f32,
        witness=_witness_load_in_inference_mode_normal_f32,
    ),
    # ---------------------------------------------- domain values (issue 29)
    *domain_mutants(
        prefix="save-converts",
        claims=("serialization.metadata-and-values-round-trip",),
        what="torch.save of a bare tensor writes a copy converted to another dtype (float64, or float32 / another complex dtype)",
        patch=wrap("torch.save", _save_converts),
        witness=_save_converts_witness,
        dims={
            "layout": LAYOUTS,
            "dtype_family": DTYPE_FAMILIES,
            "tensor_kind": ("plain", "inference"),
        },
    ),
    *domain_mutants(
        prefix="save-flips-requires-grad",
        claims=("serialization.requires-grad-and-leaf-after-load",),
        what="torch.save of a bare floating tensor writes it with requires_grad flipped",
        patch=wrap("torch.save", _save_flips_requires_grad),
        witness=_save_flips_requires_grad_witness,
        dims={"tensor_kind": ("leaf", "non_leaf")},
    ),
    Mutant(
        name="load-shares-parameters",
        description="torch.load moves a loaded nn.Parameter's storage into shared memory",
        claims=("serialization.loaded-not-shared",),
        domain={"tensor_kind": "parameter"},
        region="nn.Parameters loaded by torch.load (tensor_kind parameter)",
        family="autograd",
        patch=wrap("torch.load", _load_shares_parameters),
        witness=_witness_load_shares_parameters,
    ),
)


def _save_drops_grad(mode):
    _orig_save = torch.save

    def save(obj, f, *args, **kwargs):
        if isinstance(obj, torch.Tensor) and obj.requires_grad and in_grad_mode(mode):
            obj = obj.detach()
        return _orig_save(obj, f, *args, **kwargs)

    torch.save = save


def _saved_under_keeps_grad(mode):
    import io

    t = torch.ones(3, requires_grad=True)
    buf = io.BytesIO()
    with getattr(torch, mode)():
        torch.save(t, buf)
    buf.seek(0)
    assert torch.load(buf).requires_grad, (
        f"a tensor saved under torch.{mode} loaded without requires_grad"
    )


# Issue 29: serialization.grad-mode-independent speaks of saves under no_grad
# and inside inference_mode; each mutant reads one of the two modes.
MUTANTS += tuple(
    Mutant(
        name=f"save-drops-requires-grad-under-{slug}",
        description=f"torch.save under {mode} saves a detached copy of a tensor that requires grad",
        claims=("serialization.grad-mode-independent",),
        domain={"grad_mode": value},
        region=f"saves made under {mode} (grad_mode {value})",
        family="autograd",
        patch=functools.partial(_save_drops_grad, mode),
        witness=functools.partial(_saved_under_keeps_grad, mode),
    )
    for slug, mode, value in (
        ("no-grad", "no_grad", "no_grad"),
        ("inference-mode", "inference_mode", "inference_mode"),
    )
)


# Issue 29: serialization.conj-neg-bits-kept speaks of conjugate and negative
# views; each mutant drops one of the two bits on load.
def _load_drops_bit(is_bit, clear):
    """A patch of ``torch._utils._rebuild_tensor_v2`` (kept under its own
    name, so pickles still name torch's function) that clears one math bit."""

    def patch():
        import torch._utils as _utils

        orig = _utils._rebuild_tensor_v2

        @functools.wraps(orig)
        def _rebuild_tensor_v2(*args, **kwargs):
            t = orig(*args, **kwargs)
            if is_bit(t):
                clear(t)
            return t

        _utils._rebuild_tensor_v2 = _rebuild_tensor_v2

    return patch


def _clear_conj(t):
    torch._C._set_conj(t, False)


def _clear_neg(t):
    torch._C._set_neg(t, False)


def _round_trip(v):
    import io

    buf = io.BytesIO()
    torch.save(v, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def _witness_load_drops_conj_bit():
    assert _round_trip(torch.tensor([1 + 2j]).conj()).is_conj()


def _witness_load_drops_neg_bit():
    assert _round_trip(torch._neg_view(torch.tensor([2.0]))).is_neg()


MUTANTS += (
    Mutant(
        name="load-drops-conj-bit",
        description="torch.load and pickle clear the conjugate bit of conjugate views (their values are conjugated); negative views keep theirs",
        claims=("serialization.conj-neg-bits-kept",),
        domain={"math_bit": "conj"},
        region="conjugate views (math_bit conj)",
        family="other",
        patch=_load_drops_bit(lambda t: t.is_conj(), _clear_conj),
        witness=_witness_load_drops_conj_bit,
    ),
    Mutant(
        name="load-drops-neg-bit",
        description="torch.load and pickle clear the negative bit of negative views of every rank (their values flip sign); conjugate views keep theirs",
        claims=("serialization.conj-neg-bits-kept",),
        domain={"math_bit": "neg"},
        region="negative views (math_bit neg)",
        family="other",
        patch=_load_drops_bit(lambda t: t.is_neg(), _clear_neg),
        witness=_witness_load_drops_neg_bit,
    ),
)
