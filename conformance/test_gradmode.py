"""Properties of ``torch.no_grad``, ``torch.inference_mode``,
``torch.set_grad_enabled`` and ``torch.enable_grad`` (claims in
``claims/gradmode.toml``).

What each property kills (the broken torch it would catch) is in its
docstring. Every mode is entered through a context manager (or a decorated
function), so the global grad mode is restored even when an assertion fails;
the tests that call ``set_grad_enabled`` as a function run inside
``grad_mode_restored()``, and the thread tests always join their thread.
"""

from __future__ import annotations

import contextlib
import threading

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    grad_mode_restored,
    helper_op,
    raises_with,
    same_bits,
)
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    DIFFERENTIABLE,
    FLOATING,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    domain_examples,
    domain_grid,
    layout_kinds,
    not_expanded,
    tensor_kind_of,
)
from strategies.dtypes import dtype_family

THREAD_TIMEOUT_S = 10.0

# Ops that always return a view of their input, for every shape (0-d and
# zero-size included): name -> a fixed call (unlike test_views.DOCUMENTED_VIEW_OPS,
# names whose arguments are drawn per tensor, some valid only on some shapes).
ALWAYS_VIEW_OPS = {
    "index": lambda t: t[...],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t.expand(2, *t.shape),
    "view": lambda t: t.view(t.shape),
    "view_as": lambda t: t.view_as(t),
    "as_strided": lambda t: t.as_strided(t.size(), t.stride(), t.storage_offset()),
    "permute": lambda t: t.permute(tuple(reversed(range(t.dim())))),
    "squeeze": lambda t: t.squeeze(),
}
# Views that can be written in place (expand makes overlapping memory).
WRITABLE_VIEW_OPS = {k: v for k, v in ALWAYS_VIEW_OPS.items() if k != "expand"}

# Ops that return a new tensor (never a view, never the input itself), valid
# for every dtype and shape.
NONVIEW_OPS = {
    "clone": lambda t: t.clone(),
    "mul": lambda t: t * 2,
    "sum": lambda t: t.sum(),
    "cat": lambda t: torch.cat([t.reshape(-1), t.reshape(-1)]),
    "stack": lambda t: torch.stack([t, t]),
    "where": lambda t: torch.where(t == t, t, t),
}
# ... and differentiable ones for floating/complex inputs.
NONVIEW_DIFF_OPS = {**NONVIEW_OPS, "exp": torch.exp, "neg": torch.neg, "add": lambda t: t + 1}
ALL_DIFF_OPS = {**NONVIEW_DIFF_OPS, **ALWAYS_VIEW_OPS}


def _root(t: torch.Tensor) -> torch.Tensor:
    """The root base of a view (``t`` itself when it is not a view)."""
    return t._base if t._base is not None else t


def _set_all(t: torch.Tensor) -> None:
    t[...] = 1


# In-place ops valid for every dtype, and those needing arithmetic kernels.
INPLACE_ANY = {
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(1),
    "copy_": lambda t: t.copy_(torch.ones_like(t)),
    "setitem": _set_all,
}
INPLACE_ARITH = {"add_": lambda t: t.add_(1), "mul_": lambda t: t.mul_(2)}
INPLACE = {**INPLACE_ANY, **INPLACE_ARITH}

DISABLED_MODES = {
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
}


@st.composite
def inplace_cases(
    draw, dtypes=ALL_DTYPES, views=NON_OVERLAPPING_VIEWS, requires_grad=False, values="bounded"
):
    """(op name, spec) with a dtype the op has a kernel for; ``values`` as in
    ``tensor_specs`` (``"all"`` for the claims comparing values bit for bit).

    Expanded layouts are left out by default: an in-place write into
    overlapping memory is refused for an unrelated reason (internal overlap).
    """
    op = draw(st.sampled_from(sorted(INPLACE)))
    pool = [d for d in dtypes if op in INPLACE_ANY or d in ARITHMETIC]
    if requires_grad:
        pool = [d for d in pool if d in DIFFERENTIABLE]
    return op, draw(tensor_specs(dtype=pool, views=views, values=values))


def real_scalar(t: torch.Tensor) -> torch.Tensor:
    s = t.sum()
    return s.real if s.is_complex() else s


def maybe_rg(spec, requested: bool) -> bool:
    """``requested`` where the spec's dtype can require grad, else False."""
    return requested and spec.dtype in DIFFERENTIABLE


def build_inference(spec, device) -> torch.Tensor:
    """The spec built inside inference_mode: an inference tensor (a view of
    one when the spec has views)."""
    with torch.inference_mode():
        return spec.build(device)


# --------------------------------------------------------------------------- no_grad results

#: How a disabled-mode scope is entered around a computation (issue 29:
#: ``block_form``): a with block or a decorated function. The same scopes
#: entered in a worker thread are checked by ``test_grad_modes_are_thread_local``
#: (this module's only user of threads, whose snippets are unavailable).
SCOPE_FORMS = ("with", "decorator")


def _computed_in_scope(form: str, mode, fn):
    """``fn()`` computed inside ``mode()`` (a context-manager class such as
    ``torch.no_grad``) entered as ``form`` (:data:`SCOPE_FORMS`): a with
    block or a decorated function; returns its result."""
    if form == "with":
        with mode():
            return fn()
    return mode()(fn)()


_LEAF = TensorSpec(dtype=torch.float32, base_shape=(2,), storage=[1.0, -0.0])


@pytest.mark.claim("gradmode.no-grad-results-not-require-grad")
# Issue 29, block_form: both ways of entering no_grad in this thread, on a
# non-view result (in a worker thread: test_grad_modes_are_thread_local).
@example(spec=_LEAF, leaf=True, op="mul", block="with")
@example(spec=_LEAF, leaf=False, op="exp", block="decorator")
@given(
    spec=tensor_specs(requires_grad=True),
    leaf=st.booleans(),
    op=st.sampled_from(sorted(ALL_DIFF_OPS)),
    block=st.sampled_from(SCOPE_FORMS),
)
def test_no_grad_every_result_not_requiring_grad(device, spec, leaf, op, block):
    """The docstring's sentence as written ('every computation'), with
    no_grad entered as a with block or a decorator. Views deviate (issue
    #11390): recorded in expectations.

    Kills: a no_grad that lets a computation require grad (in one form of
    entering it only).
    """
    x = spec.build(device, requires_grad=True, leaf=leaf)
    evidence.features(
        view_of_grad_root=op in ALWAYS_VIEW_OPS and _root(x).requires_grad, block_form=block
    )
    r = _computed_in_scope(block, torch.no_grad, lambda: ALL_DIFF_OPS[op](x))
    assert r.requires_grad is False, "a result computed under no_grad requires grad"
    assert r.grad_fn is None, "a result computed under no_grad has a grad_fn"


@pytest.mark.claim("gradmode.modes-override-requires-grad")
# Both disabled modes (issue 29: grad_mode) and both ways of entering them
# in this thread (block_form; in a worker thread:
# test_grad_modes_are_thread_local), on a non-view result.
@example(spec=_LEAF, mode="no_grad", op="clone", block="with")
@example(spec=_LEAF, mode="inference_mode", op="clone", block="with")
@example(spec=_LEAF, mode="no_grad", op="mul", block="decorator")
@example(spec=_LEAF, mode="inference_mode", op="exp", block="decorator")
@given(
    spec=tensor_specs(requires_grad=True),
    mode=st.sampled_from(sorted(DISABLED_MODES)),
    op=st.sampled_from(sorted(ALL_DIFF_OPS)),
    block=st.sampled_from(SCOPE_FORMS),
)
def test_disabled_modes_override_requires_grad(device, spec, mode, op, block):
    """The autograd note's sentence as written. Views deviate in both modes
    (issue #11390): recorded in expectations.

    Kills: a no-grad or inference mode that lets a result require grad (in
    one form of entering it only).
    """
    x = spec.build(device, requires_grad=True, leaf=True)
    evidence.features(
        view_of_grad_root=op in ALWAYS_VIEW_OPS and _root(x).requires_grad,
        grad_mode=mode,
        block_form=block,
    )
    r = _computed_in_scope(block, DISABLED_MODES[mode], lambda: ALL_DIFF_OPS[op](x))
    assert r.requires_grad is False, "a result computed with grad disabled requires grad"


def _every_view_op_and_mode(test):
    """Explicit examples: every view op of :data:`ALWAYS_VIEW_OPS` (and ``clone``)
    under every disabled mode, on a plain float32 leaf that requires grad (the finite
    part of the claim's domain, covered whatever the drawn examples are)."""
    leaf = TensorSpec(dtype=torch.float32, base_shape=(2,), storage=[1.0, -0.0])
    for mode in sorted(DISABLED_MODES):
        for op in [*sorted(ALWAYS_VIEW_OPS), "clone"]:  # and a non-view result
            test = example(spec=leaf, leaf=True, mode=mode, op=op)(test)
    return test


@pytest.mark.claim("gradmode.views-in-disabled-mode-require-grad")
@pytest.mark.observes("backward")
@_every_view_op_and_mode
@given(
    spec=tensor_specs(requires_grad=True),
    leaf=st.booleans(),
    mode=st.sampled_from(sorted(DISABLED_MODES)),
    op=st.sampled_from(sorted(ALL_DIFF_OPS)),
)
def test_views_in_disabled_mode_require_grad(device, spec, leaf, mode, op):
    """``x`` is a plain leaf (no views in the spec), a leaf that is a view of
    a base not requiring grad (``leaf=True`` with views), or a non-leaf view
    of a base that requires grad (``leaf=False``); a view made with grad
    disabled reports its root base's requires_grad.

    Kills: a change in either direction of the view exception: views that
    stop propagating requires_grad (the documented behaviour, fixing #11390)
    or start propagating it from a non-requiring root, non-view results that
    start requiring grad, or a view that gets a grad_fn and connects a later
    backward to the base.
    """
    x = spec.build(device, requires_grad=True, leaf=leaf)
    root_requires_grad = not (leaf and spec.views)
    evidence.features(grad_mode=mode)
    with DISABLED_MODES[mode]():
        r = ALL_DIFF_OPS[op](x)
    assert r.grad_fn is None, "a result computed with grad disabled has a grad_fn"
    assert r.is_leaf, "a result computed with grad disabled is not a leaf"
    if op not in ALWAYS_VIEW_OPS:
        assert r.requires_grad is False, "a non-view result made with grad disabled requires grad"
        return
    assert r.requires_grad is root_requires_grad, (
        f"a view made with grad disabled has requires_grad={r.requires_grad}, "
        f"its root base has {root_requires_grad}"
    )
    if r.requires_grad:
        real_scalar(r * 2).backward()
        assert r.grad is None, "backward through a view made with grad disabled filled its .grad"
        if leaf:
            assert x.grad is None, "backward through a view made with grad disabled reached x"


# --------------------------------------------------------------------------- factories


def _factory(name: str, shape, dtype, device, source: torch.Tensor):
    kw = {"dtype": dtype, "device": device, "requires_grad": True}
    n = source.numel()
    return {
        "zeros": lambda: torch.zeros(shape, **kw),
        "ones": lambda: torch.ones(shape, **kw),
        "empty": lambda: torch.empty(shape, **kw),
        "full": lambda: torch.full(shape, 2, **kw),
        "rand": lambda: torch.rand(shape, **kw),
        "randn": lambda: torch.randn(shape, **kw),
        "arange": lambda: torch.arange(float(n), **kw),
        "linspace": lambda: torch.linspace(0, 1, n, **kw),
        "tensor": lambda: torch.tensor(source.tolist(), **kw),
        "zeros_like": lambda: torch.zeros_like(source, requires_grad=True),
        "ones_like": lambda: torch.ones_like(source, requires_grad=True),
        "empty_like": lambda: torch.empty_like(source, requires_grad=True),
        "full_like": lambda: torch.full_like(source, 2, requires_grad=True),
        "rand_like": lambda: torch.rand_like(source, requires_grad=True),
        "Parameter": lambda: torch.nn.Parameter(source.clone()),
    }[name]()


FACTORY_NAMES = (
    "zeros ones empty full rand randn arange linspace tensor "
    "zeros_like ones_like empty_like full_like rand_like"
).split()
REAL_ONLY_FACTORIES = ("arange", "linspace")  # no complex kernels


@st.composite
def factory_cases(draw, with_parameter=True):
    name = draw(st.sampled_from(FACTORY_NAMES + (["Parameter"] if with_parameter else [])))
    dtypes = FLOATING if name in REAL_ONLY_FACTORIES else DIFFERENTIABLE
    return name, draw(tensor_specs(dtype=dtypes))


@pytest.mark.claim("gradmode.no-grad-factories-unaffected")
@pytest.mark.observes("clone", "tensor")
@given(case=factory_cases())
# torch.tensor is one factory of fifteen: pin it so no draw can miss it.
@example(case=("tensor", TensorSpec(dtype=torch.float32, base_shape=(2,), storage=[1.0, -0.0])))
@example(case=("Parameter", TensorSpec(dtype=torch.float64, base_shape=(), storage=[2.5])))
def test_no_grad_factories_unaffected(device, case):
    """Kills: a no_grad that overrides an explicit requires_grad=True of a
    factory (or Parameter's default), so freshly created weights silently
    stop training."""
    name, spec = case
    source = spec.build(device)
    with torch.no_grad():
        t = _factory(name, spec.shape, spec.dtype, device, source)
    assert t.requires_grad is True, (
        f"{name}(requires_grad=True) under no_grad does not require grad"
    )
    assert t.is_leaf and t.grad_fn is None, f"{name} under no_grad did not return a leaf"
    assert (t * 2).grad_fn is not None, f"{name}'s result is not recorded after no_grad"


# --------------------------------------------------------------------------- threads

THREAD_MODES = {
    "no_grad": torch.no_grad,
    "set_grad_enabled": lambda: torch.set_grad_enabled(False),
    "inference_mode": torch.inference_mode,
}

#: How a disabled mode is entered (issue 29: ``block_form``): a with block, a
#: decorated function, or ``torch.set_grad_enabled(False)`` called as a
#: function (the only mode with a function form), as ``"mode/form"``.
THREAD_ENTRIES = (
    "no_grad/with", "no_grad/decorator", "set_grad_enabled/with", "set_grad_enabled/decorator",
    "set_grad_enabled/call", "inference_mode/with", "inference_mode/decorator",
)  # fmt: skip


def _in_disabled_mode(entry: str, body):
    """Run ``body()`` inside the disabled mode of ``entry`` (one of
    :data:`THREAD_ENTRIES`), entered in its form, and return its result; a
    ``call`` entry restores the grad mode afterwards (``grad_mode_restored``).
    Raises ``ValueError`` for an unknown form."""
    mode, form = entry.split("/")
    if form == "with":
        with THREAD_MODES[mode]():
            return body()
    if form == "decorator":
        return THREAD_MODES[mode]()(body)()
    if form == "call" and mode == "set_grad_enabled":
        with grad_mode_restored():
            torch.set_grad_enabled(False)
            return body()
    raise ValueError(f"no form {form!r} for {mode}")


_THREAD_SPEC = TensorSpec(dtype=torch.float32, base_shape=(2,), storage=(1.5, -0.0))


#: The claims whose scopes test_grad_modes_are_thread_local also enters in a
#: worker thread (issue 29: their ``block_form=thread``).
_IN_WORKER = (
    "gradmode.no-grad-results-not-require-grad",
    "gradmode.modes-override-requires-grad",
    "gradmode.set-grad-enabled-restores",
)


@pytest.mark.claim("gradmode.thread-local", *_IN_WORKER)
# Issue 29, block_form: each way of entering the mode in this thread (a new
# thread started inside it starts with grad enabled), and the mode entered in
# another thread ("thread": it applies there and does not leak back here).
@example(spec=_THREAD_SPEC, entry="no_grad/with", disabled_in="main", op="mul")
@example(spec=_THREAD_SPEC, entry="no_grad/decorator", disabled_in="main", op="add")
@example(spec=_THREAD_SPEC, entry="set_grad_enabled/call", disabled_in="main", op="exp")
@example(spec=_THREAD_SPEC, entry="set_grad_enabled/call", disabled_in="worker", op="neg")
@example(spec=_THREAD_SPEC, entry="inference_mode/decorator", disabled_in="worker", op="mul")
@example(spec=_THREAD_SPEC, entry="no_grad/with", disabled_in="worker", op="exp")
@given(
    spec=tensor_specs(requires_grad=True),
    entry=st.sampled_from(THREAD_ENTRIES),
    disabled_in=st.sampled_from(["main", "worker"]),
    op=st.sampled_from(sorted(NONVIEW_DIFF_OPS)),
)
def test_grad_modes_are_thread_local(device, spec, entry, disabled_in, op):
    """``disabled_in="main"``: this thread enters the mode and starts a
    recorder thread inside it; ``"worker"``: a worker thread enters it while
    this thread records (``block_form`` reports the entry's form, plus
    ``thread`` for the mode entered in the worker). In the worker the scope
    is also checked against the claims of :data:`_IN_WORKER`: its (non-view)
    result does not require grad, and leaving a with block or decorated
    function restores the worker's enabled mode.

    Kills: a grad mode stored process-wide, so that a data-loading or
    evaluation thread under no_grad silently disables training in another;
    a new thread that inherits its starter's disabled mode; a mode that
    does not apply, or is not restored, in the (non-main) thread that
    entered it."""
    mode, form = entry.split("/")
    in_worker = disabled_in == "worker"
    evidence.features(
        block_form=frozenset({form, "thread"} if in_worker else {form}),
        grad_mode="inference_mode" if mode == "inference_mode" else "no_grad",
        entry=entry,
    )
    x = spec.build(device, requires_grad=True, leaf=True)
    fn = NONVIEW_DIFF_OPS[op]
    seen: dict[str, object] = {}
    entered, release = threading.Event(), threading.Event()

    def recorder():
        seen["enabled"] = torch.is_grad_enabled()
        seen["requires_grad"] = fn(x).requires_grad

    def disabled_body():
        seen["worker_requires_grad"] = fn(x).requires_grad
        entered.set()
        release.wait(THREAD_TIMEOUT_S)

    def disabled_worker():
        try:
            _in_disabled_mode(entry, disabled_body)
            seen["worker_enabled_after"] = torch.is_grad_enabled()
        finally:
            entered.set()

    if not in_worker:

        def main_body():
            worker = threading.Thread(target=recorder)
            worker.start()
            worker.join(THREAD_TIMEOUT_S)
            return worker, fn(x).requires_grad

        # A mode that is not restored (torch 2.1's set_grad_enabled(False) as
        # a decorator) must not leak into this test's later examples: the
        # suite restores this thread's mode itself and checks the restore.
        with grad_mode_restored():
            worker, here = _in_disabled_mode(entry, main_body)
            after = torch.is_grad_enabled()
        assert not worker.is_alive(), "worker thread did not finish"
        evidence.check(
            "gradmode.thread-local",
            here is False,
            f"{mode} ({form}) did not disable recording in its own thread",
        )
        evidence.check(
            "gradmode.thread-local",
            seen == {"enabled": True, "requires_grad": True},
            f"{mode} ({form}) in the main thread disabled recording in another thread: {seen}",
        )
        if mode != "inference_mode" and form != "call":
            evidence.check(
                "gradmode.set-grad-enabled-restores",
                after is True,
                f"{mode} ({form}) left the grad mode {after} after it (main thread)",
            )
        return
    worker = threading.Thread(target=disabled_worker)
    worker.start()
    try:
        assert entered.wait(THREAD_TIMEOUT_S), "worker thread never entered the mode"
        enabled, here = torch.is_grad_enabled(), fn(x).requires_grad
    finally:
        release.set()
        worker.join(THREAD_TIMEOUT_S)
    assert not worker.is_alive(), "worker thread did not finish"
    applied = seen.get("worker_requires_grad") is False
    message = f"{mode} ({form}) did not apply in the worker thread that entered it"
    evidence.check("gradmode.thread-local", applied, message)
    if mode == "no_grad":
        evidence.check("gradmode.no-grad-results-not-require-grad", applied, message)
    evidence.check("gradmode.modes-override-requires-grad", applied, message)
    if mode != "inference_mode":
        # set_grad_enabled(False) as a function sets the mode (applied); a with
        # block or decorated function restores the worker's enabled mode on exit.
        restored = form == "call" or seen.get("worker_enabled_after") is True
        evidence.check(
            "gradmode.set-grad-enabled-restores",
            applied and restored,
            f"{mode} ({form}) left the grad mode {seen.get('worker_enabled_after')} after it "
            "(worker thread)"
            if applied
            else f"{mode} ({form}) did not apply in the worker thread that entered it",
        )
    evidence.check(
        "gradmode.thread-local",
        enabled and here,
        f"{mode} ({form}) in another thread disabled recording in this one",
    )


# --------------------------------------------------------------------------- in-place under no_grad


def _inplace_domain(dtypes=DIFFERENTIABLE, **fixed):
    """Issue 29: one ``@example(case=("fill_", spec), **fixed)`` per
    :func:`domain_grid` spec of ``dtypes`` that an in-place op can write
    (every layout family but the expanded one, every dtype family of
    ``dtypes``)."""
    return domain_examples(
        "case", dtypes, where=not_expanded, make=lambda spec: ("fill_", spec), **fixed
    )


def _spec_domain(**fixed):
    """Issue 29: one ``@example(spec=spec, **fixed)`` per :func:`domain_grid`
    spec (every layout family and dtype family); unlike ``domain_examples``
    it takes a fixed ``where`` argument of the test."""
    from hypothesis import example

    def decorate(fn):
        for spec in domain_grid():
            fn = example(spec=spec, **fixed)(fn)
        return fn

    return decorate


def _case_features(x: torch.Tensor) -> None:
    """The layout and dtype family of the tensor an in-place case writes."""
    evidence.features(layout=layout_kinds(x), dtype_family=dtype_family(x.dtype))


@pytest.mark.claim("gradmode.no-grad-inplace-bumps-version")
@pytest.mark.observes("backward", "copy_")
@_inplace_domain(through="view")
@given(
    case=inplace_cases(dtypes=DIFFERENTIABLE, requires_grad=True),
    through=st.sampled_from(["self", "view"]),
)
def test_no_grad_inplace_bumps_version(device, case, through):
    """Kills: a no_grad that also suppresses version bumps, letting a saved
    tensor be overwritten with no error and a silently wrong gradient."""
    op, spec = case
    x = spec.build(device, requires_grad=True, leaf=True)
    _case_features(x)
    loss = real_scalar(x * x)  # mul saves x
    before = x._version
    with torch.no_grad():
        INPLACE[op](x if through == "self" else x[...])
    assert x._version > before, "an in-place op under no_grad did not bump the version"
    with raises_with(RuntimeError, "modified by an inplace operation"):
        loss.backward()


@pytest.mark.claim("gradmode.no-grad-inplace-on-leaf-allowed")
@pytest.mark.observes("backward", "copy_")
@_inplace_domain(k=2)
@given(
    case=inplace_cases(dtypes=DIFFERENTIABLE, requires_grad=True, values="all"),
    k=st.integers(1, 3),
)
def test_no_grad_inplace_on_leaf_allowed(device, case, k):
    """The written values are compared bit for bit with the same update of an
    independent build of the spec (outside autograd), over every value class.

    Kills: a no_grad in which updating a parameter in place (the
    optimizer step) raises, does not write, or turns the leaf into a
    non-leaf / stops it requiring grad."""
    op, spec = case
    x = spec.build(device, requires_grad=True, leaf=True)
    _case_features(x)
    expected = spec.build(device)
    INPLACE[op](expected)
    with torch.no_grad():
        INPLACE[op](x)
    assert_same_bits(x, expected, "an in-place update under no_grad wrote wrong values")
    assert x.is_leaf and x.grad_fn is None, "an in-place update under no_grad made a non-leaf"
    assert x.requires_grad, "an in-place update under no_grad dropped requires_grad"
    real_scalar(x * k).backward()
    assert torch.equal(x.grad, torch.full_like(x, k)), "the updated leaf does not train afterwards"


@pytest.mark.claim("gradmode.no-grad-view-inplace-raises")
# Issue 29: a leaf (a plain one, or a leaf view of a base not requiring grad)
# and a non-leaf, over every non-overlapping layout and differentiable family.
@domain_examples(dtypes=DIFFERENTIABLE, where=not_expanded, leaf=True, view="index", op="fill_")
@domain_examples(dtypes=DIFFERENTIABLE, where=not_expanded, leaf=False, view="view", op="mul_")
@given(
    spec=tensor_specs(requires_grad=True, views=NON_OVERLAPPING_VIEWS),
    leaf=st.booleans(),
    view=st.sampled_from(sorted(WRITABLE_VIEW_OPS)),
    op=st.sampled_from(sorted(INPLACE)),
)
def test_no_grad_view_inplace_in_grad_mode_raises(device, spec, leaf, view, op):
    """``x`` is a plain leaf or a leaf view of a base not requiring grad
    (``leaf=True``), or a non-leaf (``leaf=False``); only in the middle case
    does the view's root base not require grad.

    Kills: an in-place write in grad mode through a view made under no_grad
    that is silently accepted (ambiguous: tracked or not?), or a change of
    which views the rule covers.
    """
    x = spec.build(device, requires_grad=True, leaf=leaf)
    if not leaf:
        x = x * 1  # a non-leaf even when the spec has no views
    evidence.features(tensor_kind=tensor_kind_of(x))
    root_requires_grad = not (leaf and spec.views)
    with torch.no_grad():
        v = WRITABLE_VIEW_OPS[view](x)
    if root_requires_grad:
        with raises_with(
            RuntimeError, "A view was created in no_grad mode and is being modified inplace"
        ):
            INPLACE[op](v)
    else:
        INPLACE[op](v)


@pytest.mark.claim("gradmode.no-grad-is-not-eval")
@pytest.mark.observes("backward")
@given(spec=tensor_specs(dtype=FLOATING, shape=shapes(min_dims=1, min_side=1)))
def test_no_grad_is_not_eval(device, spec):
    """Real floating inputs with a non-empty feature dimension (nn.Linear).

    Kills: a no_grad that switches modules to eval mode, or an eval() that
    disables gradient recording: the two are orthogonal.
    """
    cap.require_kernel("addmm", spec.dtype, device)  # nn.Linear: float16 CPU from torch 2.2
    x = spec.build(device, requires_grad=True, leaf=True)
    model = torch.nn.Sequential(
        torch.nn.Linear(x.shape[-1], 3, dtype=x.dtype, device=device), torch.nn.Dropout(p=1.0)
    )
    with torch.no_grad():
        out = model(x)
        assert model.training and model[1].training, "no_grad switched the modules to eval mode"
    assert bool((out == 0).all()), "training-mode Dropout(p=1) under no_grad did not drop"
    assert out.requires_grad is False, "a module output under no_grad requires grad"
    model.eval()
    out = model(x)
    assert out.requires_grad and out.grad_fn is not None, "eval() disabled gradient recording"
    assert torch.equal(out, model[0](x)), "eval-mode Dropout is not the identity"
    real_scalar(out).backward()
    assert model[0].weight.grad is not None, "backward in eval mode did not reach the weights"


# --------------------------------------------------------------------------- set_grad_enabled

# name -> (how it is applied, the grad mode inside)
NEST_MODES = {
    "no_grad": ("context", False),
    "enable_grad": ("context", True),
    "set_grad_enabled(False)": ("context", False),
    "set_grad_enabled(True)": ("context", True),
    "@no_grad": ("decorator", False),
    "@enable_grad": ("decorator", True),
    "set_grad_enabled(False) as function": ("function", False),
    "set_grad_enabled(True) as function": ("function", True),
}


def _manager(name: str):
    if name.endswith("no_grad"):
        return torch.no_grad()
    if name.endswith("enable_grad"):
        return torch.enable_grad()
    return torch.set_grad_enabled("True" in name)


def _expect_mode(enabled: bool, x: torch.Tensor, where: str) -> None:
    assert torch.is_grad_enabled() is enabled, f"grad mode is {not enabled} {where}"
    assert (x * 2).requires_grad is enabled, f"recording does not follow the grad mode {where}"


class _BlockExit(Exception):
    """Raised to leave a grad-mode block by an exception (caught right outside it)."""


def _run_nested(modes: list[str], x: torch.Tensor, raise_at: int = -1, depth: int = 0) -> None:
    """Apply ``modes`` outermost first: a context/decorator opens a scope
    holding the rest, a function call changes the current scope's mode. The
    scope opened by ``modes[raise_at]`` (when it opens one) is left by an
    exception raised at the end of its body, caught just outside it."""
    if not modes:
        return
    head, rest = modes[0], modes[1:]
    how, inner = NEST_MODES[head]
    before = torch.is_grad_enabled()
    if how == "function":
        torch.set_grad_enabled(inner)
        _expect_mode(inner, x, f"after {head}")
        _run_nested(rest, x, raise_at, depth + 1)
        return
    leave = depth == raise_at
    try:
        if how == "context":
            with _manager(head):
                _expect_mode(inner, x, f"inside {head}")
                _run_nested(rest, x, raise_at, depth + 1)
                if leave:
                    raise _BlockExit
        else:

            @_manager(head)
            def body():
                _expect_mode(inner, x, f"inside a function decorated {head}")
                _run_nested(rest, x, raise_at, depth + 1)
                if leave:
                    raise _BlockExit

            body()
    except _BlockExit:
        pass
    _expect_mode(before, x, f"after leaving {head}" + (" by an exception" if leave else ""))


_ONE = TensorSpec(dtype=torch.float32, base_shape=(2,), storage=(1.0, 2.0))
_FORM = {"context": "with", "decorator": "decorator", "function": "call"}


def _block_forms(modes: list[str]) -> frozenset[str]:
    """The block forms (issue 29: ``block_form``) ``modes`` uses: ``with``,
    ``decorator``, ``call`` (set_grad_enabled as a function), and ``nested``
    when two scopes (with blocks or decorated functions) nest."""
    forms = {_FORM[NEST_MODES[m][0]] for m in modes}
    if sum(NEST_MODES[m][0] != "function" for m in modes) >= 2:
        forms.add("nested")
    return frozenset(forms)


@pytest.mark.claim("gradmode.set-grad-enabled-restores")
# Every block form left by an exception (issue 29: the sentence's "restore
# the enclosing mode on exit" holds however the block ends).
@example(spec=_ONE, modes=["no_grad"], start=True, raise_at=-1)
@example(spec=_ONE, modes=["no_grad"], start=True, raise_at=0)
@example(spec=_ONE, modes=["enable_grad"], start=False, raise_at=0)
@example(spec=_ONE, modes=["set_grad_enabled(False)"], start=True, raise_at=0)
@example(spec=_ONE, modes=["set_grad_enabled(True)"], start=False, raise_at=0)
@example(spec=_ONE, modes=["@no_grad"], start=True, raise_at=0)
@example(spec=_ONE, modes=["@enable_grad"], start=False, raise_at=0)
@example(spec=_ONE, modes=["enable_grad", "no_grad"], start=False, raise_at=1)
# Every block form left normally (issue 29: block_form, exception_exit=false).
@example(spec=_ONE, modes=["@no_grad"], start=True, raise_at=-1)
@example(spec=_ONE, modes=["enable_grad", "no_grad"], start=False, raise_at=-1)
@example(spec=_ONE, modes=["set_grad_enabled(False) as function"], start=True, raise_at=-1)
@given(
    spec=tensor_specs(requires_grad=True),
    modes=st.lists(st.sampled_from(sorted(NEST_MODES)), max_size=5),
    start=st.booleans(),
    raise_at=st.integers(-1, 4),
)
def test_grad_modes_nest_and_restore(device, spec, modes, start, raise_at):
    """Kills: a grad-mode context or decorator that restores True instead of
    the enclosing mode, leaks its mode past its block (left normally or by an
    exception), or a set_grad_enabled that works only as a context manager."""
    evidence.features(
        exception_exit=0 <= raise_at < len(modes) and NEST_MODES[modes[raise_at]][0] != "function",
        block_form=_block_forms(modes),
    )
    x = spec.build(device, requires_grad=True, leaf=True)
    with grad_mode_restored():
        # The starting mode is set through the C hook, not the function form
        # under test (block_form=call is a drawn mode of its own).
        torch._C._set_grad_enabled(start)
        _expect_mode(start, x, "at the start")
        _run_nested(modes, x, raise_at)


# --------------------------------------------------------------------------- inference mode


@pytest.mark.claim("gradmode.inference-results-are-inference")
@pytest.mark.observes("clone")
@domain_examples(requires_grad=False, op="clone")  # issue 29: every layout and family
@given(
    spec=tensor_specs(),
    requires_grad=st.booleans(),
    op=st.sampled_from(sorted(NONVIEW_OPS)),
)
def test_inference_results_are_inference(device, spec, requires_grad, op):
    """Kills: an inference_mode whose non-view results are normal tensors
    (no inference restrictions) or still record a graph."""
    x = spec.build(device, requires_grad=maybe_rg(spec, requires_grad), leaf=True)
    assert not x.is_inference(), "a tensor made outside inference_mode is an inference tensor"
    with torch.inference_mode(), helper_op(op, x.dtype):
        r = NONVIEW_OPS[op](x)
    assert r.is_inference(), "a non-view result made in inference_mode is not an inference tensor"
    assert r.requires_grad is False, "a result made in inference_mode requires grad"
    assert r.grad_fn is None, "a result made in inference_mode has a grad_fn"


@pytest.mark.claim("gradmode.inference-views-follow-base")
@domain_examples(base="inference", made="outside", op="index")  # issue 29
@given(
    spec=tensor_specs(),
    base=st.sampled_from(["normal", "inference"]),
    made=st.sampled_from(["inside", "outside"]),
    op=st.sampled_from(sorted(ALWAYS_VIEW_OPS)),
)
def test_inference_views_follow_base(device, spec, base, made, op):
    """Kills: views whose inference-ness follows the mode they were made in
    rather than their base (a normal view turned immutable, or an inference
    view that escapes the restrictions)."""
    t = build_inference(spec, device) if base == "inference" else spec.build(device)
    ctx = torch.inference_mode() if made == "inside" else contextlib.nullcontext()
    with ctx:
        v = ALWAYS_VIEW_OPS[op](t)
    want = base == "inference"
    assert v.is_inference() is want, (
        f"a view made {made} inference_mode of a {base} tensor has is_inference()={not want}"
    )


@pytest.mark.claim("gradmode.inference-no-version-counter")
@_spec_domain(where="outside")  # issue 29: every layout and family, both places
@example(spec=DOMAIN_SPEC, where="inside")
@given(spec=tensor_specs(), where=st.sampled_from(["inside", "outside"]))
def test_inference_no_version_counter(device, spec, where):
    """Kills: inference tensors that carry a version counter (the overhead
    the mode removes), or normal tensors whose counter becomes unreadable
    inside the mode."""
    evidence.features(grad_mode="inference_mode" if where == "inside" else "enabled")
    t = build_inference(spec, device)
    normal = spec.build(device)
    ctx = torch.inference_mode() if where == "inside" else contextlib.nullcontext()
    with ctx:
        with raises_with(RuntimeError, "Inference tensors do not track version counter"):
            _ = t._version
        assert normal._version == 0, "a normal tensor's version is unreadable or nonzero"


_ADD_CASE = ("add_", TensorSpec(dtype=torch.float32, base_shape=(2,), storage=[1.0, -0.5]))
_SAME_CASE = ("fill_", TensorSpec(dtype=torch.float32, base_shape=(2,), storage=[1.0, 1.0]))
#: The grad_mode domain value (issue 29) of each place an in-place op is made.
_WHERE_MODE = {"grad mode": "enabled", "no_grad": "no_grad", "inside": "inference_mode"}


@pytest.mark.claim("gradmode.inference-immutable-outside")
@pytest.mark.observes("copy_")
# Both places (issue 29: grad_mode), with an update that leaves the values
# as they are (outside the recorded write-then-raise region).
@example(case=_SAME_CASE, where="grad mode")
@example(case=_SAME_CASE, where="no_grad")
@given(case=inplace_cases(values="all"), where=st.sampled_from(["grad mode", "no_grad"]))
def test_inference_immutable_outside(device, case, where):
    """The C++ note's 'immutable' as written: the update is refused and
    nothing changes (bit for bit, every value class drawn). torch writes
    before raising: recorded in expectations.

    Kills: an inference tensor that can be mutated outside the mode.
    """
    op, spec = case
    t = build_inference(spec, device)
    before = spec.build(device)
    probe = spec.build(device)
    INPLACE[op](probe)
    evidence.features(op_changes_values=not same_bits(probe, before), grad_mode=_WHERE_MODE[where])
    ctx = torch.no_grad() if where == "no_grad" else contextlib.nullcontext()
    with ctx, raises_with(RuntimeError, "Inplace update to inference tensor outside InferenceMode"):
        INPLACE[op](t)
    # Bit for bit, as op_changes_values is computed (mul_ turns -0.0 into +0.0,
    # which torch.equal would not see).
    assert_same_bits(t, before, "a refused in-place update changed the inference tensor")


@pytest.mark.claim("gradmode.inference-inplace-outside-writes-then-raises")
@pytest.mark.observes("copy_")
@example(case=_ADD_CASE, where="grad mode")
@example(case=_ADD_CASE, where="no_grad")
@example(case=_ADD_CASE, where="inside")
@given(case=inplace_cases(values="all"), where=st.sampled_from(["grad mode", "no_grad", "inside"]))
def test_inference_inplace_outside_writes_then_raises(device, case, where):
    """The written values are compared bit for bit with the same update of a
    normal tensor built from the same spec, over every value class.

    Kills: an inference tensor whose in-place update outside the mode is
    silently accepted, one whose update inside the mode is refused or wrong,
    and pins the write-then-raise order (a fix checking first shows here)."""
    op, spec = case
    evidence.features(grad_mode=_WHERE_MODE[where])
    t = build_inference(spec, device)
    expected = spec.build(device)
    INPLACE[op](expected)
    if where == "inside":
        with torch.inference_mode():
            INPLACE[op](t)
    else:
        ctx = torch.no_grad() if where == "no_grad" else contextlib.nullcontext()
        with (
            ctx,
            raises_with(RuntimeError, "Inplace update to inference tensor outside InferenceMode"),
        ):
            INPLACE[op](t)
    assert_same_bits(t, expected, f"the in-place update ({where}) did not write its result")


@pytest.mark.claim("gradmode.inference-requires-grad-outside-raises")
@domain_examples(dtypes=DIFFERENTIABLE, form="method")  # issue 29
@given(spec=tensor_specs(requires_grad=True), form=st.sampled_from(["method", "attribute"]))
def test_inference_requires_grad_outside_raises(device, spec, form):
    """Kills: an inference tensor that can be made to require grad outside
    the mode (it has no version counter to protect saved values)."""
    t = build_inference(spec, device)
    t.requires_grad_(False)  # accepted
    with raises_with(RuntimeError, "Setting requires_grad=True on inference tensor outside"):
        if form == "method":
            t.requires_grad_(True)
        else:
            t.requires_grad = True
    assert t.requires_grad is False, "a refused requires_grad_ changed the flag"
    with torch.inference_mode():
        t.requires_grad_(True)
    assert t.requires_grad is True, "requires_grad_(True) inside inference_mode did not apply"


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}
# With the other operand requiring grad, mul and div save the inference
# operand for backward (d(a*b)/da = b, d(a/b)/da = 1/b); add and sub save nothing.
SAVES_OPERAND = {"mul", "div"}


@st.composite
def mixed_pairs(draw):
    dtype = draw(st.sampled_from(DIFFERENTIABLE))
    shape = draw(shapes())
    return draw(tensor_specs(dtype=dtype, shape=shape)), draw(
        tensor_specs(dtype=dtype, shape=shape)
    )


def _inference_pair_examples(**fixed):
    """Issue 29: one explicit ``pair`` per :func:`domain_grid` spec of the
    differentiable dtypes (every layout family of the inference operand, every
    differentiable family); the operand requiring grad is built from the same
    spec."""
    return domain_examples("pair", dtypes=DIFFERENTIABLE, make=lambda s: (s, s), **fixed)


def _inference_operand_features(t: torch.Tensor) -> None:
    """Report the inference operand's layout and dtype family (the pair's
    first spec is the other operand's)."""
    evidence.features(layout=layout_kinds(t), dtype_family=dtype_family(t.dtype))


@pytest.mark.claim("gradmode.inference-not-usable-in-autograd")
@_inference_pair_examples(op="mul", inference_first=True)
@_inference_pair_examples(op="div", inference_first=False)
@given(
    pair=mixed_pairs(),
    op=st.sampled_from(sorted(BINARY)),
    inference_first=st.booleans(),
)
def test_inference_not_usable_in_autograd(device, pair, op, inference_first):
    """The docstring's sentence as written. Ops that save nothing accept
    inference tensors: recorded in expectations.

    Kills (if it held): an inference tensor used in a recorded computation.
    """
    spec_n, spec_t = pair
    n = spec_n.build(device, requires_grad=True, leaf=True)
    t = build_inference(spec_t, device)
    _inference_operand_features(t)
    with pytest.raises(RuntimeError):
        BINARY[op](t, n) if inference_first else BINARY[op](n, t)


@pytest.mark.claim("gradmode.inference-cannot-be-saved")
@_inference_pair_examples(op="mul", inference_first=True)
@_inference_pair_examples(op="add", inference_first=False)
@given(
    pair=mixed_pairs(),
    op=st.sampled_from(sorted(BINARY)),
    inference_first=st.booleans(),
)
def test_inference_cannot_be_saved(device, pair, op, inference_first):
    """Kills: a recorded op that saves an inference tensor (whose mutation
    could then never be detected) without raising, or one that raises
    although it saves nothing."""
    spec_n, spec_t = pair
    n = spec_n.build(device, requires_grad=True, leaf=True)
    t = build_inference(spec_t, device)
    _inference_operand_features(t)
    if op in SAVES_OPERAND:
        with raises_with(RuntimeError, "Inference tensors cannot be saved for backward"):
            BINARY[op](t, n) if inference_first else BINARY[op](n, t)
    else:
        r = BINARY[op](t, n) if inference_first else BINARY[op](n, t)
        assert r.requires_grad and not r.is_inference(), "a recorded result is not a normal tensor"


@pytest.mark.claim("gradmode.inference-clone-outside-is-normal")
@pytest.mark.observes("clone")
@_spec_domain(where="outside")  # issue 29: every layout and family, both places
@example(spec=DOMAIN_SPEC, where="inside")
@given(spec=tensor_specs(values="all"), where=st.sampled_from(["outside", "inside"]))
def test_inference_clone_outside_is_normal(device, spec, where):
    """Kills: a clone outside the mode that stays an inference tensor (the
    documented escape hatch would not work), or a clone inside that does not."""
    evidence.features(grad_mode="inference_mode" if where == "inside" else "enabled")
    t = build_inference(spec, device)
    if where == "inside":
        with torch.inference_mode():
            c = t.clone()
        assert c.is_inference(), "a clone made inside inference_mode is a normal tensor"
        return
    c = t.clone()
    assert not c.is_inference(), "a clone made outside inference_mode is an inference tensor"
    assert_same_bits(c, spec.build(device), "the clone has different values")
    before = c._version
    c.fill_(1)
    assert c._version > before, "the clone's version counter does not work"
    if spec.dtype in DIFFERENTIABLE:
        c.requires_grad_(True)
        assert c.requires_grad, "the clone cannot require grad"


@pytest.mark.claim("gradmode.inference-factory-requires-grad")
@pytest.mark.observes("clone", "tensor")
@given(case=factory_cases(with_parameter=False))
def test_inference_factory_requires_grad(device, case):
    """Kills: an inference_mode that drops an explicit requires_grad=True of
    a factory, or whose factories do not produce inference tensors."""
    name, spec = case
    source = spec.build(device)
    with torch.inference_mode():
        t = _factory(name, spec.shape, spec.dtype, device, source)
    assert t.is_inference(), f"{name} inside inference_mode did not make an inference tensor"
    assert t.requires_grad is True, f"{name}(requires_grad=True) inside inference_mode does not"
    assert t.is_leaf, f"{name} inside inference_mode did not return a leaf"


@pytest.mark.claim("gradmode.inference-disables-version-bumps")
@pytest.mark.observes("copy_")
@_inplace_domain(ALL_DTYPES)  # issue 29: every writable layout and dtype family
@given(case=inplace_cases())
def test_inference_disables_version_bumps(device, case):
    """The docstring's 'disabling ... version counter bumps' read for every
    tensor. Normal tensors are still bumped: recorded in expectations.

    Kills (if it held): an in-place op inside inference_mode that bumps a version.
    """
    op, spec = case
    x = spec.build(device)
    _case_features(x)
    before = x._version
    with torch.inference_mode():
        INPLACE[op](x)
    assert x._version == before, "an in-place op inside inference_mode bumped a version counter"


@pytest.mark.claim("gradmode.inference-normal-inplace-bumps")
@pytest.mark.observes("backward", "copy_")
@_inplace_domain(ALL_DTYPES, requires_grad=True)  # issue 29 (grad where the dtype allows)
@given(case=inplace_cases(), requires_grad=st.booleans())
def test_inference_normal_inplace_bumps(device, case, requires_grad):
    """Kills: an inference_mode that skips version bumps of normal tensors,
    so a tensor saved by a graph built before the block is overwritten with
    no error at backward."""
    op, spec = case
    rg = maybe_rg(spec, requires_grad)
    x = spec.build(device, requires_grad=rg, leaf=True)
    _case_features(x)
    loss = real_scalar(x * x) if rg else None  # mul saves x
    before = x._version
    with torch.inference_mode():
        INPLACE[op](x)  # allowed even on a leaf that requires grad
    assert x._version > before, "an in-place op inside inference_mode did not bump a normal tensor"
    assert not x.is_inference(), "an in-place op inside inference_mode made an inference tensor"
    if rg:
        with raises_with(RuntimeError, "modified by an inplace operation"):
            loss.backward()
