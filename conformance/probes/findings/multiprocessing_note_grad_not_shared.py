"""A tensor sent through torch.multiprocessing arrives without its .grad (doc drift).

Docs page: https://docs.pytorch.org/docs/stable/notes/multiprocessing.html
The note says: "When a torch.Tensor is sent to another process, the torch.Tensor data is
shared. If torch.Tensor.grad is not None, it is also shared."

Expected (documented): the received tensor's .grad is not None and shares the sender's
.grad memory. Observed on torch 2.13: torch.multiprocessing's reducer (reduce_tensor /
rebuild_tensor in torch/multiprocessing/reductions.py) carries the data and requires_grad
only, so the received tensor has .grad None (the sentence dates from PR #8688, 2018).

The tensor is sent the way a torch.multiprocessing Queue sends it - ForkingPickler.dumps,
then pickle.loads - in this process (the suite also sees it in a spawn child).

REPRODUCES while the received tensor's .grad is None (or not shared); FIXED when it
arrives with a .grad sharing the sender's .grad memory.

Claims: shared_memory.grad-shared (the note's sentence, recorded deviation), pinned by
shared_memory.grad-not-sent.
"""

import pickle
import sys
import warnings
from multiprocessing.reduction import ForkingPickler

import torch
import torch.multiprocessing  # noqa: F401  (registers the tensor reductions)

warnings.filterwarnings("ignore")


def main():
    x = torch.zeros(3, requires_grad=True)
    x.grad = torch.ones(3)
    received = pickle.loads(ForkingPickler.dumps(x))
    g = received.grad
    shared = g is not None and g.untyped_storage().data_ptr() == x.grad.untyped_storage().data_ptr()
    print(
        f"{torch.__version__}: sent leaf with .grad {x.grad.tolist()}; received "
        f"requires_grad={received.requires_grad}, .grad={None if g is None else g.tolist()}"
    )
    if shared:
        print("FIXED: the received tensor's .grad shares the sender's .grad, as the note says")
        return 0
    what = ".grad is None" if g is None else ".grad is a copy, not shared"
    print(
        "REPRODUCES: a leaf whose .grad is ones(3), sent through torch.multiprocessing's "
        f"reducer, arrives with {what} (note: 'If torch.Tensor.grad is not None, it is also shared')"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
