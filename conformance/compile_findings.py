"""The fixed-form programs of the compile bugs the generated programs found.

The program strategy (:mod:`strategies.programs`) steers clear of these bugs
(:data:`strategies.programs.STEERING`); the ``test_compile_findings_*``
modules check each where it lives: a test of the equivalence claim it breaks,
over the deviating forms and a control form that holds, with the deviation
recorded in ``conformance/expectations.toml`` (region: backend and form), and
a test of the characterization claim pinning what torch does instead.

A case is a function ``(device, *params) -> (fn, make, ambient)`` registered
in :data:`CASES` by the test module that owns it; :func:`run_case` runs it once
per (device, backend, params) and shares the comparison between the case's two
tests, so the pin costs no second compile.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from conformance import evidence
from conformance.compile_oracle import ASPECTS as ASPECT_CLAIMS
from conformance.compile_oracle import Comparison, differential

__all__ = [
    "CASES",
    "COMPILED",
    "check_aspects",
    "expect_same",
    "grad_input",
    "run_case",
    "value_of",
]

#: The backends that compile (the Dynamo-only ``eager`` backend does not).
COMPILED = ("aot_eager", "inductor")

#: case name -> ``(device, *params) -> (fn, make, ambient)`` (see the module docstring)
CASES: dict[str, Callable] = {}


def grad_input(device, n=4):
    """A float32 leaf ``arange(1, n + 1)`` that requires grad, and ``leaf * 1``."""
    leaf = torch.arange(1.0, n + 1.0, device=device).requires_grad_()
    return leaf, leaf * 1


@functools.cache
def run_case(case: str, device: str, backend: str, *params) -> Comparison:
    """The comparison of ``case`` with ``params`` (computed once per process);
    raises ``KeyError`` for a case no imported module registered."""
    fn, make, ambient = CASES[case](device, *params)
    return differential(fn, make, backend, ambient=ambient)


def expect_same(cmp: Comparison, aspect: str) -> None:
    """Assert that the compiled call agrees with eager in ``aspect``; the
    message names the first difference."""
    msg = cmp.first_difference((aspect,))
    assert msg is None, msg


def check_aspects(cmp: Comparison, aspects: tuple[str, ...]) -> None:
    """One verdict per aspect's claim (ASPECT_CLAIMS), each on its own evidence."""
    for aspect in aspects:
        evidence.check(ASPECT_CLAIMS[aspect], not cmp.differences[aspect], cmp.message(aspect))


def value_of(obs, name: str) -> list:
    """The values of input or output ``name`` in an observation, as nested lists."""
    return obs.snapshot[name].tolist()


def expect_pinned_error(obs, name: str, text: str) -> None:
    """Assert that a pinned compiled call raised ``name`` with ``text`` in its
    message, with a message that states which way it departed (raised
    nothing, or raised something else), so a recorded deviation can name
    the behaviour exactly.

    Raises ``AssertionError`` ``compiled call raised nothing (pinned: NAME
    with 'TEXT')`` or ``compiled call raised OTHER: FIRST LINE (pinned: ...)``.
    """
    pin = f"(pinned: {name} with {text!r})"
    assert obs.error is not None, f"compiled call raised nothing {pin}"
    assert obs.error["name"] == name and text in obs.error["text"], (
        f"compiled call raised {obs.error['name']}: {obs.error['first'][:200]} {pin}"
    )
