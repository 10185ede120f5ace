"""Index assignment of a Python scalar into an expanded CPU tensor: raises on some
releases, writes on others (behaviour change between releases).

e = torch.zeros(1).expand(2, 2) has a stride-0 dimension of size 2 (its elements share
one memory location). The registered characterization claim sequences.write-overlap-raises
states that index assignment into such a tensor raises 'unsupported operation: more than
one element of the written-to tensor refers to a single memory location' on the CPU, as
add_, mul_ and copy_ do (the expand docstring only warns that in-place writes "may result
in incorrect behavior"). The project's probe outputs show: 2.1.2 writes (no overlap check
in index assignment); 2.5.1-2.14.1 raise; 2.15.0 writes again for a Python scalar (as CUDA
does) while a 0-d tensor value (e[0] = torch.ones(())) still raises.

Direction of this reproducer (from the claim's statement): REPRODUCES when `e[0] = 1`
writes without raising (the changed behaviour of 2.1.2 and 2.15.0, which also disagrees
with the 0-d tensor form on 2.15.0); FIXED when it raises the internal-overlap
RuntimeError the claim pins (2.2-2.14, so FIXED on torch 2.13). CPU only; CUDA writes on
every release measured (a device divergence recorded separately).

Related probe: conformance/probes/setitem_into_expanded_raises.py.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")

OVERLAP = "more than one element of the written-to tensor"


def attempt(value):
    e = torch.zeros(1).expand(2, 2)
    try:
        e[0] = value
    except RuntimeError as err:
        if OVERLAP not in str(err):
            raise
        return False, "RuntimeError (internal overlap)"
    return True, f"wrote, e = {e.tolist()}"


def main():
    scalar_wrote, scalar = attempt(1)
    _, tensor_value = attempt(torch.ones(()))
    print(f"{torch.__version__}: e[0] = 1 -> {scalar}; e[0] = torch.ones(()) -> {tensor_value}")
    if scalar_wrote:
        print(
            "REPRODUCES: e = torch.zeros(1).expand(2, 2); e[0] = 1 on the CPU "
            f"{scalar} instead of raising the internal-overlap RuntimeError "
            f"(e[0] = torch.ones(()) -> {tensor_value})"
        )
        return 1
    print(
        "FIXED: e = torch.zeros(1).expand(2, 2); e[0] = 1 on the CPU raises the internal-overlap "
        f"RuntimeError, as the pinned rule says (e[0] = torch.ones(()) -> {tensor_value})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
