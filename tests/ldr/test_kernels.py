"Fused RQ-spline Triton kernel (Chapter 09): interpreter vs reference, gradients, compile_check."

import pytest
import torch
from torch.overrides import TorchFunctionMode

from icml26_lit.core import HAS_TRITON, check_kernel, compile_check
from icml26_lit.flows import CouplingFlow, rqs_transform
from icml26_lit.ldr.kernels import make_spline_inputs, rq_spline, rq_spline_vjp

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")


def test_compile_check_forward_and_inverse():
    # first in this file: compile before the interpreter has run anything in this process
    from icml26_lit.ldr.kernels import _SIG, rq_spline_kernel

    # one specialisation here (tests/core/test_registered.py compiles every registered one)
    reports = compile_check(
        rq_spline_kernel, _SIG, {"INVERSE": True, "BLOCK": 128, "KP": 16}, targets=((7, 5),)
    )
    assert reports[0].shared <= 65536


SIZES = [(1, 2), (129, 8), (37, 5), (3, 13)]


@pytest.mark.parametrize("inverse", [False, True])
def test_kernel_matches_reference(fresh_seed, inverse):
    # float64 only: in float64 the default tolerance (1e-10 abs, 1e-8 rel) is ~1e5 roundings, far
    # above the spline's worst amplification; float32 is compared with the exact value below
    check_kernel(
        lambda *a: rq_spline(*a, inverse=inverse, backend="triton"),
        lambda *a: rqs_transform(*a, inverse=inverse),
        make_spline_inputs,
        sizes=SIZES,
        dtypes=(torch.float64,),
        seed=fresh_seed,
    )


# floating-point operations that round; comparisons, where, gather, neg and clamp are exact
_ROUNDING_OPS = {"add", "sub", "mul", "div", "__radd__", "__rsub__", "__rmul__", "__rtruediv__"}
_ROUNDING_OPS |= {"__truediv__", "pow", "__pow__", "__rpow__", "sqrt", "log", "exp", "sum"}
_ROUNDING_OPS |= {"__rdiv__"}  # the name `2 / t` reaches __torch_function__ under


class _RoundEachOp(TorchFunctionMode):
    "Multiply each rounding op's result by (1 + delta), delta a zero leaf (running error analysis)."

    def __init__(self):
        super().__init__()
        self.deltas = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if (
            getattr(func, "__name__", "") in _ROUNDING_OPS
            and isinstance(out, torch.Tensor)
            and out.is_floating_point()
        ):
            delta = torch.zeros_like(out, requires_grad=True)
            self.deltas.append(delta)
            return out * (1 + delta)
        return out


def _exact_and_rounding_bound(inputs, inverse):
    """The float64 value of the spline at the float32 inputs, and the first-order bound on a
    float32 evaluation's error in units of u = eps/2: sum over operations of |df/d delta_op|, plus
    |f| for the output's own rounding (the inputs are exact)."""
    with _RoundEachOp() as mode:
        outs = rqs_transform(*[t.double() for t in inputs], inverse=inverse)
    res = []
    for o in outs:  # each row's outputs depend only on that row's intermediates
        grads = torch.autograd.grad(o.sum(), mode.deltas, retain_graph=True, allow_unused=True)
        bound = sum(g.abs().reshape(len(o), -1).sum(1) for g in grads if g is not None)
        res.append((o.detach(), bound + o.detach().abs()))
    return res


@pytest.mark.parametrize("inverse", [False, True])
def test_kernel_float32_within_rounding_of_exact(fresh_seed, inverse):
    # A fixed float32 tolerance is wrong here: near a bin end with a steep knot derivative the
    # inverse's log-derivative amplifies the rounding of the quadratic's root ~100x (seed
    # 178519063: the kernel 1.5e-4 and the reference 4.7e-5 from the exact value, beside a fixed
    # 1e-5 + 1e-4 |ref|). The first-order bound of each evaluation's own rounding is exact to
    # second order; the kernel and the reference reached 0.60 of it (both) over 220 seeds x 4
    # shapes x both directions. 4 x the bound leaves room for second-order terms and reordering.
    u = torch.finfo(torch.float32).eps / 2
    for i, size in enumerate(SIZES + [(512, 8)]):
        inputs = make_spline_inputs(
            size, torch.float32, torch.Generator().manual_seed(fresh_seed + i)
        )
        outs = rq_spline(*inputs, inverse=inverse, backend="triton")
        ref = rqs_transform(*inputs, inverse=inverse)
        for k, (exact, bound) in enumerate(_exact_and_rounding_bound(inputs, inverse)):
            for name, v in (("kernel", outs[k]), ("reference", ref[k])):
                err = (v.double() - exact).abs()
                assert v.dtype == torch.float32 and bool((err <= 4 * u * bound).all()), (
                    f"{name} output {k} at size {size}: error {err.max():.3g}, "
                    f"{(err / (u * bound).clamp_min(1e-300)).max():.2f} x the rounding bound"
                )


def test_kernel_round_trip_and_batch_shape(fresh_seed):
    x, xk, yk, dk = make_spline_inputs(
        (60, 7), torch.float64, torch.Generator().manual_seed(fresh_seed)
    )
    shape = (4, 15)
    args = (
        x.reshape(shape),
        xk.reshape(shape + (8,)),
        yk.reshape(shape + (8,)),
        dk.reshape(shape + (8,)),
    )
    y, ladj = rq_spline(*args, backend="triton")
    back, ladj_inv = rq_spline(y, *args[1:], inverse=True, backend="triton")
    assert y.shape == shape
    torch.testing.assert_close(back, args[0])
    torch.testing.assert_close(ladj_inv, -ladj)


@pytest.mark.parametrize("inverse", [False, True])
def test_kernel_gradcheck(fresh_seed, inverse):
    x, xk, yk, dk = make_spline_inputs(
        (5, 3), torch.float64, torch.Generator().manual_seed(fresh_seed)
    )
    x.requires_grad_()
    raw = torch.randn(
        5,
        8,
        dtype=torch.float64,
        generator=torch.Generator().manual_seed(fresh_seed + 1),
        requires_grad=True,
    )
    from icml26_lit.flows import rqs_knots

    def f(x, raw):
        knots = rqs_knots(raw[:, :3], raw[:, 3:6], raw[:, 6:], 3.0)
        return rq_spline(x, *knots, inverse=inverse, backend="triton")

    assert torch.autograd.gradcheck(f, (x, raw), eps=1e-6, atol=1e-5, fast_mode=True)


def test_flow_with_kernel_equals_reference_flow(fresh_seed):
    torch.manual_seed(fresh_seed)
    ref = CouplingFlow(3, n_layers=2, hidden=8, bins=5)
    for layer in ref.layers:
        torch.nn.init.normal_(layer.net[-1].weight, std=0.5)
    ker = CouplingFlow(
        3,
        n_layers=2,
        hidden=8,
        bins=5,
        spline_fn=lambda *a, **k: rq_spline(*a, **k, backend="triton"),
    )
    ker.load_state_dict(ref.state_dict())
    x = torch.randn(17, 3)
    torch.testing.assert_close(ker.log_prob(x), ref.log_prob(x))
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    torch.testing.assert_close(ker.sample(11, g1), ref.sample(11, g2))


def test_kernel_empty_and_bad_input():
    e = torch.zeros(0)
    y, ladj = rq_spline(e, torch.zeros(0, 5), torch.zeros(0, 5), torch.ones(0, 5), backend="triton")
    assert y.shape == (0,) and ladj.shape == (0,)
    x, xk, yk, dk = make_spline_inputs((4, 3), torch.float32, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="xk must have shape"):
        rq_spline(x, xk[:3], yk, dk)
    with pytest.raises(ValueError, match="at least 3 knots"):
        rq_spline(x, xk[:, :2], yk[:, :2], dk[:, :2])
    with pytest.raises(TypeError, match="yk must have dtype"):
        rq_spline(x, xk, yk.double(), dk)
    with pytest.raises(ValueError, match="backend"):
        rq_spline(x, xk, yk, dk, backend="cuda")


def test_kernel_wrapper_refuses_non_monotonic_knots():
    x, xk, yk, dk = make_spline_inputs((4, 3), torch.float32, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="xk must be strictly increasing"):
        rq_spline(x, xk.flip(-1), yk, dk, backend="triton")
    with pytest.raises(ValueError, match="dk must be positive"):
        rq_spline(x, xk, yk, -dk, backend="triton")


# ---- the backward kernel ----------------------------------------------------------------------


def test_compile_check_backward():
    # the backward kernel's inverse specialisation for sm_90 here (the forward's for sm_75 above;
    # tests/core/test_registered.py compiles all four registered ones for both targets)
    from icml26_lit.ldr.kernels import _BWD_SIG, rq_spline_backward_kernel

    reports = compile_check(
        rq_spline_backward_kernel,
        _BWD_SIG,
        {"INVERSE": True, "BLOCK": 128, "KP": 16},
        targets=((9, 0),),
    )
    assert reports[0].shared <= 232448


def _hard_points(xk, yk, inverse, generator, offset=1e-4):
    """Per row: a point within `offset` of one of its knots (either side, the bounds included, so
    some land just outside [-B, B]), or in a tail; with offset=0, exactly on the knot."""
    knots = yk if inverse else xk
    n, n_knots = knots.shape
    j = torch.randint(0, n_knots, (n, 1), generator=generator)
    side = 2.0 * torch.randint(0, 2, (n,), generator=generator) - 1
    x = knots.gather(-1, j)[:, 0] + offset * side
    tail = torch.rand(n, generator=generator) < 0.2
    bound = knots[:, -1]
    return torch.where(tail, side * (bound + 0.25 + torch.rand(n, generator=generator)), x)


def _kernel_grads(args, ups, inverse):
    leaves = [t.clone().requires_grad_() for t in args]
    outs = rq_spline(*leaves, inverse=inverse, backend="triton")
    return torch.autograd.grad(outs, leaves, ups)


@pytest.mark.parametrize("inverse", [False, True])
def test_backward_gradcheck(fresh_seed, inverse):
    # finite differences of the kernel's forward against its backward kernel, float64, with
    # every point within 1e-4 of a knot (or of +-B) or in a tail; eps = 1e-6 never crosses a knot
    g = torch.Generator().manual_seed(fresh_seed)
    x, xk, yk, dk = make_spline_inputs((7, 4), torch.float64, g)
    x = _hard_points(xk, yk, inverse, g)
    inputs = tuple(t.clone().requires_grad_() for t in (x, xk, yk, dk))

    def f(*a):
        return rq_spline(*a, inverse=inverse, backend="triton")

    assert torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("offset", [0.0, 1e-9, 1e-4, None])
def test_backward_matches_reference_autograd(fresh_seed, inverse, offset):
    # float64, against autograd through `rqs_transform`; points on knots (offset 0), next to them,
    # in the tails, and (None) drawn across [-B - 0.5, B + 0.5]. The inverse's reference
    # differentiates the quadratic formula, the kernel uses the implicit function theorem: both
    # are exact up to rounding, which a slope down to 1e-3 amplifies ~1e3 x; 1e-9 relative
    # (~1e7 roundings of 1.1e-16) bounds both with a wide margin
    g = torch.Generator().manual_seed(fresh_seed)
    for size in [(1, 2), (129, 8), (37, 5), (3, 13)]:
        x, xk, yk, dk = make_spline_inputs(size, torch.float64, g)
        if offset is not None:
            x = _hard_points(xk, yk, inverse, g, offset)
        ups = tuple(torch.randn(2, size[0], dtype=torch.float64, generator=g))
        leaves = [t.clone().requires_grad_() for t in (x, xk, yk, dk)]
        want = torch.autograd.grad(rqs_transform(*leaves, inverse=inverse), leaves, ups)
        got = _kernel_grads((x, xk, yk, dk), ups, inverse)
        for name, a, b in zip(("x", "xk", "yk", "dk"), got, want):
            scale = b.abs().max().clamp_min(1.0)
            torch.testing.assert_close(
                a, b, rtol=1e-9, atol=1e-9 * scale, msg=lambda m: f"d/d{name} at {size}: {m}"
            )
        # the analytic reference the kernel mirrors is exactly the kernel in float64
        for a, b in zip(got, rq_spline_vjp(x, xk, yk, dk, *ups, inverse=inverse)):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12 * b.abs().max().item())


def _vjp_exact_and_rounding_bound(args, ups, inverse):
    """Per gradient tensor: the float64 value of `rq_spline_vjp` at the float32 inputs, and the
    first-order bound (units of u) on a float32 evaluation's error, entry by entry."""
    args64, ups64 = [t.double() for t in args], [t.double() for t in ups]
    n_bins = args[1].shape[-1] - 1
    k = ((args64[2] if inverse else args64[1]) < args64[0][:, None]).sum(-1) - 1
    kc = k.clamp(0, n_bins - 1)[:, None]
    with _RoundEachOp() as mode:
        grads = rq_spline_vjp(*args64, *ups64, inverse=inverse)
    res = []
    for i, gr in enumerate(grads):
        bound = torch.zeros_like(gr)
        # each entry depends on its own row's intermediates only; x's gradient has one entry per
        # row, a knot row's gradient two (the bin's end knots) and exact zeros elsewhere
        cols = [None] if i == 0 else [kc, kc + 1]
        for col in cols:
            o = gr if col is None else gr.gather(-1, col)[:, 0]
            ds = torch.autograd.grad(o.sum(), mode.deltas, retain_graph=True, allow_unused=True)
            b = sum(d.abs() for d in ds if d is not None) + o.detach().abs()
            if col is None:
                bound = b
            else:
                bound = bound.scatter(-1, col, b[:, None])
        res.append((gr.detach(), bound))
    return res


@pytest.mark.parametrize("inverse", [False, True])
def test_backward_float32_within_rounding_of_exact(fresh_seed, inverse):
    # As for the forward: a fixed float32 tolerance is wrong for these gradients (the inverse
    # divides by dPhi/dxi = h s D / den^2, which a knot slope of 1e-3 makes small, and
    # d/dx of the forward multiplies by 1/w), so each entry is held to the first-order bound of
    # its own float32 evaluation's rounding: the sum over the rounding operations of the analytic
    # reference (which the kernel executes in the same order) of |d gradient / d delta_op| plus
    # the gradient's own rounding, in units of u = 2^-24. The bound is exact to first order;
    # 4 x leaves room for second-order terms and for operations the interpreter reorders.
    # Entries outside the bin must be exactly 0, and x's gradient outside [-B, B] exactly g_out.
    u = torch.finfo(torch.float32).eps / 2
    g = torch.Generator().manual_seed(fresh_seed)
    for size in [(1, 2), (129, 8), (37, 5), (3, 13), (512, 8)]:
        x, xk, yk, dk = make_spline_inputs(size, torch.float32, g)
        x = torch.where(torch.rand(size[0], generator=g) < 0.3, _hard_points(xk, yk, inverse, g), x)
        ups = tuple(torch.randn(2, size[0], generator=g))
        got = _kernel_grads((x, xk, yk, dk), ups, inverse)
        exact = _vjp_exact_and_rounding_bound((x, xk, yk, dk), ups, inverse)
        for name, v, (ex, bound) in zip(("x", "xk", "yk", "dk"), got, exact):
            err = (v.double() - ex).abs()
            assert v.dtype == torch.float32 and bool((err <= 4 * u * bound).all()), (
                f"d/d{name} at size {size}: error {err.max():.3g}, "
                f"{(err / (u * bound).clamp_min(1e-300)).max():.2f} x the rounding bound"
            )


def test_backward_through_partial_inputs_and_batch_shape(fresh_seed):
    # only some inputs need gradients; batched shapes flatten and come back
    x, xk, yk, dk = make_spline_inputs(
        (24, 5), torch.float64, torch.Generator().manual_seed(fresh_seed)
    )
    shape = (4, 6)
    xs, dks = x.reshape(shape).requires_grad_(), dk.reshape(shape + (6,)).requires_grad_()
    y, ladj = rq_spline(
        xs, xk.reshape(shape + (6,)), yk.reshape(shape + (6,)), dks, backend="triton"
    )
    gx, gdk = torch.autograd.grad((y * ladj).sum(), (xs, dks))
    xr, dkr = x.clone().requires_grad_(), dk.clone().requires_grad_()
    yr, lr = rqs_transform(xr, xk, yk, dkr)
    wx, wdk = torch.autograd.grad((yr * lr).sum(), (xr, dkr))
    torch.testing.assert_close(gx, wx.reshape(shape))
    torch.testing.assert_close(gdk, wdk.reshape(shape + (6,)))
