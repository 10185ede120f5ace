"""Mutants of the ``shared_memory`` area (Tensor.share_memory_, is_shared and
torch.multiprocessing); claims in ``conformance/claims/shared_memory.toml``, tests in
``conformance/test_shared_memory.py``.

The torch.multiprocessing mutants wrap ``reduce_tensor`` and register the
wrapper on ``ForkingPickler`` (as ``init_reductions`` does), so both the
in-process round trips and a real spawn child's parent side see them.
Helper rebuild functions are attached to ``torch.multiprocessing.reductions``
so that pickle can find them by name.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, domain_mutants
from conformance.mutants.base import Mutant
from conformance.mutants.patching import np, torch, wrap


def _register(reduce_tensor):
    """Install a wrapped ``reduce_tensor`` for tensors and Parameters (the
    pickler of ``torch.multiprocessing``) and as the module's own."""
    from multiprocessing.reduction import ForkingPickler as _FP

    import torch.multiprocessing.reductions as _r

    for _cls in (torch.Tensor, torch.nn.parameter.Parameter):
        _FP.register(_cls, reduce_tensor)
    _r.reduce_tensor = reduce_tensor


def _share_memory_copies_views(orig, self):
    if self._base is not None:
        return orig(self.clone())
    return orig(self)


def _witness_share_memory_copies_views():
    b = torch.arange(4.0)
    v = b[1:]
    assert v.share_memory_() is v
    assert b.is_shared()


def _share_memory_reshares_integral(orig, self):
    if (
        self.is_shared()
        and not (self.dtype.is_floating_point or self.dtype.is_complex)
        and self.untyped_storage().nbytes() > 0
    ):
        fresh = self.untyped_storage().clone()
        fresh.share_memory_()
        self.set_(fresh, self.storage_offset(), self.size(), self.stride())
        return self
    return orig(self)


def _witness_share_memory_reshares_integral():
    t = torch.arange(3).share_memory_()
    ptr = t.untyped_storage().data_ptr()
    t.share_memory_()
    assert t.untyped_storage().data_ptr() == ptr


def _share_memory_detaches_offset_views(orig, self):
    if self._base is not None and self.storage_offset() > 0 and self.numel() > 0:
        c = self.detach().clone()
        orig(c)
        with torch.no_grad():
            self.set_(c.untyped_storage(), c.storage_offset(), c.size(), c.stride())
        return self
    return orig(self)


def _witness_share_memory_detaches_offset_views():
    b = torch.arange(6.0)
    v = b[2:]
    v.share_memory_()
    assert b.is_shared() and v.data_ptr() == b.data_ptr() + 8


def _share_memory_keeps_numpy_alias_f64(orig, self):
    if self.dtype == torch.float64 and not self.untyped_storage().resizable():
        return self
    return orig(self)


def _witness_share_memory_keeps_numpy_alias_f64():
    t = torch.from_numpy(np.zeros(3))
    t.share_memory_()
    assert t.is_shared()


def _shared_resize_grows_privately(orig, self, *sizes, **kwargs):
    if self.device.type == "cpu" and self.is_shared():
        s = torch.UntypedStorage(self.untyped_storage().nbytes())
        s.copy_(self.untyped_storage())
        self.set_(s, self.storage_offset(), self.size(), self.stride())
    return orig(self, *sizes, **kwargs)


def _witness_shared_resize_grows_privately():
    t = torch.ones(3).share_memory_()
    t.resize_(2)
    assert t.is_shared()


def _shared_storage_resize_raises(orig, self, size):
    if self.device.type == "cpu" and self.is_shared():
        raise RuntimeError("Trying to resize storage that is not resizable")
    return orig(self, size)


def _witness_shared_storage_resize_raises():
    s = torch.ones(3).share_memory_().untyped_storage()
    try:
        s.resize_(0)
    except RuntimeError:
        pass
    assert s.nbytes() == 0


def _patch_mp_reduce_copies_noncontiguous():
    import torch.multiprocessing.reductions as _r

    _orig = _r.reduce_tensor
    _keep = []  # the copies stay alive, as the sender's tensors would

    def reduce_tensor(tensor):
        if (
            tensor.layout == torch.strided
            and not tensor.requires_grad
            and not tensor.is_contiguous()
        ):
            tensor = tensor.contiguous()
            _keep.append(tensor)
        return _orig(tensor)

    _register(reduce_tensor)


def _witness_mp_reduce_copies_noncontiguous():
    from multiprocessing.reduction import ForkingPickler

    b = torch.zeros(4)
    ForkingPickler.dumps(b[::2])
    assert b.is_shared()


def _patch_mp_reduce_restores_conj_complex64():
    import torch.multiprocessing.reductions as _r

    _orig = _r.reduce_tensor

    def _rebuild_conj(rebuild, args):
        return rebuild(*args).conj()

    _rebuild_conj.__module__ = _r.__name__
    _rebuild_conj.__qualname__ = _rebuild_conj.__name__ = "_mutant_rebuild_conj"
    _r._mutant_rebuild_conj = _rebuild_conj

    def reduce_tensor(tensor):
        rebuild, args = _orig(tensor)
        if tensor.is_conj() and tensor.dtype == torch.complex64:
            return _rebuild_conj, (rebuild, args)
        return rebuild, args

    _register(reduce_tensor)


def _witness_mp_reduce_restores_conj_complex64():
    import pickle
    from multiprocessing.reduction import ForkingPickler

    c = torch.tensor([1 + 2j], dtype=torch.complex64).conj()
    assert not pickle.loads(ForkingPickler.dumps(c)).is_conj()


def _patch_mp_allows_nonleaf_views():
    import torch.multiprocessing.reductions as _r

    _orig = _r.reduce_tensor

    def reduce_tensor(tensor):
        if tensor.requires_grad and not tensor.is_leaf and tensor._base is not None:
            tensor = tensor.detach()
        return _orig(tensor)

    _register(reduce_tensor)


def _witness_mp_allows_nonleaf_views():
    from multiprocessing.reduction import ForkingPickler

    x = torch.ones(3, requires_grad=True)
    try:
        ForkingPickler.dumps(x[1:])
        refused = False
    except RuntimeError:
        refused = True
    assert refused


def _patch_mp_sends_grad_copy_f64():
    import torch.multiprocessing.reductions as _r

    _orig = _r.reduce_tensor

    def _rebuild_with_grad(rebuild, args, grad):
        t = rebuild(*args)
        t.grad = grad
        return t

    _rebuild_with_grad.__module__ = _r.__name__
    _rebuild_with_grad.__qualname__ = _rebuild_with_grad.__name__ = "_mutant_rebuild_with_grad"
    _r._mutant_rebuild_with_grad = _rebuild_with_grad

    def reduce_tensor(tensor):
        rebuild, args = _orig(tensor)
        if tensor.dtype == torch.float64 and tensor.grad is not None:
            return _rebuild_with_grad, (rebuild, args, tensor.grad.detach().clone())
        return rebuild, args

    _register(reduce_tensor)


def _witness_mp_sends_grad_copy_f64():
    import pickle
    from multiprocessing.reduction import ForkingPickler

    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    x.grad = torch.ones(2, dtype=torch.float64)
    assert pickle.loads(ForkingPickler.dumps(x)).grad is None


def _share_memory_bumps_version_f16(orig, self):
    out = orig(self)
    if self.dtype == torch.float16:
        torch.autograd.graph.increment_version(self)
    return out


def _witness_share_memory_bumps_version_f16():
    t = torch.ones(2, dtype=torch.float16)
    t.share_memory_()
    assert t._version == 0


def _patch_module_share_memory_skips_buffers():
    def share_memory(self):
        for m in self.modules():
            for p in m._parameters.values():
                if p is not None:
                    p.share_memory_()
                    if p.grad is not None:
                        p.grad.share_memory_()
        return self

    torch.nn.Module.share_memory = share_memory


def _witness_module_share_memory_skips_buffers():
    m = torch.nn.BatchNorm1d(2)
    m.share_memory()
    assert m.running_mean.is_shared()


def _patch_mp_file_system_sends_copies():
    import torch.multiprocessing as _mp
    import torch.multiprocessing.reductions as _r

    _orig = _r.reduce_tensor
    _keep = []  # the copies stay alive, as the sender's tensors would

    def reduce_tensor(tensor):
        if (
            _mp.get_sharing_strategy() == "file_system"
            and tensor.layout == torch.strided
            and not tensor.requires_grad
        ):
            tensor = tensor.clone()
            _keep.append(tensor)
        return _orig(tensor)

    _register(reduce_tensor)


def _witness_mp_file_system_sends_copies():
    import pickle
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing as mp

    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    try:
        t = torch.zeros(3)
        u = pickle.loads(ForkingPickler.dumps(t))
        assert u.data_ptr() == t.data_ptr()
    finally:
        mp.set_sharing_strategy(old)


def _patch_mp_numpy_f64_sends_copy():
    import torch.multiprocessing.reductions as _r

    _orig = _r.reduce_tensor
    _keep = []

    def reduce_tensor(tensor):
        if (
            tensor.dtype == torch.float64
            and tensor.layout == torch.strided
            and not tensor.requires_grad
            and not tensor.untyped_storage().resizable()
        ):
            tensor = tensor.clone()
            _keep.append(tensor)
        return _orig(tensor)

    _register(reduce_tensor)


def _witness_mp_numpy_f64_sends_copy():
    import pickle
    from multiprocessing.reduction import ForkingPickler

    a = np.zeros(3)
    t = torch.from_numpy(a)
    u = pickle.loads(ForkingPickler.dumps(t))
    assert u.data_ptr() == t.data_ptr()


def _patch_mp_numpy_int32_receiver_gets_copy():
    import torch.multiprocessing.reductions as _r

    _orig = _r.reduce_tensor
    _keep = []

    def reduce_tensor(tensor):
        if (
            tensor.dtype == torch.int32
            and tensor.layout == torch.strided
            and not tensor.requires_grad
            and not tensor.untyped_storage().resizable()
        ):
            tensor.share_memory_()
            tensor = tensor.clone()
            _keep.append(tensor)
        return _orig(tensor)

    _register(reduce_tensor)


def _witness_mp_numpy_int32_receiver_gets_copy():
    import pickle
    from multiprocessing.reduction import ForkingPickler

    t = torch.from_numpy(np.zeros(3, dtype=np.int32))
    u = pickle.loads(ForkingPickler.dumps(t))
    assert u.data_ptr() == t.data_ptr()


def _patch_module_share_memory_skips_parameters():
    def share_memory(self):
        for b in self.buffers():
            b.share_memory_()
        for p in self.parameters():
            if p.grad is not None:
                p.grad.share_memory_()
        return self

    torch.nn.Module.share_memory = share_memory


def _witness_module_share_memory_skips_parameters():
    m = torch.nn.Linear(2, 2)
    assert m.share_memory() is m
    assert m.weight.is_shared()


def _share_memory_returns_copy(hit, orig_share, self):
    if hit(self):
        with torch.no_grad():
            return orig_share(self.clone())
    return orig_share(self)


def _share_memory_returns_copy_witness(make):
    t = make()
    assert t.share_memory_() is t


def _sending_drops_sender_grad(hit):
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing.reductions as _reductions

    _orig_reduce = _reductions.reduce_tensor

    def reduce_tensor(tensor):
        out = _orig_reduce(tensor)
        if tensor.grad is not None and hit(tensor):
            tensor.grad = None
        return out

    _reductions.reduce_tensor = reduce_tensor
    ForkingPickler.register(torch.Tensor, reduce_tensor)
    ForkingPickler.register(torch.nn.Parameter, reduce_tensor)


def _sending_drops_sender_grad_witness(make):
    import pickle
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing

    t = make()
    t.grad = torch.ones(3)
    g = t.grad
    pickle.loads(ForkingPickler.dumps(t))
    assert t.grad is g, "sending replaced the sender's .grad"


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="share-memory-copies-views",
        description="share_memory_() of a view returns a shared copy of it instead of moving the view's storage",
        claims=(
            "shared_memory.share-returns-self-keeps-values",
            "shared_memory.view-shares-whole-storage",
        ),
        region="views (tensors with a _base)",
        family="layout",
        patch=wrap("torch.Tensor.share_memory_", _share_memory_copies_views),
        witness=_witness_share_memory_copies_views,
    ),
    Mutant(
        name="share-memory-reshares-integral",
        description="share_memory_() of an already-shared integral or bool tensor moves it to new shared memory again",
        claims=("shared_memory.already-shared-noop",),
        region="already-shared integral and bool tensors",
        family="dtype",
        patch=wrap("torch.Tensor.share_memory_", _share_memory_reshares_integral),
        witness=_witness_share_memory_reshares_integral,
    ),
    Mutant(
        name="share-memory-detaches-offset-views",
        description="share_memory_() of a view with a storage offset moves a private copy of the view's elements (set_ onto it); the base stays private",
        claims=("shared_memory.view-shares-whole-storage",),
        region="non-empty views with a nonzero storage offset",
        family="layout",
        patch=wrap("torch.Tensor.share_memory_", _share_memory_detaches_offset_views),
        witness=_witness_share_memory_detaches_offset_views,
    ),
    Mutant(
        name="share-memory-keeps-numpy-alias-f64",
        description="share_memory_() leaves a float64 tensor on memory torch does not own (a NumPy array's) and returns it unshared",
        claims=("shared_memory.breaks-foreign-aliases",),
        region="float64 tensors over foreign (non-resizable) storage",
        family="dtype",
        patch=wrap("torch.Tensor.share_memory_", _share_memory_keeps_numpy_alias_f64),
        witness=_witness_share_memory_keeps_numpy_alias_f64,
    ),
    Mutant(
        name="shared-resize-grows-privately",
        description="Tensor.resize_ of a shared tensor first moves it to private memory, so growing it silently succeeds",
        claims=("shared_memory.resize-raises", "shared_memory.resize-crashes"),
        region="Tensor.resize_ of shared tensors (UntypedStorage.resize_ unchanged)",
        family="convention",
        patch=wrap("torch.Tensor.resize_", _shared_resize_grows_privately),
        witness=_witness_shared_resize_grows_privately,
    ),
    Mutant(
        name="shared-storage-resize-raises",
        description="UntypedStorage.resize_ of a shared storage raises 'not resizable' for every size (the crash fixed, resize to 0 refused)",
        claims=("shared_memory.resize-crashes",),
        region="UntypedStorage.resize_ of shared storages (Tensor.resize_ unchanged)",
        family="convention",
        patch=wrap("torch.UntypedStorage.resize_", _shared_storage_resize_raises),
        witness=_witness_shared_storage_resize_raises,
    ),
    Mutant(
        name="mp-reduce-copies-noncontiguous",
        description="torch.multiprocessing sends a contiguous copy of a non-contiguous tensor instead of sharing its storage",
        claims=(
            "shared_memory.sending-moves-to-shared",
            "shared_memory.received-shares-data",
            "shared_memory.child-writes-visible-both-ways",
        ),
        region="non-contiguous tensors that do not require grad",
        family="layout",
        patch=_patch_mp_reduce_copies_noncontiguous,
        witness=_witness_mp_reduce_copies_noncontiguous,
    ),
    Mutant(
        name="mp-reduce-restores-conj-complex64",
        description="torch.multiprocessing restores the conjugate bit of complex64 conjugate views (other dtypes, neg views still lose it)",
        claims=("shared_memory.lazy-bits-dropped",),
        region="complex64 conjugate views",
        family="dtype",
        patch=_patch_mp_reduce_restores_conj_complex64,
        witness=_witness_mp_reduce_restores_conj_complex64,
    ),
    Mutant(
        name="mp-allows-nonleaf-views",
        description="torch.multiprocessing sends a view of a tensor requiring grad as detached data instead of refusing it",
        claims=("shared_memory.nonleaf-requires-grad-refused",),
        region="non-leaf views that require grad",
        family="autograd",
        patch=_patch_mp_allows_nonleaf_views,
        witness=_witness_mp_allows_nonleaf_views,
    ),
    Mutant(
        name="mp-sends-grad-copy-f64",
        description="torch.multiprocessing sends a copy of .grad along with float64 tensors (rebuilt with that copy as .grad)",
        claims=("shared_memory.grad-shared", "shared_memory.grad-not-sent"),
        region="float64 tensors whose .grad is set",
        family="dtype",
        patch=_patch_mp_sends_grad_copy_f64,
        witness=_witness_mp_sends_grad_copy_f64,
    ),
    Mutant(
        name="share-memory-bumps-version-f16",
        description="share_memory_() of a float16 tensor bumps its version counter (as an in-place op would)",
        claims=("shared_memory.autograd-unaffected",),
        region="float16 tensors",
        family="dtype",
        patch=wrap("torch.Tensor.share_memory_", _share_memory_bumps_version_f16),
        witness=_witness_share_memory_bumps_version_f16,
    ),
    Mutant(
        name="module-share-memory-skips-buffers",
        description="Module.share_memory() shares parameters (and their grads) but leaves buffers private",
        claims=("shared_memory.module-share-memory",),
        domain={"tensor_kind": "buffer"},
        region="module buffers (parameters are shared)",
        family="other",
        patch=_patch_module_share_memory_skips_buffers,
        witness=_witness_module_share_memory_skips_buffers,
    ),
    Mutant(
        name="mp-file-system-sends-copies",
        description="under the file_system sharing strategy torch.multiprocessing sends a shared copy of each tensor (the sender stays private)",
        claims=("shared_memory.queue-child-every-strategy",),
        region="the file_system sharing strategy (file_descriptor unchanged)",
        family="other",
        patch=_patch_mp_file_system_sends_copies,
        witness=_witness_mp_file_system_sends_copies,
    ),
    Mutant(
        name="mp-numpy-f64-sends-copy",
        description="torch.multiprocessing sends a shared copy of a float64 tensor over NumPy (foreign) memory, leaving the sender on the array",
        claims=(
            "shared_memory.numpy-tensor-sent-shares-with-sender",
            "shared_memory.sending-severs-numpy-alias",
        ),
        region="float64 tensors over foreign (non-resizable) storage",
        family="dtype",
        patch=_patch_mp_numpy_f64_sends_copy,
        witness=_witness_mp_numpy_f64_sends_copy,
    ),
    Mutant(
        name="mp-numpy-int32-receiver-gets-copy",
        description="torch.multiprocessing moves an int32 tensor over NumPy memory to shared memory but sends a copy of it",
        claims=("shared_memory.numpy-tensor-sent-shares-with-sender",),
        region="int32 tensors over foreign (non-resizable) storage",
        family="dtype",
        patch=_patch_mp_numpy_int32_receiver_gets_copy,
        witness=_witness_mp_numpy_int32_receiver_gets_copy,
    ),
    # ---------------------------------------------- domain values (issue 29)
    *domain_mutants(
        prefix="share-memory-returns-copy",
        claims=("shared_memory.share-returns-self-keeps-values",),
        what="t.share_memory_() moves a clone of t into shared memory and returns the clone instead of t",
        patch=wrap("torch.Tensor.share_memory_", _share_memory_returns_copy),
        witness=_share_memory_returns_copy_witness,
        dims={
            "layout": LAYOUTS,
            "dtype_family": DTYPE_FAMILIES,
            "tensor_kind": ("plain", "leaf", "non_leaf", "parameter"),
        },
    ),
    *domain_mutants(
        prefix="sending-drops-sender-grad",
        claims=("shared_memory.grad-not-sent",),
        what="sending a tensor through torch.multiprocessing sets the sender's .grad to None",
        patch=_sending_drops_sender_grad,
        witness=_sending_drops_sender_grad_witness,
        dims={"tensor_kind": ("leaf", "parameter")},
    ),
    Mutant(
        name="module-share-memory-skips-parameters",
        description="nn.Module.share_memory() shares buffers and grads but leaves the parameters private",
        claims=("shared_memory.module-share-memory",),
        domain={"tensor_kind": "parameter"},
        region="a module's parameters (tensor_kind parameter; buffers and grads are shared)",
        family="other",
        patch=_patch_module_share_memory_skips_parameters,
        witness=_witness_module_share_memory_skips_parameters,
    ),
)


# Issue 29: shared_memory.lazy-bits-dropped speaks of conjugate and negative
# views; each mutant restores one of the two bits on the receiving side.
def _mp_reduce_restores_bit(is_bit, restore):
    def patch():
        import torch.multiprocessing.reductions as _r

        orig = _r.reduce_tensor

        def _rebuild_bit(rebuild, args):
            return restore(rebuild(*args))

        _rebuild_bit.__module__ = _r.__name__
        _rebuild_bit.__qualname__ = _rebuild_bit.__name__ = "_mutant_rebuild_bit"
        _r._mutant_rebuild_bit = _rebuild_bit

        def reduce_tensor(tensor):
            rebuild, args = orig(tensor)
            if is_bit(tensor):
                return _rebuild_bit, (rebuild, args)
            return rebuild, args

        _register(reduce_tensor)

    return patch


def _sent_and_received(t):
    import pickle
    from multiprocessing.reduction import ForkingPickler

    return pickle.loads(ForkingPickler.dumps(t))


def _witness_mp_reduce_restores_conj():
    assert not _sent_and_received(torch.tensor([1 + 2j]).conj()).is_conj()


def _witness_mp_reduce_restores_neg():
    assert not _sent_and_received(torch.tensor([1 + 2j]).conj().imag).is_neg()


MUTANTS += (
    Mutant(
        name="mp-reduce-restores-conj",
        description="torch.multiprocessing restores the conjugate bit of conjugate views (negative views still lose theirs)",
        claims=("shared_memory.lazy-bits-dropped",),
        domain={"math_bit": "conj"},
        region="conjugate views (math_bit conj)",
        family="other",
        patch=_mp_reduce_restores_bit(lambda t: t.is_conj(), lambda t: torch.conj(t)),
        witness=_witness_mp_reduce_restores_conj,
    ),
    Mutant(
        name="mp-reduce-restores-neg",
        description="torch.multiprocessing restores the negative bit of negative views (conjugate views still lose theirs)",
        claims=("shared_memory.lazy-bits-dropped",),
        domain={"math_bit": "neg"},
        region="negative views (math_bit neg)",
        family="other",
        patch=_mp_reduce_restores_bit(lambda t: t.is_neg(), lambda t: torch._neg_view(t)),
        witness=_witness_mp_reduce_restores_neg,
    ),
)
