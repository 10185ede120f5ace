"""Mutants of the ``gradmode`` area (no_grad, inference_mode and set_grad_enabled); claims in ``conformance/claims/gradmode.toml``,
tests in ``conformance/test_gradmode.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant
from conformance.mutants.patching import INPLACE_OPS, accepted, refused, torch, wrap, wrap_each

#: The start of torch's error for an in-place op on an inference tensor outside the mode.
_OUTSIDE = "Inplace update to inference tensor outside InferenceMode"
#: The start of torch's error for an in-place op on a view made under no_grad.
_NO_GRAD_VIEW = "A view was created in no_grad mode and is being modified inplace"


def _no_grad_exit_by_exception_keeps_mode(orig_exit, self, exc_type, exc_value, traceback):
    if exc_type is not None:
        return None
    return orig_exit(self, exc_type, exc_value, traceback)


def _witness_no_grad_exit_by_exception_keeps_mode():
    torch.set_grad_enabled(True)
    try:
        with torch.no_grad():
            raise ValueError("leave the block")
    except ValueError:
        pass
    assert torch.is_grad_enabled()


def _no_grad_normal_exit_keeps_mode(orig_exit, self, exc_type, exc_value, traceback):
    if exc_type is None:
        return None
    return orig_exit(self, exc_type, exc_value, traceback)


def _witness_no_grad_normal_exit_keeps_mode():
    torch.set_grad_enabled(True)
    with torch.no_grad():
        pass
    assert torch.is_grad_enabled()


def _no_grad_with_statement_noop(orig_enter, self):
    import sys

    # the frame that entered no_grad: 2 up, above wrap's wrapper
    if sys._getframe(2).f_code.co_filename.endswith("_contextlib.py"):
        return orig_enter(self)
    self.prev = torch.is_grad_enabled()
    return None


def _witness_no_grad_with_statement_noop():
    torch.set_grad_enabled(True)
    with torch.no_grad():
        assert not torch.is_grad_enabled()


def _patch_nested_grad_mode_exit_keeps_inner_mode():
    _depth = [0]

    def _patch(cls):
        enter, exit_ = cls.__enter__, cls.__exit__

        def __enter__(self):
            _depth[0] += 1
            return enter(self)

        def __exit__(self, *exc):
            _depth[0] -= 1
            if _depth[0] >= 1:
                return None
            return exit_(self, *exc)

        cls.__enter__, cls.__exit__ = __enter__, __exit__

    _patch(torch.no_grad)
    _patch(torch.enable_grad)


def _witness_nested_grad_mode_exit_keeps_inner_mode():
    torch.set_grad_enabled(False)
    with torch.enable_grad():
        with torch.no_grad():
            pass
        assert torch.is_grad_enabled()


def _set_grad_enabled_call_noop(orig_init, self, mode):
    import pathlib
    import sys

    # the frame that called set_grad_enabled: 2 up, above wrap's wrapper
    if "torch" in pathlib.PurePath(sys._getframe(2).f_code.co_filename).parts[-3:-1]:
        return orig_init(self, mode)
    self.prev = torch.is_grad_enabled()
    self.mode = mode


def _witness_set_grad_enabled_call_noop():
    torch.set_grad_enabled(True)
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()


def _clone_keeps_requires_grad_under_no_grad(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if (
        self.requires_grad
        and not torch.is_grad_enabled()
        and not torch.is_inference_mode_enabled()
        and not out.requires_grad
    ):
        out.requires_grad_(True)
    return out


def _witness_clone_keeps_requires_grad_under_no_grad():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        c = x.clone()
    assert c.requires_grad is False


def _clone_keeps_requires_grad_in_inference_mode(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if self.requires_grad and torch.is_inference_mode_enabled() and not out.requires_grad:
        out.requires_grad_(True)
    return out


def _witness_clone_keeps_requires_grad_in_inference_mode():
    x = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        c = x.clone()
    assert c.requires_grad is False


def _inference_inplace_outside_accepted_in_grad_mode(orig, self, *args, **kwargs):
    try:
        return orig(self, *args, **kwargs)
    except RuntimeError as e:
        if _OUTSIDE in str(e) and torch.is_grad_enabled():
            return self
        raise


def _witness_inference_inplace_outside_accepted_in_grad_mode():
    with torch.inference_mode():
        t = torch.ones(3)
    with refused(RuntimeError, "in-place on an inference tensor in grad mode did not raise"):
        t.add_(1)


def _inference_inplace_inside_refused(orig, self, *args, **kwargs):
    if torch.is_inference_mode_enabled() and self.is_inference():
        raise RuntimeError(_OUTSIDE + ".")
    return orig(self, *args, **kwargs)


def _witness_inference_inplace_inside_refused():
    with torch.inference_mode():
        t = torch.ones(3)
        with accepted(RuntimeError, "in-place inside inference_mode refused"):
            t.add_(1)
    assert t.tolist() == [2.0, 2.0, 2.0]


def _tensor_no_grad_drops_requires_grad(orig, data, *args, **kwargs):
    out = orig(data, *args, **kwargs)
    if out.requires_grad and not torch.is_grad_enabled():
        out.requires_grad_(False)
    return out


def _witness_tensor_no_grad_drops_requires_grad():
    with torch.no_grad():
        t = torch.tensor([1.0], requires_grad=True)
    assert t.requires_grad


def _patch_inference_mode_is_no_grad():
    def __enter__(self):
        self._ctx = torch.no_grad()
        self._ctx.__enter__()

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)

    torch.inference_mode.__enter__ = __enter__
    torch.inference_mode.__exit__ = __exit__


def _witness_inference_mode_is_no_grad():
    with torch.inference_mode():
        y = torch.ones(3) * 2
    assert y.is_inference()


def _patch_set_grad_enabled_exit_enables():
    def __exit__(self, *exc):
        torch._C._set_grad_enabled(True)

    torch.set_grad_enabled.__exit__ = __exit__


def _witness_set_grad_enabled_exit_enables():
    with torch.no_grad():
        with torch.set_grad_enabled(True):
            pass
        assert not torch.is_grad_enabled()


def _patch_no_grad_decorator_noop():
    def __call__(self, func):
        return func

    torch.no_grad.__call__ = __call__


def _witness_no_grad_decorator_noop():

    @torch.no_grad()
    def f():
        return torch.is_grad_enabled()

    assert f() is False


def _inference_clone_stays_inference(orig, self, *args, **kwargs):
    if self.is_inference() and not torch.is_inference_mode_enabled():
        with torch.inference_mode():
            return orig(self, *args, **kwargs)
    return orig(self, *args, **kwargs)


def _witness_inference_clone_stays_inference():
    with torch.inference_mode():
        t = torch.ones(3)
    assert not t.clone().is_inference()


def _patch_inference_version_readable():
    _desc = torch._C.TensorBase._version

    def _get(self):
        if self.is_inference():
            return 0
        return _desc.__get__(self)

    torch.Tensor._version = property(_get)


def _witness_inference_version_readable():
    with torch.inference_mode():
        t = torch.ones(3)
    with refused(RuntimeError, "reading _version of an inference tensor did not raise"):
        _ = t._version


def _clone_keeps_requires_grad_when_disabled(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if self.requires_grad and not torch.is_grad_enabled() and not out.requires_grad:
        out.requires_grad_(True)
    return out


def _witness_clone_keeps_requires_grad_when_disabled():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        c = x.clone()
    assert c.requires_grad is False


def _threads_inherit_disabled_grad_mode(start, self):
    enabled = torch.is_grad_enabled()
    inference = torch.is_inference_mode_enabled()
    if not enabled or inference:
        run = self.run

        def run_in_mode():
            ctx = torch.inference_mode() if inference else torch.set_grad_enabled(enabled)
            with ctx:
                return run()

        self.run = run_in_mode
    return start(self)


def _witness_threads_inherit_disabled_grad_mode():
    import threading

    seen = {}
    with torch.no_grad():
        t = threading.Thread(target=lambda: seen.setdefault("enabled", torch.is_grad_enabled()))
        t.start()
        t.join()
    assert seen["enabled"] is True


def _no_grad_inplace_skips_bump_reduced(orig, self, *args, **kwargs):
    if (
        not torch.is_grad_enabled()
        and not torch.is_inference_mode_enabled()
        and self.dtype in (torch.float16, torch.bfloat16)
    ):
        orig(self.data, *args, **kwargs)
        return self
    return orig(self, *args, **kwargs)


def _witness_no_grad_inplace_skips_bump_reduced():
    x = torch.ones(3, dtype=torch.float16, requires_grad=True)
    with torch.no_grad():
        x.mul_(2)
    assert x._version == 1


def _no_grad_copy_into_leaf_refused(orig, self, src, non_blocking=False):
    if self.requires_grad and self.is_leaf and not torch.is_grad_enabled():
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    return orig(self, src, non_blocking)


def _witness_no_grad_copy_into_leaf_refused():
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        with accepted(RuntimeError, "copy_ under no_grad into a leaf raised"):
            w.copy_(torch.zeros(3))
    assert w.detach().tolist() == [0.0, 0.0, 0.0]


def _no_grad_view_inplace_allowed_double(orig, self, *args, **kwargs):
    try:
        return orig(self, *args, **kwargs)
    except RuntimeError as e:
        if _NO_GRAD_VIEW in str(e) and self.dtype in (torch.float64, torch.complex128):
            with torch.no_grad():
                return orig(self, *args, **kwargs)
        raise


def _witness_no_grad_view_inplace_allowed_double():
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        v = x[1:]
    with refused(RuntimeError, "in-place on a view made under no_grad did not raise"):
        v.mul_(2)


def _dropout_off_under_no_grad(orig, input, p=0.5, training=True, inplace=False):
    return orig(input, p, training and torch.is_grad_enabled(), inplace)


def _witness_dropout_off_under_no_grad():
    with torch.no_grad():
        out = torch.nn.Dropout(p=1.0)(torch.ones(3))
    assert bool((out == 0).all())


def _inference_mode_views_of_normal_copy(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if torch.is_inference_mode_enabled() and not self.is_inference():
        out = out.clone()
    return out


def _witness_inference_mode_views_of_normal_copy():
    x = torch.ones(2, 3)
    with torch.inference_mode():
        v = x.permute(1, 0)
    assert not v.is_inference()


def _inference_inplace_outside_accepted_under_no_grad(orig, self, *args, **kwargs):
    try:
        return orig(self, *args, **kwargs)
    except RuntimeError as e:
        if _OUTSIDE in str(e) and not torch.is_grad_enabled():
            return self
        raise


def _witness_inference_inplace_outside_accepted_under_no_grad():
    with torch.inference_mode():
        t = torch.ones(3)
    with torch.no_grad():
        with refused(RuntimeError, "in-place on an inference tensor under no_grad did not raise"):
            t.add_(1)


def _patch_inference_requires_grad_attribute_accepted():
    _desc = torch._C.TensorBase.requires_grad

    def _set(self, value):
        if value and self.is_inference() and not torch.is_inference_mode_enabled():
            with torch.inference_mode():
                return _desc.__set__(self, value)
        return _desc.__set__(self, value)

    torch.Tensor.requires_grad = property(_desc.__get__, _set)


def _witness_inference_requires_grad_attribute_accepted():
    with torch.inference_mode():
        t = torch.ones(3)
    with refused(RuntimeError, "requires_grad = True on an inference tensor did not raise"):
        t.requires_grad = True


def _patch_mul_clones_inference_operand():
    _mul = torch.Tensor.__mul__
    _tmul = torch.mul

    def _fix(a, b):
        if (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and torch.is_grad_enabled()
            and not torch.is_inference_mode_enabled()
        ):
            if a.is_inference() and b.requires_grad:
                a = a.clone()
            elif b.is_inference() and a.requires_grad:
                b = b.clone()
        return a, b

    def __mul__(a, b):
        return _mul(*_fix(a, b))

    def mul(a, b, *args, **kwargs):
        return _tmul(*_fix(a, b), *args, **kwargs)

    torch.Tensor.__mul__ = __mul__
    torch.mul = mul


def _witness_mul_clones_inference_operand():
    with torch.inference_mode():
        t = torch.ones(3)
    n = torch.ones(3, requires_grad=True)
    with refused(RuntimeError, "saving an inference tensor for backward did not raise"):
        n * t


def _like_factories_drop_requires_grad_in_inference(orig, *args, **kwargs):
    if torch.is_inference_mode_enabled():
        kwargs.pop("requires_grad", None)
    return orig(*args, **kwargs)


def _witness_like_factories_drop_requires_grad_in_inference():
    with torch.inference_mode():
        t = torch.zeros_like(torch.ones(3), requires_grad=True)
    assert t.requires_grad


def _inference_mode_skips_bump_integral(orig, self, *args, **kwargs):
    if (
        torch.is_inference_mode_enabled()
        and not self.is_inference()
        and not (self.is_floating_point() or self.is_complex())
    ):
        orig(self.data, *args, **kwargs)
        return self
    return orig(self, *args, **kwargs)


def _witness_inference_mode_skips_bump_integral():
    x = torch.zeros(3, dtype=torch.int64)
    with torch.inference_mode():
        x.add_(1)
    assert x._version == 1


def _patch_grad_modes_noop_outside_main_thread():
    import threading

    def _other_thread():
        return threading.current_thread() is not threading.main_thread()

    _sge = torch.set_grad_enabled
    _init, _enter = _sge.__init__, _sge.__enter__

    def __init__(self, mode):
        if mode or not _other_thread():
            return _init(self, mode)
        self.prev = torch.is_grad_enabled()
        self.mode = mode

    def __enter__(self):
        if self.mode or not _other_thread():
            return _enter(self)
        return None

    _sge.__init__, _sge.__enter__ = __init__, __enter__
    _inf = torch.inference_mode
    _inf_enter, _inf_exit = _inf.__enter__, _inf.__exit__

    def _inf_enter_patched(self):
        self._mutant_skipped = _other_thread()
        if self._mutant_skipped:
            return None
        return _inf_enter(self)

    def _inf_exit_patched(self, *exc):
        if getattr(self, "_mutant_skipped", False):
            return None
        return _inf_exit(self, *exc)

    _inf.__enter__, _inf.__exit__ = _inf_enter_patched, _inf_exit_patched


def _witness_grad_modes_noop_outside_main_thread():
    import threading

    seen = {}

    def body():
        with torch.no_grad():
            seen["no_grad"] = torch.is_grad_enabled()
        with torch.inference_mode():
            seen["inference"] = torch.is_inference_mode_enabled()

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == {"no_grad": False, "inference": True}, seen


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="no-grad-exit-by-exception-keeps-mode",
        description="a no_grad block (or @no_grad function) left by an exception does not restore the enclosing grad mode: grad mode stays disabled after it",
        claims=("gradmode.set-grad-enabled-restores",),
        domain={"exception_exit": True},
        region="no_grad blocks left by an exception",
        family="mode",
        patch=wrap("torch.no_grad.__exit__", _no_grad_exit_by_exception_keeps_mode),
        witness=_witness_no_grad_exit_by_exception_keeps_mode,
    ),
    Mutant(
        name="no-grad-normal-exit-keeps-mode",
        description="a no_grad block (or @no_grad function) left normally does not restore the enclosing grad mode: grad mode stays disabled after it (a block left by an exception restores it)",
        claims=("gradmode.set-grad-enabled-restores",),
        domain={"exception_exit": False},
        region="no_grad blocks left normally (no exception)",
        family="mode",
        patch=wrap("torch.no_grad.__exit__", _no_grad_normal_exit_keeps_mode),
        witness=_witness_no_grad_normal_exit_keeps_mode,
    ),
    Mutant(
        name="no-grad-with-statement-noop",
        description="torch.no_grad() entered by a with statement does not disable grad (the decorator form, which enters it from torch's context_decorator, works)",
        claims=(
            "gradmode.set-grad-enabled-restores",
            "gradmode.thread-local",
            "gradmode.no-grad-results-not-require-grad",
            "gradmode.modes-override-requires-grad",
        ),
        domain={"block_form": "with"},
        region="the with-statement form of torch.no_grad() only",
        family="convention",
        patch=wrap("torch.no_grad.__enter__", _no_grad_with_statement_noop),
        witness=_witness_no_grad_with_statement_noop,
    ),
    Mutant(
        name="nested-grad-mode-exit-keeps-inner-mode",
        description="a no_grad or enable_grad scope (with block or decorated function) nested inside another one leaves its own mode in force on exit instead of restoring the enclosing one (an outermost scope restores it)",
        claims=("gradmode.set-grad-enabled-restores",),
        domain={"block_form": "nested"},
        region="no_grad / enable_grad scopes nested inside another no_grad / enable_grad scope",
        family="mode",
        patch=_patch_nested_grad_mode_exit_keeps_inner_mode,
        witness=_witness_nested_grad_mode_exit_keeps_inner_mode,
    ),
    Mutant(
        name="set-grad-enabled-call-noop",
        description="torch.set_grad_enabled(mode) called as a function from user code does not change the mode (as a with block it works: __enter__ sets it)",
        claims=("gradmode.set-grad-enabled-restores", "gradmode.thread-local"),
        domain={"block_form": "call"},
        region="set_grad_enabled(mode) called as a function by user code",
        family="convention",
        patch=wrap("torch.set_grad_enabled.__init__", _set_grad_enabled_call_noop),
        witness=_witness_set_grad_enabled_call_noop,
    ),
    Mutant(
        name="clone-keeps-requires-grad-under-no-grad",
        description="clone() under no_grad (not in inference_mode) of a tensor that requires grad returns a copy that requires grad",
        claims=(
            "gradmode.modes-override-requires-grad",
            "gradmode.views-in-disabled-mode-require-grad",
        ),
        domain={"grad_mode": "no_grad"},
        region="clone() of tensors requiring grad under no_grad",
        family="mode",
        patch=wrap(
            "torch.Tensor.clone", _clone_keeps_requires_grad_under_no_grad, also=("torch.clone",)
        ),
        witness=_witness_clone_keeps_requires_grad_under_no_grad,
    ),
    Mutant(
        name="clone-keeps-requires-grad-in-inference-mode",
        description="clone() inside inference_mode of a tensor that requires grad returns a copy that requires grad",
        claims=(
            "gradmode.modes-override-requires-grad",
            "gradmode.views-in-disabled-mode-require-grad",
        ),
        domain={"grad_mode": "inference_mode"},
        region="clone() of tensors requiring grad inside inference_mode",
        family="mode",
        patch=wrap(
            "torch.Tensor.clone",
            _clone_keeps_requires_grad_in_inference_mode,
            also=("torch.clone",),
        ),
        witness=_witness_clone_keeps_requires_grad_in_inference_mode,
    ),
    Mutant(
        name="inference-inplace-outside-accepted-in-grad-mode",
        description="an in-place update of an inference tensor outside inference_mode is accepted silently (the written tensor returned) when grad mode is enabled, instead of raising",
        claims=(
            "gradmode.inference-inplace-outside-writes-then-raises",
            "gradmode.inference-immutable-outside",
        ),
        domain={"grad_mode": "enabled"},
        region="in-place updates of inference tensors outside inference_mode with grad enabled",
        family="mode",
        patch=wrap_each(INPLACE_OPS, _inference_inplace_outside_accepted_in_grad_mode),
        witness=_witness_inference_inplace_outside_accepted_in_grad_mode,
    ),
    Mutant(
        name="inference-inplace-inside-refused",
        description="an in-place update of an inference tensor inside inference_mode raises 'Inplace update to inference tensor outside InferenceMode' before writing (as if outside the mode)",
        claims=("gradmode.inference-inplace-outside-writes-then-raises",),
        domain={"grad_mode": "inference_mode"},
        region="in-place updates of inference tensors inside inference_mode",
        family="mode",
        patch=wrap_each(INPLACE_OPS, _inference_inplace_inside_refused),
        witness=_witness_inference_inplace_inside_refused,
    ),
    Mutant(
        name="tensor-no-grad-drops-requires-grad",
        description="torch.tensor(..., requires_grad=True) under no_grad returns a tensor that does not require grad",
        claims=("gradmode.no-grad-factories-unaffected",),
        region="requires_grad=True inside no_grad",
        family="mode",
        patch=wrap("torch.tensor", _tensor_no_grad_drops_requires_grad),
        witness=_witness_tensor_no_grad_drops_requires_grad,
    ),
    Mutant(
        name="inference-mode-is-no-grad",
        description="inference_mode behaves like no_grad: results are normal tensors with version counters",
        claims=("gradmode.inference-results-are-inference",),
        patch=_patch_inference_mode_is_no_grad,
        witness=_witness_inference_mode_is_no_grad,
    ),
    Mutant(
        name="set-grad-enabled-exit-enables",
        description="leaving a set_grad_enabled(...) block turns grad mode on instead of restoring the outer mode",
        claims=("gradmode.set-grad-enabled-restores",),
        region="set_grad_enabled blocks inside no_grad",
        family="mode",
        patch=_patch_set_grad_enabled_exit_enables,
        witness=_witness_set_grad_enabled_exit_enables,
    ),
    Mutant(
        name="no-grad-decorator-noop",
        description="@torch.no_grad() used as a decorator does not disable grad (the with-form works)",
        claims=(
            "gradmode.set-grad-enabled-restores",
            "gradmode.thread-local",
            "gradmode.no-grad-results-not-require-grad",
            "gradmode.modes-override-requires-grad",
        ),
        domain={"block_form": "decorator"},
        region="the decorator form @torch.no_grad() only",
        family="convention",
        patch=_patch_no_grad_decorator_noop,
        witness=_witness_no_grad_decorator_noop,
    ),
    Mutant(
        name="inference-clone-stays-inference",
        description="clone() of an inference tensor outside inference mode is still an inference tensor",
        claims=("gradmode.inference-clone-outside-is-normal",),
        region="inference tensors cloned outside inference mode",
        family="mode",
        patch=wrap("torch.Tensor.clone", _inference_clone_stays_inference, also=("torch.clone",)),
        witness=_witness_inference_clone_stays_inference,
    ),
    Mutant(
        name="inference-version-readable",
        description="reading _version of an inference tensor returns 0 instead of raising",
        claims=("gradmode.inference-no-version-counter",),
        region="inference tensors",
        family="mode",
        patch=_patch_inference_version_readable,
        witness=_witness_inference_version_readable,
    ),
    Mutant(
        name="clone-keeps-requires-grad-when-disabled",
        description="clone() with grad disabled (no_grad or inference_mode) of a tensor that requires grad returns a copy that requires grad ('copy every flag')",
        claims=(
            "gradmode.no-grad-results-not-require-grad",
            "gradmode.modes-override-requires-grad",
        ),
        region="clone() of tensors requiring grad under no_grad or inference_mode",
        family="mode",
        patch=wrap(
            "torch.Tensor.clone", _clone_keeps_requires_grad_when_disabled, also=("torch.clone",)
        ),
        witness=_witness_clone_keeps_requires_grad_when_disabled,
    ),
    Mutant(
        name="threads-inherit-disabled-grad-mode",
        description="a thread started while grad mode is disabled runs with the starting thread's mode (no_grad / inference_mode is propagated to new threads)",
        claims=("gradmode.thread-local",),
        region="threads started inside no_grad, set_grad_enabled(False) or inference_mode",
        family="mode",
        patch=wrap("threading.Thread.start", _threads_inherit_disabled_grad_mode),
        witness=_witness_threads_inherit_disabled_grad_mode,
    ),
    Mutant(
        name="no-grad-inplace-skips-bump-reduced",
        description="an in-place op under no_grad on a float16/bfloat16 tensor writes through an untracked alias (.data) and does not bump the version counter",
        claims=("gradmode.no-grad-inplace-bumps-version",),
        region="float16 and bfloat16 tensors updated in place under no_grad",
        family="mode",
        patch=wrap_each(INPLACE_OPS, _no_grad_inplace_skips_bump_reduced),
        witness=_witness_no_grad_inplace_skips_bump_reduced,
    ),
    Mutant(
        name="no-grad-copy-into-leaf-refused",
        description="copy_() into a leaf that requires grad raises the leaf-variable error even under no_grad (the check ignores grad mode)",
        claims=("gradmode.no-grad-inplace-on-leaf-allowed",),
        region="copy_() into leaves requiring grad with grad disabled",
        family="mode",
        patch=wrap("torch.Tensor.copy_", _no_grad_copy_into_leaf_refused),
        witness=_witness_no_grad_copy_into_leaf_refused,
    ),
    Mutant(
        name="no-grad-view-inplace-allowed-double",
        description="an in-place op in grad mode on a float64/complex128 view made under no_grad is run untracked instead of raising the 'view was created in no_grad mode' error",
        claims=("gradmode.no-grad-view-inplace-raises",),
        region="float64 and complex128 views made under no_grad",
        family="dtype",
        patch=wrap_each(INPLACE_OPS, _no_grad_view_inplace_allowed_double),
        witness=_witness_no_grad_view_inplace_allowed_double,
    ),
    Mutant(
        name="dropout-off-under-no-grad",
        description="F.dropout treats grad-disabled calls as evaluation (training=False), so no_grad acts like eval() for Dropout",
        claims=("gradmode.no-grad-is-not-eval",),
        region="Dropout called under no_grad",
        family="mode",
        patch=wrap("torch.nn.functional.dropout", _dropout_off_under_no_grad),
        witness=_witness_dropout_off_under_no_grad,
    ),
    Mutant(
        name="inference-mode-views-of-normal-copy",
        description="inside inference_mode, permute/unsqueeze/squeeze of a normal tensor return a copy (an inference tensor) instead of a normal view",
        claims=("gradmode.inference-views-follow-base",),
        region="permute, unsqueeze and squeeze of normal tensors inside inference_mode",
        family="mode",
        patch=wrap_each(
            [
                f"{owner}.{op}"
                for op in ("permute", "unsqueeze", "squeeze")
                for owner in ("torch.Tensor", "torch")
            ],
            _inference_mode_views_of_normal_copy,
        ),
        witness=_witness_inference_mode_views_of_normal_copy,
    ),
    Mutant(
        name="inference-inplace-outside-accepted-under-no-grad",
        description="an in-place update of an inference tensor outside inference_mode is accepted silently when grad is disabled (no_grad), instead of writing and raising",
        claims=(
            "gradmode.inference-inplace-outside-writes-then-raises",
            "gradmode.inference-immutable-outside",
        ),
        domain={"grad_mode": "no_grad"},
        region="in-place updates of inference tensors under no_grad",
        family="mode",
        patch=wrap_each(INPLACE_OPS, _inference_inplace_outside_accepted_under_no_grad),
        witness=_witness_inference_inplace_outside_accepted_under_no_grad,
    ),
    Mutant(
        name="inference-requires-grad-attribute-accepted",
        description="assigning t.requires_grad = True to an inference tensor outside inference_mode is accepted (the attribute setter skips the check the method makes)",
        claims=("gradmode.inference-requires-grad-outside-raises",),
        region="the attribute form t.requires_grad = True",
        family="convention",
        patch=_patch_inference_requires_grad_attribute_accepted,
        witness=_witness_inference_requires_grad_attribute_accepted,
    ),
    Mutant(
        name="mul-clones-inference-operand",
        description="a recorded mul with an inference tensor and a tensor that requires grad clones the inference operand to save it, instead of raising 'Inference tensors cannot be saved for backward'",
        claims=("gradmode.inference-cannot-be-saved", "gradmode.inference-not-usable-in-autograd"),
        region="mul of an inference tensor with a tensor that requires grad",
        family="relation",
        patch=_patch_mul_clones_inference_operand,
        witness=_witness_mul_clones_inference_operand,
    ),
    Mutant(
        name="like-factories-drop-requires-grad-in-inference",
        description="inside inference_mode the *_like factories ignore requires_grad=True",
        claims=("gradmode.inference-factory-requires-grad",),
        region="zeros_like, ones_like, empty_like, full_like and rand_like inside inference_mode",
        family="convention",
        patch=wrap_each(
            [
                f"torch.{f}"
                for f in ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like")
            ],
            _like_factories_drop_requires_grad_in_inference,
        ),
        witness=_witness_like_factories_drop_requires_grad_in_inference,
    ),
    Mutant(
        name="inference-mode-skips-bump-integral",
        description="inside inference_mode an in-place op on a normal integer or bool tensor writes through an untracked alias and skips the version bump",
        claims=(
            "gradmode.inference-normal-inplace-bumps",
            "gradmode.inference-disables-version-bumps",
        ),
        region="normal integer and bool tensors updated inside inference_mode",
        family="dtype",
        patch=wrap_each(INPLACE_OPS, _inference_mode_skips_bump_integral),
        witness=_witness_inference_mode_skips_bump_integral,
    ),
    Mutant(
        name="grad-modes-noop-outside-main-thread",
        description="no_grad, set_grad_enabled(False) (with block, decorator or function call) and inference_mode entered in a thread other than the main one do not disable anything there (a thread-local state initialised for the main thread only); in the main thread they work",
        claims=(
            "gradmode.thread-local",
            "gradmode.set-grad-enabled-restores",
            "gradmode.no-grad-results-not-require-grad",
            "gradmode.modes-override-requires-grad",
        ),
        domain={"block_form": "thread"},
        region="grad modes entered in a thread other than the main thread",
        family="mode",
        patch=_patch_grad_modes_noop_outside_main_thread,
        witness=_witness_grad_modes_noop_outside_main_thread,
    ),
)

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, domain_mutants  # noqa: E402


# Issue 29: gradmode.inference-results-are-inference and
# gradmode.inference-views-follow-base speak of every dtype family; each mutant
# reports an inference tensor of one family as a normal tensor.
def _not_inference(hit, orig_is_inference, self):
    out = orig_is_inference(self)
    if out and hit(self):
        return False
    return out


def _inference_tensor_reported_normal_witness(make):
    with torch.inference_mode():
        t = make().clone()
    assert t.is_inference(), "a tensor made inside inference_mode is not an inference tensor"


MUTANTS += domain_mutants(
    prefix="inference-tensor-reported-normal",
    claims=("gradmode.inference-results-are-inference", "gradmode.inference-views-follow-base"),
    what="t.is_inference() is False for an inference tensor",
    patch=wrap("torch.Tensor.is_inference", _not_inference, also=("torch.is_inference",)),
    witness=_inference_tensor_reported_normal_witness,
    dims={"dtype_family": DTYPE_FAMILIES},
)


def _inference_view_reported_normal_witness(make):
    with torch.inference_mode():
        t = make()
    assert t.is_inference(), "a tensor made inside inference_mode is not an inference tensor"


# The layout families: a view keeps its base's layout (t[...], unsqueeze,
# expand), so only the views claim sees a layout-guarded mutant.
MUTANTS += domain_mutants(
    prefix="inference-view-reported-normal",
    claims=("gradmode.inference-views-follow-base",),
    what="t.is_inference() is False for an inference tensor",
    patch=wrap("torch.Tensor.is_inference", _not_inference, also=("torch.is_inference",)),
    witness=_inference_view_reported_normal_witness,
    dims={"layout": LAYOUTS},  # fmt: skip
)


# The tensor kinds of the root whose no_grad view is written in grad mode
# (gradmode.no-grad-view-inplace-raises): the write goes through silently,
# as if made under no_grad, when the view's base is a leaf (or a non-leaf).
def _no_grad_view_write_accepted(hit):
    def patch(name):
        orig = getattr(torch.Tensor, name)

        def patched(self, *args, **kwargs):
            base = self._base
            if (
                base is not None
                and torch.is_grad_enabled()
                and self.requires_grad
                and self.grad_fn is None
                and hit(base)
            ):
                with torch.no_grad():
                    return orig(self, *args, **kwargs)
            return orig(self, *args, **kwargs)

        setattr(torch.Tensor, name, patched)

    for name in ("fill_", "zero_", "copy_", "add_", "mul_", "__setitem__"):
        patch(name)


def _witness_no_grad_view_write_accepted(make):
    x = make()
    with torch.no_grad():
        v = x[...]
    try:
        v.fill_(1)
    except RuntimeError as e:
        assert "no_grad mode" in str(e), str(e)
    else:
        raise AssertionError("an in-place write through a no_grad view was accepted")


MUTANTS += domain_mutants(
    prefix="no-grad-view-write-accepted",
    claims=("gradmode.no-grad-view-inplace-raises",),
    what="an in-place write in grad mode through a view made under no_grad is accepted",
    patch=_no_grad_view_write_accepted,
    witness=_witness_no_grad_view_write_accepted,
    dims={"tensor_kind": ("leaf", "non_leaf")},
)
