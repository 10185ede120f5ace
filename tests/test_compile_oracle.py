"""The differential oracle of the compile tier (conformance/compile_oracle.py)
sees every kind of difference it claims to compare, and none where there is
none: each meta-test swaps the compiled function for a hand-broken wrapper
(no Dynamo involved, so these run in milliseconds) and checks the aspect
that must report it - and only for that wrapper."""

from __future__ import annotations

import pytest
import torch

from conformance import compile_oracle as co
from conformance.compile_oracle import ASPECTS, Inputs, differential


def _fake_compile(monkeypatch, wrap):
    """Make ``differential`` call ``wrap(fn)`` instead of torch.compile."""
    monkeypatch.setattr(co, "compiled", lambda fn, backend: wrap(fn))


def _grad_view_inputs():
    leaf = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    base = leaf * 1
    return Inputs.of(base[1], base[:, 1], base=base, leaf=leaf)


def _program(x, y):
    x.mul_(2)  # writes the base through a view
    return x, y + 1, x.detach()


def _diffs(monkeypatch, wrap, fn=_program, make=_grad_view_inputs, **kw) -> dict:
    _fake_compile(monkeypatch, wrap)
    cmp = differential(fn, make, "fake", **kw)
    return {a: d for a, d in cmp.differences.items() if d}


def test_identical_runs_agree(monkeypatch):
    assert _diffs(monkeypatch, lambda fn: fn) == {}


def test_eager_backend_agrees_with_eager_on_an_aliasing_program():
    cmp = differential(_program, _grad_view_inputs, "eager")
    assert cmp.agree, cmp.differences
    assert cmp.stats["graphs"] >= 1


def _outputs(fn, change):
    def run(*args):
        out = fn(*args)
        return tuple(change(o, args) for o in out)

    return run


def _fresh_plus_one(o, args):
    """Add 1 in place to an output sharing no storage with the arguments."""
    if not any(o.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() for a in args):
        o.detach().add_(1)
    return o


@pytest.mark.parametrize(
    ("name", "change", "aspects"),
    [
        ("values", _fresh_plus_one, {"outputs", "output-writes"}),
        ("cloned", lambda o, a: o.clone(), {"aliasing", "identity", "output-writes"}),
        ("detached", lambda o, a: o.detach(), {"metadata", "identity", "gradients"}),
        ("view-as-self", lambda o, a: o.view_as(o), {"identity"}),
    ],
)
def test_output_changes_are_seen(monkeypatch, name, change, aspects):
    got = _diffs(monkeypatch, lambda fn: _outputs(fn, change))
    assert set(got) == aspects, (name, got)


def test_dropped_input_write_is_seen(monkeypatch):
    def wrap(fn):
        def run(x, y):
            saved = x.detach().clone()
            out = fn(x, y)
            with torch.no_grad():
                x.detach().copy_(saved)  # values back, version counter left advanced
            return out

        return run

    got = _diffs(monkeypatch, wrap)
    assert "mutations" in got and "versions" not in got, got


def test_lost_version_bump_is_seen(monkeypatch):
    def wrap(fn):
        def run(x, y):
            before = (x._version, y._version)
            out = fn(x, y)
            torch._C._autograd._unsafe_set_version_counter((x, y), before)
            return out

        return run

    got = _diffs(monkeypatch, wrap)
    assert set(got) == {"versions"}, got


def test_wrong_gradient_is_seen(monkeypatch):
    def wrap(fn):
        def run(x, y):
            out = fn(x, y)
            return (out[0], out[1].register_hook(lambda g: g * 2) and out[1], out[2])

        return run

    got = _diffs(monkeypatch, wrap)
    assert set(got) == {"gradients"}, got


@pytest.mark.parametrize("eager_raises", [True, False])
def test_error_parity(monkeypatch, eager_raises):
    def fn(x):
        if eager_raises:
            return x.add_(1)  # a leaf that requires grad: refused
        return x * 2

    def wrap(f):
        def run(x):
            if eager_raises:
                return x * 2
            raise RuntimeError("compiled only")

        return run

    make = lambda: Inputs.of(torch.ones(3, requires_grad=True))  # noqa: E731
    got = _diffs(monkeypatch, wrap, fn=fn, make=make)
    assert set(got) == {"errors"}, got


def test_same_error_type_agrees_and_another_type_does_not(monkeypatch):
    def fn(x):
        return x.add_(1)

    make = lambda: Inputs.of(torch.ones(3, requires_grad=True))  # noqa: E731

    class TracingError(RuntimeError):
        pass

    def subclass(f):
        def run(x):
            raise TracingError("wrapped: a leaf Variable that requires grad")

        return run

    assert _diffs(monkeypatch, subclass, fn=fn, make=make) == {}

    def other(f):
        def run(x):
            raise ValueError("not a RuntimeError")

        return run

    assert set(_diffs(monkeypatch, other, fn=fn, make=make)) == {"errors"}


def test_output_write_reaching_other_tensors_is_seen(monkeypatch):
    """Compiled out1 aliases the input where eager's is fresh."""

    def fn(x):
        return x * 1

    def wrap(f):
        return lambda x: x.view_as(x)

    make = lambda: Inputs.of(torch.ones(3))  # noqa: E731
    got = _diffs(monkeypatch, wrap, fn=fn, make=make)
    assert {"aliasing", "output-writes"} <= set(got), got


def test_close_tolerance_accepts_rounding_and_rejects_more():
    def fn(x):
        return x * 1

    make = lambda: Inputs.of(torch.full((3,), 1.0, dtype=torch.float32))  # noqa: E731
    rtol, atol = co.TOLERANCES[torch.float32]
    for delta, ok in ((atol / 2, True), (atol * 100, False)):
        eager = co.observe(fn, make())
        comp = co.observe(lambda x, d=delta: x * 1 + d, make())
        diffs = co.compare(eager, comp, tolerance="close")
        assert (not diffs["outputs"]) is ok, (delta, diffs["outputs"])
        assert diffs["outputs"] or co.compare(eager, comp)["outputs"], "exact mode saw nothing"


def test_storage_partition_change_is_seen(monkeypatch):
    def fn(x, y):
        return x * 1

    def wrap(f):
        def run(x, y):
            x.data = y  # re-points x where eager does not
            return x * 1

        return run

    make = lambda: Inputs.of(torch.ones(3), torch.zeros(3))  # noqa: E731
    got = _diffs(monkeypatch, wrap, fn=fn, make=make)
    assert "mutations" in got and any("partition" in d for d in got["mutations"]), got


def test_check_asserts_each_aspect_under_its_claim(monkeypatch):
    from conformance.evidence import ClaimViolation

    _fake_compile(monkeypatch, lambda fn: _outputs(fn, lambda o, a: o.detach()))
    cmp = differential(_program, _grad_view_inputs, "fake", source="def f(): ...")
    with pytest.raises(ClaimViolation) as e:
        cmp.check()
    assert e.value.claim == ASPECTS["metadata"]
    assert "backend fake differs from eager (metadata)" in str(e.value)
    assert "def f(): ..." in str(e.value), "the program source is quoted"
    cmp.check(("outputs", "mutations"))  # the aspects that agree pass


def test_compile_isolation_restores_configs_and_grad_mode():
    import torch._functorch.config as fc
    import torch._inductor.config as ic

    before = (fc.enable_autograd_cache, ic.compile_threads, torch.is_grad_enabled())
    with co.compile_isolation():
        assert fc.enable_autograd_cache is False
        assert ic.compile_threads == 1
        torch.set_grad_enabled(False)
    assert (fc.enable_autograd_cache, ic.compile_threads, torch.is_grad_enabled()) == before


def test_scaled_examples_follow_the_loaded_profile():
    from hypothesis import settings

    n = settings.default.max_examples
    assert co.scaled_examples(1.0) == n
    assert co.scaled_examples(0.3) == max(1, round(n * 0.3))
    assert co.scaled_examples(0.0) == 1


def test_inputs_of_names_arguments_and_extras():
    x, b = torch.ones(2), torch.zeros(2)
    inp = Inputs.of(x, 3, base=b)
    assert inp.args == (x, 3) and list(inp.watched) == ["a0", "base"]
    assert inp.watched["a0"] is x and inp.watched["base"] is b


def test_same_error_class_tells_a_refusal_from_a_compiler_crash():
    """Eager's refusal is matched by its own type (or Dynamo's wrapping of
    it), never by a compiler failure that happens to be a RuntimeError."""
    from torch._dynamo.exc import BackendCompilerFailed, InternalTorchDynamoError, TorchRuntimeError

    from conformance.compile_oracle import _error, same_error_class

    def raised(make):
        try:
            make()
        except Exception as e:  # the exception is what is compared
            return _error(e)
        raise AssertionError("nothing raised")

    def wrapped(outer, inner):
        def make():
            try:
                raise inner
            except Exception:
                raise outer  # noqa: B904 - the implicit context is what is read

        return make

    eager = raised(wrapped(RuntimeError("result type Float can't be cast"), ValueError("x")))
    user = RuntimeError("result type Float can't be cast")

    def bcf(inner):
        return wrapped(BackendCompilerFailed.__new__(BackendCompilerFailed), inner)

    assert same_error_class(eager, raised(wrapped(TorchRuntimeError("t"), user)))
    assert same_error_class(eager, raised(bcf(user)))
    assert not same_error_class(eager, raised(bcf(AssertionError("expected size 2==3"))))
    assert not same_error_class(eager, raised(wrapped(InternalTorchDynamoError("boom"), user)))
    assert not same_error_class(eager, raised(wrapped(TypeError("t"), user)))
