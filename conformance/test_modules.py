"""Copy semantics of ``nn.Module``: state dicts, ``load_state_dict``, conversions,
``copy.deepcopy``, optimizer state dicts and mmap checkpoints (claims in
``claims/modules.toml``).

Modules are tiny - ``nn.Linear``, ``Linear + BatchNorm1d`` (buffers, an integer one),
and two Linears tying one weight Parameter and one buffer - drawn as a
:class:`ModuleSpec` (kind, sizes, bias, dtype, seed). They are built on the meta device
and materialized with deterministic values (no global RNG is consumed, no API under
test is used to build them). Values are compared bit for bit; references come from
``Tensor.to`` (the documented cast) or raw bytes (:func:`~conformance.checks.element_bytes`)
taken before the call under test. Every ``torch.__future__`` flag a test sets is restored
in a ``finally``. What each property kills (the broken torch it would catch) is in its
docstring.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st
from torch import nn

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    element_bytes,
    raises_with,
    same_bits,
    shares_storage,
    shares_version_counter,
)
from strategies.domains import tensor_kind_of
from strategies.dtypes import dtype_family

# The tests read values through ``.detach()`` (``_bytes``, the comparisons), build the
# expected converted values with ``.to(dtype)`` and train with ``backward()``;
# state_dict() itself is built with detach: a broken detach, to or backward is the
# cause of these claims' failures, not a finding of their own.
pytestmark = pytest.mark.observes("detach", "to", "backward")

#: The floating dtypes the modules are drawn in (names, as ModuleSpec holds them).
DTYPES = ("float32", "float64", "float16", "bfloat16")
KINDS = ("linear", "mlp-bn", "tied")
OPTIMIZERS = ("sgd-momentum", "adam", "adamw")
#: The conversion calls, and the dtype the named ones convert to.
CONVERSIONS = ("to-dtype", "to-device-dtype", "to-tensor", "half", "bfloat16", "float", "double")
NAMED_TARGET = {"half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64"}
OWN_DTYPE_METHOD = {v: k for k, v in NAMED_TARGET.items()}


class _Tied(nn.Module):
    """Two Linears holding one weight Parameter, and one buffer registered on both."""

    def __init__(self, in_features, out_features, bias, dtype, device):
        super().__init__()
        self.a = nn.Linear(in_features, out_features, bias=bias, dtype=dtype, device=device)
        self.b = nn.Linear(in_features, out_features, bias=bias, dtype=dtype, device=device)
        self.b.weight = self.a.weight
        scale = torch.ones(out_features, dtype=dtype, device=device)
        self.a.register_buffer("scale", scale)
        self.b.register_buffer("scale", scale)

    def forward(self, x):
        return self.a(x) * self.a.scale + self.b(x)


def _values(shape, dtype, device, seed: int, k: int, positive: bool = False) -> torch.Tensor:
    """Deterministic values of ``shape``: a sine of a seeded ramp (-0.0 first when
    ``seed % 3 == 0``), cast to ``dtype``."""
    n = int(np.prod(shape)) if len(shape) else 1
    x = torch.arange(n, dtype=torch.float64).mul_(0.618 + 0.1 * k).add_(seed).sin_().mul_(1.5)
    if positive:
        x = x.abs_().add_(0.5)
    elif seed % 3 == 0:
        x[0] = -0.0
    return x.reshape(shape).to(dtype=dtype, device=device)


@dataclass(frozen=True)
class ModuleSpec:
    """A small module: ``linear`` (nn.Linear), ``mlp-bn`` (Linear + BatchNorm1d) or
    ``tied`` (:class:`_Tied`), with deterministic values from ``seed``."""

    kind: str
    in_features: int
    out_features: int
    bias: bool
    dtype: str
    seed: int

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)

    def build(self, device="cpu", dtype: str | None = None, seed: int | None = None):
        dt = getattr(torch, dtype or self.dtype)
        seed = self.seed if seed is None else seed
        i, o, b = self.in_features, self.out_features, self.bias
        if self.kind == "linear":
            m = nn.Linear(i, o, bias=b, device="meta", dtype=dt)
        elif self.kind == "mlp-bn":
            m = nn.Sequential(
                nn.Linear(i, o, bias=b, device="meta", dtype=dt),
                nn.BatchNorm1d(o, device="meta", dtype=dt),
            )
        else:
            m = _Tied(i, o, b, dt, "meta")
        memo: dict[int, torch.Tensor] = {}
        k = 0
        for mod in m.modules():
            for name, p in list(mod._parameters.items()):
                if p is not None:
                    if id(p) not in memo:
                        memo[id(p)] = nn.Parameter(_values(p.shape, dt, device, seed, k))
                        k += 1
                    mod._parameters[name] = memo[id(p)]
            for name, buf in list(mod._buffers.items()):
                if buf is not None:
                    if id(buf) not in memo:
                        if buf.is_floating_point():
                            memo[id(buf)] = _values(
                                buf.shape, dt, device, seed, k, positive=name == "running_var"
                            )
                        else:
                            memo[id(buf)] = torch.full(buf.shape, seed % 7, dtype=buf.dtype,
                                                       device=device)  # fmt: skip
                        k += 1
                    mod._buffers[name] = memo[id(buf)]
        return m

    def input(self, device="cpu", dtype: str | None = None) -> torch.Tensor:
        """A (3, in_features) input. Declares the example not applicable where the
        installed torch has no forward kernel for the dtype (float16 ``addmm`` on the
        CPU before 2.2): a missing kernel is not a verdict on the module claims."""
        dt = getattr(torch, dtype or self.dtype)
        cap.require_kernel("addmm", dt, str(device))
        if self.kind == "mlp-bn":
            cap.require_kernel("batch_norm", dt, str(device))
        return _values((3, self.in_features), getattr(torch, dtype or self.dtype), device,
                       self.seed, 99)  # fmt: skip


def module_specs(kind=None, dtype=None):
    return st.builds(
        ModuleSpec,
        kind=st.sampled_from(KINDS) if kind is None else st.just(kind),
        in_features=st.integers(1, 4),
        out_features=st.integers(1, 4),
        bias=st.booleans(),
        dtype=st.sampled_from(DTYPES) if dtype is None else st.just(dtype),
        seed=st.integers(0, 999),
    )


def _spec_examples(kinds=KINDS, dtypes=DTYPES, **fixed):
    """One explicit example per kind and per dtype (explicit examples run in every profile)."""
    specs = [ModuleSpec(k, 3, 2, True, "float32", 3) for k in kinds]
    specs += [ModuleSpec(kinds[-1], 2, 3, False, d, 4) for d in dtypes if d != "float32"]

    def decorate(fn):
        for s in specs:
            fn = example(spec=s, **fixed)(fn)
        return fn

    return decorate


def _module_features(spec: ModuleSpec) -> None:
    """Report the module's dtype family and the kinds of tensor it holds
    (issue 29: ``dtype_family``, ``tensor_kind``): every module has
    Parameters; ``mlp-bn`` (running statistics) and ``tied`` (a shared
    buffer) also have buffers."""
    kinds = {"parameter"} if spec.kind == "linear" else {"parameter", "buffer"}
    evidence.features(dtype_family=dtype_family(spec.torch_dtype), tensor_kind=frozenset(kinds))


def _resolve(m: nn.Module, key: str):
    """The object at state-dict key ``key`` (attribute path), found without state_dict()."""
    return functools.reduce(getattr, key.split("."), m)


def _keys(m: nn.Module) -> tuple[list[str], list[str]]:
    """(parameter keys, persistent buffer keys), tied objects under each of their names."""
    params = [n for n, _ in m.named_parameters(remove_duplicate=False)]
    bufs = [n for n, _ in m.named_buffers(remove_duplicate=False)]
    return params, bufs


def _meta(t: torch.Tensor) -> tuple:
    return (t.dtype, t.device, tuple(t.shape), t.stride(), t.storage_offset())


def _bytes(t: torch.Tensor) -> np.ndarray:
    return element_bytes(t.detach()).copy()


def _optimizer(kind: str, params, lr: float = 0.25):
    if kind == "sgd-momentum":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr)
    return torch.optim.AdamW(params, lr=lr)


def _train_step(m: nn.Module, opt, x: torch.Tensor) -> None:
    """One training iteration: forward (BatchNorm running statistics updated in train
    mode), backward, optimizer step."""
    opt.zero_grad(set_to_none=True)
    (m(x).float() - 1).square().sum().backward()
    opt.step()


def _convert(m: nn.Module, method: str, target: str, device):
    dt = getattr(torch, target)
    if method == "to-dtype":
        return m.to(dt)
    if method == "to-device-dtype":
        return m.to(device, dt)
    if method == "to-tensor":
        return m.to(torch.empty(0, dtype=dt, device=device))
    return getattr(m, method)()


def _target_device(method: str, device, before):
    return torch.device(device) if method in ("to-device-dtype", "to-tensor") else before


@functools.cache
def _has_swap() -> bool:
    return cap.has_api(torch.utils, "swap_tensors") and cap.has_api(
        torch.__future__, "set_swap_module_params_on_conversion"
    )


def _require_swap() -> None:
    cap.require(
        _has_swap(),
        "torch.utils.swap_tensors / torch.__future__.set_swap_module_params_on_conversion "
        "(torch 2.3)",
    )


def _require_assign() -> None:
    cap.require(
        cap.has_kwarg(nn.Module.load_state_dict, "assign"),
        "Module.load_state_dict(assign=...) (torch 2.1)",
    )


def _require_assign_keeps_requires_grad() -> None:
    """The requires_grad half of assign=True is documented (and done) from 2.4 as far as
    the release runs measured (capabilities.RELEASE_FEATURES)."""
    _require_assign()
    cap.require(
        cap.release_has("load-assign-keeps-requires-grad"),
        "load_state_dict(assign=True) keeping requires_grad (documented by torch 2.4)",
    )


def _require_mmap() -> None:
    cap.require(cap.has_kwarg(torch.load, "mmap"), "torch.load(mmap=...) (torch 2.1)")


def _set_swap(value: bool) -> None:
    torch.__future__.set_swap_module_params_on_conversion(value)


def _set_overwrite(value: bool) -> None:
    torch.__future__.set_overwrite_module_params_on_conversion(value)


def _give_grads(m: nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """Set a deterministic .grad on every parameter; returns {key: grad object}."""
    grads = {}
    for k, p in m.named_parameters(remove_duplicate=False):
        if p.grad is None:
            p.grad = _values(p.shape, p.dtype, p.device, seed + 1, 7)
        grads[k] = p.grad
    return grads


# ================================================================ state_dict


@pytest.mark.claim("modules.state-dict-detached-aliases")
@_spec_examples(training=True)
@given(spec=module_specs(), training=st.booleans())
def test_state_dict_entries_are_detached_aliases(device, spec, training):
    """Every ``state_dict()`` entry is a plain Tensor (not the Parameter or buffer object),
    with requires_grad False and no grad_fn, sharing its source's storage with its dtype,
    shape, strides and storage offset.

    Kills: a state_dict that copies (for one dtype, or in one mode), that hands out the
    Parameter objects themselves, or entries still requiring grad."""
    _module_features(spec)
    m = spec.build(device).train(training)
    sd = m.state_dict()
    params, bufs = _keys(m)
    assert set(sd) == set(params) | set(bufs), f"state_dict keys {sorted(sd)}"
    for k, v in sd.items():
        src = _resolve(m, k)
        assert type(v) is torch.Tensor and v is not src, (
            f"state_dict()[{k!r}] is {'the source object' if v is src else type(v).__name__}, "
            "not a detached Tensor"
        )
        assert not v.requires_grad and v.grad_fn is None, (
            f"state_dict()[{k!r}] is not detached (requires_grad={v.requires_grad})"
        )
        assert shares_storage(v, src), f"state_dict()[{k!r}] does not share storage with its source"
        assert _meta(v) == _meta(src), f"state_dict()[{k!r}] has {_meta(v)}, source {_meta(src)}"


UPDATE_ROUTES = ("optimizer-step", "data-add", "no-grad-add", "bn-forward", "buffer-mul")


@pytest.mark.claim("modules.state-dict-sees-in-place-updates")
@_spec_examples(route="optimizer-step", opt_kind="adam")
@example(
    spec=ModuleSpec("mlp-bn", 2, 3, True, "bfloat16", 5),
    route="bn-forward",
    opt_kind="sgd-momentum",
)
@example(spec=ModuleSpec("tied", 2, 3, True, "float64", 5), route="buffer-mul", opt_kind="adamw")
@given(
    spec=module_specs(),
    route=st.sampled_from(UPDATE_ROUTES),
    opt_kind=st.sampled_from(OPTIMIZERS),
)
def test_state_dict_sees_in_place_updates(device, spec, route, opt_kind):
    """A state_dict taken before an in-place update of the module (optimizer step,
    ``p.data.add_``, ``p.add_`` under no_grad, BatchNorm running statistics, a buffer's
    ``mul_``) holds the updated values afterwards, bit for bit.

    Kills: a state_dict whose entries are snapshots for some dtype or for buffers (the
    tutorial's pitfall would silently not happen, and code relying on the reference,
    e.g. EMA via state_dict, would freeze)."""
    # issue 29: the kinds of tensor the update writes (a training step in train mode
    # also updates BatchNorm's running statistics, which are buffers)
    kinds = {"buffer"} if route in ("bn-forward", "buffer-mul") else {"parameter"}
    if route == "optimizer-step" and spec.kind == "mlp-bn":
        kinds.add("buffer")
    evidence.features(dtype_family=dtype_family(spec.torch_dtype), tensor_kind=frozenset(kinds))
    m = spec.build(device)
    if route == "bn-forward":
        assume(spec.kind == "mlp-bn")
    if route == "buffer-mul":
        assume(spec.kind != "linear")
    sd = m.state_dict()
    before = {k: _bytes(v) for k, v in sd.items()}
    if route == "optimizer-step":
        _train_step(m, _optimizer(opt_kind, m.parameters()), spec.input(device))
    elif route == "data-add":
        for p in m.parameters():
            p.data.add_(0.5)
    elif route == "no-grad-add":
        with torch.no_grad():
            for p in m.parameters():
                p.add_(0.5)
    elif route == "bn-forward":
        with torch.no_grad():
            m.train()(spec.input(device))
    else:
        with torch.no_grad():
            for b in m.buffers():
                if b.is_floating_point():
                    b.mul_(1.5).add_(0.25)
    for k, v in sd.items():
        assert_same_bits(v, _resolve(m, k).detach(),
                         f"state_dict()[{k!r}] taken before the {route} holds the module's values")  # fmt: skip
    # an update that changed nothing checks nothing: not an example of the claim
    assume(any(not np.array_equal(_bytes(v), before[k]) for k, v in sd.items()))


@pytest.mark.claim("modules.state-dict-shares-version-counter")
@_spec_examples(direction="through-source")
@given(spec=module_specs(), direction=st.sampled_from(["through-source", "through-entry"]))
def test_state_dict_entries_share_version_counter(device, spec, direction):
    """Each state_dict entry shares its source's version counter: an in-place write
    through the Parameter/buffer advances the entry's ``_version`` and vice versa.

    Kills: a state_dict built from ``.data`` (same storage, own version counter), which
    hides writes through the state dict from autograd's saved-tensor check."""
    _module_features(spec)
    m = spec.build(device)
    sd = m.state_dict()
    for k, v in sd.items():
        src = _resolve(m, k)
        a, b = (src, v) if direction == "through-source" else (v, src)
        before = b._version
        with torch.no_grad():
            a.mul_(1)
        assert b._version > before, (
            f"a write {direction.replace('-', ' ')} did not advance the other's version: "
            f"state_dict()[{k!r}] does not share the version counter"
        )
        assert shares_version_counter(a, b), f"state_dict()[{k!r}] has its own version counter"


@pytest.mark.claim("modules.state-dict-tied-names-alias")
@_spec_examples(kinds=("tied",), through="a")  # issue 29: every dtype of the tied module
@given(spec=module_specs(kind="tied"), through=st.sampled_from(["a", "b"]))
def test_state_dict_lists_tied_objects_under_both_names(device, spec, through):
    """A module with a tied weight and a tied buffer lists each under both names; the
    two entries share one storage (a write through one is seen in the other and in the
    Parameter); with keep_vars=True both entries are that very object.

    Kills: a state_dict that deduplicates tied names (drops one) or copies the second
    occurrence (unties them in every checkpoint)."""
    _module_features(spec)
    m = spec.build(device)
    sd = m.state_dict()
    other = "b" if through == "a" else "a"
    for name in ("weight", "scale"):
        ka, kb = f"{through}.{name}", f"{other}.{name}"
        assert ka in sd and kb in sd, f"state_dict() lacks {ka!r} or {kb!r}: {sorted(sd)}"
        assert shares_storage(sd[ka], sd[kb]), f"state_dict()[{ka!r}] and [{kb!r}] do not alias"
        value = 3.25
        with torch.no_grad():
            sd[ka].fill_(value)
        want = torch.full_like(sd[kb], value)
        assert same_bits(sd[kb], want), (
            f"a write through state_dict()[{ka!r}] is not seen in {kb!r}"
        )
        assert same_bits(_resolve(m, kb).detach(), want), (
            f"a write through state_dict()[{ka!r}] is not seen in the module's {kb}"
        )
    sdk = m.state_dict(keep_vars=True)
    assert sdk["a.weight"] is sdk["b.weight"] is m.a.weight, "keep_vars=True untied the weight"
    assert sdk["a.scale"] is sdk["b.scale"] is m.a.scale, "keep_vars=True untied the buffer"


@pytest.mark.claim("modules.state-dict-keep-vars-identity")
@_spec_examples(frozen=0)
@given(spec=module_specs(), frozen=st.integers(0, 7))
def test_state_dict_keep_vars_holds_the_objects(device, spec, frozen):
    """``state_dict(keep_vars=True)`` holds the Parameter and buffer objects themselves,
    Parameters with their requires_grad.

    Kills: a keep_vars that still detaches (buffers or parameters) or drops requires_grad."""
    _module_features(spec)
    m = spec.build(device)
    for i, p in enumerate(m.parameters()):
        p.requires_grad_(not (frozen >> i) & 1)
    sd = m.state_dict(keep_vars=True)
    for k, v in sd.items():
        src = _resolve(m, k)
        assert v is src, f"state_dict(keep_vars=True)[{k!r}] is not the module's object"
        assert v.requires_grad == src.requires_grad, f"keep_vars changed requires_grad of {k!r}"


@pytest.mark.claim("modules.best-state-reference-pitfall")
@_spec_examples(opt_kind="sgd-momentum", steps=1)
@given(spec=module_specs(), opt_kind=st.sampled_from(OPTIMIZERS), steps=st.integers(1, 3))
def test_best_state_dict_keeps_getting_updated(device, spec, opt_kind, steps):
    """The tutorial's pitfall: ``best = model.state_dict()`` followed by training leaves
    ``best`` holding the model's current values (all entries equal the model's, at least
    one changed since ``best`` was taken).

    Kills: a state_dict that snapshots (the documented reference semantics gone, for one
    optimizer kind, dtype or buffer)."""
    _module_features(spec)
    m = spec.build(device).train()
    opt = _optimizer(opt_kind, m.parameters())
    x = spec.input(device)
    best = m.state_dict()
    then = {k: _bytes(v) for k, v in best.items()}
    for _ in range(steps):
        _train_step(m, opt, x)
    for k, v in best.items():
        assert_same_bits(v, _resolve(m, k).detach(),
                         f"best = model.state_dict() did not follow training: {k!r}")  # fmt: skip
    # training that changed nothing checks nothing: not an example of the claim
    assume(any(not np.array_equal(_bytes(v), then[k]) for k, v in best.items()))


@pytest.mark.claim("modules.best-state-deepcopy-snapshot")
@_spec_examples(how="deepcopy", opt_kind="adam")
@given(
    spec=module_specs(),
    how=st.sampled_from(["deepcopy", "clone-dict"]),
    opt_kind=st.sampled_from(OPTIMIZERS),
)
def test_best_state_deepcopy_is_a_snapshot(device, spec, how, opt_kind):
    """``copy.deepcopy(model.state_dict())`` (or cloning every entry) shares no storage
    with the model and keeps the values of the moment through further training;
    ``load_state_dict`` of it restores them exactly.

    Kills: a deepcopy of state-dict tensors that aliases (for one dtype), or a
    load_state_dict that does not restore a snapshot bit for bit."""
    _module_features(spec)
    m = spec.build(device).train()
    opt = _optimizer(opt_kind, m.parameters())
    x = spec.input(device)
    sd = m.state_dict()
    best = copy.deepcopy(sd) if how == "deepcopy" else {k: v.clone() for k, v in sd.items()}
    then = {k: _bytes(v) for k, v in sd.items()}
    for k, v in best.items():
        assert not shares_storage(v, _resolve(m, k)), (
            f"the {how} snapshot of {k!r} aliases the model"
        )
    for _ in range(2):
        _train_step(m, opt, x)
    for k, v in best.items():
        assert np.array_equal(_bytes(v), then[k]), (
            f"the {how} snapshot of {k!r} changed with training"
        )
    m.load_state_dict(best)
    for k in best:
        assert np.array_equal(_bytes(_resolve(m, k)), then[k]), (
            f"load_state_dict of the {how} snapshot did not restore {k!r}"
        )


# =========================================================== load_state_dict


@pytest.mark.claim("modules.load-copies-into-existing-tensors")
@_spec_examples(sd_dtype="float64", frozen=1)
@given(spec=module_specs(), sd_dtype=st.sampled_from(DTYPES), frozen=st.integers(0, 7))
def test_load_state_dict_copies_into_existing_tensors(device, spec, sd_dtype, frozen):
    """``load_state_dict(sd)`` keeps every Parameter/buffer object with its storage and
    metadata and writes sd's values into it, cast as ``Tensor.to`` casts them, bit for
    bit; requires_grad is kept, an earlier state_dict sees the loaded values, and an
    optimizer made before still holds the module's Parameters.

    Kills: a load_state_dict that replaces Parameters or buffers (an optimizer would
    silently train dead tensors), that adopts sd's dtype, or casts differently."""
    _module_features(spec)
    m = spec.build(device)
    for i, p in enumerate(m.parameters()):
        p.requires_grad_(not (frozen >> i) & 1)
    sd = spec.build(device, dtype=sd_dtype, seed=spec.seed + 500).state_dict()
    params, bufs = _keys(m)
    objs = {k: _resolve(m, k) for k in params + bufs}
    metas = {k: _meta(o) for k, o in objs.items()}
    ptrs = {k: o.untyped_storage().data_ptr() for k, o in objs.items()}
    grads = {k: o.requires_grad for k, o in objs.items()}
    earlier = m.state_dict()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m.load_state_dict(sd)
    for k, old in objs.items():
        obj = _resolve(m, k)
        assert obj is old, f"load_state_dict replaced the module's {k!r} object"
        assert _meta(obj) == metas[k], f"load_state_dict changed {k!r}: {metas[k]} -> {_meta(obj)}"
        assert obj.untyped_storage().data_ptr() == ptrs[k], f"load_state_dict moved {k!r}"
        assert obj.requires_grad == grads[k], f"load_state_dict changed requires_grad of {k!r}"
        want = sd[k].to(obj.dtype)
        assert_same_bits(obj.detach(), want, f"load_state_dict wrote sd[{k!r}] cast to {obj.dtype}")
        assert_same_bits(earlier[k], want, f"a state_dict taken before does not see {k!r} loaded")
    held = [p for g in opt.param_groups for p in g["params"]]
    assert all(a is b for a, b in zip(held, m.parameters(), strict=True)), (
        "the optimizer no longer holds the module's Parameters after load_state_dict"
    )


@pytest.mark.claim("modules.load-does-not-alias-source")
@_spec_examples(same_dtype=True, other="float32", direction="into-sd")
@given(
    spec=module_specs(),
    same_dtype=st.booleans(),
    other=st.sampled_from(DTYPES),
    direction=st.sampled_from(["into-sd", "into-module"]),
)
def test_load_state_dict_does_not_alias_its_source(device, spec, same_dtype, other, direction):
    """After ``load_state_dict(sd)`` no tensor of the module shares storage with sd,
    whatever the dtypes; writes into either side are not seen in the other.

    Kills: a load_state_dict that adopts sd's tensors when no cast is needed (a later
    change of the checkpoint dict would change the model)."""
    _module_features(spec)
    sd_dtype = spec.dtype if same_dtype else other
    m = spec.build(device)
    sd = spec.build(device, dtype=sd_dtype, seed=spec.seed + 500).state_dict()
    m.load_state_dict(sd)
    for k, v in sd.items():
        obj = _resolve(m, k)
        assert not shares_storage(obj, v), f"after load_state_dict the module's {k!r} aliases sd"
        src, dst = (v, obj) if direction == "into-sd" else (obj, v)
        before = _bytes(dst)
        with torch.no_grad():
            src.fill_(5)
        assert np.array_equal(_bytes(dst), before), (
            f"a write {direction} of {k!r} is seen on the other side after load_state_dict"
        )


@pytest.mark.claim("modules.load-bumps-version-counter")
@_spec_examples()
@given(spec=module_specs())
def test_load_state_dict_bumps_versions_and_breaks_pending_backward(device, spec):
    """``load_state_dict`` advances every loaded tensor's version counter, so backward
    through a graph that saved a weight before the load raises 'modified by an inplace
    operation'.

    Kills: a load that writes through ``.data`` (untracked): backward would mix the new
    weights into gradients of the old forward without a word."""
    _module_features(spec)
    m = spec.build(device).eval()
    x = spec.input(device).requires_grad_()
    y = m(x).float().sum()  # the Linear saves its weight for x's gradient
    sd = spec.build(device, seed=spec.seed + 500).state_dict()
    params, bufs = _keys(m)
    before = {k: _resolve(m, k)._version for k in params + bufs}
    m.load_state_dict(sd)
    for k, v in before.items():
        assert _resolve(m, k)._version > v, f"load_state_dict did not advance {k!r}'s version"
    with raises_with(RuntimeError, "modified by an inplace operation"):
        y.backward()


@pytest.mark.claim("modules.load-assign-holds-state-dict-tensors")
@_spec_examples(sd_dtype="float64")
@given(spec=module_specs(), sd_dtype=st.sampled_from(DTYPES))
def test_load_assign_holds_the_state_dict_tensors(device, spec, sd_dtype):
    """``load_state_dict(sd, assign=True)``: each parameter is an nn.Parameter sharing
    sd's storage with sd's dtype and metadata, each buffer is sd's tensor itself, a later
    write into sd is seen in the module, and the old Parameter objects are gone.

    Kills: an assign that copies (for buffers, or for one dtype), or that casts to the
    module's dtype."""
    _module_features(spec)
    _require_assign()
    m = spec.build(device)
    sd = spec.build(device, dtype=sd_dtype, seed=spec.seed + 500).state_dict()
    params, bufs = _keys(m)
    old = {k: _resolve(m, k) for k in params}
    m.load_state_dict(sd, assign=True)
    for k, v in sd.items():
        obj = _resolve(m, k)
        if k in old:
            assert isinstance(obj, nn.Parameter), f"assign=True left {k!r} a {type(obj).__name__}"
            assert obj is not old[k], f"assign=True kept the old Parameter object {k!r}"
            assert shares_storage(obj, v), f"assign=True: {k!r} does not share sd's storage"
            assert _meta(obj) == _meta(v), f"assign=True: {k!r} has {_meta(obj)}, sd {_meta(v)}"
        else:
            assert obj is v, f"assign=True: buffer {k!r} is not sd's tensor"
    for k, v in sd.items():
        with torch.no_grad():
            v.fill_(2.5)
        assert same_bits(_resolve(m, k).detach(), v), f"a write into sd[{k!r}] is not seen"


@pytest.mark.claim("modules.load-assign-keeps-module-requires-grad")
@_spec_examples(entries="tensor", frozen=1, donor_frozen=0)
# sd's entries of every kind (issue 29: tensor_kind): nn.Parameters too.
@example(spec=ModuleSpec("linear", 3, 2, True, "float32", 3), entries="parameter", frozen=0,
         donor_frozen=7)  # fmt: skip
@given(
    spec=module_specs(),
    entries=st.sampled_from(["tensor", "parameter"]),
    frozen=st.integers(0, 7),
    donor_frozen=st.integers(0, 7),
)
def test_load_assign_keeps_module_requires_grad(device, spec, entries, frozen, donor_frozen):
    """After ``load_state_dict(sd, assign=True)`` each parameter requires grad exactly
    when the module's did before, whether sd holds plain tensors (requires_grad False) or
    Parameters requiring grad or not.

    Kills: an assign that takes requires_grad from sd (every loaded model frozen), for
    plain tensors or for Parameters."""
    evidence.features(tensor_kind="plain" if entries == "tensor" else "parameter")
    _require_assign_keeps_requires_grad()
    m = spec.build(device)
    for i, p in enumerate(m.parameters()):
        p.requires_grad_(not (frozen >> i) & 1)
    donor = spec.build(device, seed=spec.seed + 500)
    for i, p in enumerate(donor.parameters()):
        p.requires_grad_(not (donor_frozen >> i) & 1)
    sd = donor.state_dict(keep_vars=entries == "parameter")
    params, _ = _keys(m)
    want = {k: _resolve(m, k).requires_grad for k in params}
    m.load_state_dict(sd, assign=True)
    for k, rg in want.items():
        got = _resolve(m, k).requires_grad
        assert got == rg, f"assign=True gave {k!r} requires_grad={got}, the module had {rg}"


@pytest.mark.claim("modules.load-assign-adopts-parameter-objects")
@_spec_examples(entries="parameter", frozen=1)
@given(
    spec=module_specs(), entries=st.sampled_from(["tensor", "parameter"]), frozen=st.integers(0, 7)
)
def test_load_assign_adopts_parameter_objects(device, spec, entries, frozen):
    """With sd's entries Parameters (``state_dict(keep_vars=True)``), ``assign=True``
    installs those very objects and sets their requires_grad to the module's; plain
    tensors are wrapped in new Parameters over their storage.

    Kills: an assign that re-wraps Parameters (no longer the donor's objects) or leaves
    the donor's requires_grad on them."""
    _module_features(spec)
    _require_assign_keeps_requires_grad()
    m = spec.build(device)
    for i, p in enumerate(m.parameters()):
        p.requires_grad_(not (frozen >> i) & 1)
    sd = spec.build(device, seed=spec.seed + 500).state_dict(keep_vars=entries == "parameter")
    params, _ = _keys(m)
    want = {k: _resolve(m, k).requires_grad for k in params}
    m.load_state_dict(sd, assign=True)
    for k, rg in want.items():
        obj = _resolve(m, k)
        if entries == "parameter":
            assert obj is sd[k], f"assign=True did not install sd's Parameter {k!r} itself"
            assert sd[k].requires_grad == rg, f"assign=True left the donor's requires_grad on {k!r}"
        else:
            assert isinstance(obj, nn.Parameter) and obj is not sd[k], (
                f"assign=True: {k!r} is not a new Parameter over sd's tensor"
            )
            assert shares_storage(obj, sd[k]), f"assign=True: {k!r} does not alias sd's tensor"


@pytest.mark.claim("modules.load-assign-optimizer-must-be-recreated")
@_spec_examples(swap=False, sd_dtype="float32")
@example(spec=ModuleSpec("linear", 3, 2, True, "float32", 2), swap=True, sd_dtype="float64")
@given(spec=module_specs(), swap=st.booleans(), sd_dtype=st.sampled_from(DTYPES))
def test_load_assign_strands_an_earlier_optimizer(device, spec, swap, sd_dtype):
    """An optimizer created before ``load_state_dict(sd, assign=True)`` holds the old
    Parameters: its step leaves the module's parameters unchanged; with the swap flag on
    the Parameter objects are kept and the same step updates the module.

    Kills: an assign that keeps the Parameter objects without the swap flag (the
    documented warning would be moot), or a swap-flag load that replaces them."""
    _require_assign()
    if swap:
        _require_swap()
    m = spec.build(device)
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    sd = spec.build(device, dtype=sd_dtype, seed=spec.seed + 500).state_dict()
    prev = torch.__future__.get_swap_module_params_on_conversion() if _has_swap() else False
    try:
        if swap:
            _set_swap(True)
        m.load_state_dict(sd, assign=True)
    finally:
        if swap:
            _set_swap(prev)
    params = list(m.parameters())
    before = [_bytes(p) for p in params]
    for p in params:
        p.grad = torch.ones_like(p)
    opt.step()
    held = {id(p) for g in opt.param_groups for p in g["params"]}
    for i, p in enumerate(params):
        changed = not np.array_equal(_bytes(p), before[i])
        if swap:
            assert id(p) in held and changed, (
                "with the swap flag an optimizer created before load_state_dict(assign=True) "
                "no longer updates the module"
            )
        else:
            assert id(p) not in held and not changed, (
                "an optimizer created before load_state_dict(assign=True) still updates the module"
            )


# =============================================================== conversions


def _conversion_case(spec, method, target):
    """The dtype a conversion produces (named methods fix it)."""
    return NAMED_TARGET.get(method, target)


@pytest.mark.claim("modules.to-keeps-parameter-identity")
@_spec_examples(method="half", target="float16")
@example(
    spec=ModuleSpec("tied", 2, 3, True, "bfloat16", 1), method="to-device-dtype", target="float64"
)
@given(spec=module_specs(), method=st.sampled_from(CONVERSIONS), target=st.sampled_from(DTYPES))
def test_conversion_keeps_parameter_objects(device, spec, method, target):
    """``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``, ``half()``, ``bfloat16()``,
    ``float()``, ``double()`` return the module and keep every Parameter object (a leaf
    Parameter with its requires_grad), now of the target dtype/device holding the cast
    values bit for bit; an optimizer created before holds the module's Parameters.

    Kills: a conversion that makes new Parameter objects by default (an optimizer built
    before ``model.half()`` would train nothing), or casts differently."""
    _module_features(spec)
    target = _conversion_case(spec, method, target)
    m = spec.build("cpu")
    params, _ = _keys(m)
    objs = {k: _resolve(m, k) for k in params}
    dev = _target_device(method, device, torch.device("cpu"))
    want = {k: p.detach().to(device=dev, dtype=getattr(torch, target)) for k, p in objs.items()}
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    out = _convert(m, method, target, device)
    assert out is m, f"module.{method} did not return the module itself"
    for k, old in objs.items():
        p = _resolve(m, k)
        assert p is old, f"module.{method} replaced the Parameter object {k!r}"
        assert isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad, (
            f"module.{method}: {k!r} is no longer a leaf Parameter requiring grad"
        )
        assert p.dtype == want[k].dtype and p.device == want[k].device, (
            f"module.{method}: {k!r} not converted"
        )
        assert_same_bits(p.detach(), want[k], f"module.{method} holds {k!r} cast to {target}")
    held = [p for g in opt.param_groups for p in g["params"]]
    assert all(a is b for a, b in zip(held, m.parameters(), strict=True)), (
        f"an optimizer created before module.{method} no longer holds the module's Parameters"
    )


DTYPE_CHANGES = ("to-dtype", "half", "bfloat16", "float", "double")


@pytest.mark.claim("modules.to-converts-grad-in-place")
@_spec_examples(method="double", target="float64", dtypes=("float16", "bfloat16"))
@given(spec=module_specs(), method=st.sampled_from(DTYPE_CHANGES), target=st.sampled_from(DTYPES))
def test_conversion_converts_grad_in_place(device, spec, method, target):
    """A dtype-changing conversion converts each parameter's ``.grad`` with it: the same
    ``.grad`` object, now of the target dtype, holding the cast gradient bit for bit.

    Kills: a conversion that drops the gradients, leaves them in the old dtype, or
    replaces the .grad object (references to it go stale)."""
    _module_features(spec)
    target = _conversion_case(spec, method, target)
    assume(target != spec.dtype)
    m = spec.build(device)
    grads = _give_grads(m, spec.seed)
    want = {k: g.to(getattr(torch, target)) for k, g in grads.items()}
    _convert(m, method, target, device)
    for k, g in grads.items():
        p = _resolve(m, k)
        assert p.grad is g, f"module.{method} replaced the .grad object of {k!r}"
        assert p.grad.dtype == want[k].dtype, f"module.{method} left {k!r}.grad {p.grad.dtype}"
        assert_same_bits(p.grad, want[k], f"module.{method} holds {k!r}.grad cast to {target}")


@pytest.mark.claim("modules.to-noop-keeps-storage")
@_spec_examples(method="to-dtype")
@given(
    spec=module_specs(),
    method=st.sampled_from(["to-dtype", "to-device", "to-device-dtype", "named"]),
)
def test_noop_conversion_keeps_storage(device, spec, method):
    """A conversion to the module's own dtype and device keeps every parameter, .grad and
    buffer object and storage; a state_dict taken before still aliases the module.

    Kills: a conversion that always copies (memory doubled, optimizer state and earlier
    references silently detached from the model)."""
    _module_features(spec)
    m = spec.build(device)
    grads = _give_grads(m, spec.seed)
    params, bufs = _keys(m)
    objs = {k: _resolve(m, k) for k in params + bufs}
    ptrs = {k: o.untyped_storage().data_ptr() for k, o in objs.items()}
    gptrs = {k: g.untyped_storage().data_ptr() for k, g in grads.items()}
    sd = m.state_dict()
    dt = spec.torch_dtype
    if method == "to-dtype":
        m.to(dt)
    elif method == "to-device":
        m.to(device)
    elif method == "to-device-dtype":
        m.to(device, dt)
    else:
        getattr(m, OWN_DTYPE_METHOD[spec.dtype])()
    for k, o in objs.items():
        obj = _resolve(m, k)
        assert obj is o, f"a no-op {method} replaced {k!r}"
        assert obj.untyped_storage().data_ptr() == ptrs[k], f"a no-op {method} moved {k!r}"
        assert shares_storage(sd[k], obj), f"after a no-op {method} state_dict()[{k!r}] is stale"
    for k, g in grads.items():
        p = _resolve(m, k)
        assert p.grad is g and g.untyped_storage().data_ptr() == gptrs[k], (
            f"a no-op {method} replaced or moved {k!r}.grad"
        )


@pytest.mark.claim("modules.to-dtype-change-stales-old-aliases")
@_spec_examples(kinds=("mlp-bn", "tied"), method="half", target="float16")
@given(spec=module_specs(), method=st.sampled_from(DTYPE_CHANGES), target=st.sampled_from(DTYPES))
def test_dtype_change_leaves_old_aliases_behind(device, spec, method, target):
    """After a dtype-changing conversion a state_dict taken before keeps the old dtype and
    values and no longer sees updates; floating buffers are new objects, integer buffers
    (num_batches_tracked) keep object and storage.

    Kills: a conversion that converts buffers in place (keeping the objects) or touches
    integer buffers (copying or casting them)."""
    _module_features(spec)
    target = _conversion_case(spec, method, target)
    assume(target != spec.dtype)
    m = spec.build(device)
    params, bufs = _keys(m)
    bufobjs = {k: _resolve(m, k) for k in bufs}
    sd = m.state_dict()
    then = {k: _bytes(v) for k, v in sd.items()}
    _convert(m, method, target, device)
    with torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            t.add_(1)
    for k, v in sd.items():
        obj = _resolve(m, k)
        if obj.is_floating_point():
            assert v.dtype == spec.torch_dtype, f"state_dict()[{k!r}] taken before changed dtype"
            assert not shares_storage(v, obj), f"state_dict()[{k!r}] still aliases after {method}"
            assert np.array_equal(_bytes(v), then[k]), (
                f"state_dict()[{k!r}] taken before {method} saw a later update"
            )
            if k in bufobjs:
                assert obj is not bufobjs[k], f"{method} kept the floating buffer object {k!r}"
        else:
            assert obj is bufobjs[k] and shares_storage(v, obj), (
                f"{method} replaced the integer buffer {k!r}"
            )


@pytest.mark.claim("modules.to-unties-shared-buffers")
@example(spec=ModuleSpec("tied", 3, 2, True, "float32", 1), method="double", target="float64")
@example(spec=ModuleSpec("tied", 2, 3, True, "float16", 2), method="double", target="float64")
@given(
    spec=module_specs(kind="tied"),
    method=st.sampled_from(DTYPE_CHANGES),
    target=st.sampled_from(DTYPES),
)
def test_dtype_change_unties_a_shared_buffer(device, spec, method, target):
    """A dtype-changing conversion of a module whose two submodules hold one buffer
    object gives each submodule its own converted buffer (separate objects and storages:
    a write into one is not seen in the other), while the tied Parameter stays one object.

    Kills: a conversion that keeps shared buffers shared (a change of this pin), or one
    that unties Parameters too."""
    _module_features(spec)
    target = _conversion_case(spec, method, target)
    assume(target != spec.dtype)
    m = spec.build(device)
    assert m.a.scale is m.b.scale and m.a.weight is m.b.weight, "suite: the module is not tied"
    _convert(m, method, target, device)
    assert m.a.weight is m.b.weight, f"{method} untied the tied Parameter"
    assert m.a.scale is not m.b.scale, f"{method} kept the shared buffer one object"
    assert not shares_storage(m.a.scale, m.b.scale), f"{method} kept the shared buffer's storage"
    before = _bytes(m.b.scale)
    with torch.no_grad():
        m.a.scale.fill_(9)
    assert np.array_equal(_bytes(m.b.scale), before), (
        f"after {method} a write into a.scale is seen in b.scale"
    )


@pytest.mark.claim("modules.future-overwrite-new-parameters")
@_spec_examples(method="double", target="float64", dtypes=("float16",))
@given(spec=module_specs(), method=st.sampled_from(DTYPE_CHANGES), target=st.sampled_from(DTYPES))
def test_overwrite_flag_makes_new_parameters(device, spec, method, target):
    """With ``set_overwrite_module_params_on_conversion(True)`` a dtype-changing
    conversion installs new Parameter objects (requires_grad kept, cast values, converted
    .grad); the old objects keep dtype, values and .grad; an earlier optimizer holds the
    old objects.

    Kills: a conversion that ignores the flag (keeps the objects) for some method."""
    _module_features(spec)
    target = _conversion_case(spec, method, target)
    assume(target != spec.dtype)
    m = spec.build(device)
    grads = _give_grads(m, spec.seed)
    params, _ = _keys(m)
    old = {k: _resolve(m, k) for k in params}
    dt = getattr(torch, target)
    want = {k: p.detach().to(dt) for k, p in old.items()}
    want_grad = {k: g.to(dt) for k, g in grads.items()}
    then = {k: _bytes(p) for k, p in old.items()}
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    prev = torch.__future__.get_overwrite_module_params_on_conversion()
    try:
        _set_overwrite(True)
        _convert(m, method, target, device)
    finally:
        _set_overwrite(prev)
    for k, o in old.items():
        p = _resolve(m, k)
        assert p is not o and isinstance(p, nn.Parameter), (
            f"with the overwrite flag {method} kept the Parameter object {k!r}"
        )
        assert p.requires_grad == o.requires_grad, f"overwrite: {k!r} lost requires_grad"
        assert_same_bits(p.detach(), want[k], f"overwrite: {k!r} holds the cast values")
        assert p.grad is not None and same_bits(p.grad, want_grad[k]), (
            f"overwrite: the new {k!r} has no converted .grad"
        )
        assert o.dtype == spec.torch_dtype and np.array_equal(_bytes(o), then[k]), (
            f"overwrite: the old Parameter {k!r} changed"
        )
        assert o.grad is grads[k] and o.grad.dtype == spec.torch_dtype, (
            f"overwrite: the old Parameter {k!r} lost its .grad"
        )
    held = {id(p) for g in opt.param_groups for p in g["params"]}
    assert held == {id(p) for p in old.values()}, (
        "the earlier optimizer does not hold the old objects"
    )


@pytest.mark.claim("modules.future-overwrite-unties-parameters")
@example(spec=ModuleSpec("tied", 3, 2, True, "float32", 1), method="double", target="float64")
@example(spec=ModuleSpec("tied", 2, 3, True, "bfloat16", 2), method="double", target="float64")
@given(
    spec=module_specs(kind="tied"),
    method=st.sampled_from(DTYPE_CHANGES),
    target=st.sampled_from(DTYPES),
)
def test_overwrite_flag_unties_tied_parameters(device, spec, method, target):
    """With the overwrite flag a dtype-changing conversion of a module with a tied weight
    gives each submodule its own new Parameter (separate objects and storages).

    Kills: a conversion that keeps ties under the overwrite flag (a change of this pin)."""
    _module_features(spec)
    target = _conversion_case(spec, method, target)
    assume(target != spec.dtype)
    m = spec.build(device)
    prev = torch.__future__.get_overwrite_module_params_on_conversion()
    try:
        _set_overwrite(True)
        _convert(m, method, target, device)
    finally:
        _set_overwrite(prev)
    assert m.a.weight is not m.b.weight, f"with the overwrite flag {method} kept the weight tied"
    assert not shares_storage(m.a.weight, m.b.weight), (
        f"with the overwrite flag {method} kept the weights' storage shared"
    )


@pytest.mark.claim("modules.future-swap-conversion-keeps-identity")
@_spec_examples(method="bfloat16", target="bfloat16", dtypes=("float64",))
@example(spec=ModuleSpec("mlp-bn", 2, 3, False, "float16", 4), method="double", target="float64")
@given(spec=module_specs(), method=st.sampled_from(DTYPE_CHANGES), target=st.sampled_from(DTYPES))
def test_swap_flag_conversion_keeps_objects(device, spec, method, target):
    """With ``set_swap_module_params_on_conversion(True)`` a dtype-changing conversion
    keeps every Parameter and .grad object, now holding the target dtype and cast values;
    an earlier optimizer holds them; an earlier state_dict keeps the old storage.

    Kills: a swap-flag conversion that makes new objects, or leaves grads unconverted."""
    _module_features(spec)
    _require_swap()
    target = _conversion_case(spec, method, target)
    assume(target != spec.dtype)
    m = spec.build(device)
    grads = _give_grads(m, spec.seed)
    params, _ = _keys(m)
    old = {k: _resolve(m, k) for k in params}
    dt = getattr(torch, target)
    want = {k: p.detach().to(dt) for k, p in old.items()}
    want_grad = {k: g.to(dt) for k, g in grads.items()}
    sd = m.state_dict()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    prev = torch.__future__.get_swap_module_params_on_conversion()
    try:
        _set_swap(True)
        _convert(m, method, target, device)
    finally:
        _set_swap(prev)
    for k, o in old.items():
        p = _resolve(m, k)
        assert p is o, f"with the swap flag {method} replaced the Parameter object {k!r}"
        assert_same_bits(p.detach(), want[k], f"swap: {k!r} holds the cast values")
        assert p.grad is grads[k], f"with the swap flag {method} replaced {k!r}.grad"
        assert_same_bits(p.grad, want_grad[k], f"swap: {k!r}.grad holds the cast gradient")
        assert sd[k].dtype == spec.torch_dtype and not shares_storage(sd[k], p), (
            f"swap: the earlier state_dict()[{k!r}] follows the new payload"
        )
    held = [p for g in opt.param_groups for p in g["params"]]
    assert all(a is b for a, b in zip(held, m.parameters(), strict=True)), (
        "with the swap flag an earlier optimizer no longer holds the module's Parameters"
    )


@pytest.mark.claim("modules.future-swap-load-state-dict")
@_spec_examples(assign=True, sd_dtype="float64", frozen=1)
@given(
    spec=module_specs(),
    assign=st.booleans(),
    sd_dtype=st.sampled_from(DTYPES),
    frozen=st.integers(0, 7),
)
def test_swap_flag_load_state_dict_keeps_objects(device, spec, assign, sd_dtype, frozen):
    """With the swap flag, ``load_state_dict(sd)`` keeps every Parameter object and its
    requires_grad; assign=False keeps the module's dtype and storage with sd's values
    cast, assign=True shares sd's storage with sd's dtype.

    Kills: a swap-flag load that replaces Parameters, or a module_load that copies under
    assign=True (or aliases under assign=False)."""
    _require_swap()
    _require_assign()
    # Issue 29: the claim speaks of the module's Parameters (of each dtype family).
    evidence.features(dtype_family=dtype_family(spec.torch_dtype), tensor_kind="parameter")
    m = spec.build(device)
    for i, p in enumerate(m.parameters()):
        p.requires_grad_(not (frozen >> i) & 1)
    sd = spec.build(device, dtype=sd_dtype, seed=spec.seed + 500).state_dict()
    params, _ = _keys(m)
    old = {k: _resolve(m, k) for k in params}
    rg = {k: o.requires_grad for k, o in old.items()}
    metas = {k: _meta(o) for k, o in old.items()}
    ptrs = {k: o.untyped_storage().data_ptr() for k, o in old.items()}
    prev = torch.__future__.get_swap_module_params_on_conversion()
    try:
        _set_swap(True)
        m.load_state_dict(sd, assign=assign)
    finally:
        _set_swap(prev)
    for k, o in old.items():
        p = _resolve(m, k)
        assert p is o, f"with the swap flag load_state_dict replaced the Parameter {k!r}"
        assert p.requires_grad == rg[k], f"swap load changed requires_grad of {k!r}"
        if assign:
            assert shares_storage(p, sd[k]) and p.dtype == sd[k].dtype, (
                f"swap load with assign=True: {k!r} does not hold sd's tensor"
            )
        else:
            assert _meta(p) == metas[k] and p.untyped_storage().data_ptr() == ptrs[k], (
                f"swap load with assign=False moved or recast {k!r}"
            )
            assert_same_bits(p.detach(), sd[k].to(p.dtype), f"swap load wrote sd[{k!r}] cast")


#: Tensors for swap_tensors: (dtype, shape, view) choices.
SWAP_SHAPES = ((2,), (3, 2), (1, 4))


def _swap_operand(dtype: str, shape, kind: str, view: bool, grad: bool, attr, seed: int):
    dt = getattr(torch, dtype)
    base = _values((shape[0] + 1, *shape[1:]), dt, "cpu", seed, 1)
    t = base[1:] if view else base[1:].clone()
    del base
    if kind == "parameter":
        t = nn.Parameter(t.detach().clone() if view else t, requires_grad=grad)
    elif grad:
        t = t.detach().clone().requires_grad_()
    if grad:
        t.grad = _values(t.shape, dt, "cpu", seed, 2)
    if attr is not None:
        t.tag = attr
    return t


def _contents(t: torch.Tensor) -> tuple:
    return (type(t), _meta(t), t.untyped_storage().data_ptr(), _bytes(t).tobytes(),
            t.requires_grad, id(t.grad) if t.grad is not None else None, dict(t.__dict__))  # fmt: skip


@pytest.mark.claim("modules.swap-tensors-exchanges-contents")
@example(
    d1="float32", d2="float64", s1=(2,), s2=(3, 2), k1="tensor", k2="parameter",
    v1=True, v2=False, g1=True, g2=False, a1=[1], a2=None,
)  # fmt: skip
# Issue 29: a plain tensor (no grad) and a reduced-float pair, by construction.
@example(
    d1="float16", d2="bfloat16", s1=(3, 2), s2=(1, 4), k1="tensor", k2="parameter",
    v1=False, v2=True, g1=False, g2=True, a1=None, a2="y",
)  # fmt: skip
@example(
    d1="bfloat16", d2="float32", s1=(1, 4), s2=(2,), k1="tensor", k2="tensor",
    v1=True, v2=False, g1=False, g2=True, a1="x", a2=(2,),
)  # fmt: skip
@given(
    d1=st.sampled_from(DTYPES), d2=st.sampled_from(DTYPES),
    s1=st.sampled_from(SWAP_SHAPES), s2=st.sampled_from(SWAP_SHAPES),
    k1=st.sampled_from(["tensor", "parameter"]), k2=st.sampled_from(["tensor", "parameter"]),
    v1=st.booleans(), v2=st.booleans(), g1=st.booleans(), g2=st.booleans(),
    a1=st.sampled_from([None, [1], "x"]), a2=st.sampled_from([None, (2,), "y"]),
)  # fmt: skip
def test_swap_tensors_exchanges_contents(device, d1, d2, s1, s2, k1, k2, v1, v2, g1, g2, a1, a2):
    """``torch.utils.swap_tensors(t1, t2)`` leaves each Python object with the other's
    former type, dtype, shape, strides, offset, storage, values, requires_grad, .grad
    and Python attributes.

    Kills: a swap that leaves attributes, .grad or requires_grad behind, or copies the
    payload instead of exchanging it."""
    _require_swap()
    t1 = _swap_operand(d1, s1, k1, v1, g1, a1, 1)
    t2 = _swap_operand(d2, s2, k2, v2, g2, a2, 2)
    evidence.features(
        tensor_kind=frozenset({tensor_kind_of(t1), tensor_kind_of(t2)}),
        dtype_family=frozenset({dtype_family(t1.dtype), dtype_family(t2.dtype)}),
    )
    c1, c2 = _contents(t1), _contents(t2)
    i1, i2 = id(t1), id(t2)
    torch.utils.swap_tensors(t1, t2)
    assert (id(t1), id(t2)) == (i1, i2), "suite: the names were rebound"
    names = ("type", "metadata", "storage", "values", "requires_grad", ".grad", "attributes")
    for name, got1, want1, got2, want2 in zip(
        names, _contents(t1), c2, _contents(t2), c1, strict=True
    ):
        assert got1 == want1 and got2 == want2, f"swap_tensors did not exchange the {name}"


# ================================================================= deepcopy


@pytest.mark.claim("modules.deepcopy-shares-no-storage")
@_spec_examples(training=True, side="original")
@given(spec=module_specs(), training=st.booleans(), side=st.sampled_from(["original", "copy"]))
def test_deepcopy_of_module_shares_no_storage(device, spec, training, side):
    """``copy.deepcopy(module)`` is a module of the same class and mode none of whose
    parameters or buffers shares storage with the original's; Parameters keep
    requires_grad and values, buffers their values; a training step on either side is
    not seen in the other.

    Kills: a deepcopy that shares buffers (running statistics) or some parameters with
    the original (a teacher/EMA copy that follows the student)."""
    _module_features(spec)
    m = spec.build(device).train(training)
    c = copy.deepcopy(m)
    assert type(c) is type(m) and c.training == m.training, "deepcopy changed class or mode"
    params, bufs = _keys(m)
    mine = [_resolve(m, k) for k in params + bufs]
    for k in params + bufs:
        o, t = _resolve(m, k), _resolve(c, k)
        for x in mine:
            assert not shares_storage(t, x), (
                f"the deepcopy's {k!r} shares storage with the original"
            )
        assert type(t) is type(o) and t.requires_grad == o.requires_grad, (
            f"the deepcopy's {k!r} is a {type(t).__name__} requiring grad {t.requires_grad}"
        )
        assert_same_bits(t.detach(), o.detach(), f"the deepcopy's {k!r} keeps the values")
    src, dst = (m, c) if side == "original" else (c, m)
    then = {k: _bytes(_resolve(dst, k)) for k in params + bufs}
    _train_step(src.train(), _optimizer("sgd-momentum", src.parameters()), spec.input(device))
    for k in params + bufs:
        assert np.array_equal(_bytes(_resolve(dst, k)), then[k]), (
            f"a training step on the {side} is seen in the other module's {k!r}"
        )


# ================================================================ optimizers


def _optimizer_case(spec, device, kind, groups, steps, dtype=None, seed=None):
    m = spec.build(device, dtype=dtype, seed=seed)
    ps = list(m.parameters())
    if groups == 2 and len(ps) > 1:
        half = len(ps) // 2
        opt = _optimizer(kind, [{"params": ps[:half]}, {"params": ps[half:], "lr": 0.125}])
    else:
        opt = _optimizer(kind, ps)
    x = spec.input(device, dtype)
    for _ in range(steps):
        _train_step(m, opt, x)
    return m, opt, x


def _walk_tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _walk_tensors(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _walk_tensors(v)


@pytest.mark.claim("modules.optimizer-state-dict-param-ids")
@_spec_examples(kind="adam", groups=2, steps=1)
@given(
    spec=module_specs(),
    kind=st.sampled_from(OPTIMIZERS),
    groups=st.integers(1, 2),
    steps=st.integers(1, 2),
)
def test_optimizer_state_dict_holds_ids_not_parameters(device, spec, kind, groups, steps):
    """``optimizer.state_dict()`` holds no parameter: param_groups list distinct ints,
    one per parameter in order, with the group's hyperparameters; 'state' maps each id to
    that parameter's state values.

    Kills: a state_dict that stores Parameters (pinning the model in the checkpoint) or
    numbers parameters inconsistently across groups."""
    m, opt, _ = _optimizer_case(spec, device, kind, groups, steps)
    sd = opt.state_dict()
    assert len(sd["param_groups"]) == len(opt.param_groups), "param_groups count changed"
    ids, ps = [], []
    for g, live in zip(sd["param_groups"], opt.param_groups, strict=True):
        assert all(type(i) is int for i in g["params"]), (
            f"param_groups['params'] holds {[type(i).__name__ for i in g['params']]}, not ints"
        )
        assert len(g["params"]) == len(live["params"]), "a group lists another parameter count"
        for key, value in live.items():
            if key != "params":
                assert g[key] == value, (
                    f"param_groups[{key!r}] is {g[key]!r}, the group's {value!r}"
                )
        ids += g["params"]
        ps += live["params"]
    assert len(set(ids)) == len(ids), f"parameter ids repeat across groups: {ids}"
    params = {id(p) for p in m.parameters()}
    assert not any(id(t) in params for t in _walk_tensors(sd)), (
        "optimizer.state_dict() holds a parameter"
    )
    assert set(sd["state"]) <= set(ids), f"state keys {sorted(sd['state'])} are not parameter ids"
    for i, p in zip(ids, ps, strict=True):
        live = opt.state.get(p, {})
        assert (i in sd["state"]) == bool(live), f"state of parameter id {i} missing or extra"
        for key, value in live.items():
            got = sd["state"][i][key]
            ok = same_bits(got, value) if isinstance(value, torch.Tensor) else got == value
            assert ok, f"state[{i}][{key!r}] is not the state of that parameter"


@pytest.mark.claim("modules.optimizer-state-dict-aliases-live-state")
@_spec_examples(kind="sgd-momentum")
@given(spec=module_specs(), kind=st.sampled_from(OPTIMIZERS))
def test_optimizer_state_dict_aliases_live_state(device, spec, kind):
    """``optimizer.state_dict()['state'][i]`` is the live per-parameter state dict with
    the very state tensors, so a later step changes it; param_groups are new dicts.

    Kills: a state_dict that snapshots the state (a change of this pin, e.g. a fix of
    issue #196083) or that hands out the live param_groups dicts."""
    m, opt, x = _optimizer_case(spec, device, kind, 1, 1)
    sd = opt.state_dict()
    ps = list(opt.param_groups[0]["params"])
    then = {}
    for i, p in enumerate(ps):
        assert sd["state"][i] is opt.state[p], f"state_dict()['state'][{i}] is a copy"
        for key, v in opt.state[p].items():
            then[i, key] = _bytes(v)
    _train_step(m, opt, x)
    for i, key in then:
        got = sd["state"][i][key]
        assert got is opt.state[ps[i]][key], f"state_dict()['state'][{i}][{key!r}] is not live"
        assert_same_bits(got, opt.state[ps[i]][key], f"state_dict()['state'][{i}][{key!r}]")
    assert any(
        not np.array_equal(_bytes(sd["state"][i][key]), before) for (i, key), before in then.items()
    ), "a later step did not change the earlier state_dict"
    assert sd["param_groups"][0] is not opt.param_groups[0], "param_groups entry is the live dict"
    lr = opt.param_groups[0]["lr"]
    sd["param_groups"][0]["lr"] = 7.0
    assert opt.param_groups[0]["lr"] == lr, "a change to state_dict()['param_groups'] is seen"


@pytest.mark.claim("modules.optimizer-load-casts-state")
@_spec_examples(kind="adam", target="bfloat16", dtypes=("float64",))
@example(spec=ModuleSpec("mlp-bn", 2, 3, False, "float16", 4), kind="adam", target="float32")
@given(spec=module_specs(), kind=st.sampled_from(OPTIMIZERS), target=st.sampled_from(DTYPES))
def test_optimizer_load_casts_state_to_parameter_dtype(device, spec, kind, target):
    """``optimizer.load_state_dict(sd)`` into parameters of another floating dtype casts
    momentum_buffer/exp_avg/exp_avg_sq to the parameter's dtype (as Tensor.to), keeps
    'step' as saved, and copies param_groups (holding its own parameters).

    Kills: a load that keeps the saved dtype (mixed-dtype state), casts 'step', or keeps
    sd's param_groups dicts."""
    _module_features(spec)
    assume(target != spec.dtype)
    _, opt1, _ = _optimizer_case(spec, device, kind, 1, 1)
    sd = opt1.state_dict()
    m2 = spec.build(device, dtype=target, seed=spec.seed + 500)
    opt2 = _optimizer(kind, m2.parameters(), lr=0.5)
    opt2.load_state_dict(sd)
    for i, p in enumerate(m2.parameters()):
        for key, saved in sd["state"][i].items():
            got = opt2.state[p][key]
            if key == "step":
                assert got.dtype == saved.dtype and same_bits(got, saved), "load cast 'step'"
            else:
                assert got.dtype == p.dtype and got.device == p.device, (
                    f"load left {key!r} {got.dtype}, the parameter is {p.dtype}"
                )
                assert_same_bits(got, saved.to(p.dtype), f"load cast {key!r} to {p.dtype}")
    g2 = opt2.param_groups[0]
    assert all(a is b for a, b in zip(g2["params"], m2.parameters(), strict=True)), (
        "the loaded param_groups do not hold the optimizer's parameters"
    )
    assert g2 is not sd["param_groups"][0] and g2["lr"] == sd["param_groups"][0]["lr"], (
        "the loaded param_groups are sd's dicts or lost the saved lr"
    )
    sd["param_groups"][0]["lr"] = 9.0
    assert g2["lr"] != 9.0, "a later change to sd's param_groups is seen by the optimizer"


@pytest.mark.claim("modules.optimizer-load-aliases-uncast-state")
@_spec_examples(kind="sgd-momentum", same_dtype=True, target="float32")
@given(
    spec=module_specs(),
    kind=st.sampled_from(OPTIMIZERS),
    same_dtype=st.booleans(),
    target=st.sampled_from(DTYPES),
)
def test_optimizer_load_aliases_uncast_state(device, spec, kind, same_dtype, target):
    """Pins torch 2.13: ``optimizer.load_state_dict(sd)`` keeps sd's state tensors
    wherever no cast is needed (and always 'step'), so a step of the loading optimizer
    changes sd and the optimizer sd came from; cast state is a new tensor.

    Kills: a change of this pin (a fix of issues #147288/#196083 shows up here), for one
    optimizer kind or state key."""
    _module_features(spec)
    target = spec.dtype if same_dtype else target
    m1, opt1, _ = _optimizer_case(spec, device, kind, 1, 1)
    sd = opt1.state_dict()
    m2 = spec.build(device, dtype=target, seed=spec.seed + 500)
    opt2 = _optimizer(kind, m2.parameters())
    opt2.load_state_dict(sd)
    aliased = []
    for i, p in enumerate(m2.parameters()):
        for key, saved in sd["state"][i].items():
            got = opt2.state[p][key]
            if key == "step" or (saved.dtype == p.dtype and saved.device == p.device):
                assert got is saved, f"load_state_dict copied the uncast {key!r} of parameter {i}"
                aliased.append((i, key, _bytes(saved)))
            else:
                assert got is not saved and not shares_storage(got, saved), (
                    f"load_state_dict aliased the cast {key!r} of parameter {i}"
                )
    _train_step(m2, opt2, spec.input(device, target))
    live1 = [opt1.state[p] for p in m1.parameters()]
    for i, key, _ in aliased:
        assert sd["state"][i][key] is live1[i][key], "suite: sd no longer aliases opt1's state"
    if aliased:
        assert any(
            not np.array_equal(_bytes(live1[i][key]), before) for i, key, before in aliased
        ), "a step of the loading optimizer did not change the source optimizer's state"


# ============================================================ mmap checkpoints


def _checkpoint(m: nn.Module) -> str:
    fd, path = tempfile.mkstemp(prefix="conformance-modules-", suffix=".pt")
    os.close(fd)
    torch.save(m.state_dict(), path)
    return path


def _record_offsets(path: str) -> list[int]:
    """File offsets of the storage records (``<archive>/data/<n>``) of a torch.save zip."""
    with open(path, "rb") as f:
        raw = f.read()
    out = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if re.search(r"/data/\d+$", info.filename):
                h = info.header_offset
                n = int.from_bytes(raw[h + 26 : h + 28], "little")
                e = int.from_bytes(raw[h + 28 : h + 30], "little")
                out.append(h + 30 + n + e)
    return sorted(out)


def _file_mappings(path: str) -> list[tuple[int, int]] | None:
    """Address ranges mapping ``path`` (``/proc/self/maps``), or None where there is none."""
    if not os.path.exists("/proc/self/maps"):
        return None
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].strip() == real:
                lo, hi = parts[0].split("-")
                out.append((int(lo, 16), int(hi, 16)))
    return out


@pytest.mark.claim("modules.mmap-load-writes-stay-private")
@_spec_examples(reload_mmap=True)
@given(spec=module_specs(), reload_mmap=st.booleans())
def test_mmap_loaded_writes_do_not_reach_the_file(device, spec, reload_mmap):
    """Tensors loaded with ``torch.load(f, mmap=True)`` can be written in place without
    changing f's bytes or what a later load of f returns.

    Kills: a mapping that writes through to the file (MAP_SHARED by default: a
    fine-tuning run would silently corrupt the pretrained checkpoint)."""
    _module_features(spec)
    _require_mmap()
    m = spec.build(device)
    want = {k: _bytes(v) for k, v in m.state_dict().items()}
    path = _checkpoint(m)
    try:
        with open(path, "rb") as f:
            raw = f.read()
        sd = torch.load(path, mmap=True, weights_only=True)
        with torch.no_grad():
            for v in sd.values():
                v.fill_(3)
        with open(path, "rb") as f:
            assert f.read() == raw, "a write into an mmap=True loaded tensor changed the file"
        again = torch.load(path, mmap=reload_mmap, weights_only=True)
        for k, v in again.items():
            assert np.array_equal(_bytes(v), want[k]), (
                f"after writing the mmap=True loaded {k!r}, loading the file again gives the write"
            )
        del sd, again
    finally:
        os.unlink(path)


@pytest.mark.claim("modules.mmap-load-backed-by-file")
@_spec_examples()
@given(spec=module_specs())
def test_mmap_loaded_tensors_are_backed_by_the_file(device, spec):
    """The tensors of ``torch.load(f, mmap=True)`` lie in one mapping of f: the distances
    between their storages are those between their records in the archive, and (with
    /proc/self/maps) each lies in a mapping of f.

    Kills: an mmap=True load that reads the storages into memory (no memory saved, the
    checkpoint fully read at load time)."""
    _module_features(spec)
    _require_mmap()
    m = spec.build(device)
    path = _checkpoint(m)
    try:
        offsets = _record_offsets(path)
        sd = torch.load(path, mmap=True, weights_only=True)
        ptrs = sorted({v.untyped_storage().data_ptr() for v in sd.values()})
        assert len(ptrs) == len(offsets), f"{len(ptrs)} storages loaded, {len(offsets)} in the file"
        assert [p - ptrs[0] for p in ptrs] == [o - offsets[0] for o in offsets], (
            "the mmap=True loaded storages do not lie as the records lie in the file"
        )
        maps = _file_mappings(path)
        if maps is not None:
            for p in ptrs:
                assert any(lo <= p < hi for lo, hi in maps), (
                    "an mmap=True loaded storage does not lie in a mapping of the file"
                )
        del sd
    finally:
        os.unlink(path)


@pytest.mark.claim("modules.mmap-assign-keeps-mapping")
@_spec_examples(assign=True)
@given(spec=module_specs(), assign=st.booleans())
def test_mmap_load_with_assign_keeps_the_mapping(device, spec, assign):
    """``load_state_dict(torch.load(f, mmap=True), assign=True)`` leaves the module's
    tensors sharing storage with the file-backed loaded ones (a write through the module
    is seen in the loaded dict); assign=False copies into the module's own storage.

    Kills: an assign that materializes mapped tensors (copying the checkpoint into RAM,
    defeating mmap=True)."""
    _module_features(spec)
    _require_mmap()
    _require_assign()
    m = spec.build(device)
    path = _checkpoint(m)
    try:
        sd = torch.load(path, mmap=True, weights_only=True)
        target = spec.build(device, seed=spec.seed + 500)
        target.load_state_dict(sd, assign=assign)
        for k, v in sd.items():
            obj = _resolve(target, k)
            if assign:
                assert shares_storage(obj, v), f"assign=True: {k!r} is not the mapped tensor"
                with torch.no_grad():
                    obj.fill_(4)
                assert same_bits(v, obj.detach()), f"a write through {k!r} is not seen in the map"
            else:
                assert not shares_storage(obj, v), f"assign=False: {k!r} aliases the mapped tensor"
        del sd, target
    finally:
        os.unlink(path)
