"""Compile bugs around grad modes, found by the generated programs, each on
fixed forms (see :mod:`conformance.compile_findings`): output views made in
another grad mode, writes made in mixed modes, a no_grad view of a written
tensor, and history gained in an enable_grad block.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from conformance import evidence
from conformance.compile_findings import (
    CASES,
    COMPILED,
    expect_same,
    grad_input,
    run_case,
    value_of,
)
from conformance.compile_oracle import Inputs

# compile_oracle snapshots with detach().clone()
pytestmark = pytest.mark.observes("clone", "detach")


# --------------------------------------------------------------------------- grad mode of output views


def _view_grad_mode(device, form: str):
    def no_grad_view(x):
        with torch.no_grad():
            v = x[1:]
        return v

    def enable_grad_view(x):
        with torch.enable_grad():
            v = x[1:]
        return v

    def view_of_returned_intermediate(x):
        # dev seed 18 on 2.13: the view is regenerated from the returned base
        with torch.enable_grad():
            t0 = x * 1
            t1 = t0[1:]
        return t1, t0

    def make():
        leaf, x = grad_input(device)
        return Inputs.of(x, leaf=leaf)

    return {
        "no_grad-view": (no_grad_view, make, "grad"),
        "enable_grad-view": (enable_grad_view, make, "no_grad"),
        "enable_grad-view-of-returned-intermediate": (
            view_of_returned_intermediate,
            make,
            "no_grad",
        ),
        "same-mode-view": (no_grad_view, make, "no_grad"),
    }[form]


CASES["view-grad-mode"] = _view_grad_mode

VIEW_FORMS = [
    "no_grad-view",
    "enable_grad-view",
    "enable_grad-view-of-returned-intermediate",
    "same-mode-view",
]


@pytest.mark.claim("compile.output-autograd-metadata-matches-eager")
@given(form=st.sampled_from(VIEW_FORMS))
def test_output_view_made_in_another_grad_mode(device, backend, form):
    """A view of an input (or of an intermediate returned beside it) made
    inside a no_grad (or enable_grad) block and returned keeps eager's
    autograd metadata. Deviates (aot_eager, inductor) when the block's mode
    differs from the caller's.

    Kills: a compile path that regenerates output views with the wrong
    autograd metadata."""
    expect_same(run_case("view-grad-mode", device, backend, form), "metadata")


@pytest.mark.claim("compile.output-view-grad-mode-regenerated")
@given(form=st.sampled_from(VIEW_FORMS))
def test_output_view_grad_mode_regenerated_pinned(device, backend, form):
    """Pins today's behaviour: under aot_eager/inductor the view's grad_fn
    follows the caller's grad mode, not the block's (the view of a returned
    intermediate comes back as a leaf)."""
    cmp = run_case("view-grad-mode", device, backend, form)
    c, e = cmp.compiled, cmp.eager
    out = c.outputs[0]
    if backend in COMPILED and form != "same-mode-view":
        caller_grad = form == "no_grad-view"
        assert out["grad_fn_none"] is not caller_grad, f"grad_fn pinned per caller's mode: {out}"
    else:
        assert (out["grad_fn_none"], out["is_leaf"]) == (
            e.outputs[0]["grad_fn_none"],
            e.outputs[0]["is_leaf"],
        ), f"metadata {out} differs from eager {e.outputs[0]}"
    assert value_of(c, "out0") == [2.0, 3.0, 4.0], f"values {value_of(c, 'out0')}"


# --------------------------------------------------------------------------- mixed-mode writes


def _mixed_mode(device, form: str):
    def no_grad_then_enable_grad(a):
        a.mul_(2)
        with torch.enable_grad():
            a.mul_(-1)
        return a * 1

    def no_grad_then_grad(a):
        with torch.no_grad():
            a.mul_(2)
        a.mul_(-1)
        return a * 1

    def make():
        leaf, x = grad_input(device)
        return Inputs.of(x, leaf=leaf)

    def enable_grad_only(a):
        with torch.enable_grad():
            a.mul_(-2)
        return a * 1

    if form == "no_grad-then-enable_grad":
        return no_grad_then_enable_grad, make, "no_grad"
    if form == "enable_grad-only":
        return enable_grad_only, make, "no_grad"
    return no_grad_then_grad, make, "grad"


CASES["mixed-mode"] = _mixed_mode

MIXED_FORMS = ["no_grad-then-enable_grad", "enable_grad-only", "no_grad-block-then-grad"]


@pytest.mark.claim("compile.gradients-match-eager")
@given(form=st.sampled_from(MIXED_FORMS))
def test_mixed_mode_writes_into_grad_input(device, backend, form):
    """Writes into an input requiring grad inside an enable_grad block of a
    function called under no_grad (alone, or after a write with grad
    disabled), or inside no_grad then with grad (called with grad): the
    leaf's gradient is eager's. Deviates (aot_eager, inductor) for the
    enable_grad blocks.

    Kills: a compile path that changes gradients."""
    expect_same(run_case("mixed-mode", device, backend, form), "gradients")


@pytest.mark.claim("compile.mixed-mode-input-mutation-gradient")
@given(form=st.sampled_from(MIXED_FORMS))
def test_mixed_mode_input_mutation_gradient_pinned(device, backend, form):
    """Pins today's behaviour: the leaf's gradient differs from eager's under
    aot_eager/inductor for the enable_grad form; values are eager's."""
    cmp = run_case("mixed-mode", device, backend, form)
    c, e = cmp.compiled, cmp.eager
    differs = form != "no_grad-block-then-grad" and backend in COMPILED
    got, want = c.grad_values.get("leaf"), e.grad_values.get("leaf")
    same = (got is None and want is None) or (
        got is not None and want is not None and torch.equal(got, want)
    )
    assert same is not differs, f"leaf.grad {got} (eager {want})"
    assert value_of(c, "a0") == [-2.0, -4.0, -6.0, -8.0], value_of(c, "a0")  # every form: a * -2


# --------------------------------------------------------------------------- no_grad view of a tensor made to require grad


def _no_grad_view_written(device, form: str):
    def write_then_return_view(a0):
        a0.requires_grad_()
        t1 = a0[:]
        a0.mul_(2)
        return t1

    def return_view(a0):
        a0.requires_grad_()
        return a0[:]

    def make():
        # a0 is a view of a base that does not require grad, so t1's base does
        # not either (eager reads t1.grad_fn as None, not as an error)
        return Inputs.of(torch.arange(1.0, 5.0, device=device)[:])

    fn = write_then_return_view if form == "written" else return_view
    return fn, make, "no_grad"


CASES["no-grad-view-written"] = _no_grad_view_written

NGV_FORMS = ["written", "not-written"]


@pytest.mark.claim("compile.errors-match-eager")
@given(form=st.sampled_from(NGV_FORMS))
def test_no_grad_view_of_written_grad_tensor(device, backend, form):
    """Called under no_grad: a0.requires_grad_(); t1 = a0[:]; a0.mul_(2);
    return t1, with a0 a view of a base that does not require grad: the
    compiled call raises iff eager's does. Deviates (aot_eager, inductor)
    when a0 is written; returning the view without the write holds.

    Kills: a compile path that fails on programs eager runs."""
    evidence.features(form=form)
    expect_same(run_case("no-grad-view-written", device, backend, form), "errors")


@pytest.mark.claim("compile.no-grad-view-of-written-tensor-fails")
@given(form=st.sampled_from(NGV_FORMS))
def test_no_grad_view_of_written_tensor_fails_pinned(device, backend, form):
    """Pins today's behaviour: aot_eager and inductor raise (the backend
    compiler fails) when a0 was written; otherwise the call returns eager's
    values."""
    cmp = run_case("no-grad-view-written", device, backend, form)
    c = cmp.compiled
    fails = backend in COMPILED and form == "written"
    if fails:
        assert c.error is not None, f"compiled returned {value_of(c, 'out0')} (pinned: raises)"
        return
    assert c.error is None, c.error
    want = [2.0, 4.0, 6.0, 8.0] if form == "written" else [1.0, 2.0, 3.0, 4.0]
    assert value_of(c, "out0") == want, value_of(c, "out0")


# --------------------------------------------------------------------------- history gained in an enable_grad block


def _enable_grad_history(device, form: str):
    def write(a0, a1):
        with torch.enable_grad():
            a0.copy_(a1)
        return a0

    def write_other_name(a0, a1, a2):
        with torch.enable_grad():
            a0.copy_(a1)
        return a2

    def write_fresh(a0, a1):
        with torch.enable_grad():
            a0.copy_(a1)
        return a0 * 1

    def make():
        leaf = torch.arange(15.0, 19.0, device=device).requires_grad_()
        return Inputs.of(torch.arange(1.0, 5.0, device=device), leaf)

    def make_twice():
        leaf = torch.arange(15.0, 19.0, device=device).requires_grad_()
        a0 = torch.arange(1.0, 5.0, device=device)
        return Inputs.of(a0, leaf, a0)

    return {
        "return-argument": (write, make, "no_grad"),
        "return-other-name": (write_other_name, make_twice, "no_grad"),
        "return-fresh": (write_fresh, make, "no_grad"),
        "called-with-grad": (write, make, "grad"),
    }[form]


CASES["enable-grad-history"] = _enable_grad_history

EGH_FORMS = ["return-argument", "return-other-name", "return-fresh", "called-with-grad"]


@pytest.mark.claim("compile.output-autograd-metadata-matches-eager")
@given(form=st.sampled_from(EGH_FORMS))
def test_enable_grad_write_history(device, backend, form):
    """f(a0, a1) = {with enable_grad: a0.copy_(a1)} with a1 a leaf that
    requires grad, returning a0 (also by another argument name) or a0 * 1:
    the outputs keep eager's autograd metadata (a returned a0 has gained
    history: requires_grad, CopyBackwards). Deviates (aot_eager, inductor)
    when the function is called under no_grad and returns a0; called with
    grad it holds, and so does a0 * 1 (requires_grad False in both; the
    argument's own lost history is pinned by the next test).

    Kills: a compile path that drops the history an input gains in place."""
    evidence.features(form=form)
    expect_same(run_case("enable-grad-history", device, backend, form), "metadata")


@pytest.mark.claim("compile.enable-grad-write-history-dropped")
@given(form=st.sampled_from(EGH_FORMS))
def test_enable_grad_write_history_dropped_pinned(device, backend, form):
    """Pins today's behaviour: under aot_eager/inductor, called under
    no_grad, a0 comes back without requires_grad (and so does a returned
    a0); values are eager's."""
    c = run_case("enable-grad-history", device, backend, form).compiled
    dropped = backend in COMPILED and form != "called-with-grad"
    assert c.error is None, c.error
    got = c.watched["a0"]["requires_grad"]
    assert got is not dropped, f"a0.requires_grad = {got} (pinned: {not dropped})"
    if form != "return-fresh":
        got = c.outputs[0]["requires_grad"]
        assert got is not dropped, f"out0.requires_grad = {got} (pinned: {not dropped})"
    assert value_of(c, "a0") == [15.0, 16.0, 17.0, 18.0], value_of(c, "a0")
