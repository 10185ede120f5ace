"""grad_fn of indexing with a full-range slice, t[(slice(0, None, 1),)] (and
t[0::1]), of a tensor that requires grad: an alias (AliasBackward0) or a slice
view (SliceBackward0)?"""

import torch

t = torch.zeros(3, 2, 1, 2, dtype=torch.float16, requires_grad=True)
u = t[(slice(0, None, 2),)]
for name, v in (
    ("t[(0::1,)]", t[(slice(0, None, 1),)]),
    ("t[0::1]", t[0::1]),
    ("u[(0::1,)]", u[(slice(0, None, 1),)]),
    ("u[0::1]", u[0::1]),
    ("t[:]", t[:]),
    ("t[(:, 0::1)]", t[(slice(None), slice(0, None, 1))]),
):
    print(torch.__version__, name, type(v.grad_fn).__name__)
