"""Mutants of the ``compile`` area (torch.compile keeps eager semantics);
claims in ``conformance/claims/compile.toml``, tests in
``conformance/test_compile_*.py``.

Each mutant replaces ``torch.compile`` with a wrapper around the real one
that corrupts the compiled call in one way - outputs copied, input writes
dropped, outputs detached, version bumps undone, tracing errors swallowed,
fresh outputs off by one - and, like a real compile bug, only for part of
the input space: one backend, view arguments, arguments that require grad,
float32 arguments. The eager oracle of the tests is untouched (the tests
call the function itself for it), so every difference is the mutant's.

The domain mutants (issue 29; :data:`DOMAIN_MUTANTS`,
:data:`OUTPUT_KIND_MUTANTS`) are each wrong at one value of the program
claims' declared domain only - one ``arg_layout`` (contiguous, transposed,
offset, expanded, aliased) or one ``output_kind`` (input, input view, fresh,
intermediate view) - on one backend; the explicit layout-grid examples of the
generated-program tests (``strategies.programs.LAYOUT_GRID``) draw every such
value on every backend, inductor's small share of examples included.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from conformance.mutants.base import Mutant
from conformance.mutants.patching import refused, torch


def _install(corrupt: Callable[[str, tuple, Callable], object]) -> None:
    """Replace ``torch.compile`` with a wrapper around the real one whose
    compiled call returns ``corrupt(backend, args, call)``: ``call()`` runs
    the real compiled function, ``call(*other_args)`` runs it on other
    arguments."""

    _real_compile = torch.compile

    def _compile(model=None, **kwargs):
        if model is None:
            return lambda m: _compile(m, **kwargs)
        backend = kwargs.get("backend", "inductor")
        inner = _real_compile(model, **kwargs)

        def run(*args, **kw):
            # call() runs the real compiled function; call(*other) runs it on other arguments
            return corrupt(backend, args, lambda *other: inner(*(other or args), **kw))

        return run

    torch.compile = _compile


def _corrupting(corrupt: Callable[..., object], *args: object) -> Callable[[], None]:
    """The patch installing the wrapper with ``corrupt`` (its leading
    arguments bound to ``args``)."""
    return functools.partial(_install, functools.partial(corrupt, *args) if args else corrupt)


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _rebuild(out, items):
    if isinstance(out, tuple):
        return tuple(items)
    if isinstance(out, list):
        return list(items)
    return items[0]


def _shares(t, args):
    s = t.untyped_storage().data_ptr()
    return any(isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() == s for a in args)


def _copy_aliasing_outputs(only, backend, args, call):
    out = call()
    if backend != only:
        return out
    items = [
        o.clone() if isinstance(o, torch.Tensor) and _shares(o, args) else o for o in _flat(out)
    ]
    return _rebuild(out, items)


def _aliasing_output_witness(backend: str) -> None:
    x = torch.arange(4.0)
    out = torch.compile(lambda t: t[1:].add_(1), backend=backend)(x)
    assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def _copies_aliasing_outputs(backend: str, claims: tuple[str, ...]) -> Mutant:
    """The mutant under which ``backend`` returns copies of the outputs that
    share storage with an argument (aliasing and identity lost)."""
    return Mutant(
        name=f"compile-copies-aliasing-outputs-{backend.replace('_', '-')}",
        description=f"under {backend}, outputs that share storage with an argument come back "
        "as copies (aliasing and identity lost)",
        claims=claims,
        region=f"the {backend} backend, outputs aliasing an argument",
        family="backend",
        backends=(backend,),
        patch=_corrupting(_copy_aliasing_outputs, backend),
        witness=functools.partial(_aliasing_output_witness, backend),
    )


def _drops_writes_to_view_arguments(backend, args, call):
    saved = [(a, a.detach().clone()) for a in args if isinstance(a, torch.Tensor) and a._is_view()]
    out = call()
    with torch.no_grad():
        for a, v in saved:
            a.detach().copy_(v)
    return out


def _witness_compile_drops_writes_to_view_arguments():
    base = torch.zeros(4)
    torch.compile(lambda t: t.add_(1) * 2, backend="eager")(base[1:])
    assert base.tolist() == [0.0, 1.0, 1.0, 1.0]


def _detaches_outputs_of_grad_arguments(backend, args, call):
    out = call()
    if not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        return out
    items = [
        o.detach() if isinstance(o, torch.Tensor) and o.requires_grad else o for o in _flat(out)
    ]
    return _rebuild(out, items)


def _witness_compile_detaches_outputs_of_grad_arguments():
    x = torch.ones(3, requires_grad=True)
    assert torch.compile(lambda t: t * 2, backend="eager")(x).requires_grad


def _undoes_version_bumps_float32(backend, args, call):
    tensors = [a for a in args if isinstance(a, torch.Tensor) and a.dtype == torch.float32]
    before = [a._version for a in tensors]
    out = call()
    if tensors:
        torch._C._autograd._unsafe_set_version_counter(tuple(tensors), tuple(before))
    return out


def _witness_compile_undoes_version_bumps_float32():
    x = torch.ones(3)
    torch.compile(lambda t: t.add_(1) * 2, backend="eager")(x)
    assert x._version > 0


def _swallows_tracing_errors(backend, args, call):
    from torch._dynamo.exc import TorchRuntimeError

    try:
        return call()
    except TorchRuntimeError:
        return None


def _witness_compile_swallows_tracing_errors():
    leaf = torch.ones(3, requires_grad=True)
    with refused(RuntimeError, "an in-place op on a leaf requiring grad was accepted"):
        torch.compile(lambda t: t.add_(1) * 2, backend="eager")(leaf)


def _refusals_become_internal_errors(backend, args, call):
    from torch._dynamo.exc import InternalTorchDynamoError

    try:
        return call()
    except InternalTorchDynamoError:
        raise
    except Exception as e:
        raise InternalTorchDynamoError(f"internal error: {e}") from None


def _witness_compile_refusals_become_internal_errors():
    from torch._dynamo.exc import InternalTorchDynamoError

    try:
        torch.compile(lambda t: t.add_(0.5), backend="eager")(torch.arange(3))
    except InternalTorchDynamoError:
        raise AssertionError("a refused program crashed the compiler") from None
    except RuntimeError:
        pass


def _eager_backend_offsets_fresh_outputs(backend, args, call):
    out = call()
    if backend != "eager":
        return out
    items = [
        o + 1
        if isinstance(o, torch.Tensor) and o.dtype != torch.bool and not _shares(o, args)
        else o
        for o in _flat(out)
    ]
    return _rebuild(out, items)


def _witness_compile_eager_backend_offsets_fresh_outputs():
    out = torch.compile(lambda t: t * 2, backend="eager")(torch.ones(3))
    assert out.tolist() == [2.0, 2.0, 2.0]


def _eager_backend_drops_argument_writes(backend, args, call):
    saved = [
        (a, a.detach().clone())
        for a in args
        if backend == "eager" and isinstance(a, torch.Tensor) and a.dim() == 2
    ]
    out = call()
    with torch.no_grad():
        for a, v in saved:
            a.detach().copy_(v)
    return out


def _witness_compile_eager_backend_drops_argument_writes():
    x = torch.zeros(2, 2)
    torch.compile(lambda t: t.add_(1) * 2, backend="eager")(x)
    assert x.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def _inductor_sets_flush_to_zero(backend, args, call):
    out = call()
    if backend == "inductor":
        torch.set_flush_denormal(True)
    return out


def _witness_compile_inductor_sets_flush_to_zero():
    torch.compile(lambda t: t * 2, backend="inductor")(torch.ones(2))
    assert (torch.tensor([2.0**-140]) * 1.0).item() != 0.0
    torch.set_flush_denormal(False)


MUTANTS: tuple[Mutant, ...] = (
    _copies_aliasing_outputs(
        "aot_eager",
        (
            "compile.output-aliasing-matches-eager",
            "compile.output-writes-propagate-like-eager",
            "compile.output-identity-matches-eager",
            "compile.issue-113030-data-assignment-values",
            "compile.issue-128035-grad-after-input-mutation",
        ),
    ),
    _copies_aliasing_outputs(
        "inductor",
        ("compile.output-aliasing-matches-eager", "compile.clone-after-setitem-returns-input"),
    ),
    Mutant(
        name="compile-drops-writes-to-view-arguments",
        description="the compiled call's writes into arguments that are views are undone "
        "(values restored; version counters left advanced)",
        claims=(
            "compile.input-mutations-match-eager",
            "compile.issue-139789-recompile-when-inputs-alias",
            "compile.issue-139789-pinned",
            "compile.issue-198095-view-of-aliased-input",
            "compile.issue-198095-pinned",
            "compile.returned-input-write-misrouted",
            "compile.no-grad-view-of-written-tensor-fails",
            "compile.view-output-offset-lost",
        ),
        region="arguments that are views",
        family="layout",
        backends=("eager",),
        patch=_corrupting(_drops_writes_to_view_arguments),
        witness=_witness_compile_drops_writes_to_view_arguments,
    ),
    Mutant(
        name="compile-detaches-outputs-of-grad-arguments",
        description="when an argument requires grad, the compiled call's outputs that require "
        "grad come back detached",
        claims=(
            "compile.output-autograd-metadata-matches-eager",
            "compile.gradients-match-eager",
            "compile.issue-100348-detached-loss-output",
            "compile.issue-114338-enable-grad-under-no-grad",
            "compile.issue-128035-grad-after-input-mutation",
            "compile.output-view-grad-mode-regenerated",
            "compile.detached-alias-history-dropped",
            "compile.mixed-mode-input-mutation-gradient",
            "compile.enable-grad-write-history-dropped",
        ),
        region="calls with an argument that requires grad",
        family="autograd",
        backends=("eager",),
        patch=_corrupting(_detaches_outputs_of_grad_arguments),
        witness=_witness_compile_detaches_outputs_of_grad_arguments,
    ),
    Mutant(
        name="compile-undoes-version-bumps-float32",
        description="the compiled call's version-counter bumps of float32 arguments are undone",
        claims=(
            "compile.version-bumps-match-eager",
            "compile.issue-135441-setitem-bumps-version",
            "compile.data-write-bumps-version",
        ),
        region="float32 arguments",
        family="dtype",
        backends=("eager",),
        patch=_corrupting(_undoes_version_bumps_float32),
        witness=_witness_compile_undoes_version_bumps_float32,
    ),
    Mutant(
        name="compile-swallows-tracing-errors",
        description="an error Dynamo raises while tracing (TorchRuntimeError) is swallowed: the "
        "compiled call returns None",
        claims=(
            "compile.errors-match-eager",
            "compile.inplace-on-grad-leaf-view-fails",
            "compile.grad-scalar-into-integer-tensor-refused",
        ),
        region="errors raised while tracing (TorchRuntimeError)",
        family="other",
        backends=("eager",),
        patch=_corrupting(_swallows_tracing_errors),
        witness=_witness_compile_swallows_tracing_errors,
    ),
    Mutant(
        name="compile-refusals-become-internal-errors",
        description="every error of a compiled call surfaces as InternalTorchDynamoError (a "
        "RuntimeError): the compiler crashes where eager refuses the program",
        claims=("compile.errors-match-eager",),
        region="programs eager refuses",
        family="other",
        backends=("eager",),
        patch=_corrupting(_refusals_become_internal_errors),
        witness=_witness_compile_refusals_become_internal_errors,
    ),
    Mutant(
        name="compile-eager-backend-offsets-fresh-outputs",
        description="on the Dynamo-only eager backend, outputs that share no storage with an "
        "argument come back off by one (a new tensor)",
        claims=(
            "compile.outputs-match-eager",
            "compile.issue-100977-recompile-for-grad-mode",
            "compile.issue-99455-factory-requires-grad",
            "compile.issue-128198-batchnorm-buffers",
            "compile.issue-176854-detach-inplace-in-region",
            "compile.issue-136662-func-grad-inplace-accumulation",
            "compile.issue-175496-softmax-after-input-division",
            "compile.issue-152425-write-through-expand",
            "compile.issue-198101-dtype-view-read-before-write",
            "compile.issue-191449-noop-view-of-intermediate",
            "compile.issue-139152-data-assignment-keeps-version",
            "compile.issue-94773-data-assignment-severs-alias",
            "compile.zero-dim-float64-mutation-dropped",
            "compile.requires-grad-through-alias-dropped",
            "compile.clone-of-aliased-input-aliases",
            "compile.issue-139789-pinned",
            "compile.issue-198101-pinned",
            "compile.issue-191449-pinned",
            "compile.issue-139152-pinned",
            "compile.issue-94773-pinned",
            "compile.autograd-cache-respects-aliasing",
            "compile.autograd-cache-ignores-aliasing-pinned",
            "compile.view-of-non-contiguous-intermediate-materialized",
            "compile.self-copy-of-non-contiguous-grad-output-backward-fails",
        ),
        region="the eager backend, outputs not aliasing an argument",
        family="backend",
        backends=("eager",),
        patch=_corrupting(_eager_backend_offsets_fresh_outputs),
        witness=_witness_compile_eager_backend_offsets_fresh_outputs,
    ),
    Mutant(
        name="compile-eager-backend-drops-argument-writes",
        description="on the Dynamo-only eager backend, the compiled call's writes into 2-D "
        "arguments are undone (values restored)",
        claims=("compile.issue-198131-copy-then-mutate-source", "compile.issue-198131-pinned"),
        region="the eager backend, 2-D arguments",
        family="backend",
        backends=("eager",),
        patch=_corrupting(_eager_backend_drops_argument_writes),
        witness=_witness_compile_eager_backend_drops_argument_writes,
    ),
    Mutant(
        name="compile-inductor-sets-flush-to-zero",
        description="a call of an inductor-compiled function turns on flush-denormal mode "
        "process-wide, as kernels linked with -ffast-math did (pytorch/pytorch#126848)",
        claims=("compile.fp-environment-untouched",),
        region="the inductor backend",
        family="backend",
        backends=("inductor",),
        patch=_corrupting(_inductor_sets_flush_to_zero),
        witness=_witness_compile_inductor_sets_flush_to_zero,
    ),
)


# --------------------------------------------------------------------------- domain mutants


#: Helpers of the domain mutants: the ``arg_layout`` test of one argument
#: (as :func:`strategies.programs.arg_layouts` decides it) and the writes
#: a compiled call made into chosen arguments, undone.
def _layout(t, args, i):
    dims = [(n, s) for n, s in zip(t.shape, t.stride(), strict=False) if n > 1]
    strides = [s for _, s in dims if s != 0]
    kinds = set()
    if any(s == 0 for _, s in dims):
        kinds.add("expanded")
    if any(a < b for a, b in zip(strides, strides[1:], strict=False)):
        kinds.add("transposed")
    if t.storage_offset() > 0:
        kinds.add("offset")
    elif t.is_contiguous():
        kinds.add("contiguous")
    key = t.untyped_storage().data_ptr() if t.untyped_storage().nbytes() else None
    if key is not None and any(
        j != i and isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() == key
        for j, o in enumerate(args)
    ):
        kinds.add("aliased")
    return kinds


def _undo_writes(layout, args, call):
    saved = [
        (a, a.detach().clone())
        for i, a in enumerate(args)
        if isinstance(a, torch.Tensor) and layout in _layout(a, args, i)
    ]
    out = call()
    with torch.no_grad():
        for a, v in saved:
            a.detach().copy_(v)
    return out


def _tag(backend: str) -> str:
    """``backend`` in a mutant name (``eager-backend``: not eager mode)."""
    return "eager-backend" if backend == "eager" else backend.replace("_", "-")


def _undo_writes_at(only, layout, backend, args, call):
    if backend != only:
        return call()
    return _undo_writes(layout, args, call)


def _drops_writes(layout: str, backend: str, words: str, witness: Callable[[], object]) -> Mutant:
    """The mutant under which ``backend`` undoes the compiled call's writes
    into arguments of ``arg_layout`` ``layout`` (values restored; version
    counters left advanced), and only into those."""
    return Mutant(
        name=f"compile-{_tag(backend)}-drops-writes-to-{layout}-arguments",
        description=f"under {backend}, the compiled call's writes into {words} are undone "
        "(values restored, version counters left advanced)",
        claims=("compile.input-mutations-match-eager",),
        region=f"the {backend} backend, {words}",
        family="relation" if layout == "aliased" else "layout",
        backends=(backend,),
        domain={"arg_layout": layout},
        patch=_corrupting(_undo_writes_at, backend, layout),
        witness=witness,
    )


def _eager_backend_unaliases_arguments(backend, args, call):
    if backend != "eager":
        return call()
    copies = [
        a.detach().clone().requires_grad_(a.requires_grad)
        if isinstance(a, torch.Tensor) and "aliased" in _layout(a, args, i)
        else a
        for i, a in enumerate(args)
    ]
    if all(c is a for c, a in zip(copies, args, strict=False)):
        return call()
    return call(*copies)


def _witness_compile_eager_backend_unaliases_arguments():
    base = torch.zeros(4)
    torch.compile(lambda x, y: x.add_(1) + y, backend="eager")(base[:3], base[1:])
    assert base.tolist() == [1.0, 1.0, 1.0, 0.0]


def _eager_backend_materializes_expanded_arguments(backend, args, call):
    if backend != "eager":
        return call()
    copies = [
        a.contiguous() if isinstance(a, torch.Tensor) and "expanded" in _layout(a, args, i) else a
        for i, a in enumerate(args)
    ]
    if all(c is a for c, a in zip(copies, args, strict=False)):
        return call()
    return call(*copies)


def _witness_compile_eager_backend_materializes_expanded_arguments():
    b = torch.arange(3.0)
    out = torch.compile(lambda t: t[0], backend="eager")(b.expand(2, -1))
    assert out.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _witness_drops_writes_contiguous():
    x = torch.zeros(3)
    torch.compile(lambda t: t.add_(1) * 2, backend="eager")(x)
    assert x.tolist() == [1.0, 1.0, 1.0]


def _witness_drops_writes_transposed():
    b = torch.zeros(2, 3)
    torch.compile(lambda t: t.add_(1) * 2, backend="eager")(b.t())
    assert b.tolist() == [[1.0] * 3] * 2


def _witness_drops_writes_offset():
    base = torch.zeros(4)
    torch.compile(lambda t: t.add_(1) * 2, backend="aot_eager")(base[1:])
    assert base.tolist() == [0.0, 1.0, 1.0, 1.0]


DOMAIN_MUTANTS: tuple[Mutant, ...] = (
    _drops_writes(
        "contiguous",
        "eager",
        "contiguous arguments at storage offset 0",
        _witness_drops_writes_contiguous,
    ),
    _drops_writes(
        "transposed",
        "eager",
        "transposed arguments",
        _witness_drops_writes_transposed,
    ),
    _drops_writes(
        "offset",
        "aot_eager",
        "arguments at a storage offset > 0",
        _witness_drops_writes_offset,
    ),
    Mutant(
        name="compile-eager-backend-unaliases-arguments",
        description="on the Dynamo-only eager backend, an argument that shares storage with "
        "another argument is passed as a copy of its own (writes through it are lost)",
        claims=("compile.input-mutations-match-eager",),
        region="the eager backend, arguments aliasing another argument",
        family="relation",
        backends=("eager",),
        domain={"arg_layout": "aliased"},
        patch=_corrupting(_eager_backend_unaliases_arguments),
        witness=_witness_compile_eager_backend_unaliases_arguments,
    ),
    Mutant(
        name="compile-eager-backend-materializes-expanded-arguments",
        description="on the Dynamo-only eager backend, an expanded argument (a zero stride) is "
        "passed as a contiguous copy: outputs that are it or views of it alias the copy",
        claims=("compile.output-aliasing-matches-eager",),
        region="the eager backend, expanded arguments",
        family="layout",
        backends=("eager",),
        domain={"arg_layout": "expanded"},
        patch=_corrupting(_eager_backend_materializes_expanded_arguments),
        witness=_witness_compile_eager_backend_materializes_expanded_arguments,
    ),
)


#: Helpers of the output-kind mutants: the ``output_kind`` of a compiled
#: output as :func:`strategies.programs.output_kind` decides it, seen from
#: the caller (the earlier outputs stand for the tensors bound before it).
def _key(t):
    return t.untyped_storage().data_ptr() if t.untyped_storage().nbytes() else None


def _kind(o, args, earlier):
    if any(o is a for a in args):
        return "input"
    key = _key(o)
    if key is not None and any(isinstance(a, torch.Tensor) and _key(a) == key for a in args):
        return "input_view"
    if o._is_view() or (
        key is not None
        and any(isinstance(e, torch.Tensor) and e is not o and _key(e) == key for e in earlier)
    ):
        return "intermediate_view"
    return "fresh"


def _replace_kind(kind, backend_only, change, backend, args, call):
    out = call()
    if backend != backend_only:
        return out
    flat = _flat(out)
    items = [
        change(o) if isinstance(o, torch.Tensor) and _kind(o, args, flat[:k]) == kind else o
        for k, o in enumerate(flat)
    ]
    return _rebuild(out, items)


def _clone(o):
    return o.clone()


def _plus_one(o):
    return o + 1


def _output_kind_mutant(
    kind: str,
    backend: str,
    change: Callable,
    words: str,
    claims: tuple[str, ...],
    witness: Callable[[], object],
) -> Mutant:
    """The mutant under which ``backend`` returns ``change(o)`` (:func:`_clone`
    or :func:`_plus_one`) instead of each output ``o`` of ``output_kind``
    ``kind``, and leaves the other outputs."""
    what = "a copy" if change is _clone else "off by one (a new tensor)"
    return Mutant(
        name=f"compile-{_tag(backend)}-corrupts-{kind.replace('_', '-')}-outputs",
        description=f"under {backend}, outputs that are {words} come back {what}",
        claims=claims,
        region=f"the {backend} backend, outputs that are {words}",
        family="relation" if kind in ("input", "input_view") else "other",
        backends=(backend,),
        domain={"output_kind": kind},
        patch=_corrupting(_replace_kind, kind, backend, change),
        witness=witness,
    )


def _witness_input_copied():
    x = torch.arange(3.0)
    assert torch.compile(lambda t: t.add_(1), backend="aot_eager")(x) is x


def _witness_input_view_copied():
    x = torch.arange(4.0)
    out = torch.compile(lambda t: t[1:], backend="inductor")(x)
    out.add_(1)
    assert x.tolist() == [0.0, 2.0, 3.0, 4.0]


def _witness_fresh_off_by_one():
    out = torch.compile(lambda t: t * 2, backend="eager")(torch.ones(3))
    assert out.tolist() == [2.0, 2.0, 2.0]


def _witness_intermediate_view_off_by_one():
    out = torch.compile(lambda t: (t * 2)[1:], backend="aot_eager")(torch.ones(3))
    assert out.tolist() == [2.0, 2.0]


OUTPUT_KIND_MUTANTS: tuple[Mutant, ...] = (
    _output_kind_mutant(
        "input",
        "aot_eager",
        _clone,
        "an argument itself",
        (
            "compile.output-aliasing-matches-eager",
            "compile.output-identity-matches-eager",
            "compile.output-writes-propagate-like-eager",
        ),
        _witness_input_copied,
    ),
    _output_kind_mutant(
        "input_view",
        "inductor",
        _clone,
        "views of an argument (not the argument itself)",
        # one claim: its inductor tests are few (a sweep of inductor is slow)
        ("compile.output-writes-propagate-like-eager",),
        _witness_input_view_copied,
    ),
    _output_kind_mutant(
        "fresh",
        "eager",
        _plus_one,
        "fresh tensors (sharing storage with no argument, not a view)",
        ("compile.outputs-match-eager",),
        _witness_fresh_off_by_one,
    ),
    _output_kind_mutant(
        "intermediate_view",
        "aot_eager",
        _plus_one,
        "views of a tensor made in the call",
        ("compile.outputs-match-eager",),
        _witness_intermediate_view_off_by_one,
    ),
)

MUTANTS = MUTANTS + DOMAIN_MUTANTS + OUTPUT_KIND_MUTANTS
