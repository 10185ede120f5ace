"""Compile bugs in input mutations, version counters and output aliasing,
found by the generated programs, each on fixed forms (see
:mod:`conformance.compile_findings`): 0-d float64 arguments, writes through
``.data``, a clone of an aliased input, a returned input's write misrouted, a
copy after ``x[i] = v``, a view output beside a detached aliased write, and a
view of a non-contiguous intermediate.
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
    expect_same,
    run_case,
    value_of,
)
from conformance.compile_oracle import Inputs

# compile_oracle snapshots with detach().clone()
pytestmark = pytest.mark.observes("clone", "detach")


# --------------------------------------------------------------------------- 0-d float64


def _zero_dim_float64(device, dtype_name: str, form: str, op: str):
    dtype = getattr(torch, dtype_name)

    def f(x):
        if op == "add_":
            x.add_(5)
        else:
            x.fill_(5)
        return x * 2

    def make():
        if form == "tensor":
            return Inputs.of(torch.tensor(1, dtype=dtype, device=device))
        base = torch.arange(1, 5, dtype=dtype, device=device)
        return Inputs.of(base[0], base=base)

    return f, make, "grad"


CASES["zero-dim-float64"] = _zero_dim_float64


ZD = dict(
    dtype=st.sampled_from(["float32", "float64"]),
    form=st.sampled_from(["tensor", "view"]),
    op=st.sampled_from(["add_", "fill_"]),
)


#: Where the pinned (characterization) tests of this module were observed;
#: a pin says nothing of another device type (an XPU, a PrivateUse1 device).
PINNED_DEVICES = ("cpu", "cuda")


def _pinned_devices_only(device: str) -> None:
    """Skip a pin on a device type it was never observed on."""
    if torch.device(device).type not in PINNED_DEVICES:
        pytest.skip(f"pinned on {'/'.join(PINNED_DEVICES)} only: it says nothing of {device}")


@pytest.mark.claim("compile.input-mutations-match-eager")
@given(**ZD)
def test_zero_dim_float64_argument_mutation(device, backend, dtype, form, op):
    """An in-place op on a 0-d argument (a tensor, or a 0-d view of a base)
    must reach the argument and its base. Deviates (aot_eager, inductor) for
    float64.

    Kills: a compile path that drops input mutations of 0-d arguments."""
    expect_same(run_case("zero-dim-float64", device, backend, dtype, form, op), "mutations")


@pytest.mark.claim("compile.zero-dim-float64-mutation-dropped")
@given(**ZD)
def test_zero_dim_float64_mutation_dropped_pinned(device, backend, dtype, form, op):
    """Pins today's behaviour: on the CPU aot_eager/inductor drop the write
    for float64 (the argument keeps 1, the function reads 1), others apply
    it; on CUDA every backend applies it (observed on torch 2.11 CUDA)."""
    _pinned_devices_only(device)
    c = run_case("zero-dim-float64", device, backend, dtype, form, op).compiled
    dropped = backend in COMPILED and dtype == "float64" and device == "cpu"
    want_x = 1 if dropped else 6 if op == "add_" else 5
    assert c.error is None, c.error
    assert value_of(c, "a0") == want_x, f"argument holds {value_of(c, 'a0')}, pinned {want_x}"
    assert value_of(c, "out0") == 2 * want_x, f"returned {value_of(c, 'out0')}, pinned {2 * want_x}"
    assert c.version_bumped["a0"] is not dropped, "version counter pinned the other way"


# --------------------------------------------------------------------------- .data writes


def _data_write(device, form: str):
    def through_data(x):
        x.data.add_(1)
        return x * 2

    def through_detach(x):
        x.detach().add_(1)
        return x * 2

    fn = through_data if form == "data" else through_detach
    return fn, lambda: Inputs.of(torch.arange(1.0, 5.0, device=device)), "grad"


CASES["data-write"] = _data_write


@pytest.mark.claim("compile.version-bumps-match-eager")
@given(form=st.sampled_from(["data", "detach"]))
def test_write_through_data(device, backend, form):
    """A write through x.data leaves x's version counter alone in eager (the
    alias has its own counter); through x.detach() it advances it. The
    compiled call must do the same. Deviates (aot_eager, inductor) for .data.

    Kills: a compile path that loses or adds version bumps."""
    expect_same(run_case("data-write", device, backend, form), "versions")


@pytest.mark.claim("compile.data-write-bumps-version")
@given(form=st.sampled_from(["data", "detach"]))
def test_data_write_bumps_version_pinned(device, backend, form):
    """Pins today's behaviour: aot_eager/inductor advance x's counter for a
    write through x.data; values are eager's."""
    c = run_case("data-write", device, backend, form).compiled
    bumped = form == "detach" or backend in COMPILED
    assert c.version_bumped["a0"] is bumped, f"x._version advanced: {c.version_bumped['a0']}"
    assert value_of(c, "a0") == [2.0, 3.0, 4.0, 5.0], value_of(c, "a0")
    assert value_of(c, "out0") == [4.0, 6.0, 8.0, 10.0], value_of(c, "out0")


# --------------------------------------------------------------------------- clone of an aliased input


def _clone_aliased(device, form: str):
    def f(a0, a1):
        a1.sub_(a1)
        return a0.clone()

    def make_aliased():
        base = torch.arange(1.0, 5.0, device=device)
        return Inputs.of(base.unsqueeze(0), base, base=base)

    def make_separate():
        base = torch.arange(1.0, 5.0, device=device)
        return Inputs.of(base.unsqueeze(0), torch.arange(1.0, 5.0, device=device), base=base)

    return f, (make_aliased if form == "aliased" else make_separate), "grad"


CASES["clone-aliased"] = _clone_aliased


CLONE_FORMS = ["aliased", "separate"]


@pytest.mark.claim("compile.output-aliasing-matches-eager")
@given(form=st.sampled_from(CLONE_FORMS))
def test_clone_of_aliased_written_input(device, backend, form):
    """a0.clone() returned after a write into a1, where a0 and a1 are views
    of one base: the clone owns new storage. Deviates (inductor) when the
    arguments alias.

    Kills: a compile path whose outputs alias inputs they should not."""
    evidence.features(form=form)
    expect_same(run_case("clone-aliased", device, backend, form), "aliasing")


@pytest.mark.claim("compile.clone-of-aliased-input-aliases")
@given(form=st.sampled_from(CLONE_FORMS))
def test_clone_of_aliased_input_aliases_pinned(device, backend, form):
    """Pins today's behaviour: under inductor the 'clone' shares storage with
    the arguments when they alias; values are eager's."""
    c = run_case("clone-aliased", device, backend, form).compiled
    aliases = form == "aliased" and backend == "inductor"
    shares = c.outputs[0]["shares"]
    assert bool(shares) is aliases, (
        f"the clone shares storage with {set(shares) or 'nothing'} "
        f"(pinned: {'the aliased arguments' if aliases else 'nothing'})"
    )
    want = [[0.0, 0.0, 0.0, 0.0]] if form == "aliased" else [[1.0, 2.0, 3.0, 4.0]]
    assert value_of(c, "out0") == want, value_of(c, "out0")


# --------------------------------------------------------------------------- a returned input's write misrouted


def _misrouted(device, form: str):
    def f(x, y):
        x.fill_(5)
        y.add_(1)
        return x

    def make():
        b = torch.arange(1.0, 13.0, device=device).reshape(3, 4).clone()
        shape = (3, 4) if form == "other-shape" else (4, 3)
        leaf = torch.arange(41.0, 53.0, device=device).reshape(shape).clone()
        if form == "no-grad":
            return Inputs.of(b.t(), leaf)
        leaf.requires_grad_()
        return Inputs.of(b.t(), leaf * 1, leaf=leaf)

    return f, make, "grad"


CASES["misrouted"] = _misrouted

MISROUTED_FORMS = ["same-shape", "other-shape", "no-grad"]


@pytest.mark.claim("compile.input-mutations-match-eager", "compile.errors-match-eager")
@given(form=st.sampled_from(MISROUTED_FORMS))
def test_returned_written_input_beside_grad_input(device, backend, form):
    """f(x, y) = {x.fill_(5); y.add_(1); return x} with y a non-leaf that
    requires grad: both inputs hold eager's values and the call raises iff
    eager's does. Deviates (aot_eager, inductor) when y requires grad: x's
    new values are copied into y (same shapes) or the copy fails (other
    shapes).

    Kills: a compile path that writes an input's mutation into another input."""
    cmp = run_case("misrouted", device, backend, form)
    evidence.check("compile.errors-match-eager", not cmp.differences["errors"],
                   cmp.message("errors"))  # fmt: skip
    evidence.check("compile.input-mutations-match-eager", not cmp.differences["mutations"],
                   cmp.message("mutations"))  # fmt: skip


@pytest.mark.claim("compile.returned-input-write-misrouted")
@given(form=st.sampled_from(MISROUTED_FORMS))
def test_returned_input_write_misrouted_pinned(device, backend, form):
    """Pins today's behaviour per backend and form."""
    c = run_case("misrouted", device, backend, form).compiled
    evidence.features(form=form)
    wrong = backend in COMPILED and form != "no-grad"
    if wrong and form == "other-shape":
        assert c.error is not None and "must match the size of tensor b" in c.error["text"], (
            f"compiled call did not raise the pinned size mismatch: error {c.error}"
        )
        return
    assert c.error is None, c.error
    y = sum(value_of(c, "a1"), [])
    want = [5.0] * 12 if wrong else [42.0 + i for i in range(12)]
    assert y == want, f"y after the call: {y}, pinned {want}"
    assert sum(value_of(c, "out0"), []) == [5.0] * 12, value_of(c, "out0")


# --------------------------------------------------------------------------- a copy after x[i] = v


def _setitem_copy(device, form: str):
    def int_index(x):
        x[0] = 0
        return x.clone()

    def slice_(x):
        x[1:3] = 5
        return x.clone()

    def ellipsis(x):
        x[...] = 0
        return x.clone()

    fn = {"int-index": int_index, "slice": slice_, "ellipsis": ellipsis}[form]
    return fn, lambda: Inputs.of(torch.arange(1.0, 5.0, device=device)), "grad"


CASES["setitem-copy"] = _setitem_copy

SETITEM_FORMS = ["int-index", "slice", "ellipsis"]


@pytest.mark.claim("compile.output-aliasing-matches-eager", "compile.errors-match-eager")
@given(form=st.sampled_from(SETITEM_FORMS))
def test_copy_after_setitem_is_new_tensor(device, backend, form):
    """f(x) = {x[0] = 0 (or x[1:3] = 5, x[...] = 0); return x.clone()}: the
    call raises iff eager's does and the clone owns new storage. Deviates
    (inductor) for x[0] and x[1:3]: the output is x itself.

    Kills: a compile path whose copies alias their source."""
    evidence.features(form=form)
    check_aspects(run_case("setitem-copy", device, backend, form), ("errors", "aliasing"))


@pytest.mark.claim("compile.clone-after-setitem-returns-input")
@given(form=st.sampled_from(SETITEM_FORMS))
def test_clone_after_setitem_returns_input_pinned(device, backend, form):
    """Pins today's behaviour: under inductor the 'clone' after x[0] = 0 or
    x[1:3] = 5 is the argument itself; values are eager's."""
    cmp = run_case("setitem-copy", device, backend, form)
    c = cmp.compiled
    assert c.error is None, c.error
    aliases = backend == "inductor" and form != "ellipsis"
    got = "a0" in c.outputs[0]["is"]
    assert got is aliases, f"out0 is a0: {got} (pinned: {aliases})"
    assert value_of(c, "out0") == value_of(cmp.eager, "out0"), value_of(c, "out0")


# --------------------------------------------------------------------------- a view output beside a detached aliased write


def _detach_offset(device, form: str):
    def with_detach(a0, a1, a2):
        a0.detach()
        a1.sub_(a1)
        return a2.zero_()

    def without_detach(a0, a1, a2):
        a1.sub_(a1)
        return a2.zero_()

    def copy_between_aliases(a0, a1, a2):
        t0 = a2.zero_()
        a0.copy_(a1)
        return t0

    def make():
        b0 = torch.arange(1, 5, device=device)
        b1 = torch.arange(15, 19, device=device)
        if form == "copy-between-aliases":  # thorough seed 2 at 2bba435, as shrunk
            return Inputs.of(b0[:][:], b0, b1[:].select(0, 1), b1=b1)
        return Inputs.of(b0[0::1].unsqueeze(0), b0, b1.select(0, 1), b1=b1)

    fn = {"with-detach": with_detach, "without-detach": without_detach,
          "copy-between-aliases": copy_between_aliases}[form]  # fmt: skip
    return fn, make, "grad"


CASES["detach-offset"] = _detach_offset

OFFSET_FORMS = ["with-detach", "without-detach", "copy-between-aliases"]
#: The forms aot_eager and inductor get wrong on torch 2.13.
OFFSET_LOST = ("with-detach", "copy-between-aliases")


@pytest.mark.claim("compile.outputs-match-eager", "compile.errors-match-eager")
@given(form=st.sampled_from(OFFSET_FORMS))
def test_view_output_beside_detached_aliased_write(device, backend, form):
    """f(a0, a1, a2) = {a0.detach(); a1.sub_(a1); return a2.zero_()} with a0 =
    b0[0::1].unsqueeze(0), a1 = b0 and a2 = b1.select(0, 1): the call raises
    iff eager's does and the output holds a2's 0. Deviates (aot_eager,
    inductor) with the detach: the output is a new view of b1 at storage
    offset 0, reading b1[0] (15). Form ``copy-between-aliases`` (thorough
    seed 2 at 2bba435): {t0 = a2.zero_(); a0.copy_(a1); return t0} with a0 =
    b0[:][:], a1 = b0, a2 = b1[:].select(0, 1) deviates the same way without
    any detach: both aliasing arguments are operands of the write.

    Kills: a compile path that regenerates output views at the wrong offset."""
    evidence.features(form=form)
    check_aspects(run_case("detach-offset", device, backend, form), ("errors", "outputs"))


@pytest.mark.claim("compile.view-output-offset-lost")
@given(form=st.sampled_from(OFFSET_FORMS))
def test_view_output_offset_lost_pinned(device, backend, form):
    """Pins today's behaviour: aot_eager and inductor return 15 (b1[0]) with
    the detach, and for a copy between the two aliasing arguments; a2 itself
    holds 0 on every backend."""
    c = run_case("detach-offset", device, backend, form).compiled
    assert c.error is None, c.error
    lost = backend in COMPILED and form in OFFSET_LOST
    want = 15 if lost else 0
    assert value_of(c, "out0") == want, f"out0 = {value_of(c, 'out0')} (pinned: {want})"
    assert value_of(c, "a2") == 0, f"a2 = {value_of(c, 'a2')}"


# --------------------------------------------------------------------------- a view of a non-contiguous intermediate

#: Forms: what the function returns, and whether the argument is transposed.
MATERIALIZED_FORMS = [
    "expand-of-transposed-clone",  # a0.t() passed; return a0.clone().expand(2, -1, -1)
    "views-of-transposed-clone",  # a0.t() passed; t0 = a0.clone(); return t0[1:], t0[:1]
    "expand-of-contiguous-clone",  # control: a0 contiguous
    "views-beside-their-base",  # control: a0.t() passed; return t0, t0[1:]
]
#: The forms inductor gets wrong on torch 2.13 (a new dense tensor per view).
MATERIALIZED = ("expand-of-transposed-clone", "views-of-transposed-clone")


def _materialized_view(device, form: str):
    def expand_of_clone(a0):
        return a0.clone().expand(2, -1, -1)

    def views_of_clone(a0):
        t0 = a0.clone()
        return t0[1:], t0[:1]

    def views_beside_base(a0):
        t0 = a0.clone()
        return t0, t0[1:]

    fn = {"expand-of-transposed-clone": expand_of_clone, "views-of-transposed-clone": views_of_clone,
          "expand-of-contiguous-clone": expand_of_clone,
          "views-beside-their-base": views_beside_base}[form]  # fmt: skip

    def make():
        b0 = torch.arange(1.0, 7.0, device=device).reshape(2, 3)
        if form == "expand-of-contiguous-clone":
            return Inputs.of(b0)
        return Inputs.of(b0.t(), base=b0)

    return fn, make, "grad"


CASES["materialized-view"] = _materialized_view


@pytest.mark.claim(
    "compile.output-writes-propagate-like-eager",
    "compile.output-aliasing-matches-eager",
    "compile.errors-match-eager",
)
@given(form=st.sampled_from(MATERIALIZED_FORMS))
def test_view_of_non_contiguous_intermediate(device, backend, form):
    """f(a0) = a0.clone().expand(2, -1, -1), or {t0 = a0.clone(); return
    t0[1:], t0[:1]}, with a0 = b0.t() (a transposed 2x3 float32): the call
    raises iff eager's does, the outputs share storage as eager's do, and a
    write into an output fails iff it fails in eager (an expanded output has
    overlapping memory). Deviates (inductor, thorough seed 2 at edebd72): each
    view of the non-contiguous clone comes back as a new dense tensor - the
    expanded output is writable, the two views share no storage. Holds for a
    contiguous clone, and for views returned beside their base.

    Kills: a compile path that materializes output views of intermediates."""
    evidence.features(form=form)
    check_aspects(
        run_case("materialized-view", device, backend, form),
        ("errors", "aliasing", "output-writes"),
    )


@pytest.mark.claim("compile.view-of-non-contiguous-intermediate-materialized")
@given(form=st.sampled_from(MATERIALIZED_FORMS))
def test_view_of_non_contiguous_intermediate_materialized_pinned(device, backend, form):
    """Pins today's behaviour: under inductor, the expanded view of a
    transposed clone comes back without a zero stride, and the two views of it
    share no storage; on the other backends (and for the control forms) the
    outputs are eager's views. Values are eager's everywhere."""
    cmp = run_case("materialized-view", device, backend, form)
    c = cmp.compiled
    assert c.error is None, c.error
    dense = backend == "inductor" and form in MATERIALIZED
    if form.startswith("expand"):
        got = 0 not in c.outputs[0]["stride"]
        seen = f"out0 stride {c.outputs[0]['stride']}"
    else:
        got = "out0" not in c.outputs[1]["shares"]
        seen = f"out1 shares storage with {c.outputs[1]['shares'] or 'nothing'}"
    assert got is dense, f"outputs are new dense tensors: {got} (pinned: {dense}); {seen}"
    for i in range(len(c.outputs)):
        assert c.outputs[i]["bytes"] == cmp.eager.outputs[i]["bytes"], f"out{i} values differ"
