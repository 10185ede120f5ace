"""Mutants of the ``modules`` area (nn.Module state dicts, load_state_dict, conversions,
copy.deepcopy of modules, optimizer state dicts, mmap checkpoints); claims in
``conformance/claims/modules.toml``, tests in ``conformance/test_modules.py``.

Most patch ``torch.nn.Module`` methods from Python: ``_save_to_state_dict`` (what
``state_dict()`` stores), ``state_dict`` itself (at the top-level call only: the recursive
calls pass ``destination=``), ``_load_from_state_dict`` (what ``load_state_dict`` does per
module), ``_apply`` (what every conversion does; it recurses through ``module._apply`` so
the wrappers count their depth) and the named conversions (``half``, ``double``,
``bfloat16``). Optimizer mutants patch ``torch.optim.Optimizer.state_dict`` and the static
``_process_value_according_to_param_policy`` that ``load_state_dict`` casts state with.
The mmap mutants patch ``torch.serialization.get_default_mmap_options`` and ``torch.load``.
For the pinned claims (characterizations) the mutants change torch the way a fix would.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import contextlib
import functools

from conformance.mutants.base import Mutant
from conformance.mutants.patching import torch, wrap


def _tied():
    """A module whose two ``Linear`` layers share one weight and one buffer
    (``a.weight is b.weight``, ``a.scale is b.scale``): the witnesses' input."""
    from torch import nn

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 2)
            self.b = nn.Linear(3, 2)
            self.b.weight = self.a.weight
            s = torch.ones(2)
            self.a.register_buffer("scale", s)
            self.b.register_buffer("scale", s)

    return Tied()


def _modules_state_dict_copies_float64_params(orig, self, destination, prefix, keep_vars):
    orig(self, destination, prefix, keep_vars)
    if not keep_vars:
        for name, p in self._parameters.items():
            if p is not None and p.dtype == torch.float64:
                destination[prefix + name] = p.detach().clone()


def _witness_modules_state_dict_copies_float64_params():
    m = torch.nn.Linear(2, 2).double()
    assert m.state_dict()["weight"].data_ptr() == m.weight.data_ptr()


def _modules_state_dict_snapshots_buffers(orig, self, destination, prefix, keep_vars):
    orig(self, destination, prefix, keep_vars)
    if not keep_vars:
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b.detach().clone()


def _witness_modules_state_dict_snapshots_buffers():
    bn = torch.nn.BatchNorm1d(2)
    sd = bn.state_dict()
    bn(torch.randn(4, 2))
    assert torch.equal(sd["running_mean"], bn.running_mean)


def _modules_state_dict_data_alias_float16(orig, self, destination, prefix, keep_vars):
    orig(self, destination, prefix, keep_vars)
    if not keep_vars:
        for name, p in self._parameters.items():
            if p is not None and p.dtype == torch.float16:
                destination[prefix + name] = p.data


def _witness_modules_state_dict_data_alias_float16():
    m = torch.nn.Linear(2, 2).half()
    v = m.state_dict()["weight"]
    before = v._version
    with torch.no_grad():
        m.weight.mul_(1)
    assert v._version > before


def _modules_state_dict_copies_tied_second_name(orig, self, *args, **kwargs):
    top = not args and kwargs.get("destination") is None and not kwargs.get("prefix")
    out = orig(self, *args, **kwargs)
    if top and not kwargs.get("keep_vars"):
        seen = set()
        for k, v in list(out.items()):
            ptr = v.untyped_storage().data_ptr()
            if ptr and ptr in seen:
                out[k] = v.clone()
            seen.add(ptr)
    return out


def _witness_modules_state_dict_copies_tied_second_name():
    sd = _tied().state_dict()
    assert sd["a.weight"].data_ptr() == sd["b.weight"].data_ptr()


def _modules_keep_vars_detaches_buffers(orig, self, destination, prefix, keep_vars):
    orig(self, destination, prefix, keep_vars)
    if keep_vars:
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b.detach()


def _witness_modules_keep_vars_detaches_buffers():
    bn = torch.nn.BatchNorm1d(2)
    assert bn.state_dict(keep_vars=True)["running_mean"] is bn.running_mean


def _modules_state_dict_snapshots_in_train_mode(orig, self, *args, **kwargs):
    import collections

    top = not args and kwargs.get("destination") is None and not kwargs.get("prefix")
    out = orig(self, *args, **kwargs)
    if top and self.training and not kwargs.get("keep_vars"):
        out = collections.OrderedDict((k, v.clone()) for k, v in out.items())
    return out


def _witness_modules_state_dict_snapshots_in_train_mode():
    m = torch.nn.Linear(2, 2).train()
    best = m.state_dict()
    with torch.no_grad():
        m.weight.add_(1)
    assert torch.equal(best["weight"], m.weight.detach())


def _modules_deepcopy_aliases_float32_detached(orig, self, memo):
    if (
        type(self) is torch.Tensor
        and self.dtype == torch.float32
        and not self.requires_grad
        and self.dim() >= 1
    ):
        out = self.detach()
        memo[id(self)] = out
        return out
    return orig(self, memo)


def _witness_modules_deepcopy_aliases_float32_detached():
    import copy

    m = torch.nn.Linear(2, 2)
    best = copy.deepcopy(m.state_dict())
    assert best["weight"].data_ptr() != m.weight.data_ptr()


def _modules_load_replaces_bfloat16_params(orig, self, state_dict, prefix, local_metadata, *args):
    orig(self, state_dict, prefix, local_metadata, *args)
    if not local_metadata.get("assign_to_params_buffers", False):
        for name, p in list(self._parameters.items()):
            if p is not None and p.dtype == torch.bfloat16 and prefix + name in state_dict:
                self._parameters[name] = torch.nn.Parameter(p.detach().clone(), p.requires_grad)


def _witness_modules_load_replaces_bfloat16_params():
    m = torch.nn.Linear(2, 2).bfloat16()
    w = m.weight
    m.load_state_dict(torch.nn.Linear(2, 2).state_dict())
    assert m.weight is w


def _modules_load_adopts_same_dtype_tensors(orig, self, state_dict, prefix, local_metadata, *args):
    orig(self, state_dict, prefix, local_metadata, *args)
    if local_metadata.get("assign_to_params_buffers", False):
        return
    for name, t in list(self._parameters.items()) + list(self._buffers.items()):
        src = state_dict.get(prefix + name)
        if (
            t is not None
            and isinstance(src, torch.Tensor)
            and src.dtype == t.dtype
            and src.device == t.device
            and src.shape == t.shape
            and src.stride() == t.stride()
        ):
            t.data = src.detach()


def _witness_modules_load_adopts_same_dtype_tensors():
    m = torch.nn.Linear(2, 2)
    sd = torch.nn.Linear(2, 2).state_dict()
    m.load_state_dict(sd)
    assert m.weight.data_ptr() != sd["weight"].data_ptr()


def _modules_load_float64_keeps_version(orig, self, state_dict, prefix, local_metadata, *args):
    ps = [p for p in self._parameters.values() if p is not None and p.dtype == torch.float64]
    versions = [p._version for p in ps]
    orig(self, state_dict, prefix, local_metadata, *args)
    if ps and not local_metadata.get("assign_to_params_buffers", False):
        torch._C._autograd._unsafe_set_version_counter(tuple(ps), tuple(versions))


def _witness_modules_load_float64_keeps_version():
    m = torch.nn.Linear(2, 2).double()
    v = m.weight._version
    m.load_state_dict(torch.nn.Linear(2, 2).double().state_dict())
    assert m.weight._version > v


def _modules_load_assign_clones_buffers(orig, self, state_dict, prefix, local_metadata, *args):
    if local_metadata.get("assign_to_params_buffers", False):
        state_dict = {
            k: (
                v.clone()
                if isinstance(v, torch.Tensor)
                and k.startswith(prefix)
                and k[len(prefix) :] in self._buffers
                else v
            )
            for k, v in state_dict.items()
        }
    orig(self, state_dict, prefix, local_metadata, *args)


def _witness_modules_load_assign_clones_buffers():
    bn = torch.nn.BatchNorm1d(2)
    sd = torch.nn.BatchNorm1d(2).state_dict()
    bn.load_state_dict(sd, assign=True)
    assert bn.running_mean is sd["running_mean"]


def _modules_load_assign_requires_grad_from_parameter(
    orig, self, state_dict, prefix, local_metadata, *args
):
    assign = local_metadata.get("assign_to_params_buffers", False)
    had = {}
    for name in self._parameters:
        src = state_dict.get(prefix + name)
        if isinstance(src, torch.nn.Parameter):
            had[name] = src.requires_grad
    orig(self, state_dict, prefix, local_metadata, *args)
    if assign:
        for name, rg in had.items():
            p = self._parameters.get(name)
            if p is not None:
                p.requires_grad_(rg)


def _witness_modules_load_assign_requires_grad_from_parameter():
    m = torch.nn.Linear(2, 2)
    donor = torch.nn.Linear(2, 2).requires_grad_(False)
    m.load_state_dict(donor.state_dict(keep_vars=True), assign=True)
    assert m.weight.requires_grad


def _modules_load_assign_requires_grad_from_tensor(
    orig, self, state_dict, prefix, local_metadata, *args
):
    orig(self, state_dict, prefix, local_metadata, *args)
    if local_metadata.get("assign_to_params_buffers", False):
        for name, p in self._parameters.items():
            src = state_dict.get(prefix + name)
            if (
                p is not None
                and isinstance(src, torch.Tensor)
                and not isinstance(src, torch.nn.Parameter)
            ):
                p.requires_grad_(src.requires_grad)


def _witness_modules_load_assign_requires_grad_from_tensor():
    m = torch.nn.Linear(2, 2)
    m.load_state_dict(torch.nn.Linear(2, 2).state_dict(), assign=True)
    assert m.weight.requires_grad


def _modules_load_assign_rewraps_parameters(orig, self, state_dict, prefix, local_metadata, *args):
    if local_metadata.get("assign_to_params_buffers", False):
        state_dict = {
            k: (
                torch.nn.Parameter(v.detach(), v.requires_grad)
                if isinstance(v, torch.nn.Parameter)
                else v
            )
            for k, v in state_dict.items()
        }
    orig(self, state_dict, prefix, local_metadata, *args)


def _witness_modules_load_assign_rewraps_parameters():
    m = torch.nn.Linear(2, 2)
    sd = torch.nn.Linear(2, 2).state_dict(keep_vars=True)
    m.load_state_dict(sd, assign=True)
    assert m.weight is sd["weight"]


def _modules_load_assign_keeps_float32_objects(
    orig, self, state_dict, prefix, local_metadata, *args
):
    old = dict(self._parameters)
    orig(self, state_dict, prefix, local_metadata, *args)
    if not local_metadata.get("assign_to_params_buffers", False):
        return
    for name, p in old.items():
        new = self._parameters.get(name)
        if p is not None and new is not None and new is not p and p.dtype == torch.float32:
            p.data = new.data
            self._parameters[name] = p


def _witness_modules_load_assign_keeps_float32_objects():
    m = torch.nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict(torch.nn.Linear(2, 2).state_dict(), assign=True)
    assert m.weight is not w


@contextlib.contextmanager
def _conversion_flag(name, value):
    """``torch.__future__``'s ``{name}_module_params_on_conversion`` flag
    (``overwrite`` or ``swap``) set to ``value``, then restored."""
    import torch.__future__ as future

    get = getattr(future, f"get_{name}_module_params_on_conversion")
    set_ = getattr(future, f"set_{name}_module_params_on_conversion")
    prev = get()
    set_(value)
    try:
        yield
    finally:
        set_(prev)


def _converts_with_overwrite(value, orig, self):
    with _conversion_flag("overwrite", value):
        return orig(self)


def _witness_modules_half_makes_new_parameters():
    m = torch.nn.Linear(2, 2)
    w = m.weight
    m.half()
    assert m.weight is w


def _modules_to_bfloat16_new_grad_objects(orig, self, fn, *args, **kwargs):
    out = orig(self, fn, *args, **kwargs)
    for p in self._parameters.values():
        if p is not None and p.grad is not None and p.grad.dtype == torch.bfloat16:
            p.grad = p.grad.clone()
    return out


def _witness_modules_to_bfloat16_new_grad_objects():
    m = torch.nn.Linear(2, 2)
    m.weight.grad = torch.ones(2, 2)
    g = m.weight.grad
    m.bfloat16()
    assert m.weight.grad is g


def _modules_to_float64_noop_copies(orig, self, *args, **kwargs):
    before = {id(p): p.dtype for p in self.parameters()}
    out = orig(self, *args, **kwargs)
    for p in self.parameters():
        if p.dtype == torch.float64 and before.get(id(p)) == torch.float64:
            p.data = p.data.clone()
    return out


def _witness_modules_to_float64_noop_copies():
    m = torch.nn.Linear(2, 2).double()
    ptr = m.weight.data_ptr()
    m.to(torch.float64)
    assert m.weight.data_ptr() == ptr


def _modules_to_copies_integer_buffers(orig, self, fn, *args, **kwargs):
    out = orig(self, fn, *args, **kwargs)
    for name, b in list(self._buffers.items()):
        if b is not None and not b.is_floating_point() and not b.is_complex():
            self._buffers[name] = b.clone()
    return out


def _witness_modules_to_copies_integer_buffers():
    bn = torch.nn.BatchNorm1d(2)
    n = bn.num_batches_tracked
    bn.half()
    assert bn.num_batches_tracked is n


def _keep_ties(slot, dtype, gate):
    """``Module._apply`` re-ties the entries of ``slot`` (``_buffers`` or
    ``_parameters``) that shared one tensor before a conversion to ``dtype``
    (a name of torch), when ``gate()`` held at the outermost call."""
    _orig = torch.nn.Module._apply
    _depth = [0]

    def _apply(self, fn, *args, **kwargs):
        holders = {}
        if _depth[0] == 0 and gate():
            for mod in self.modules():
                for name, t in getattr(mod, slot).items():
                    if t is not None:
                        holders.setdefault(id(t), []).append((mod, name))
        _depth[0] += 1
        try:
            out = _orig(self, fn, *args, **kwargs)
        finally:
            _depth[0] -= 1
        for group in holders.values():
            first = getattr(group[0][0], slot)[group[0][1]]
            if len(group) > 1 and first is not None and first.dtype == getattr(torch, dtype):
                for mod, name in group[1:]:
                    getattr(mod, slot)[name] = first
        return out

    torch.nn.Module._apply = _apply


def _always():
    return True


def _overwrite_on_conversion():
    import torch.__future__ as future

    return future.get_overwrite_module_params_on_conversion()


def _witness_modules_to_float16_keeps_shared_buffers():
    m = _tied().half()
    assert m.a.scale is not m.b.scale


def _witness_modules_double_ignores_overwrite_flag():
    m = torch.nn.Linear(2, 2)
    w = m.weight
    with _conversion_flag("overwrite", True):
        m.double()
    assert m.weight is not w


def _witness_modules_overwrite_keeps_bfloat16_ties():
    m = _tied()
    with _conversion_flag("overwrite", True):
        m.bfloat16()
    assert m.a.weight is not m.b.weight


def _modules_bfloat16_swap_flag_overwrites(orig, self):
    import torch.__future__ as future

    if not future.get_swap_module_params_on_conversion():
        return orig(self)
    with _conversion_flag("swap", False), _conversion_flag("overwrite", True):
        return orig(self)


def _witness_modules_bfloat16_swap_flag_overwrites():
    m = torch.nn.Linear(2, 2)
    w = m.weight
    with _conversion_flag("swap", True):
        m.bfloat16()
    assert m.weight is w and m.weight.dtype == torch.bfloat16


def _modules_module_load_assign_copies(orig, self, other, assign=False):
    if assign:
        return other.detach().clone()
    return orig(self, other, assign=assign)


def _witness_modules_module_load_assign_copies():
    a, b = torch.zeros(2), torch.ones(2)
    assert a.module_load(b, assign=True).data_ptr() == b.data_ptr()


def _modules_swap_tensors_keeps_attributes(orig, t1, t2):
    d1, d2 = t1.__dict__, t2.__dict__
    orig(t1, t2)
    if d1 or d2:
        t1.__dict__, t2.__dict__ = d1, d2


def _witness_modules_swap_tensors_keeps_attributes():
    a, b = torch.zeros(2), torch.ones(3)
    a.tag = "a"
    torch.utils.swap_tensors(a, b)
    assert getattr(b, "tag", None) == "a" and not hasattr(a, "tag")


def _patch_modules_deepcopy_shares_running_stats():
    import copy

    from torch.nn.modules.batchnorm import _NormBase

    def __deepcopy__(self, memo):
        for b in self._buffers.values():
            if b is not None and b.is_floating_point():
                memo.setdefault(id(b), b)
        return copy._reconstruct(self, memo, *self.__reduce_ex__(4))

    _NormBase.__deepcopy__ = __deepcopy__


def _witness_modules_deepcopy_shares_running_stats():
    import copy

    bn = torch.nn.BatchNorm1d(2)
    assert copy.deepcopy(bn).running_mean.data_ptr() != bn.running_mean.data_ptr()


def _modules_optimizer_state_dict_stores_params_of_later_groups(orig, self):
    out = orig(self)
    for g, live in list(zip(out["param_groups"], self.param_groups, strict=False))[1:]:
        g["params"] = list(live["params"])
    return out


def _witness_modules_optimizer_state_dict_stores_params_of_later_groups():
    a, b = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    assert all(type(i) is int for g in opt.state_dict()["param_groups"] for i in g["params"])


def _modules_optimizer_state_dict_copies_adam_state(orig, self):
    out = orig(self)
    out["state"] = {
        k: (
            {kk: (vv.clone() if isinstance(vv, torch.Tensor) else vv) for kk, vv in v.items()}
            if "exp_avg" in v
            else v
        )
        for k, v in out["state"].items()
    }
    return out


def _witness_modules_optimizer_state_dict_copies_adam_state():
    p = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.Adam([p])
    p.grad = torch.ones(2)
    opt.step()
    assert opt.state_dict()["state"][0]["exp_avg"] is opt.state[p]["exp_avg"]


def _patch_modules_optimizer_load_skips_float16_cast():
    _orig = torch.optim.Optimizer._process_value_according_to_param_policy

    def _process(param, value, param_id, param_groups, key=None):
        if param.dtype == torch.float16 and key != "step":
            return value.to(device=param.device)
        return _orig(param, value, param_id, param_groups, key)

    torch.optim.Optimizer._process_value_according_to_param_policy = staticmethod(_process)


def _witness_modules_optimizer_load_skips_float16_cast():
    p = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.ones(2)
    opt.step()
    q = torch.nn.Parameter(torch.ones(2, dtype=torch.float16))
    opt2 = torch.optim.SGD([q], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[q]["momentum_buffer"].dtype == torch.float16


def _patch_modules_optimizer_load_copies_momentum():
    _orig = torch.optim.Optimizer._process_value_according_to_param_policy

    def _process(param, value, param_id, param_groups, key=None):
        out = _orig(param, value, param_id, param_groups, key)
        if key == "momentum_buffer" and out is value:
            out = value.clone()
        return out

    torch.optim.Optimizer._process_value_according_to_param_policy = staticmethod(_process)


def _witness_modules_optimizer_load_copies_momentum():
    p = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.ones(2)
    opt.step()
    sd = opt.state_dict()
    opt2 = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    assert next(iter(opt2.state.values()))["momentum_buffer"] is sd["state"][0]["momentum_buffer"]


def _patch_modules_mmap_load_shared_mapping():
    import mmap

    import torch.serialization

    torch.serialization.get_default_mmap_options = lambda: mmap.MAP_SHARED


def _witness_modules_mmap_load_shared_mapping():
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".pt")
    os.close(fd)
    try:
        torch.save({"w": torch.zeros(4)}, path)
        raw = open(path, "rb").read()
        sd = torch.load(path, mmap=True, weights_only=True)
        sd["w"].fill_(1)
        del sd
        assert open(path, "rb").read() == raw
    finally:
        os.unlink(path)


def _patch_modules_mmap_load_reads_into_memory():
    import torch.serialization

    _orig = torch.serialization.load

    @functools.wraps(_orig)
    def load(*args, **kwargs):
        kwargs["mmap"] = False
        return _orig(*args, **kwargs)

    torch.serialization.load = load
    torch.load = load


def _witness_modules_mmap_load_reads_into_memory():
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".pt")
    os.close(fd)
    try:
        torch.save({"w": torch.zeros(4)}, path)
        sd = torch.load(path, mmap=True, weights_only=True)
        real = os.path.realpath(path)
        ranges = [
            tuple(int(x, 16) for x in line.split()[0].split("-"))
            for line in open("/proc/self/maps")
            if line.rstrip().endswith(real)
        ]
        ptr = sd["w"].data_ptr()
        assert any(lo <= ptr < hi for lo, hi in ranges)
        del sd
    finally:
        os.unlink(path)


def _modules_load_assign_materializes_mapped(orig, self, state_dict, prefix, local_metadata, *args):
    if local_metadata.get("assign_to_params_buffers", False):
        state_dict = {
            k: (
                v.clone()
                if isinstance(v, torch.Tensor)
                and v.device.type == "cpu"
                and not v.untyped_storage().resizable()
                else v
            )
            for k, v in state_dict.items()
        }
    orig(self, state_dict, prefix, local_metadata, *args)


def _witness_modules_load_assign_materializes_mapped():
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".pt")
    os.close(fd)
    try:
        torch.save(torch.nn.Linear(2, 2).state_dict(), path)
        sd = torch.load(path, mmap=True, weights_only=True)
        m = torch.nn.Linear(2, 2)
        m.load_state_dict(sd, assign=True)
        assert m.weight.data_ptr() == sd["weight"].data_ptr()
        del sd, m
    finally:
        os.unlink(path)


MUTANTS: tuple[Mutant, ...] = (
    # ------------------------------------------------------------ state_dict
    Mutant(
        name="modules-state-dict-copies-float64-params",
        description="state_dict() stores a clone of each float64 parameter instead of a detached alias",
        claims=("modules.state-dict-detached-aliases",),
        domain=(("dtype_family", "float"), ("tensor_kind", "parameter")),
        region="float64 parameters",
        family="dtype",
        patch=wrap(
            "torch.nn.Module._save_to_state_dict", _modules_state_dict_copies_float64_params
        ),
        witness=_witness_modules_state_dict_copies_float64_params,
    ),
    Mutant(
        name="modules-state-dict-snapshots-buffers",
        description="state_dict() stores a clone of each buffer (running statistics frozen in the dict)",
        claims=("modules.state-dict-sees-in-place-updates",),
        region="buffers (BatchNorm running statistics, a tied buffer)",
        family="other",
        patch=wrap("torch.nn.Module._save_to_state_dict", _modules_state_dict_snapshots_buffers),
        witness=_witness_modules_state_dict_snapshots_buffers,
    ),
    Mutant(
        name="modules-state-dict-data-alias-float16",
        description="state_dict() stores p.data for float16 parameters (same storage, own version counter)",
        claims=("modules.state-dict-shares-version-counter",),
        domain=(("dtype_family", "reduced_float"), ("tensor_kind", "parameter")),
        region="float16 parameters",
        family="dtype",
        patch=wrap("torch.nn.Module._save_to_state_dict", _modules_state_dict_data_alias_float16),
        witness=_witness_modules_state_dict_data_alias_float16,
    ),
    Mutant(
        name="modules-state-dict-copies-tied-second-name",
        description="state_dict() stores a clone under the second name of a tied parameter or buffer",
        claims=("modules.state-dict-tied-names-alias",),
        region="tied parameters and buffers (one object under two names)",
        family="relation",
        patch=wrap("torch.nn.Module.state_dict", _modules_state_dict_copies_tied_second_name),
        witness=_witness_modules_state_dict_copies_tied_second_name,
    ),
    Mutant(
        name="modules-keep-vars-detaches-buffers",
        description="state_dict(keep_vars=True) still detaches buffers (the entries are not the buffer objects)",
        claims=("modules.state-dict-keep-vars-identity",),
        domain={"tensor_kind": "buffer"},
        region="buffers with keep_vars=True",
        family="other",
        patch=wrap("torch.nn.Module._save_to_state_dict", _modules_keep_vars_detaches_buffers),
        witness=_witness_modules_keep_vars_detaches_buffers,
    ),
    Mutant(
        name="modules-state-dict-snapshots-in-train-mode",
        description="state_dict() of a module in training mode returns clones (a snapshot), in eval mode references",
        claims=("modules.best-state-reference-pitfall",),
        region="modules in training mode",
        family="mode",
        patch=wrap("torch.nn.Module.state_dict", _modules_state_dict_snapshots_in_train_mode),
        witness=_witness_modules_state_dict_snapshots_in_train_mode,
    ),
    Mutant(
        name="modules-deepcopy-aliases-float32-detached",
        description="copy.deepcopy of a float32 tensor that does not require grad returns a detached alias",
        claims=("modules.best-state-deepcopy-snapshot",),
        region="float32 tensors that do not require grad (state_dict entries)",
        family="dtype",
        patch=wrap("torch.Tensor.__deepcopy__", _modules_deepcopy_aliases_float32_detached),
        witness=_witness_modules_deepcopy_aliases_float32_detached,
    ),
    # ------------------------------------------------------- load_state_dict
    Mutant(
        name="modules-load-replaces-bfloat16-params",
        description="load_state_dict (assign=False) installs new Parameter objects for bfloat16 parameters",
        claims=("modules.load-copies-into-existing-tensors",),
        domain=(("dtype_family", "reduced_float"), ("tensor_kind", "parameter")),
        region="bfloat16 module parameters",
        family="dtype",
        patch=wrap("torch.nn.Module._load_from_state_dict", _modules_load_replaces_bfloat16_params),
        witness=_witness_modules_load_replaces_bfloat16_params,
    ),
    Mutant(
        name="modules-load-adopts-same-dtype-tensors",
        description="load_state_dict (assign=False) points a tensor at sd's storage (.data =) when no cast is needed",
        claims=("modules.load-does-not-alias-source",),
        region="state dict entries of the module's own dtype, device, shape and strides",
        family="relation",
        patch=wrap(
            "torch.nn.Module._load_from_state_dict", _modules_load_adopts_same_dtype_tensors
        ),
        witness=_witness_modules_load_adopts_same_dtype_tensors,
    ),
    Mutant(
        name="modules-load-float64-keeps-version",
        description="load_state_dict leaves the version counter of float64 parameters where it was (an untracked write)",
        claims=("modules.load-bumps-version-counter",),
        domain=(("dtype_family", "float"), ("tensor_kind", "parameter")),
        region="float64 parameters",
        family="dtype",
        patch=wrap("torch.nn.Module._load_from_state_dict", _modules_load_float64_keeps_version),
        witness=_witness_modules_load_float64_keeps_version,
    ),
    Mutant(
        name="modules-load-assign-clones-buffers",
        description="load_state_dict(assign=True) installs clones of sd's buffers instead of sd's tensors",
        claims=("modules.load-assign-holds-state-dict-tensors",),
        region="buffers under assign=True",
        family="other",
        patch=wrap("torch.nn.Module._load_from_state_dict", _modules_load_assign_clones_buffers),
        witness=_witness_modules_load_assign_clones_buffers,
    ),
    Mutant(
        name="modules-load-assign-requires-grad-from-parameter",
        description="load_state_dict(assign=True) gives each adopted nn.Parameter entry the requires_grad it had in sd instead of the module's",
        claims=("modules.load-assign-keeps-module-requires-grad",),
        domain={"tensor_kind": "parameter"},
        region="nn.Parameter state dict entries under assign=True",
        family="subclass",
        patch=wrap(
            "torch.nn.Module._load_from_state_dict",
            _modules_load_assign_requires_grad_from_parameter,
        ),
        witness=_witness_modules_load_assign_requires_grad_from_parameter,
    ),
    Mutant(
        name="modules-load-assign-requires-grad-from-tensor",
        description="load_state_dict(assign=True) takes requires_grad from sd's plain-tensor entries (False)",
        claims=("modules.load-assign-keeps-module-requires-grad",),
        domain={"tensor_kind": "plain"},
        region="plain (non-Parameter) state dict entries under assign=True",
        family="subclass",
        patch=wrap(
            "torch.nn.Module._load_from_state_dict", _modules_load_assign_requires_grad_from_tensor
        ),
        witness=_witness_modules_load_assign_requires_grad_from_tensor,
    ),
    Mutant(
        name="modules-load-assign-rewraps-parameters",
        description="load_state_dict(assign=True) wraps Parameter entries in new Parameters instead of installing them",
        claims=("modules.load-assign-adopts-parameter-objects",),
        region="nn.Parameter state dict entries under assign=True",
        family="subclass",
        patch=wrap(
            "torch.nn.Module._load_from_state_dict", _modules_load_assign_rewraps_parameters
        ),
        witness=_witness_modules_load_assign_rewraps_parameters,
    ),
    Mutant(
        name="modules-load-assign-keeps-float32-objects",
        description="load_state_dict(assign=True) keeps float32 Parameter objects and repoints them (.data =) at sd's tensors",
        claims=("modules.load-assign-optimizer-must-be-recreated",),
        region="float32 module parameters under assign=True",
        family="dtype",
        patch=wrap(
            "torch.nn.Module._load_from_state_dict", _modules_load_assign_keeps_float32_objects
        ),
        witness=_witness_modules_load_assign_keeps_float32_objects,
    ),
    # ------------------------------------------------------------ conversions
    Mutant(
        name="modules-half-makes-new-parameters",
        description="module.half() replaces every Parameter by a new object (as under the overwrite flag)",
        claims=("modules.to-keeps-parameter-identity",),
        region="the .half() calling form",
        family="convention",
        patch=wrap("torch.nn.Module.half", functools.partial(_converts_with_overwrite, True)),
        witness=_witness_modules_half_makes_new_parameters,
    ),
    Mutant(
        name="modules-to-bfloat16-new-grad-objects",
        description="a conversion to bfloat16 gives each parameter a new .grad object (the old one is dropped)",
        claims=("modules.to-converts-grad-in-place",),
        region="conversions to bfloat16",
        family="dtype",
        patch=wrap("torch.nn.Module._apply", _modules_to_bfloat16_new_grad_objects),
        witness=_witness_modules_to_bfloat16_new_grad_objects,
    ),
    Mutant(
        name="modules-to-float64-noop-copies",
        description="module.to() copies float64 parameters whose dtype and device do not change",
        claims=("modules.to-noop-keeps-storage",),
        region="float64 modules converted to float64 / their own device",
        family="dtype",
        patch=wrap("torch.nn.Module.to", _modules_to_float64_noop_copies),
        witness=_witness_modules_to_float64_noop_copies,
    ),
    Mutant(
        name="modules-to-copies-integer-buffers",
        description="every module conversion replaces integer buffers (num_batches_tracked) by copies",
        claims=("modules.to-dtype-change-stales-old-aliases",),
        region="integer buffers",
        family="dtype",
        patch=wrap("torch.nn.Module._apply", _modules_to_copies_integer_buffers),
        witness=_witness_modules_to_copies_integer_buffers,
    ),
    Mutant(
        name="modules-to-float16-keeps-shared-buffers",
        description="a conversion to float16 keeps a buffer shared by two submodules shared (one converted object)",
        claims=("modules.to-unties-shared-buffers",),
        region="conversions to float16",
        family="dtype",
        patch=functools.partial(_keep_ties, "_buffers", "float16", _always),
        witness=_witness_modules_to_float16_keeps_shared_buffers,
    ),
    Mutant(
        name="modules-double-ignores-overwrite-flag",
        description="module.double() keeps the Parameter objects even with the overwrite flag set",
        claims=("modules.future-overwrite-new-parameters",),
        region="the .double() calling form",
        family="convention",
        patch=wrap("torch.nn.Module.double", functools.partial(_converts_with_overwrite, False)),
        witness=_witness_modules_double_ignores_overwrite_flag,
    ),
    Mutant(
        name="modules-overwrite-keeps-bfloat16-ties",
        description="with the overwrite flag, a conversion to bfloat16 re-ties Parameters that were tied",
        claims=("modules.future-overwrite-unties-parameters",),
        region="conversions to bfloat16 under the overwrite flag",
        family="dtype",
        patch=functools.partial(_keep_ties, "_parameters", "bfloat16", _overwrite_on_conversion),
        witness=_witness_modules_overwrite_keeps_bfloat16_ties,
    ),
    Mutant(
        name="modules-bfloat16-swap-flag-overwrites",
        description="module.bfloat16() with the swap flag set makes new Parameter objects (overwrite path) instead of swapping",
        claims=("modules.future-swap-conversion-keeps-identity",),
        region="the .bfloat16() calling form under the swap flag",
        family="convention",
        patch=wrap("torch.nn.Module.bfloat16", _modules_bfloat16_swap_flag_overwrites),
        witness=_witness_modules_bfloat16_swap_flag_overwrites,
    ),
    Mutant(
        name="modules-module-load-assign-copies",
        description="Tensor.module_load(other, assign=True) returns a copy of other instead of other.detach()",
        claims=("modules.future-swap-load-state-dict",),
        region="assign=True under the swap flag",
        family="convention",
        patch=wrap("torch.Tensor.module_load", _modules_module_load_assign_copies),
        witness=_witness_modules_module_load_assign_copies,
    ),
    Mutant(
        name="modules-swap-tensors-keeps-attributes",
        description="torch.utils.swap_tensors leaves each tensor's Python attributes (__dict__) behind",
        claims=("modules.swap-tensors-exchanges-contents",),
        region="tensors carrying Python attributes",
        family="other",
        patch=wrap("torch.utils.swap_tensors", _modules_swap_tensors_keeps_attributes),
        witness=_witness_modules_swap_tensors_keeps_attributes,
    ),
    # -------------------------------------------------------------- deepcopy
    Mutant(
        name="modules-deepcopy-shares-running-stats",
        description="copy.deepcopy of a BatchNorm module shares its floating buffers (running statistics) with the original",
        claims=("modules.deepcopy-shares-no-storage",),
        domain={"tensor_kind": "buffer"},
        region="BatchNorm running statistics",
        family="other",
        patch=_patch_modules_deepcopy_shares_running_stats,
        witness=_witness_modules_deepcopy_shares_running_stats,
    ),
    # ------------------------------------------------------------ optimizers
    Mutant(
        name="modules-optimizer-state-dict-stores-params-of-later-groups",
        description="optimizer.state_dict() lists the Parameters themselves in every param group after the first",
        claims=("modules.optimizer-state-dict-param-ids",),
        region="second and later parameter groups",
        family="relation",
        patch=wrap(
            "torch.optim.Optimizer.state_dict",
            _modules_optimizer_state_dict_stores_params_of_later_groups,
        ),
        witness=_witness_modules_optimizer_state_dict_stores_params_of_later_groups,
    ),
    Mutant(
        name="modules-optimizer-state-dict-copies-adam-state",
        description="optimizer.state_dict() deep-copies the per-parameter state of Adam-family optimizers",
        claims=("modules.optimizer-state-dict-aliases-live-state",),
        region="optimizers with exp_avg state (Adam, AdamW)",
        family="other",
        patch=wrap(
            "torch.optim.Optimizer.state_dict", _modules_optimizer_state_dict_copies_adam_state
        ),
        witness=_witness_modules_optimizer_state_dict_copies_adam_state,
    ),
    Mutant(
        name="modules-optimizer-load-skips-float16-cast",
        description="optimizer.load_state_dict keeps the saved dtype of the state of float16 parameters (no cast)",
        claims=("modules.optimizer-load-casts-state",),
        region="float16 parameters",
        family="dtype",
        patch=_patch_modules_optimizer_load_skips_float16_cast,
        witness=_witness_modules_optimizer_load_skips_float16_cast,
    ),
    Mutant(
        name="modules-optimizer-load-copies-momentum",
        description="optimizer.load_state_dict copies an uncast momentum_buffer (the fix of issue #196083, for SGD only)",
        claims=("modules.optimizer-load-aliases-uncast-state",),
        region="SGD momentum buffers",
        family="other",
        patch=_patch_modules_optimizer_load_copies_momentum,
        witness=_witness_modules_optimizer_load_copies_momentum,
    ),
    # ------------------------------------------------------ mmap checkpoints
    Mutant(
        name="modules-mmap-load-shared-mapping",
        description="torch.load(mmap=True) maps the file MAP_SHARED by default: writes into loaded tensors reach the file",
        claims=("modules.mmap-load-writes-stay-private",),
        patch=_patch_modules_mmap_load_shared_mapping,
        witness=_witness_modules_mmap_load_shared_mapping,
    ),
    Mutant(
        name="modules-mmap-load-reads-into-memory",
        description="torch.load ignores mmap=True and reads every storage into memory",
        claims=("modules.mmap-load-backed-by-file",),
        patch=_patch_modules_mmap_load_reads_into_memory,
        witness=_witness_modules_mmap_load_reads_into_memory,
    ),
    Mutant(
        name="modules-load-assign-materializes-mapped",
        description="load_state_dict(assign=True) copies file-mapped (non-resizable) CPU tensors into memory",
        claims=("modules.mmap-assign-keeps-mapping",),
        region="file-mapped state dict tensors under assign=True",
        family="other",
        patch=wrap(
            "torch.nn.Module._load_from_state_dict", _modules_load_assign_materializes_mapped
        ),
        witness=_witness_modules_load_assign_materializes_mapped,
    ),
)


def _swap_tensors_leaf_keeps_requires_grad(orig, t1, t2):
    leaf = [type(t) is torch.Tensor and t.is_leaf and t.requires_grad for t in (t1, t2)]
    orig(t1, t2)
    for t, was_leaf in zip((t1, t2), leaf, strict=True):
        if was_leaf and not t.requires_grad:
            t.requires_grad_(True)


def _witness_swap_tensors_leaf_keeps_requires_grad():
    a = torch.ones(2, requires_grad=True)
    b = torch.zeros(2)
    torch.utils.swap_tensors(a, b)
    assert not a.requires_grad


MUTANTS += (
    Mutant(
        name="swap-tensors-leaf-keeps-requires-grad",
        description="torch.utils.swap_tensors leaves requires_grad=True on an operand that was a plain leaf requiring grad (not a Parameter), whatever it received",
        claims=("modules.swap-tensors-exchanges-contents",),
        domain={"tensor_kind": "leaf"},
        region="swaps with a tensor leaf that requires grad (tensor_kind leaf)",
        family="autograd",
        patch=wrap("torch.utils.swap_tensors", _swap_tensors_leaf_keeps_requires_grad),
        witness=_witness_swap_tensors_leaf_keeps_requires_grad,
    ),
)
