# Does a compiled function that writes into its input and returns x * 1
# return a tensor sharing storage with x? (eager: never)
import torch

print(torch.__version__)


def ellipsis(x):
    x[...] = 0
    return x * 1


def slice_(x):
    x[1:3] = 5
    return x * 1


def add_(x):
    x.add_(1)
    return x * 1


def add_mul(x):
    x.add_(1)
    x.mul_(2)
    return x * 1


for fn in (ellipsis, slice_, add_, add_mul):
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        x = torch.ones(4)
        out = torch.compile(fn, backend=backend)(x)
        shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        print(
            fn.__name__, backend, "output shares storage with input:", shares, "out is x:", out is x
        )
