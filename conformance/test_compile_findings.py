"""Compile bugs found by the generated programs, each on fixed forms.

The program strategy (:mod:`strategies.programs`) steers clear of these
(:data:`strategies.programs.STEERING`); here each is checked where it lives:
a test of the equivalence claim it breaks, over the deviating forms and a
control form that holds, with the deviation recorded in
``conformance/expectations.toml`` (region: backend and form), and a test of
the characterization claim pinning what torch 2.13 does instead.

Each case is run once per (device, backend) and shared by its two tests
(:func:`_run`, cached), so the pin costs no second compile.
"""

from __future__ import annotations

import functools

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from conformance import evidence
from conformance.compile_oracle import ASPECTS as ASPECT_CLAIMS
from conformance.compile_oracle import Comparison, Inputs, differential

pytestmark = pytest.mark.oracle("clone", "detach")  # compile_oracle snapshots with detach().clone()

COMPILED = ("aot_eager", "inductor")


def _grad_input(device, n=4):
    leaf = torch.arange(1.0, n + 1.0, device=device).requires_grad_()
    return leaf, leaf * 1


# --------------------------------------------------------------------------- cases


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
        leaf, x = _grad_input(device)
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


def _data_write(device, form: str):
    def through_data(x):
        x.data.add_(1)
        return x * 2

    def through_detach(x):
        x.detach().add_(1)
        return x * 2

    fn = through_data if form == "data" else through_detach
    return fn, lambda: Inputs.of(torch.arange(1.0, 5.0, device=device)), "grad"


def _detached_alias(device, form: str):
    def detached(x, y):
        return x.detach().add_(y)

    def cloned(x, y):
        return x.clone().add_(y)

    def make():
        leaf, y = _grad_input(device)
        return Inputs.of(torch.arange(1.0, 5.0, device=device), y, leaf=leaf)

    return (detached if form == "detach" else cloned), make, "grad"


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
        leaf, x = _grad_input(device)
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


CASES = {
    "zero-dim-float64": _zero_dim_float64,
    "view-grad-mode": _view_grad_mode,
    "grad-leaf-write": _grad_leaf_write,
    "data-write": _data_write,
    "detached-alias": _detached_alias,
    "requires-grad-alias": _requires_grad_alias,
    "requires-grad-other-name": _requires_grad_other_name,
    "mixed-mode": _mixed_mode,
    "clone-aliased": _clone_aliased,
    "misrouted": _misrouted,
    "grad-scalar-into-integer": _grad_scalar_into_integer,
    "no-grad-view-written": _no_grad_view_written,
    "enable-grad-history": _enable_grad_history,
    "setitem-copy": _setitem_copy,
    "detach-offset": _detach_offset,
}


@functools.cache
def _run(case: str, device: str, backend: str, *params) -> Comparison:
    """The comparison of ``case`` with ``params`` (computed once per process)."""
    fn, make, ambient = CASES[case](device, *params)
    return differential(fn, make, backend, ambient=ambient)


def _expect_same(cmp: Comparison, aspect: str) -> None:
    msg = cmp.first_difference((aspect,))
    assert msg is None, msg


def _val(obs, name: str) -> list:
    return obs.snapshot[name].tolist()


# --------------------------------------------------------------------------- 0-d float64


ZD = dict(
    dtype=st.sampled_from(["float32", "float64"]),
    form=st.sampled_from(["tensor", "view"]),
    op=st.sampled_from(["add_", "fill_"]),
)


@pytest.mark.claim("compile.input-mutations-match-eager")
@given(**ZD)
def test_zero_dim_float64_argument_mutation(device, backend, dtype, form, op):
    """An in-place op on a 0-d argument (a tensor, or a 0-d view of a base)
    must reach the argument and its base. Deviates (aot_eager, inductor) for
    float64.

    Kills: a compile path that drops input mutations of 0-d arguments."""
    _expect_same(_run("zero-dim-float64", device, backend, dtype, form, op), "mutations")


@pytest.mark.claim("compile.zero-dim-float64-mutation-dropped")
@given(**ZD)
def test_zero_dim_float64_mutation_dropped_pinned(device, backend, dtype, form, op):
    """Pins today's behaviour: on the CPU aot_eager/inductor drop the write
    for float64 (the argument keeps 1, the function reads 1), others apply
    it; on CUDA every backend applies it (observed on torch 2.11 CUDA)."""
    c = _run("zero-dim-float64", device, backend, dtype, form, op).compiled
    dropped = backend in COMPILED and dtype == "float64" and device == "cpu"
    want_x = 1 if dropped else 6 if op == "add_" else 5
    assert c.error is None, c.error
    assert _val(c, "a0") == want_x, f"argument holds {_val(c, 'a0')}, pinned {want_x}"
    assert _val(c, "out0") == 2 * want_x, f"returned {_val(c, 'out0')}, pinned {2 * want_x}"
    assert c.version_bumped["a0"] is not dropped, "version counter pinned the other way"


# --------------------------------------------------------------------------- grad mode of output views

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
    _expect_same(_run("view-grad-mode", device, backend, form), "metadata")


@pytest.mark.claim("compile.output-view-grad-mode-regenerated")
@given(form=st.sampled_from(VIEW_FORMS))
def test_output_view_grad_mode_regenerated_pinned(device, backend, form):
    """Pins today's behaviour: under aot_eager/inductor the view's grad_fn
    follows the caller's grad mode, not the block's (the view of a returned
    intermediate comes back as a leaf)."""
    cmp = _run("view-grad-mode", device, backend, form)
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
    assert _val(c, "out0") == [2.0, 3.0, 4.0], f"values {_val(c, 'out0')}"


# --------------------------------------------------------------------------- writes into grad leaves

LEAF_FORMS = ["view-of-leaf", "leaf-aliased-by-argument", "detach-of-leaf-view", "leaf-alone"]


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
    _expect_same(_run("grad-leaf-write", device, backend, form), "errors")


@pytest.mark.claim("compile.inplace-on-grad-leaf-view-fails")
@given(form=st.sampled_from(LEAF_FORMS))
def test_inplace_on_grad_leaf_view_fails_pinned(device, backend, form):
    """Pins today's behaviour: the exception type and message per form."""
    c = _run("grad-leaf-write", device, backend, form).compiled
    if form == "view-of-leaf":
        assert c.error is not None and c.error["name"] == "TorchRuntimeError", c.error
        assert "INTERNAL ASSERT FAILED" in c.error["text"], c.error["first"]
    elif form == "leaf-aliased-by-argument" and backend in COMPILED:
        assert c.error is not None and c.error["name"] == "BackendCompilerFailed", c.error
        assert "any_leaf=True != all_leaf=False" in c.error["text"], c.error["first"]
    elif form == "detach-of-leaf-view" and backend in COMPILED:
        assert c.error is not None and c.error["name"] == "RuntimeError", c.error
        assert "a view of a leaf Variable that requires grad" in c.error["text"], c.error
    elif form == "detach-of-leaf-view":
        assert c.error is None, c.error
        assert _val(c, "out0") == [[2.0], [3.0], [4.0], [5.0]], _val(c, "out0")
    else:
        assert c.error is None, c.error
        assert _val(c, "out0") == [0.0, 0.0, 0.0, 0.0], _val(c, "out0")


# --------------------------------------------------------------------------- .data writes


@pytest.mark.claim("compile.version-bumps-match-eager")
@given(form=st.sampled_from(["data", "detach"]))
def test_write_through_data(device, backend, form):
    """A write through x.data leaves x's version counter alone in eager (the
    alias has its own counter); through x.detach() it advances it. The
    compiled call must do the same. Deviates (aot_eager, inductor) for .data.

    Kills: a compile path that loses or adds version bumps."""
    _expect_same(_run("data-write", device, backend, form), "versions")


@pytest.mark.claim("compile.data-write-bumps-version")
@given(form=st.sampled_from(["data", "detach"]))
def test_data_write_bumps_version_pinned(device, backend, form):
    """Pins today's behaviour: aot_eager/inductor advance x's counter for a
    write through x.data; values are eager's."""
    c = _run("data-write", device, backend, form).compiled
    bumped = form == "detach" or backend in COMPILED
    assert c.version_bumped["a0"] is bumped, f"x._version advanced: {c.version_bumped['a0']}"
    assert _val(c, "a0") == [2.0, 3.0, 4.0, 5.0], _val(c, "a0")
    assert _val(c, "out0") == [4.0, 6.0, 8.0, 10.0], _val(c, "out0")


# --------------------------------------------------------------------------- detached alias


@pytest.mark.claim("compile.output-autograd-metadata-matches-eager")
@given(form=st.sampled_from(["detach", "clone"]))
def test_grad_write_into_detached_alias(device, backend, form):
    """x.detach().add_(y) with y requiring grad: eager gives the result a
    grad_fn (like x.clone().add_(y)). Deviates (aot_eager, inductor) for
    the detached alias.

    Kills: a compile path that detaches outputs."""
    _expect_same(_run("detached-alias", device, backend, form), "metadata")


@pytest.mark.claim("compile.detached-alias-history-dropped")
@given(form=st.sampled_from(["detach", "clone"]))
def test_detached_alias_history_dropped_pinned(device, backend, form):
    """Pins today's behaviour: no grad_fn on the detached alias under
    aot_eager/inductor; values are eager's."""
    c = _run("detached-alias", device, backend, form).compiled
    dropped = form == "detach" and backend in COMPILED
    assert c.outputs[0]["grad_fn_none"] is dropped, c.outputs[0]
    assert _val(c, "out0") == [2.0, 4.0, 6.0, 8.0], _val(c, "out0")


# --------------------------------------------------------------------------- requires_grad_ through an alias name

RG_FORMS = ["inplace-result", "contiguous-result", "argument-name"]


@pytest.mark.claim("compile.input-mutations-match-eager")
@given(form=st.sampled_from(RG_FORMS))
def test_requires_grad_through_alias_name(device, backend, form):
    """t.requires_grad_() where t is the argument x under another name (the
    result of x.add_(1) or of x.contiguous()) makes x require grad in eager.
    Deviates (aot_eager, inductor) for the alias names.

    Kills: a compile path that loses an input's requires_grad change."""
    _expect_same(_run("requires-grad-alias", device, backend, form), "mutations")


@pytest.mark.claim("compile.requires-grad-through-alias-dropped")
@given(form=st.sampled_from(RG_FORMS))
def test_requires_grad_through_alias_dropped_pinned(device, backend, form):
    """Pins today's behaviour: x does not require grad after the call under
    aot_eager/inductor for the alias names; values are eager's."""
    c = _run("requires-grad-alias", device, backend, form).compiled
    dropped = form != "argument-name" and backend in COMPILED
    assert c.watched["a0"]["requires_grad"] is not dropped, c.watched["a0"]
    assert c.outputs[0]["requires_grad"] is not dropped, c.outputs[0]
    assert _val(c, "out0") == [4.0, 6.0, 8.0, 10.0], _val(c, "out0")


RGO_FORMS = ["same-object", "view-of-it", "own-name"]


@pytest.mark.claim("compile.output-autograd-metadata-matches-eager")
@given(form=st.sampled_from(RGO_FORMS))
def test_requires_grad_with_other_names(device, backend, form):
    """t1 = x.clone(); t2 = t1.sub_(x) (t2 is t1) or t2 = t1.view(-1);
    t1.requires_grad_(); return t2: in eager t2 requires grad (the same
    tensor, or a view, whose requires_grad follows its base's). Deviates
    (aot_eager, inductor) for the other names; returning t1 itself holds.

    Kills: a compile path that loses requires_grad of an output."""
    _expect_same(_run("requires-grad-other-name", device, backend, form), "metadata")


@pytest.mark.claim("compile.requires-grad-through-alias-dropped")
@given(form=st.sampled_from(RGO_FORMS))
def test_requires_grad_with_other_names_pinned(device, backend, form):
    """Pins today's behaviour: under aot_eager/inductor the other name comes
    back without requires_grad; values are eager's."""
    c = _run("requires-grad-other-name", device, backend, form).compiled
    dropped = form != "own-name" and backend in COMPILED
    got = c.outputs[0]["requires_grad"]
    assert got is not dropped, f"out0.requires_grad = {got} (pinned: {not dropped})"
    want = [1.0, 2.0, 3.0, 4.0] if form == "view-of-it" else [0.0, 0.0, 0.0, 0.0]
    assert _val(c, "out0") == want, _val(c, "out0")


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
        leaf, x = _grad_input(device)
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
    cmp = _run("requires-grad-then-write", device, backend, form)
    for aspect in ("errors", "metadata"):
        evidence.check(ASPECT_CLAIMS[aspect], not cmp.differences[aspect], cmp.message(aspect))


@pytest.mark.claim("compile.requires-grad-through-alias-dropped")
@given(form=st.sampled_from(RGW_FORMS))
def test_requires_grad_intermediate_then_written_pinned(device, backend, form):
    """Pins today's behaviour: inductor raises while tracing; aot_eager
    returns t1 without requires_grad for the first form."""
    c = _run("requires-grad-then-write", device, backend, form).compiled
    deviates = form == "write-after-no-grad-write" and backend == "aot_eager"
    if backend == "inductor":
        assert c.error is not None and c.error["name"] == "TorchRuntimeError", c.error
        assert "a leaf Variable that requires grad is being used" in c.error["text"], c.error
        return
    assert c.error is None, c.error
    assert c.outputs[0]["requires_grad"] is not deviates, c.outputs[0]
    assert _val(c, "out0") == [0.0, 0.0, 0.0, 0.0], _val(c, "out0")


# --------------------------------------------------------------------------- mixed-mode writes

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
    _expect_same(_run("mixed-mode", device, backend, form), "gradients")


@pytest.mark.claim("compile.mixed-mode-input-mutation-gradient")
@given(form=st.sampled_from(MIXED_FORMS))
def test_mixed_mode_input_mutation_gradient_pinned(device, backend, form):
    """Pins today's behaviour: the leaf's gradient differs from eager's under
    aot_eager/inductor for the enable_grad form; values are eager's."""
    cmp = _run("mixed-mode", device, backend, form)
    c, e = cmp.compiled, cmp.eager
    differs = form != "no_grad-block-then-grad" and backend in COMPILED
    got, want = c.grad_values.get("leaf"), e.grad_values.get("leaf")
    same = (got is None and want is None) or (
        got is not None and want is not None and torch.equal(got, want)
    )
    assert same is not differs, f"leaf.grad {got} (eager {want})"
    assert _val(c, "a0") == [-2.0, -4.0, -6.0, -8.0], _val(c, "a0")  # every form: a * -2


# --------------------------------------------------------------------------- clone of an aliased input


CLONE_FORMS = ["aliased", "separate"]


@pytest.mark.claim("compile.output-aliasing-matches-eager")
@given(form=st.sampled_from(CLONE_FORMS))
def test_clone_of_aliased_written_input(device, backend, form):
    """a0.clone() returned after a write into a1, where a0 and a1 are views
    of one base: the clone owns new storage. Deviates (inductor) when the
    arguments alias.

    Kills: a compile path whose outputs alias inputs they should not."""
    evidence.features(form=form)
    _expect_same(_run("clone-aliased", device, backend, form), "aliasing")


@pytest.mark.claim("compile.clone-of-aliased-input-aliases")
@given(form=st.sampled_from(CLONE_FORMS))
def test_clone_of_aliased_input_aliases_pinned(device, backend, form):
    """Pins today's behaviour: under inductor the 'clone' shares storage with
    the arguments when they alias; values are eager's."""
    c = _run("clone-aliased", device, backend, form).compiled
    aliases = form == "aliased" and backend == "inductor"
    assert bool(c.outputs[0]["shares"]) is aliases, c.outputs[0]["shares"]
    want = [[0.0, 0.0, 0.0, 0.0]] if form == "aliased" else [[1.0, 2.0, 3.0, 4.0]]
    assert _val(c, "out0") == want, _val(c, "out0")


# --------------------------------------------------------------------------- a returned input's write misrouted

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
    cmp = _run("misrouted", device, backend, form)
    evidence.check("compile.errors-match-eager", not cmp.differences["errors"],
                   cmp.message("errors"))  # fmt: skip
    evidence.check("compile.input-mutations-match-eager", not cmp.differences["mutations"],
                   cmp.message("mutations"))  # fmt: skip


@pytest.mark.claim("compile.returned-input-write-misrouted")
@given(form=st.sampled_from(MISROUTED_FORMS))
def test_returned_input_write_misrouted_pinned(device, backend, form):
    """Pins today's behaviour per backend and form."""
    c = _run("misrouted", device, backend, form).compiled
    wrong = backend in COMPILED and form != "no-grad"
    if wrong and form == "other-shape":
        assert c.error is not None and "must match the size of tensor b" in c.error["text"], c.error
        return
    assert c.error is None, c.error
    y = sum(_val(c, "a1"), [])
    want = [5.0] * 12 if wrong else [42.0 + i for i in range(12)]
    assert y == want, f"y after the call: {y}, pinned {want}"
    assert sum(_val(c, "out0"), []) == [5.0] * 12, _val(c, "out0")


# --------------------------------------------------------------------------- 0-d grad value into an integer tensor

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
    _expect_same(_run("grad-scalar-into-integer", device, backend, form), "errors")


@pytest.mark.claim("compile.grad-scalar-into-integer-tensor-refused")
@given(form=st.sampled_from(INT_FORMS))
def test_grad_scalar_into_integer_tensor_refused_pinned(device, backend, form):
    """Pins today's behaviour: on the CPU eager writes 17 into the row and
    leaves the int64 tensor requiring grad (although an integer tensor cannot
    be asked to, see autograd.toml); every backend raises a RuntimeError
    instead. On CUDA eager's int64 result does not require grad and every
    backend runs the write as eager does (observed on torch 2.11 CUDA: the
    CPU quirk comes from the 0-d CPU value being written with fill_)."""
    cmp = _run("grad-scalar-into-integer", device, backend, form)
    e, c = cmp.eager, cmp.compiled
    assert e.error is None, e.error
    quirk = device == "cpu" or form == "row-of-float32"
    assert e.outputs[0]["requires_grad"] is quirk, f"eager out0: {e.outputs[0]}"
    row = _val(e, "out0")[0]
    assert row == [17, 17, 17] or row == [17.0, 17.0, 17.0], f"eager row {row}"
    if form == "row-of-float32" or device != "cpu":
        assert c.error is None, c.error
        assert _val(c, "out0") == _val(e, "out0"), _val(c, "out0")
        return
    assert e.outputs[0]["dtype"] == "int64", e.outputs[0]
    assert c.error is not None, "compiled ran it (pinned: raises)"
    assert issubclass(c.error["type"], RuntimeError), c.error["name"]


# --------------------------------------------------------------------------- no_grad view of a tensor made to require grad

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
    _expect_same(_run("no-grad-view-written", device, backend, form), "errors")


@pytest.mark.claim("compile.no-grad-view-of-written-tensor-fails")
@given(form=st.sampled_from(NGV_FORMS))
def test_no_grad_view_of_written_tensor_fails_pinned(device, backend, form):
    """Pins today's behaviour: aot_eager and inductor raise (the backend
    compiler fails) when a0 was written; otherwise the call returns eager's
    values."""
    cmp = _run("no-grad-view-written", device, backend, form)
    c = cmp.compiled
    fails = backend in COMPILED and form == "written"
    if fails:
        assert c.error is not None, f"compiled returned {_val(c, 'out0')} (pinned: raises)"
        return
    assert c.error is None, c.error
    want = [2.0, 4.0, 6.0, 8.0] if form == "written" else [1.0, 2.0, 3.0, 4.0]
    assert _val(c, "out0") == want, _val(c, "out0")


# --------------------------------------------------------------------------- history gained in an enable_grad block

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
    _expect_same(_run("enable-grad-history", device, backend, form), "metadata")


@pytest.mark.claim("compile.enable-grad-write-history-dropped")
@given(form=st.sampled_from(EGH_FORMS))
def test_enable_grad_write_history_dropped_pinned(device, backend, form):
    """Pins today's behaviour: under aot_eager/inductor, called under
    no_grad, a0 comes back without requires_grad (and so does a returned
    a0); values are eager's."""
    c = _run("enable-grad-history", device, backend, form).compiled
    dropped = backend in COMPILED and form != "called-with-grad"
    assert c.error is None, c.error
    got = c.watched["a0"]["requires_grad"]
    assert got is not dropped, f"a0.requires_grad = {got} (pinned: {not dropped})"
    if form != "return-fresh":
        got = c.outputs[0]["requires_grad"]
        assert got is not dropped, f"out0.requires_grad = {got} (pinned: {not dropped})"
    assert _val(c, "a0") == [15.0, 16.0, 17.0, 18.0], _val(c, "a0")


# --------------------------------------------------------------------------- a copy after x[i] = v

SETITEM_FORMS = ["int-index", "slice", "ellipsis"]


def _check_aspects(cmp: Comparison, aspects: tuple[str, ...]) -> None:
    """One verdict per aspect's claim (ASPECT_CLAIMS), each on its own evidence."""
    for aspect in aspects:
        evidence.check(ASPECT_CLAIMS[aspect], not cmp.differences[aspect], cmp.message(aspect))


@pytest.mark.claim("compile.output-aliasing-matches-eager", "compile.errors-match-eager")
@given(form=st.sampled_from(SETITEM_FORMS))
def test_copy_after_setitem_is_new_tensor(device, backend, form):
    """f(x) = {x[0] = 0 (or x[1:3] = 5, x[...] = 0); return x.clone()}: the
    call raises iff eager's does and the clone owns new storage. Deviates
    (inductor) for x[0] and x[1:3]: the output is x itself.

    Kills: a compile path whose copies alias their source."""
    evidence.features(form=form)
    _check_aspects(_run("setitem-copy", device, backend, form), ("errors", "aliasing"))


@pytest.mark.claim("compile.clone-after-setitem-returns-input")
@given(form=st.sampled_from(SETITEM_FORMS))
def test_clone_after_setitem_returns_input_pinned(device, backend, form):
    """Pins today's behaviour: under inductor the 'clone' after x[0] = 0 or
    x[1:3] = 5 is the argument itself; values are eager's."""
    cmp = _run("setitem-copy", device, backend, form)
    c = cmp.compiled
    assert c.error is None, c.error
    aliases = backend == "inductor" and form != "ellipsis"
    got = "a0" in c.outputs[0]["is"]
    assert got is aliases, f"out0 is a0: {got} (pinned: {aliases})"
    assert _val(c, "out0") == _val(cmp.eager, "out0"), _val(c, "out0")


# --------------------------------------------------------------------------- a view output beside a detached aliased write

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
    _check_aspects(_run("detach-offset", device, backend, form), ("errors", "outputs"))


@pytest.mark.claim("compile.view-output-offset-lost")
@given(form=st.sampled_from(OFFSET_FORMS))
def test_view_output_offset_lost_pinned(device, backend, form):
    """Pins today's behaviour: aot_eager and inductor return 15 (b1[0]) with
    the detach, and for a copy between the two aliasing arguments; a2 itself
    holds 0 on every backend."""
    c = _run("detach-offset", device, backend, form).compiled
    assert c.error is None, c.error
    lost = backend in COMPILED and form in OFFSET_LOST
    want = 15 if lost else 0
    assert _val(c, "out0") == want, f"out0 = {_val(c, 'out0')} (pinned: {want})"
    assert _val(c, "a2") == 0, f"a2 = {_val(c, 'a2')}"


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
    _check_aspects(
        _run("materialized-view", device, backend, form), ("errors", "aliasing", "output-writes")
    )


@pytest.mark.claim("compile.view-of-non-contiguous-intermediate-materialized")
@given(form=st.sampled_from(MATERIALIZED_FORMS))
def test_view_of_non_contiguous_intermediate_materialized_pinned(device, backend, form):
    """Pins today's behaviour: under inductor, the expanded view of a
    transposed clone comes back without a zero stride, and the two views of it
    share no storage; on the other backends (and for the control forms) the
    outputs are eager's views. Values are eager's everywhere."""
    cmp = _run("materialized-view", device, backend, form)
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
    _check_aspects(_run("self-copy", device, backend, form), ("errors", "gradients"))


@pytest.mark.claim("compile.self-copy-of-non-contiguous-grad-output-backward-fails")
@given(form=st.sampled_from(SELF_COPY_FORMS))
def test_self_copy_backward_fails_pinned(device, backend, form):
    """Pins today's behaviour: under inductor, backward through the returned
    t0.copy_(t0) of the transposed form raises AssertionError naming the
    expected size and stride; everywhere else backward runs and the leaf's
    .grad is eager's (2 everywhere). The forward values are eager's."""
    cmp = _run("self-copy", device, backend, form)
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
