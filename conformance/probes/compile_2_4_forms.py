# How torch.compile (aot_eager, inductor; CPU) handles the programs whose 2.4
# behaviour the expectations record for torch >=2.4,<2.5, beside eager:
# 0-d in-place writes (value, version counter), no_grad writes into a view of a
# leaf that requires grad, the leaf passed twice, a no_grad write into a view of
# a non-leaf returned through a grad op, and pytorch#175496's program.
import torch

print(torch.__version__)


def run(name, fn, make, backends=("aot_eager", "inductor")):
    def one(label, f):
        args = make()
        before = [a._version for a in args]
        try:
            out = f(*args)
        except Exception as e:  # noqa: BLE001 - the probe prints whatever is raised
            lines = [x for x in str(e).splitlines() if x.strip()]
            text = " ".join(lines[:2])[:160]
            print(f"{name} {label}: raises {type(e).__name__}: {text}")
            return
        bumped = [a._version > b for a, b in zip(args, before, strict=True)]
        vals = [a.detach().flatten()[:4].tolist() for a in args]
        out0 = out[0] if isinstance(out, tuple) else out
        print(
            f"{name} {label}: args {vals}, version bumped {bumped}, out {out0.flatten()[:4].tolist()}"
        )

    one("eager", fn)
    for backend in backends:
        torch._dynamo.reset()
        one(backend, torch.compile(fn, backend=backend))


def zero_dim(op, dtype):
    def f(x):
        if op == "add_":
            x.add_(5)
        else:
            x.fill_(5)
        return x * 2

    return f, lambda: (torch.tensor(1, dtype=dtype),)


for dtype in (torch.float32, torch.float64):
    for op in ("add_", "fill_"):
        f, make = zero_dim(op, dtype)
        run(f"0-d {str(dtype)[6:]} {op}", f, make)


def write_then_read(x):
    with torch.no_grad():
        x[...] = 0
    return x + 1


def view_of_leaf():
    leaf = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    return (leaf.t(),)


run("no_grad write into a view of a grad leaf", write_then_read, view_of_leaf)


def sub_alias(x, y):
    with torch.no_grad():
        x.sub_(y)
    return x + 0


def leaf_twice():
    leaf = torch.arange(1.0, 5.0).requires_grad_()
    return (leaf, leaf[:])


run("leaf and a view of it as two arguments", sub_alias, leaf_twice)


def nonleaf_view_written(a0):
    with torch.no_grad():
        a0.mul_(2)
    return a0 * 2


def nonleaf_view():
    leaf = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    return ((leaf * 1).select(0, 1),)


run(
    "no_grad write into a view of a non-leaf, returned through *2",
    nonleaf_view_written,
    nonleaf_view,
)


def issue_175496(x, y):
    x.div_(y)
    return torch.nn.functional.softmax(x, dim=-1), x.detach()


def issue_175496_inputs():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, 4, 4, dtype=torch.float64, generator=gen)
    return x, torch.randn(4, 1, 1, dtype=torch.float64, generator=gen)


run("pytorch#175496", issue_175496, issue_175496_inputs, backends=("inductor",))
