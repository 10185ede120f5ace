"""The copy-sequence state machine: sequences of copy operations checked against
the executable reference model (claims in ``claims/sequences.toml``, model in
``conformance/model/``, argument strategies in :mod:`strategies.sequences`,
tests in ``conformance/test_copy_sequences.py``).

:class:`CopySequences` is a Hypothesis ``RuleBasedStateMachine`` that drives
real torch and :class:`conformance.model.Model` side by side: one rule per
operation (copies, aliases, views, in-place writes under grad mode and
``no_grad``, ``requires_grad_``, ``backward``, NumPy interop). Every rule first
asks the model - which predicts the result or the exception - then runs torch,
and fails when torch raises where the model predicts success or the other way
round. After every step the invariant compares every live tensor and ndarray
with the model: dtype, shape, strides, storage offset, the partition by
storage (``untyped_storage().data_ptr()``), memory addresses, exact
``_version`` and the partition by version counter (bump one counter with
``torch.autograd.graph.increment_version`` and observe the others, the model
accounting for the bump), ``requires_grad``, ``grad_fn is None``, ``is_leaf``,
``_is_view()``/``_base``, and the values (the model's shadow memory).

A failure shrinks to a short program, printed by Hypothesis as runnable
Python (``state = CopySequences()`` then one ``state.<rule>(...)`` per step;
``Fresh(...)`` arguments are runnable reprs). The assertion message starts
with the claim the failing rule cites, and ends with the same program as
plain torch calls.

Where torch departs from its docs the machine follows the observed behaviour
(a characterization claim) and small separate tests check the documented
promise (in ``conformance/test_copy_sequences.py``); those are recorded in
``conformance/expectations/sequences.toml``.
"""

from __future__ import annotations

from conformance.copy_sequences.checks import ModelChecks
from conformance.copy_sequences.focus_rules import FocusRules
from conformance.copy_sequences.harness import (
    ASPECT_CLAIMS,
    DOCS_ONLY,
    HISTORY_CLAIMS,
    MACHINE_CLAIMS,
    quiet,
    simple_values,
)
from conformance.copy_sequences.rules import OperationRules

__all__ = [
    "ASPECT_CLAIMS",
    "DOCS_ONLY",
    "HISTORY_CLAIMS",
    "MACHINE_CLAIMS",
    "CopySequences",
    "quiet",
    "simple_values",
]


class CopySequences(ModelChecks, FocusRules, OperationRules):
    """Real torch and the reference model, side by side (see the package
    docstring): the rules of :class:`OperationRules` and :class:`FocusRules`,
    the invariant of :class:`ModelChecks`, over :class:`Harness`."""
