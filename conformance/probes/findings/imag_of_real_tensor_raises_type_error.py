"""`t.imag` / `torch.imag(t)` of a real tensor: RuntimeError on torch <= 2.14, TypeError
(same message) on 2.15.0 (error-type change between releases).

t = torch.ones(2) (float32). The registered characterization claim
views.real-of-real-is-self states that t.real is t itself and that t.imag raises
RuntimeError ('imag is not implemented for tensors with non-complex dtypes.'). The
project's probe outputs show RuntimeError on 2.13.0 and 2.14.1 and TypeError with the same
text on 2.15.0, so code that catches RuntimeError there stops catching it.

Direction of this reproducer (from the claim's statement): REPRODUCES when imag of a real
tensor raises something that is not a RuntimeError (the 2.15.0 TypeError) or returns a
value; FIXED when it raises RuntimeError as the claim pins (FIXED on torch 2.13).

Related probe: conformance/probes/imag_of_real_tensor_error_type.py.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def attempt(get):
    try:
        out = get()
    except RuntimeError as err:
        return True, f"RuntimeError: {str(err).splitlines()[0]}"
    except TypeError as err:
        return False, f"TypeError: {str(err).splitlines()[0]}"
    return False, f"no error, returned {out.tolist()}"


def main():
    t = torch.ones(2)
    results = {
        "t.imag": attempt(lambda: t.imag),
        "torch.imag(t)": attempt(lambda: torch.imag(t)),
    }
    for name, (_, text) in results.items():
        print(f"{torch.__version__}: {name} -> {text}")
    changed = [f"{name} -> {text}" for name, (ok, text) in results.items() if not ok]
    if changed:
        print(
            "REPRODUCES: imag of a real float32 tensor: "
            + "; ".join(changed)
            + " (claim: RuntimeError)"
        )
        return 1
    print(f"FIXED: t.imag and torch.imag(t) of a real tensor raise {results['t.imag'][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
