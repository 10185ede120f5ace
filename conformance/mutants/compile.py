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

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

#: The wrapper every mutant installs; ``{corrupt}`` defines
#: ``_corrupt(backend, args, call)``, which runs the real compiled call
#: (``call()``) and returns what the wrapper returns.
_WRAPPER = """
import torch

_real_compile = torch.compile


def _compile(model=None, **kwargs):
    if model is None:
        return lambda m: _compile(m, **kwargs)
    backend = kwargs.get("backend", "inductor")
    inner = _real_compile(model, **kwargs)

    def run(*args, **kw):
        return _corrupt(backend, args, lambda: inner(*args, **kw))

    return run


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
    return any(
        isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() == s for a in args
    )


{corrupt}

torch.compile = _compile
"""


def _source(corrupt: str) -> str:
    import textwrap

    return _WRAPPER.replace("{corrupt}", textwrap.dedent(corrupt).strip())


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
        source=_source(
            f"""
            def _corrupt(backend, args, call):
                out = call()
                if backend != "{backend}":
                    return out
                items = [
                    o.clone() if isinstance(o, torch.Tensor) and _shares(o, args) else o
                    for o in _flat(out)
                ]
                return _rebuild(out, items)
            """
        ),
        witness=f"""
        import torch
        x = torch.arange(4.0)
        out = torch.compile(lambda t: t[1:].add_(1), backend="{backend}")(x)
        assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        """,
    )


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
        source=_source(
            """
            def _corrupt(backend, args, call):
                saved = [
                    (a, a.detach().clone())
                    for a in args
                    if isinstance(a, torch.Tensor) and a._is_view()
                ]
                out = call()
                with torch.no_grad():
                    for a, v in saved:
                        a.detach().copy_(v)
                return out
            """
        ),
        witness="""
        import torch
        base = torch.zeros(4)
        torch.compile(lambda t: t.add_(1) * 2, backend="eager")(base[1:])
        assert base.tolist() == [0.0, 1.0, 1.0, 1.0]
        """,
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
        source=_source(
            """
            def _corrupt(backend, args, call):
                out = call()
                if not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
                    return out
                items = [
                    o.detach() if isinstance(o, torch.Tensor) and o.requires_grad else o
                    for o in _flat(out)
                ]
                return _rebuild(out, items)
            """
        ),
        witness="""
        import torch
        x = torch.ones(3, requires_grad=True)
        assert torch.compile(lambda t: t * 2, backend="eager")(x).requires_grad
        """,
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
        source=_source(
            """
            def _corrupt(backend, args, call):
                tensors = [
                    a for a in args if isinstance(a, torch.Tensor) and a.dtype == torch.float32
                ]
                before = [a._version for a in tensors]
                out = call()
                if tensors:
                    torch._C._autograd._unsafe_set_version_counter(tuple(tensors), tuple(before))
                return out
            """
        ),
        witness="""
        import torch
        x = torch.ones(3)
        torch.compile(lambda t: t.add_(1) * 2, backend="eager")(x)
        assert x._version > 0
        """,
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
        source=_source(
            """
            def _corrupt(backend, args, call):
                from torch._dynamo.exc import TorchRuntimeError

                try:
                    return call()
                except TorchRuntimeError:
                    return None
            """
        ),
        witness="""
        import torch
        leaf = torch.ones(3, requires_grad=True)
        try:
            torch.compile(lambda t: t.add_(1) * 2, backend="eager")(leaf)
        except RuntimeError:
            pass
        else:
            raise AssertionError("an in-place op on a leaf requiring grad was accepted")
        """,
    ),
    Mutant(
        name="compile-refusals-become-internal-errors",
        description="every error of a compiled call surfaces as InternalTorchDynamoError (a "
        "RuntimeError): the compiler crashes where eager refuses the program",
        claims=("compile.errors-match-eager",),
        region="programs eager refuses",
        family="other",
        backends=("eager",),
        source=_source(
            """
            def _corrupt(backend, args, call):
                from torch._dynamo.exc import InternalTorchDynamoError

                try:
                    return call()
                except InternalTorchDynamoError:
                    raise
                except Exception as e:
                    raise InternalTorchDynamoError(f"internal error: {e}") from None
            """
        ),
        witness="""
        import torch
        from torch._dynamo.exc import InternalTorchDynamoError
        try:
            torch.compile(lambda t: t.add_(0.5), backend="eager")(torch.arange(3))
        except InternalTorchDynamoError:
            raise AssertionError("a refused program crashed the compiler")
        except RuntimeError:
            pass
        """,
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
        source=_source(
            """
            def _corrupt(backend, args, call):
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
            """
        ),
        witness="""
        import torch
        out = torch.compile(lambda t: t * 2, backend="eager")(torch.ones(3))
        assert out.tolist() == [2.0, 2.0, 2.0]
        """,
    ),
    Mutant(
        name="compile-eager-backend-drops-argument-writes",
        description="on the Dynamo-only eager backend, the compiled call's writes into 2-D "
        "arguments are undone (values restored)",
        claims=("compile.issue-198131-copy-then-mutate-source", "compile.issue-198131-pinned"),
        region="the eager backend, 2-D arguments",
        family="backend",
        backends=("eager",),
        source=_source(
            """
            def _corrupt(backend, args, call):
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
            """
        ),
        witness="""
        import torch
        x = torch.zeros(2, 2)
        torch.compile(lambda t: t.add_(1) * 2, backend="eager")(x)
        assert x.tolist() == [[1.0, 1.0], [1.0, 1.0]]
        """,
    ),
    Mutant(
        name="compile-inductor-sets-flush-to-zero",
        description="a call of an inductor-compiled function turns on flush-denormal mode "
        "process-wide, as kernels linked with -ffast-math did (pytorch/pytorch#126848)",
        claims=("compile.fp-environment-untouched",),
        region="the inductor backend",
        family="backend",
        backends=("inductor",),
        source=_source(
            """
            def _corrupt(backend, args, call):
                out = call()
                if backend == "inductor":
                    torch.set_flush_denormal(True)
                return out
            """
        ),
        witness="""
        import torch
        torch.compile(lambda t: t * 2, backend="inductor")(torch.ones(2))
        assert (torch.tensor([2.0**-140]) * 1.0).item() != 0.0
        torch.set_flush_denormal(False)
        """,
    ),
)
