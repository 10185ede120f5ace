"""The torch.func.functional_call docstring's tied-weights example raises (doc drift).

Docs page: https://docs.pytorch.org/docs/stable/generated/torch.func.functional_call.html
The docstring's tie_weights example builds a module whose parameters ``foo`` and
``foo_tied`` are tied (one Parameter, ``mod.foo`` = tensor(1.)) and then states:

    >>> new_a = {'foo': torch.zeros(()), 'foo_tied': torch.zeros(())}
    >>> functional_call(mod, new_a, torch.zeros()) # tensor(0.)

Expected (documented): with the default tie_weights=True, two equal values for the two
tied names are accepted and the call returns tensor(0.) (x + foo + foo_tied = 0).
Observed on torch 2.13: functional_call compares the values passed for tied names by
identity (``is``), so any two distinct tensors - equal or not - raise ValueError
'functional_call got multiple values for keys [...], which are tied'. (The example also
calls torch.zeros() without a shape; this script passes torch.zeros(()) as x so that only
the tie check is exercised.)

REPRODUCES while the documented call raises (or returns something other than 0) and the
docstring still carries the example; FIXED when the call returns tensor(0.) or the
example is gone from the docstring.

Claims: torch_func.functional-call-tied-equal-values-accepted (the docstring example,
recorded deviation), pinned by torch_func.functional-call-ties-by-identity.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")

EXAMPLE = "new_a = {'foo': torch.zeros(()), 'foo_tied': torch.zeros(())}"


class Foo(torch.nn.Module):
    """The docstring's module: self.foo and self.foo_tied are one Parameter."""

    def __init__(self):
        super().__init__()
        self.foo = torch.nn.Parameter(torch.ones(()))
        self.foo_tied = self.foo

    def forward(self, x):
        return x + self.foo + self.foo_tied


def main():
    func = getattr(torch, "func", None)
    if func is None or not hasattr(func, "functional_call"):
        print("NOT APPLICABLE: torch.func.functional_call does not exist in this torch")
        return 3
    doc = " ".join((func.functional_call.__doc__ or EXAMPLE).split())
    mod = Foo()
    new_a = {"foo": torch.zeros(()), "foo_tied": torch.zeros(())}
    try:
        out = func.functional_call(mod, new_a, torch.zeros(()))
    except ValueError as err:
        result = f"ValueError: {str(err).splitlines()[0]}"
        ok = False
    else:
        result = f"returned {out!r}"
        ok = out.item() == 0.0
    print(f"{torch.__version__}: functional_call(mod, new_a, torch.zeros(())) -> {result}")
    if ok:
        print(f"FIXED: the docstring's tied-weights example runs: {result}")
        return 0
    if EXAMPLE not in doc:
        print(
            f"FIXED: the docstring no longer carries the new_a example (the call still gives {result})"
        )
        return 0
    print(
        "REPRODUCES: the functional_call docstring example (equal values for two tied names, "
        f"documented to give tensor(0.)) -> {result}"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
