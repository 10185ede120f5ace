"""Toy ``torch.compile`` backends for the suite's self-tests
(``tests/test_custom_backends.py``), passed as ``--backends
tests.toy_backends:NAME``.

A Dynamo backend is a function ``(gm, example_inputs) -> callable``: ``gm``
is the ``torch.fx.GraphModule`` Dynamo captured, ``example_inputs`` its
example arguments (tensors), and the callable it returns runs in place of
the captured code, called with the real arguments (the public contract of
``torch.compile(backend=callable)``:
https://docs.pytorch.org/docs/stable/torch.compiler_custom_backends.html).

:func:`ok` runs the graph as it was given: it must pass the compile tier.
Each of the others breaks one promise the tier checks - as a backend that
copies, drops or detaches where eager does not would - and the self-test
asserts that the claim it breaks turns FAILED:

========================  =================================================
backend                   claim it breaks
========================  =================================================
:func:`outputs_cloned`    ``compile.output-identity-matches-eager``
:func:`mutations_dropped` ``compile.input-mutations-match-eager``
:func:`outputs_detached`  ``compile.output-autograd-metadata-matches-eager``
:func:`versions_untouched` ``compile.version-bumps-match-eager``
:func:`refuses`           ``compile.errors-match-eager`` (every program)
========================  =================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def _map_tensors(fn: Callable, values):
    """``values`` (a tensor, or a list/tuple nesting them) with ``fn`` applied
    to every tensor; anything else is kept."""
    if isinstance(values, torch.Tensor):
        return fn(values)
    if isinstance(values, list | tuple):
        return type(values)(_map_tensors(fn, v) for v in values)
    return values


def ok(gm: torch.fx.GraphModule, example_inputs: Sequence) -> Callable:
    """The correct backend: runs the captured FX graph as it was given."""
    return gm.forward


def outputs_cloned(gm: torch.fx.GraphModule, example_inputs: Sequence) -> Callable:
    """Returns a clone of every tensor output (values and autograd history
    kept): an in-place op's ``return self`` comes back as a new tensor."""

    def run(*args):
        return _map_tensors(torch.Tensor.clone, gm.forward(*args))

    return run


def mutations_dropped(gm: torch.fx.GraphModule, example_inputs: Sequence) -> Callable:
    """Runs the graph on clones of its tensor arguments: in-place ops on the
    inputs never reach the caller's tensors."""

    def run(*args):
        return gm.forward(*_map_tensors(torch.Tensor.clone, args))

    return run


def outputs_detached(gm: torch.fx.GraphModule, example_inputs: Sequence) -> Callable:
    """Returns every tensor output detached: values right, no autograd
    history (``requires_grad`` False where eager's output requires grad)."""

    def run(*args):
        return _map_tensors(torch.Tensor.detach, gm.forward(*args))

    return run


def outputs_detached_recorded(gm: torch.fx.GraphModule, example_inputs: Sequence) -> Callable:
    """:func:`outputs_detached` under another name, whose deviation the
    self-test records in a user expectations file (``--expectations``)."""
    return outputs_detached(gm, example_inputs)


def versions_untouched(gm: torch.fx.GraphModule, example_inputs: Sequence) -> Callable:
    """Runs the graph on ``.data`` of its tensor arguments: writes reach the
    caller's storage (values right) but through aliases with counters of
    their own, so the arguments' version counters never advance."""

    def run(*args):
        return gm.forward(*_map_tensors(lambda t: t.data, args))

    return run


def refuses(gm: torch.fx.GraphModule, example_inputs: Sequence) -> Callable:
    """A compiler that fails on every graph (Dynamo raises
    ``BackendCompilerFailed`` at the call): each program must be reported as
    a failure of ``compile.errors-match-eager``, never crash the run."""
    raise NotImplementedError("toy backend: refuses to compile any graph")
