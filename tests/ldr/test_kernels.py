"Fused RQ-spline Triton kernel (Chapter 09): interpreter vs reference, gradients, compile_check."

import pytest
import torch

from icml26_lit.core import HAS_TRITON, check_kernel, compile_check
from icml26_lit.flows import CouplingFlow, rqs_transform
from icml26_lit.ldr.kernels import make_spline_inputs, rq_spline

pytestmark = pytest.mark.skipif(not HAS_TRITON, reason="needs triton")


def test_compile_check_forward_and_inverse():
    # first in this file: compile before the interpreter has run anything in this process
    from icml26_lit.ldr.kernels import _SIG, rq_spline_kernel

    # one specialisation here (tests/core/test_registered.py compiles every registered one)
    reports = compile_check(
        rq_spline_kernel, _SIG, {"INVERSE": True, "BLOCK": 128, "KP": 16}, targets=((7, 5),)
    )
    assert reports[0].shared <= 65536


@pytest.mark.parametrize("inverse", [False, True])
def test_kernel_matches_reference(fresh_seed, inverse):
    check_kernel(
        lambda *a: rq_spline(*a, inverse=inverse, backend="triton"),
        lambda *a: rqs_transform(*a, inverse=inverse),
        make_spline_inputs,
        sizes=[(1, 2), (129, 8), (37, 5), (3, 13)],
        dtypes=(torch.float32, torch.float64),
        seed=fresh_seed,
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
