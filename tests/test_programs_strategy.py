"""The program strategy of the compile tier (strategies/programs.py) makes what
it claims: valid programs (eager runs them), every step kind, grad-mode
block and aliasing form of the inputs, runnable reprs and scripts, fresh
inputs per call - and none of the program shapes it promises to steer clear
of (``STEERING``: each is a claim of its own)."""

from __future__ import annotations

import collections
import functools
import linecache

import torch
from hypothesis import HealthCheck, given, settings

from strategies.programs import (
    ARG_LAYOUTS,
    IN_PLACE,
    LAYOUT_GRID,
    OUTPUT_KINDS,
    STEERING,
    STEP_KINDS,
    STEP_MODES,
    Arg,
    Base,
    Program,
    Step,
    _Scratch,
    arg_layouts,
    output_kind,
    programs,
)

N = 300


@functools.cache
def _programs() -> tuple[Program, ...]:
    seen: list[Program] = []

    @settings(
        max_examples=N,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(programs())
    def collect(p):
        seen.append(p)

    collect()
    return tuple(seen)


def _storage(t):
    return t.untyped_storage().data_ptr()


def test_every_step_kind_and_mode_occurs():
    kinds = collections.Counter(s.kind for p in _programs() for s in p.steps)
    missing = [k for k in STEP_KINDS if kinds[k] == 0]
    assert not missing, f"step kinds never drawn: {missing} ({dict(kinds)})"
    modes = collections.Counter(s.mode for p in _programs() for s in p.steps)
    assert all(modes[m] for m in STEP_MODES), modes
    assert {p.ambient for p in _programs()} == {"grad", "no_grad"}


def test_inputs_alias_in_every_way():
    ps = _programs()
    feats = collections.Counter(k for p in ps for k, v in p.features().items() if v is True)
    for f in ("aliased_inputs", "duplicate_input", "mutates_input", "requires_grad_input"):
        assert feats[f] >= 10, (f, feats)
    views = collections.Counter(v[0] for p in ps for a in p.args for v in a.views)
    assert all(views[k] for k in ("slice", "select", "transpose", "unsqueeze", "expand")), views
    grads = collections.Counter(b.grad for p in ps for b in p.bases)
    assert all(grads[g] for g in ("none", "leaf", "nonleaf")), grads
    # an in-place op on a view argument, and a program returning an argument
    assert any(
        s.kind in IN_PLACE and p.args[int(s.args[0][1:])].views
        for p in ps
        for s in p.steps
        if s.args and s.args[0].startswith("a") and p.args[int(s.args[0][1:])].same_as is None
    )
    assert any(r in p.arg_names for p in ps for r in p.returns)
    assert any(r.endswith((".requires_grad", ".is_leaf")) for p in ps for r in p.returns)


def test_programs_run_eagerly_and_inputs_are_fresh():
    for p in _programs()[:150]:
        fn = p.function()
        one, two = p.inputs()(), p.inputs()()
        assert all(a is not b for a, b in zip(one.args, two.args, strict=True))
        ctx = torch.no_grad() if p.ambient == "no_grad" else torch.enable_grad()
        with ctx:
            fn(*one.args)  # valid by construction: eager accepts it
        assert p.function().__code__ is not fn.__code__, "a fresh code object per call"


def test_reprs_and_scripts_are_runnable():
    for p in _programs()[:100]:
        again = eval(repr(p), {"torch": torch, "Program": Program, "Base": Base, "Arg": Arg,
                               "Step": Step})  # fmt: skip
        assert again == p
        scope: dict = {}
        exec(compile(p.source(), "<program script>", "exec"), scope)
        assert "out" in scope
    fn = _programs()[0].function()
    filename = fn.__code__.co_filename
    assert linecache.getlines(filename), "the source is registered for tracebacks"


def test_no_program_enters_a_steered_region():
    """Replays each program on scratch inputs: every step passes the
    steering (and eager), and no return is one the steering forbids."""
    reasons = collections.Counter()
    for p in _programs():
        s = _Scratch(Program(p.bases, p.args, (), ("a0",), p.ambient))
        for step in p.steps:
            assert s.admissible(step), (step, p)
            assert s.run(step), (step, p)
        unsafe = s.unsafe_returns()
        plain = [r for r in p.returns if "." not in r]
        assert not set(plain) & unsafe, (plain, unsafe, p)
        objects = [s.env[r] for r in plain]
        assert len({id(o) for o in objects}) == len(objects), "one object returned twice"
        for a in s.args:
            assert not (a.dim() == 0 and a.dtype == torch.float64), "0-d float64 argument"
        reasons.update(s.refused)
    assert set(STEERING.values()) <= _registered(), "every steering reason names a claim"


def _registered() -> set[str]:
    from conformance.registry import default_registry

    return set(default_registry().claims)


def test_steering_refuses_the_known_bug_shapes():
    """Each steering rule, on the smallest program that needs it."""
    leaf_base = Program((Base((4,), grad="leaf"),), (Arg(0, (("slice", 0, 1, 1),)),), (), ("a0",))
    s = _Scratch(leaf_base)
    assert not s.admissible(Step("mul_", ("a0",), (2,), mode="no_grad"))
    assert s.refused["write-into-view-of-grad-leaf"] == 1

    plain = Program((Base((4,)),), (Arg(0),), (), ("a0",))
    s = _Scratch(plain)
    assert s.run(Step("data", ("a0",)))
    assert not s.run(Step("add_", ("t0",), (1,)))
    assert s.refused["write-through-data"] == 1
    assert s.run(Step("add_", ("a0",), (1,)))
    assert not s.admissible(Step("requires_grad_", ("t1",)))  # t1 is a0 by another name

    aliased = Program((Base((4,)),), (Arg(0), Arg(0, (("unsqueeze", 0),))), (), ("a0",))
    s = _Scratch(aliased)
    assert s.run(Step("sub_", ("a0", "a0")))
    assert s.run(Step("clone", ("a1",)))
    assert s.run(Step("view", ("a1",), ("select", 0, 0)))
    assert {"a0", "a1", "t1", "t2"} <= s.unsafe_returns()


def test_steering_refuses_thorough_seed_1_shapes():
    """The two program shapes thorough seed 1 reached on 2.13 (each checked
    on fixed forms in conformance/test_compile_findings_*.py)."""
    # a1[0] = a0: a0 a 0-d select of a grad leaf, a1 int64, grad enabled
    mixed = Program(
        (Base((4,), grad="leaf"), Base((2, 3), dtype=torch.int64, start=20)),
        (Arg(0, (("select", 0, 0),)), Arg(1)),
        (),
        ("a1",),
    )
    s = _Scratch(mixed)
    assert not s.admissible(Step("setitem", ("a1", "a0"), (("int", 0),)))
    assert s.refused["grad-scalar-written-into-integer-tensor"] == 1
    assert s.admissible(Step("setitem", ("a1", "a0"), (("int", 0),), mode="no_grad"))

    # under no_grad: a0.requires_grad_(); t1 = a0[:] (t1's base b0 has no grad)
    ng = Program((Base((4,)),), (Arg(0, (("slice", 0, 0, 1),)),), (), ("a0",), "no_grad")
    s = _Scratch(ng)
    assert s.run(Step("requires_grad_", ("a0",)))
    assert s.run(Step("view", ("a0",), ("slice", 0, 0, 1)))
    assert s.run(Step("sub_", ("a0", "a0")))
    assert not s.admissible(Step("clone", ("t1",)))
    assert "t1" in s.unsafe_returns()
    assert s.refused["no-grad-view-of-grad-view"] == 2

    # under no_grad, in enable_grad: a0.copy_(a1) with a1 a grad leaf (a0 gains history)
    eg = Program(
        (Base((4,)), Base((4,), grad="leaf", start=15)), (Arg(0), Arg(1)), (), ("a0",), "no_grad"
    )
    s = _Scratch(eg)
    assert not s.admissible(Step("copy_", ("a0", "a1"), (), mode="enable_grad"))
    assert s.refused["enable-grad-write-of-grad-operand-into-argument"] == 1
    assert s.admissible(Step("copy_", ("a0", "a1")))  # inherits the call's no_grad


def test_steering_refuses_thorough_seed_2_shapes():
    """The two program shapes thorough seed 2 reached on 2.13."""
    # a0[0] = 0; t0 = a0.clone(): inductor returns a0 itself
    plain = Program((Base((4,)),), (Arg(0),), (), ("a0",))
    s = _Scratch(plain)
    assert s.run(Step("setitem", ("a0",), (("int", 0), 0)))
    assert s.run(Step("clone", ("a0",)))
    assert "t0" in s.unsafe_returns()
    assert s.refused["copy-of-setitem-written-tensor"] == 1
    s = _Scratch(plain)
    assert s.run(Step("setitem", ("a0",), (("ellipsis",), 0)))
    assert s.run(Step("clone", ("a0",)))
    assert "t0" not in s.unsafe_returns()

    # a0 = b0[0::1].unsqueeze(0), a1 = b0, a2 = b1.select(0, 1); t0 = a0.detach();
    # a1.sub_(a1): returning a2 is refused, and allowed without the detach
    bases = (Base((4,), dtype=torch.int64), Base((4,), dtype=torch.int64, start=15))
    args = (Arg(0, (("slice", 0, 0, 1), ("unsqueeze", 0))), Arg(0), Arg(1, (("select", 0, 1),)))
    s = _Scratch(Program(bases, args, (), ("a0",)))
    assert s.run(Step("detach", ("a0",)))
    assert s.run(Step("sub_", ("a1", "a1")))
    assert "a2" in s.unsafe_returns()
    assert s.refused["argument-view-beside-detached-aliased-write"] == 1
    s = _Scratch(Program(bases, args, (), ("a0",)))
    assert s.run(Step("sub_", ("a1", "a1")))
    assert "a2" not in s.unsafe_returns()


def test_steering_refuses_a_view_beside_a_write_between_aliases():
    """Thorough seed 2 at 2bba435 on 2.13: t0 = a2.zero_(); a0.copy_(a1) with
    a0 = b0[:][:], a1 = b0 and a2 = b1[:].select(0, 1) - aot_eager and
    inductor return t0 at storage offset 0. Refused when both aliasing
    arguments are operands; a write through one of them alone is allowed."""
    bases = (Base((4,), dtype=torch.int64), Base((4,), dtype=torch.int64, start=15))
    args = (
        Arg(0, (("slice", 0, 0, 1), ("slice", 0, 0, 1))),
        Arg(0),
        Arg(1, (("slice", 0, 0, 1), ("select", 0, 1))),
    )
    s = _Scratch(Program(bases, args, (), ("a0",)))
    assert s.run(Step("zero_", ("a2",)))
    assert s.run(Step("copy_", ("a0", "a1")))
    unsafe = s.unsafe_returns()
    assert "t0" in unsafe and "a2" in unsafe
    assert s.refused["argument-view-beside-write-between-aliases"] == 2
    s = _Scratch(Program(bases, args, (), ("a0",)))
    assert s.run(Step("zero_", ("a2",)))
    assert s.run(Step("add_", ("a0",), (1,)))
    assert not {"t0", "a2"} & s.unsafe_returns()


def test_steering_refuses_a_view_of_a_non_contiguous_intermediate():
    """Thorough seed 2 at edebd72 on 2.13: t0 = a0.clone(); return
    t0.expand(2, -1, -1, -1) with a0 = b0.unsqueeze(0).transpose(0, 2) -
    inductor returns a dense copy. Refused; the same view of a contiguous
    intermediate, and the intermediate itself, are allowed."""
    bases = (Base((2, 3)),)
    transposed = (Arg(0, (("unsqueeze", 0), ("transpose", 0, 2))),)
    s = _Scratch(Program(bases, transposed, (), ("a0",)))
    assert s.run(Step("clone", ("a0",)))
    assert s.run(Step("view", ("t0",), ("expand", 2, 3)))
    unsafe = s.unsafe_returns()
    assert "t1" in unsafe and "t0" not in unsafe
    assert s.refused["view-of-non-contiguous-intermediate"] == 1
    s = _Scratch(Program(bases, (Arg(0, (("unsqueeze", 0),)),), (), ("a0",)))
    assert s.run(Step("clone", ("a0",)))
    assert s.run(Step("view", ("t0",), ("expand", 2, 3)))
    assert not {"t0", "t1"} & s.unsafe_returns()


def test_steering_refuses_a_self_copied_non_contiguous_grad_tensor():
    """Thorough seed 2 at edebd72 on 2.13: t0 = a0 + a0; t3 = t0.copy_(t0);
    return t3 with a0 a transposed view of a leaf that requires grad -
    inductor's backward raises a stride AssertionError. Refused; the same with
    a contiguous a0, or t0 + t0 returned, is allowed."""
    bases = (Base((2, 3), grad="leaf"),)
    s = _Scratch(Program(bases, (Arg(0, (("transpose", 0, 1),)),), (), ("a0",)))
    assert s.run(Step("add", ("a0", "a0")))
    assert s.run(Step("copy_", ("t0", "t0")))
    assert s.run(Step("add", ("t0", "t0")))  # t2: a new tensor, returnable
    unsafe = s.unsafe_returns()
    assert {"t0", "t1"} <= unsafe and "t2" not in unsafe
    assert s.refused["self-copied-non-contiguous-grad-tensor"] == 2
    s = _Scratch(Program(bases, (Arg(0),), (), ("a0",)))
    assert s.run(Step("add", ("a0", "a0")))
    assert s.run(Step("copy_", ("t0", "t0")))
    assert not {"t0", "t1"} & s.unsafe_returns()


# --------------------------------------------------------------------------- issue 29: the layout grid


def test_layout_vocabulary_is_the_domain_vocabulary():
    from conformance.registry import load_dimensions

    dims = load_dimensions()
    assert tuple(dims["arg_layout"]["values"]) == ARG_LAYOUTS
    assert tuple(dims["output_kind"]["values"]) == OUTPUT_KINDS


def test_arg_layouts_and_output_kinds_of_known_tensors():
    base = torch.arange(12.0).reshape(3, 4)
    args = [base, base.t(), base[1:], torch.arange(3.0).expand(2, -1), base[::2]]
    assert arg_layouts(args) == [
        {"contiguous", "aliased"},
        {"transposed", "aliased"},
        {"offset", "aliased"},
        {"expanded"},
        {"aliased"},  # a stepped slice at offset 0: no layout of the vocabulary but aliasing
    ]
    x = torch.arange(4.0)
    fresh = x * 2
    assert output_kind(x, [x]) == "input"
    assert output_kind(x[1:], [x]) == "input_view"
    assert output_kind(x.detach(), [x]) == "input_view"
    assert output_kind(fresh, [x]) == "fresh"
    assert output_kind(fresh[1:], [x]) == "intermediate_view"
    assert output_kind(fresh.detach(), [x], [fresh]) == "intermediate_view"


def test_the_layout_grid_draws_every_layout_and_output_kind_pair():
    """The explicit examples of every backend (inductor included) draw the
    whole ``arg_layout`` x ``output_kind`` grid by construction, and stay
    valid and clear of the steered regions."""
    pairs = set()
    for p in LAYOUT_GRID:
        feats = p.features()
        assert feats["arg_layout"] == set(ARG_LAYOUTS), feats["arg_layout"]
        pairs |= feats["layout_output"]
        s = _Scratch(Program(p.bases, p.args, (), ("a0",), p.ambient))
        for step in p.steps:
            assert s.admissible(step), step
            assert s.run(step), step
        assert not set(p.returns) & s.unsafe_returns(), p
    assert pairs == {f"{lay}/{kind}" for lay in ARG_LAYOUTS for kind in OUTPUT_KINDS}, pairs


def test_generated_programs_report_layouts_and_output_kinds():
    """Every program reports ``arg_layout`` and ``output_kind`` (the compile
    claims' declared domain) inside the vocabulary; the strategy alone draws
    every value of both over the collected programs."""
    layouts, kinds = collections.Counter(), collections.Counter()
    for p in _programs():
        feats = p.features()
        assert feats["arg_layout"] <= set(ARG_LAYOUTS)
        assert feats["output_kind"] <= set(OUTPUT_KINDS)
        # empty only for a program that returns flags alone (t.is_leaf, ...)
        assert feats["output_kind"] or all("." in r for r in p.returns), p
        layouts.update(feats["arg_layout"])
        kinds.update(feats["output_kind"])
    assert set(layouts) == set(ARG_LAYOUTS), layouts
    assert set(kinds) == set(OUTPUT_KINDS), kinds
