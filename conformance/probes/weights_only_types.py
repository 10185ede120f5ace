# Which payload types torch.load(weights_only=True) loads, and the exception and
# message of a refusal (issue 28: torch 2.1-2.4 refuse some types today's
# releases allow, with a different message).
import collections
import io
import pickle

import torch

print(torch.__version__)


class Payload:
    """A user class: a global weights_only loading refuses."""


t = torch.zeros(2)
PAYLOADS = {
    "tensor": t, "parameter": torch.nn.Parameter(t.clone(), requires_grad=False),
    "odict": collections.OrderedDict(w=t), "dict": {"w": t}, "list": [t, None],
    "tuple": (t, 1.5), "set": {1, 2}, "size": torch.Size([2]), "dtype": t.dtype,
    "device": t.device, "layout": t.layout, "complex": complex(1, 2), "bytes": b"ab",
    "bytearray": bytearray(b"ab"), "inf": float("inf"), "user-class": Payload(),
    "module": torch.nn.Identity(), "slice": slice(1, 2), "range": range(3),
    "frozenset": frozenset({1}),
}  # fmt: skip
for kind, obj in PAYLOADS.items():
    buf = io.BytesIO()
    torch.save(obj, buf)
    try:
        torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
        print(f"{kind}: loads")
    except pickle.UnpicklingError as e:
        text = str(e)
        print(f"{kind}: UnpicklingError: {text.splitlines()[0][:70]} ... {text.strip()[-50:]!r}")
