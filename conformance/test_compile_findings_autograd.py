"""Compile bugs in autograd metadata and gradients, found by the generated
programs, each on fixed forms (see :mod:`conformance.compile_findings`):
in-place writes into grad leaves and detached aliases, requires_grad_()
through an alias name, a 0-d value that requires grad written into an integer
tensor, and the backward of t.copy_(t) of a non-contiguous tensor.
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
    check_aspects,
    expect_pinned_error,
    expect_same,
    grad_input,
    run_case,
    value_of,
)
from conformance.compile_oracle import ASPECTS as ASPECT_CLAIMS
from conformance.compile_oracle import Inputs

# compile_oracle snapshots with detach().clone()
pytestmark = pytest.mark.observes("clone", "detach")


# --------------------------------------------------------------------------- writes into grad leaves


def _grad_leaf_write(device, form: str):
    def write_then_read(x):
        with torch.no_grad():
            x[...] = 0
        return x + 1

    def sub_alias(x, y):
        with torch.no_grad():
            x.sub_(y)
        return x + 0

    def make_view():
        leaf = torch.arange(1.0, 7.0, device=device).reshape(2, 3).requires_grad_()
        return Inputs.of(leaf.t(), leaf=leaf)

    def make_aliased():
        leaf = torch.arange(1.0, 5.0, device=device).requires_grad_()
        return Inputs.of(leaf, leaf[:])

    def make_alone():
        leaf = torch.arange(1.0, 5.0, device=device).requires_grad_()
        return Inputs.of(leaf, torch.arange(1.0, 5.0, device=device))

    def through_detach(x):
        x.detach().add_(1)
        return x * 1

    def make_unsqueezed():
        leaf = torch.arange(1.0, 5.0, device=device).requires_grad_()
        return Inputs.of(leaf.unsqueeze(1), leaf=leaf)

    return {
        "view-of-leaf": (write_then_read, make_view, "grad"),
        "leaf-aliased-by-argument": (sub_alias, make_aliased, "grad"),
        "detach-of-leaf-view": (through_detach, make_unsqueezed, "grad"),
        "leaf-alone": (sub_alias, make_alone, "grad"),
    }[form]


CASES["grad-leaf-write"] = _grad_leaf_write

LEAF_FORMS = ["view-of-leaf", "leaf-aliased-by-argument", "detach-of-leaf-view", "leaf-alone"]


#: Where the pinned (characterization) tests of this module were observed;
#: a pin says nothing of another device type (an XPU, a PrivateUse1 device).
PINNED_DEVICES = ("cpu", "cuda")


def _pinned_devices_only(device: str) -> None:
    """Skip a pin on a device type it was never observed on."""
    if torch.device(device).type not in PINNED_DEVICES:
        pytest.skip(f"pinned on {'/'.join(PINNED_DEVICES)} only: it says nothing of {device}")


@pytest.mark.claim("compile.errors-match-eager")
@given(form=st.sampled_from(LEAF_FORMS))
def test_inplace_on_grad_leaf_alias(device, backend, form):
    """Writes into a leaf that requires grad that eager accepts: under
    no_grad through a view of it, or while another argument views it, and
    with grad enabled through x.detach() of a view of it. The compiled
    function must accept them too. Deviates on every backend for the view
    form (Dynamo's fake-tensor propagation), on aot_eager and inductor for
    the aliased and detach forms.

    Kills: a compile path that refuses (or mis-handles) no_grad writes into
    leaves."""
    expect_same(run_case("grad-leaf-write", device, backend, form), "errors")


@pytest.mark.claim("compile.inplace-on-grad-leaf-view-fails")
@given(form=st.sampled_from(LEAF_FORMS))
def test_inplace_on_grad_leaf_view_fails_pinned(device, backend, form):
    """Pins today's behaviour: the exception type and message per form."""
    c = run_case("grad-leaf-write", device, backend, form).compiled
    if form == "view-of-leaf":
        expect_pinned_error(c, "TorchRuntimeError", "INTERNAL ASSERT FAILED")
    elif form == "leaf-aliased-by-argument" and backend in COMPILED:
        expect_pinned_error(c, "BackendCompilerFailed", "any_leaf=True != all_leaf=False")
    elif form == "detach-of-leaf-view" and backend in COMPILED:
        expect_pinned_error(c, "RuntimeError", "a view of a leaf Variable that requires grad")
    elif form == "detach-of-leaf-view":
        assert c.error is None, c.error
        assert value_of(c, "out0") == [[2.0], [3.0], [4.0], [5.0]], value_of(c, "out0")
    else:
        assert c.error is None, c.error
        assert value_of(c, "out0") == [0.0, 0.0, 0.0, 0.0], value_of(c, "out0")


# --------------------------------------------------------------------------- detached alias


def _detached_alias(device, form: str):
    def detached(x, y):
        return x.detach().add_(y)

    def cloned(x, y):
        return x.clone().add_(y)

    def make():
        leaf, y = grad_input(device)
        return Inputs.of(torch.arange(1.0, 5.0, device=device), y, leaf=leaf)

    return (detached if form == "detach" else cloned), make, "grad"


CASES["detached-alias"] = _detached_alias


@pytest.mark.claim("compile.output-autograd-metadata-matches-eager")
@given(form=st.sampled_from(["detach", "clone"]))
def test_grad_write_into_detached_alias(device, backend, form):
    """x.detach().add_(y) with y requiring grad: eager gives the result a
    grad_fn (like x.clone().add_(y)). Deviates (aot_eager, inductor) for
    the detached alias.

    Kills: a compile path that detaches outputs."""
    expect_same(run_case("detached-alias", device, backend, form), "metadata")


@pytest.mark.claim("compile.detached-alias-history-dropped")
@given(form=st.sampled_from(["detach", "clone"]))
def test_detached_alias_history_dropped_pinned(device, backend, form):
    """Pins today's behaviour: no grad_fn on the detached alias under
    aot_eager/inductor; values are eager's."""
    c = run_case("detached-alias", device, backend, form).compiled
    dropped = form == "detach" and backend in COMPILED
    assert c.outputs[0]["grad_fn_none"] is dropped, c.outputs[0]
    assert value_of(c, "out0") == [2.0, 4.0, 6.0, 8.0], value_of(c, "out0")


# --------------------------------------------------------------------------- requires_grad_ through an alias name


def _requires_grad_alias(device, form: str):
    def inplace_result(x):
        t = x.add_(1)
        t.requires_grad_()
        return x * 2

    def contiguous_result(x):
        x.add_(1)
        t = x.contiguous()
        t.requires_grad_()
        return x * 2

    def argument_name(x):
        x.add_(1)
        x.requires_grad_()
        return x * 2

    fn = {
        "inplace-result": inplace_result,
        "contiguous-result": contiguous_result,
        "argument-name": argument_name,
    }[form]
    return fn, lambda: Inputs.of(torch.arange(1.0, 5.0, device=device)), "grad"


CASES["requires-grad-alias"] = _requires_grad_alias


def _requires_grad_other_name(device, form: str):
    def same_object(x):
        t1 = x.clone()
        t2 = t1.sub_(x)  # t2 is t1
        t1.requires_grad_()
        return t2

    def view_of_it(x):
        t1 = x.clone()
        t2 = t1.view(-1)
        t1.requires_grad_()
        return t2

    def own_name(x):
        t1 = x.clone()
        t1.sub_(x)
        t1.requires_grad_()
        return t1

    fn = {"same-object": same_object, "view-of-it": view_of_it, "own-name": own_name}[form]
    return fn, lambda: Inputs.of(torch.arange(1.0, 5.0, device=device)), "grad"


CASES["requires-grad-other-name"] = _requires_grad_other_name

RG_FORMS = ["inplace-result", "contiguous-result", "argument-name"]


@pytest.mark.claim("compile.input-mutations-match-eager")
@given(form=st.sampled_from(RG_FORMS))
def test_requires_grad_through_alias_name(device, backend, form):
    """t.requires_grad_() where t is the argument x under another name (the
    result of x.add_(1) or of x.contiguous()) makes x require grad in eager.
    Deviates (aot_eager, inductor) for the alias names.

    Kills: a compile path that loses an input's requires_grad change."""
    expect_same(run_case("requires-grad-alias", device, backend, form), "mutations")


@pytest.mark.claim("compile.requires-grad-through-alias-dropped")
@given(form=st.sampled_from(RG_FORMS))
def test_requires_grad_through_alias_dropped_pinned(device, backend, form):
    """Pins today's behaviour: x does not require grad after the call under
    aot_eager/inductor for the alias names; values are eager's."""
    c = run_case("requires-grad-alias", device, backend, form).compiled
    dropped = form != "argument-name" and backend in COMPILED
    assert c.watched["a0"]["requires_grad"] is not dropped, c.watched["a0"]
    assert c.outputs[0]["requires_grad"] is not dropped, c.outputs[0]
    assert value_of(c, "out0") == [4.0, 6.0, 8.0, 10.0], value_of(c, "out0")


RGO_FORMS = ["same-object", "view-of-it", "own-name"]


@pytest.mark.claim("compile.output-autograd-metadata-matches-eager")
@given(form=st.sampled_from(RGO_FORMS))
def test_requires_grad_with_other_names(device, backend, form):
    """t1 = x.clone(); t2 = t1.sub_(x) (t2 is t1) or t2 = t1.view(-1);
    t1.requires_grad_(); return t2: in eager t2 requires grad (the same
    tensor, or a view, whose requires_grad follows its base's). Deviates
    (aot_eager, inductor) for the other names; returning t1 itself holds.

    Kills: a compile path that loses requires_grad of an output."""
    expect_same(run_case("requires-grad-other-name", device, backend, form), "metadata")


@pytest.mark.claim("compile.requires-grad-through-alias-dropped")
@given(form=st.sampled_from(RGO_FORMS))
def test_requires_grad_with_other_names_pinned(device, backend, form):
    """Pins today's behaviour: under aot_eager/inductor the other name comes
    back without requires_grad; values are eager's."""
    c = run_case("requires-grad-other-name", device, backend, form).compiled
    dropped = form != "own-name" and backend in COMPILED
    got = c.outputs[0]["requires_grad"]
    assert got is not dropped, f"out0.requires_grad = {got} (pinned: {not dropped})"
    want = [1.0, 2.0, 3.0, 4.0] if form == "view-of-it" else [0.0, 0.0, 0.0, 0.0]
    assert value_of(c, "out0") == want, value_of(c, "out0")


def _requires_grad_then_write(device, form: str):
    def other_name(a0):
        with torch.no_grad():
            t0 = a0.clone()
            t1 = t0.detach()
            t1.requires_grad_()
            t1[...] = 0
        t0.mul_(2)
        return t1

    def same_name(a0):
        with torch.no_grad():
            t0 = a0.clone()
            t1 = t0.detach()
            t1.requires_grad_()
        t0.mul_(2)
        with torch.no_grad():
            t1[...] = 0
        return t1

    def make():
        leaf, x = grad_input(device)
        return Inputs.of(x, leaf=leaf)

    return (other_name if form == "write-after-no-grad-write" else same_name), make, "grad"


CASES["requires-grad-then-write"] = _requires_grad_then_write
RGW_FORMS = ["write-after-no-grad-write", "write-then-no-grad-write"]


@pytest.mark.claim("compile.errors-match-eager", "compile.output-autograd-metadata-matches-eager")
@given(form=st.sampled_from(RGW_FORMS))
def test_requires_grad_intermediate_then_written(device, backend, form):
    """t1 = a0.clone().detach(); t1.requires_grad_() (under no_grad), then
    writes into t1 and its alias t0: the function runs and the returned t1
    requires grad as in eager. Deviates: inductor fails while tracing (both
    forms); aot_eager returns t1 without requires_grad when t1 is written
    under no_grad before the alias is written with grad enabled.

    Kills: a compile path that loses requires_grad of an output."""
    cmp = run_case("requires-grad-then-write", device, backend, form)
    for aspect in ("errors", "metadata"):
        evidence.check(ASPECT_CLAIMS[aspect], not cmp.differences[aspect], cmp.message(aspect))


@pytest.mark.claim("compile.requires-grad-through-alias-dropped")
@given(form=st.sampled_from(RGW_FORMS))
def test_requires_grad_intermediate_then_written_pinned(device, backend, form):
    """Pins today's behaviour: inductor raises while tracing; aot_eager
    returns t1 without requires_grad for the first form."""
    c = run_case("requires-grad-then-write", device, backend, form).compiled
    deviates = form == "write-after-no-grad-write" and backend == "aot_eager"
    if backend == "inductor":
        assert c.error is not None and c.error["name"] == "TorchRuntimeError", c.error
        assert "a leaf Variable that requires grad is being used" in c.error["text"], c.error
        return
    assert c.error is None, c.error
    assert c.outputs[0]["requires_grad"] is not deviates, c.outputs[0]
    assert value_of(c, "out0") == [0.0, 0.0, 0.0, 0.0], value_of(c, "out0")


# --------------------------------------------------------------------------- 0-d grad value into an integer tensor


def _grad_scalar_into_integer(device, form: str):
    def row(a0, a1):
        a1[0] = a0
        return a1

    def everything(a0, a1):
        a1[...] = a0
        return a1

    def make(dtype):
        def inner():
            leaf = torch.arange(17.0, 21.0, device=device).requires_grad_()
            target = torch.arange(1, 7, device=device).reshape(2, 3).to(dtype)
            return Inputs.of(leaf.select(0, 0), target, leaf=leaf)

        return inner

    return {
        "row-of-int64": (row, make(torch.int64), "grad"),
        "all-of-int64": (everything, make(torch.int64), "grad"),
        "row-of-float32": (row, make(torch.float32), "grad"),
    }[form]


CASES["grad-scalar-into-integer"] = _grad_scalar_into_integer

INT_FORMS = ["row-of-int64", "all-of-int64", "row-of-float32"]


@pytest.mark.claim("compile.errors-match-eager")
@given(form=st.sampled_from(INT_FORMS))
def test_grad_scalar_written_into_integer_tensor(device, backend, form):
    """a1[0] = a0 (or a1[...] = a0) with a1 int64 and a0 a 0-d float32 view
    of a leaf that requires grad, grad enabled: the compiled call raises iff
    eager's does. Deviates (every backend) for the int64 target: eager runs
    it, torch.compile raises; a float32 target holds.

    Kills: a compile path that refuses a write eager accepts."""
    evidence.features(form=form)
    expect_same(run_case("grad-scalar-into-integer", device, backend, form), "errors")


@pytest.mark.claim("compile.grad-scalar-into-integer-tensor-refused")
@given(form=st.sampled_from(INT_FORMS))
def test_grad_scalar_into_integer_tensor_refused_pinned(device, backend, form):
    """Pins today's behaviour: on the CPU eager writes 17 into the row and
    leaves the int64 tensor requiring grad (although an integer tensor cannot
    be asked to, see autograd.toml); every backend raises a RuntimeError
    instead. On CUDA eager's int64 result does not require grad and every
    backend runs the write as eager does (observed on torch 2.11 CUDA: the
    CPU quirk comes from the 0-d CPU value being written with fill_)."""
    _pinned_devices_only(device)
    cmp = run_case("grad-scalar-into-integer", device, backend, form)
    e, c = cmp.eager, cmp.compiled
    assert e.error is None, e.error
    quirk = device == "cpu" or form == "row-of-float32"
    assert e.outputs[0]["requires_grad"] is quirk, f"eager out0: {e.outputs[0]}"
    row = value_of(e, "out0")[0]
    assert row == [17, 17, 17] or row == [17.0, 17.0, 17.0], f"eager row {row}"
    if form == "row-of-float32" or device != "cpu":
        assert c.error is None, c.error
        assert value_of(c, "out0") == value_of(e, "out0"), value_of(c, "out0")
        return
    assert e.outputs[0]["dtype"] == "int64", e.outputs[0]
    assert c.error is not None, "compiled ran it (pinned: raises)"
    assert issubclass(c.error["type"], RuntimeError), c.error["name"]


# --------------------------------------------------------------------------- t.copy_(t) of a non-contiguous tensor that requires grad

SELF_COPY_FORMS = [
    "transposed-self-copy",  # a0 = b0.t(); t0 = a0 + a0; return t0.copy_(t0)
    "contiguous-self-copy",  # control: a0 = b0 * 1
    "transposed-self-copy-then-product",  # control: t0.copy_(t0); return t0 * 1
]


def _self_copy(device, form: str):
    def self_copy(a0):
        t0 = a0 + a0
        return t0.copy_(t0)

    def then_product(a0):
        t0 = a0 + a0
        t0.copy_(t0)
        return t0 * 1

    def make():
        leaf = torch.arange(1.0, 7.0, device=device).reshape(2, 3).requires_grad_()
        return Inputs.of(leaf * 1 if form == "contiguous-self-copy" else leaf.t(), leaf=leaf)

    return (then_product if form.endswith("product") else self_copy), make, "grad"


CASES["self-copy"] = _self_copy


@pytest.mark.claim("compile.gradients-match-eager", "compile.errors-match-eager")
@given(form=st.sampled_from(SELF_COPY_FORMS))
def test_self_copy_of_non_contiguous_grad_output(device, backend, form):
    """f(a0) = {t0 = a0 + a0; return t0.copy_(t0)} with a0 = leaf.t() (a
    transposed 2x3 float32 view of a leaf that requires grad): the call raises
    iff eager's does, and backward of the output raises iff eager's does and
    leaves the leaf with eager's .grad. Deviates (inductor, thorough seed 2 at
    edebd72): backward raises AssertionError (expected size/stride). Holds for
    a contiguous a0, and when t0 * 1 is returned instead.

    Kills: a compile path whose backward expects other strides than forward made."""
    evidence.features(form=form)
    check_aspects(run_case("self-copy", device, backend, form), ("errors", "gradients"))


@pytest.mark.claim("compile.self-copy-of-non-contiguous-grad-output-backward-fails")
@given(form=st.sampled_from(SELF_COPY_FORMS))
def test_self_copy_backward_fails_pinned(device, backend, form):
    """Pins today's behaviour: under inductor, backward through the returned
    t0.copy_(t0) of the transposed form raises AssertionError naming the
    expected size and stride; everywhere else backward runs and the leaf's
    .grad is eager's (2 everywhere). The forward values are eager's."""
    cmp = run_case("self-copy", device, backend, form)
    c = cmp.compiled
    assert c.error is None, c.error
    fails = backend == "inductor" and form == "transposed-self-copy"
    err = c.backward_error
    assert (err is not None) is fails, f"backward error {err and err['first']} (pinned: {fails})"
    if fails:
        assert err["name"] == "AssertionError" and "expected size" in err["text"], err["text"]
    else:
        assert c.grads["leaf"] == cmp.eager.grads["leaf"], "leaf.grad differs from eager's"
    assert c.outputs[0]["bytes"] == cmp.eager.outputs[0]["bytes"], "out0 values differ"
