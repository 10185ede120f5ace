"""Tensor.numpy() converts a tensor that requires grad when called under torch.no_grad()
(doc drift).

Docs page: https://docs.pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
The docstring says: "If force is False (the default), the conversion is performed only if
the tensor is on the CPU, does not require grad, does not have its conjugate bit set, and
is a dtype and layout that NumPy supports."

Expected (documented): t.numpy() of a tensor that requires grad raises, whatever the grad
mode. Observed on torch 2.13: the check is `GradMode::is_enabled() && requires_grad()`,
so under torch.no_grad() the conversion succeeds and the ndarray shares t's memory (a
design decision, issue #37000; PyTorch's test_numpy_requires_grad relies on it - the
docstring was not updated). Outside no_grad the same call raises.

REPRODUCES while the call under no_grad succeeds and the docstring still lists "does not
require grad" unconditionally; FIXED when it raises or the docstring states the exception.

Claims: numpy.numpy-refuses-grad-under-no-grad (the docstring, recorded deviation),
pinned by numpy.numpy-no-grad-converts.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")

WORDING = "does not require grad"


def main():
    doc = " ".join((torch.Tensor.numpy.__doc__ or WORDING).split())
    t = torch.zeros(3, requires_grad=True)
    try:
        t.numpy()
        outside = "converts"
    except RuntimeError as err:
        outside = f"RuntimeError: {str(err).splitlines()[0]}"
    with torch.no_grad():
        try:
            a = t.numpy()
        except RuntimeError as err:
            print(
                f"{torch.__version__}: under no_grad t.numpy() -> RuntimeError; outside -> {outside}"
            )
            print(
                f"FIXED: t.numpy() of a tensor that requires grad raises under no_grad too: {err}"
            )
            return 0
    shares = a.ctypes.data == t.data_ptr()
    print(
        f"{torch.__version__}: under no_grad t.numpy() -> ndarray {a.tolist()} (shares memory: {shares}); "
        f"outside no_grad -> {outside}"
    )
    if WORDING not in doc or "no_grad" in doc or "grad mode" in doc:
        print(
            "FIXED: the numpy() docstring no longer states the requires-grad condition unconditionally"
        )
        return 0
    print(
        "REPRODUCES: torch.zeros(3, requires_grad=True).numpy() under torch.no_grad() returns an ndarray "
        f"(shares memory: {shares}); the docstring converts only if the tensor 'does not require grad'"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
