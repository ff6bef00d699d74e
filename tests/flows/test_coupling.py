"Coupling flows (Chapter 09): exact inverse, normalised density, zuko as an oracle for the spline."

import math

import pytest
import torch
import zuko

from icml26_lit.flows import CouplingFlow, rqs_knots, rqs_transform
from icml26_lit.flows.coupling import grid_integral


def _random_params(n, bins, dtype, seed, scale=1.5):
    g = torch.Generator().manual_seed(seed)
    w, h = (scale * torch.randn(n, bins, generator=g, dtype=dtype) for _ in range(2))
    d = scale * torch.randn(n, bins - 1, generator=g, dtype=dtype)
    return w, h, d, g


@pytest.mark.parametrize("bins,bound", [(2, 1.0), (5, 3.0), (8, 5.0)])
def test_spline_matches_zuko(fresh_seed, bins, bound):
    w, h, d, g = _random_params(200, bins, torch.float64, fresh_seed)
    t = zuko.transforms.MonotonicRQSTransform(w, h, d, bound=bound)
    x = (2 * bound + 2) * torch.rand(200, generator=g, dtype=torch.float64) - bound - 1
    knots = rqs_knots(w, h, d, bound=bound)
    y, ladj = rqs_transform(x, *knots)
    y_z, ladj_z = t.call_and_ladj(x)
    torch.testing.assert_close(y, y_z, atol=1e-6, rtol=0)
    torch.testing.assert_close(ladj, ladj_z, atol=1e-6, rtol=0)
    x_back, ladj_inv = rqs_transform(y_z, *knots, inverse=True)
    torch.testing.assert_close(x_back, t.inv(y_z), atol=1e-6, rtol=0)
    torch.testing.assert_close(ladj_inv, -ladj_z, atol=1e-6, rtol=0)


def test_spline_derivative_matches_finite_differences(fresh_seed):
    w, h, d, g = _random_params(100, 6, torch.float64, fresh_seed)
    knots = rqs_knots(w, h, d, bound=2.0)
    x = 4.4 * torch.rand(100, generator=g, dtype=torch.float64) - 2.2
    eps = 1e-6
    fd = (rqs_transform(x + eps, *knots)[0] - rqs_transform(x - eps, *knots)[0]) / (2 * eps)
    torch.testing.assert_close(rqs_transform(x, *knots)[1], fd.log(), atol=1e-5, rtol=0)


def test_spline_identity_outside_and_monotone(fresh_seed):
    w, h, d, g = _random_params(50, 4, torch.float64, fresh_seed)
    knots = rqs_knots(w, h, d, bound=1.0)
    x = torch.tensor([-3.0, -1.0, 1.5, 7.0], dtype=torch.float64).repeat(50, 1).T.reshape(-1)
    y, ladj = rqs_transform(x, *(k.repeat(4, 1) for k in knots))
    torch.testing.assert_close(y[x.abs() > 1], x[x.abs() > 1])
    assert (ladj[x.abs() > 1] == 0).all()
    xs = torch.linspace(-1, 1, 301, dtype=torch.float64)
    ys = rqs_transform(xs, *(k[:1].expand(301, -1) for k in knots))[0]
    assert (ys.diff() > 0).all()


def test_rqs_knots_rejects_bad_shapes():
    with pytest.raises(ValueError, match="derivatives"):
        rqs_knots(torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(3, 4))


def _perturbed(flow, std, seed):
    torch.manual_seed(seed)
    for layer in flow.layers:
        torch.nn.init.normal_(layer.net[-1].weight, std=std)
        torch.nn.init.normal_(layer.net[-1].bias, std=std)
    return flow


@pytest.mark.parametrize("transform", ["spline", "affine"])
def test_flow_density_integrates_to_one(transform):
    torch.manual_seed(0)
    flow = _perturbed(CouplingFlow(2, n_layers=3, hidden=8, transform=transform).double(), 0.3, 1)
    assert abs(grid_integral(flow.log_prob, lim=9.0, n=451) - 1) < 2e-3


@pytest.mark.parametrize("transform", ["spline", "affine"])
def test_flow_inverts_and_sampling_matches_density(fresh_seed, transform):
    flow = _perturbed(
        CouplingFlow(5, n_layers=4, hidden=16, transform=transform).double(), 0.5, fresh_seed
    )
    g = torch.Generator().manual_seed(fresh_seed)
    x, log_q = flow.sample_and_log_prob(64, g)
    z, ladj = flow(x)
    x_back, ladj_inv = flow.inverse(z)
    torch.testing.assert_close(x_back, x, atol=1e-9, rtol=0)
    torch.testing.assert_close(ladj_inv, -ladj, atol=1e-9, rtol=0)
    torch.testing.assert_close(flow.log_prob(x), log_q, atol=1e-9, rtol=0)


def test_flow_log_det_matches_autograd_jacobian(fresh_seed):
    flow = _perturbed(CouplingFlow(3, n_layers=3, hidden=8).double(), 0.5, fresh_seed)
    x = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(fresh_seed))
    _, ladj = flow(x)
    for i in range(4):
        jac = torch.autograd.functional.jacobian(lambda v: flow(v[None])[0][0], x[i])
        torch.testing.assert_close(ladj[i], torch.linalg.slogdet(jac)[1])


def test_new_flow_is_standard_normal():
    flow = CouplingFlow(4)
    x = torch.randn(10, 4)
    expected = -0.5 * (x**2).sum(1) - 2 * math.log(2 * math.pi)
    torch.testing.assert_close(flow.log_prob(x), expected)


def test_flow_bad_input():
    with pytest.raises(ValueError, match="dim"):
        CouplingFlow(1)
    with pytest.raises(ValueError, match="transform"):
        CouplingFlow(2, transform="planar")
    with pytest.raises(ValueError, match="x must have shape"):
        CouplingFlow(2).log_prob(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="n must be"):
        CouplingFlow(2).sample(0)


def test_spline_refuses_non_monotonic_knots(fresh_seed):
    w, h, d, g = _random_params(10, 4, torch.float64, fresh_seed)
    xk, yk, dk = rqs_knots(w, h, d, bound=2.0)
    x = torch.zeros(10, dtype=torch.float64)
    bad_x = xk.clone()
    bad_x[:, 2] = bad_x[:, 1]  # a zero-width bin
    with pytest.raises(ValueError, match="xk must be strictly increasing"):
        rqs_transform(x, bad_x, yk, dk)
    with pytest.raises(ValueError, match="yk must be strictly increasing"):
        rqs_transform(x, xk, yk.flip(-1), dk, inverse=True)
    bad_d = dk.clone()
    bad_d[3, 2] = -0.5
    with pytest.raises(ValueError, match="dk must be positive"):
        rqs_transform(x, xk, yk, bad_d)
    nan_x = xk.clone()
    nan_x[0, 1] = math.nan
    with pytest.raises(ValueError, match="xk must be strictly increasing"):
        rqs_transform(x, nan_x, yk, dk)


def test_flow_refuses_a_dtype_mismatch_and_a_bad_generator():
    flow = CouplingFlow(2, n_layers=1, hidden=4)
    with pytest.raises(TypeError, match="x has dtype float64 but the flow is float32"):
        flow.log_prob(torch.zeros(3, 2, dtype=torch.float64))
    with pytest.raises(TypeError, match="z has dtype float64"):
        flow.inverse(torch.zeros(3, 2, dtype=torch.float64))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        flow.sample(3, generator=1)
    flow.double().log_prob(torch.zeros(3, 2, dtype=torch.float64))  # matched dtypes are fine
