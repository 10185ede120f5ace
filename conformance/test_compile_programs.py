"""The compile tier over generated programs: torch.compile keeps eager semantics.

Every test takes ``device`` and ``backend`` (``eager``: Dynamo only, the
harness's sanity check; ``aot_eager``; ``inductor``; or any other
``--backends`` name or ``module:callable``) and compares the
compiled function with eager on fresh copies of the same inputs through
:func:`conformance.compile_oracle.differential`; each compared aspect is its
own claim (:data:`conformance.compile_oracle.ASPECTS`). A falsifying example
shows the program (``program=Program(...)``, runnable) and its source as a
script (in the failure message and the notes).

Budget (``ci`` profile): 100 programs on eager, aot_eager and any other
backend, 30 on inductor
(:data:`conformance.compile_oracle.EXAMPLE_SHARE`), each after the explicit
examples - among them :data:`strategies.programs.LAYOUT_GRID`, two programs
that draw every argument layout x output kind pair (the ``arg_layout`` and
``output_kind`` domain of the program claims) on every backend, so a
backend's coverage of the grid never rests on its share of examples. Each
example reports ``arg_layout``, ``output_kind`` and their pairs
(``layout_output``) as features. Inductor's on-disk FX
graph cache is kept (safe), the AOTAutograd cache is off (keyed without input
aliasing, pytorch/pytorch#139789).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given, note, settings
from hypothesis import strategies as st

from conformance import evidence
from conformance.compile_oracle import (
    ASPECTS,
    EXAMPLE_SHARE,
    Inputs,
    differential,
    scaled_examples,
)
from strategies.programs import (
    LAYOUT_GRID,
    Arg,
    Base,
    Program,
    Step,
    arg_layouts,
    output_kind,
    programs,
)

# compile_oracle snapshots with detach().clone()
pytestmark = pytest.mark.observes("clone", "detach")

#: The aspects the generated programs assert (identity: its own test below).
PROGRAM_ASPECTS = tuple(a for a in ASPECTS if a != "identity")
PROGRAM_CLAIMS = tuple(ASPECTS[a] for a in PROGRAM_ASPECTS)


def _check(cmp, aspects) -> None:
    cmp.check(aspects)


def _layout_grid(test):
    """Add every program of :data:`strategies.programs.LAYOUT_GRID` as an
    explicit example: each backend's run draws every ``arg_layout`` x
    ``output_kind`` pair of the claims' declared domain by construction, in
    every profile (inductor runs a fraction of the examples, so its
    coverage is planned, not left to the strategy)."""
    for program in reversed(LAYOUT_GRID):
        test = example(program=program)(test)
    return test


def _run_program(device, backend, program) -> None:
    """Each aspect of :func:`~conformance.compile_oracle.differential` on a
    generated program (values, autograd metadata, aliasing, input
    mutations, version counters, gradients, writes into outputs, errors)."""
    source = program.source()
    note(source)
    evidence.features(**program.features())
    cmp = differential(
        program.function(), program.inputs(device), backend, ambient=program.ambient, source=source
    )
    _check(cmp, PROGRAM_ASPECTS)


@pytest.mark.claim(*PROGRAM_CLAIMS)
# every backend but inductor, at the profile's full example count: any other
# --backends name or module:callable too (others=True)
@pytest.mark.backends("eager", "aot_eager", others=True)
@_layout_grid
@example(
    # Two overlapping views of one base; the program writes through one and
    # reads the other (the fresh-compile side of pytorch/pytorch#139789).
    program=Program(
        bases=(Base((3, 3)),),
        args=(Arg(0), Arg(0, (("transpose", 0, 1),))),
        steps=(Step("mul_", ("a0",), (2,)), Step("add", ("a0", "a1"))),
        returns=("t1",),
    )
)
@example(
    # A write into a view of a non-leaf that requires grad, inside no_grad.
    program=Program(
        bases=(Base((2, 3), grad="nonleaf"),),
        args=(Arg(0, (("select", 0, 1),)),),
        steps=(Step("mul_", ("a0",), (2,), mode="no_grad"), Step("scale", ("a0",), (2,))),
        returns=("t1", "a0.requires_grad"),
    )
)
@given(program=programs())
def test_generated_programs_keep_eager_semantics(device, backend, program):
    """The profile's full example count on Dynamo alone, aot_eager and every
    backend outside the default three (a registered name or a
    ``module:callable``: no backend but inductor is known to be slow).

    Kills: a compile path that copies outputs (aliasing lost), drops input
    mutations (through views or not), detaches outputs, loses or adds
    version bumps, changes gradients, or raises where eager does not."""
    _run_program(device, backend, program)


@pytest.mark.claim(*PROGRAM_CLAIMS)
@pytest.mark.backends("inductor")
@_layout_grid
@example(
    # Two overlapping views of one base; the program writes through one and
    # reads the other (the fresh-compile side of pytorch/pytorch#139789).
    program=Program(
        bases=(Base((3, 3)),),
        args=(Arg(0), Arg(0, (("transpose", 0, 1),))),
        steps=(Step("mul_", ("a0",), (2,)), Step("add", ("a0", "a1"))),
        returns=("t1",),
    )
)
@example(
    # A write into a view of a non-leaf that requires grad, inside no_grad.
    program=Program(
        bases=(Base((2, 3), grad="nonleaf"),),
        args=(Arg(0, (("select", 0, 1),)),),
        steps=(Step("mul_", ("a0",), (2,), mode="no_grad"), Step("scale", ("a0",), (2,))),
        returns=("t1", "a0.requires_grad"),
    )
)
@settings(max_examples=scaled_examples(EXAMPLE_SHARE["inductor"]))
@given(program=programs())
def test_generated_programs_keep_eager_semantics_inductor(device, backend, program):
    """The same on inductor, with its share of the profile's example count
    (a compile takes seconds): 30 programs in ``ci``.

    Kills: an inductor path that copies outputs, drops input mutations,
    detaches outputs, loses or adds version bumps or changes gradients."""
    _run_program(device, backend, program)


# --------------------------------------------------------------------------- errors


def _leaf(device):
    return torch.arange(1.0, 7.0, device=device).reshape(2, 3).requires_grad_()


def _err_inplace_on_grad_leaf(device):
    return (lambda x: x.add_(1) * 2), lambda: Inputs.of(_leaf(device))


def _err_inplace_on_view_of_grad_leaf(device):
    def make():
        leaf = _leaf(device)
        return Inputs.of(leaf[0], leaf=leaf)

    return (lambda x: x.mul_(2) + 1), make


def _err_shape_mismatch(device):
    def make():
        return Inputs.of(torch.arange(6.0, device=device), torch.arange(4.0, device=device))

    return (lambda x, y: x.add_(y) * 2), make


def _err_integer_result_cast(device):
    return (lambda x: x.add_(0.5) * 2), lambda: Inputs.of(torch.arange(4, device=device))


def _err_write_into_expanded(device):
    def make():
        return Inputs.of(torch.arange(3.0, device=device).expand(2, 3))

    return (lambda x: x.add_(1) * 2), make


ERRORS = {
    "inplace-on-grad-leaf": _err_inplace_on_grad_leaf,
    "inplace-on-view-of-grad-leaf": _err_inplace_on_view_of_grad_leaf,
    "shape-mismatch": _err_shape_mismatch,
    "integer-result-cast": _err_integer_result_cast,
    "write-into-expanded": _err_write_into_expanded,
}


@pytest.mark.claim("compile.errors-match-eager")
@given(form=st.sampled_from(sorted(ERRORS)))
def test_compiled_errors_match_eager(device, backend, form):
    """Programs eager refuses: the compiled function must refuse them too,
    with eager's exception type (or a subclass) and message.

    Kills: a compile path that swallows errors, or runs the refused write."""
    fn, make = ERRORS[form](device)
    cmp = differential(fn, make, backend)
    assert cmp.eager.error is not None, f"{form}: eager accepted the program"
    _check(cmp, ("errors",))


# --------------------------------------------------------------------------- identity


def _vec(device):
    return torch.arange(1.0, 5.0, device=device)


def _id_inplace_returns_input(x):
    return x.add_(1)


def _id_contiguous_returns_self(x):
    return x * 2, x.contiguous()


def _id_to_returns_self(x):
    return x * 2, x.to(torch.float32)


def _id_input_returned_after_write(x):
    return x.add_(1), x


def _id_view_returned_twice(x):
    v = x[1:]
    return v, v


def _id_clone_returned_twice(x):
    c = x.clone()
    return c, c


def _id_intermediate_and_noop_view(x):
    b = x + 1
    return b, b.view(-1)


def _id_intermediate_view_returned(x):
    b = x * 2
    return b, b[1:]


IDENTITY = {
    "inplace-returns-input": _id_inplace_returns_input,
    "contiguous-returns-self": _id_contiguous_returns_self,
    "to-returns-self": _id_to_returns_self,
    "input-returned-after-write": _id_input_returned_after_write,
    "view-returned-twice": _id_view_returned_twice,
    "clone-returned-twice": _id_clone_returned_twice,
    "intermediate-and-noop-view": _id_intermediate_and_noop_view,
    "intermediate-view-returned": _id_intermediate_view_returned,
}


def _layout_inputs(device, arg_kind: str) -> Inputs:
    """The argument of an identity form in one ``arg_layout``: a plain
    vector (``contiguous``), ``base[1:]`` (``offset``), a transposed 2-D
    view, an expanded view, or ``base[1:5]`` passed beside a second argument
    ``base[:4]`` that overlaps it (``aliased``; the form ignores it)."""
    if arg_kind == "contiguous":
        return Inputs.of(_vec(device))
    if arg_kind == "offset":
        base = torch.arange(0.0, 5.0, device=device)
        return Inputs.of(base[1:], base=base)
    if arg_kind == "transposed":
        base = torch.arange(1.0, 7.0, device=device).reshape(2, 3)
        return Inputs.of(base.t(), base=base)
    if arg_kind == "expanded":
        base = torch.arange(1.0, 5.0, device=device)
        return Inputs.of(base.expand(2, -1), base=base)
    if arg_kind == "aliased":
        base = torch.arange(0.0, 6.0, device=device)
        return Inputs.of(base[1:5], base[:4], base=base)
    raise ValueError(f"unknown argument kind {arg_kind!r}")


def _identity_features(cmp, inputs: Inputs) -> None:
    """Report the ``arg_layout`` of the arguments and the ``output_kind`` of
    each tensor eager returned (the claim's declared domain); the forms bind
    no alias of an intermediate but views, so ``_is_view()`` tells an
    intermediate's view from the intermediate."""
    args = [a for a in inputs.args if isinstance(a, torch.Tensor)]
    outs = [o for o in cmp.eager.returned if isinstance(o, torch.Tensor)]
    eager_args = [cmp.eager.values[f"a{i}"] for i in range(len(args))]
    evidence.features(
        arg_layout=frozenset().union(*arg_layouts(args)),
        output_kind=frozenset(output_kind(o, eager_args) for o in outs),
    )


@pytest.mark.claim("compile.output-identity-matches-eager")
# Every arg_layout and output_kind of the claim's domain, on every backend
# (the given draws contiguous and offset arguments only).
@example(form="inplace-returns-input", arg_kind="transposed")
@example(form="view-returned-twice", arg_kind="expanded")
@example(form="input-returned-after-write", arg_kind="aliased")
@example(form="intermediate-view-returned", arg_kind="contiguous")
@example(form="to-returns-self", arg_kind="offset")
@given(form=st.sampled_from(sorted(IDENTITY)), arg_kind=st.sampled_from(("contiguous", "offset")))
def test_output_identity_matches_eager(device, backend, form, arg_kind):
    """Python identity of outputs (``is``) against eager, for the documented
    ``return self`` forms, a tensor returned twice, an intermediate with a
    no-op view of it and with a slice of it; the argument is a plain tensor
    or a view of a base at an offset (drawn), or - as explicit examples - a
    transposed view, an expanded view, or a view aliased by a second argument.

    Kills: a compile path that returns a new alias where eager returns the
    input itself (or one object where eager returns two)."""
    fn = IDENTITY[form]
    if arg_kind == "aliased":
        fn = _ignore_second(fn)
    evidence.features(form=form)
    cmp = differential(fn, lambda: _layout_inputs(device, arg_kind), backend)
    _identity_features(cmp, _layout_inputs(device, arg_kind))
    _check(cmp, ("identity",))


def _ignore_second(form):
    """``form`` called with the first of two arguments (the second aliases it)."""

    def f(x, y):
        return form(x)

    return f
