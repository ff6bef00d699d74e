"""Tests for icml26_lit.sim.integrators against closed-form ODE/SDE solutions."""

import math

import pytest
import torch

from icml26_lit.sim.integrators import euler_maruyama, euler_step, integrate, rk4_step


def decay(t, y):
    return -y


@pytest.mark.parametrize("method,order", [("euler", 1.0), ("rk4", 4.0)])
def test_order_of_convergence_exponential_decay(method, order):
    y0 = torch.ones((), dtype=torch.float64)
    errs = [
        abs(integrate(decay, y0, 0.0, 1.0, n, method=method).item() - math.exp(-1))
        for n in (16, 32)
    ]
    assert abs(math.log2(errs[0] / errs[1]) - order) < 0.15


def test_time_dependent_rhs_uses_correct_stage_times():
    # y' = cos(t), y(0) = 0 -> sin(t); a wrong stage time breaks 4th order
    f = lambda t, y: torch.full_like(y, math.cos(t))
    y = integrate(f, torch.zeros(2, dtype=torch.float64), 0.0, 2.0, 20)
    torch.testing.assert_close(
        y, torch.full((2,), math.sin(2.0), dtype=torch.float64), atol=1e-6, rtol=0
    )


def test_harmonic_oscillator_any_shape_and_backward_time():
    # state (..., 2): x'' = -x
    f = lambda t, y: torch.stack([y[..., 1], -y[..., 0]], dim=-1)
    y0 = torch.zeros(3, 4, 2, dtype=torch.float64)
    y0[..., 0] = 1.0
    y = integrate(f, y0, 0.0, 1.0, 100)
    torch.testing.assert_close(y[..., 0], torch.full((3, 4), math.cos(1.0), dtype=torch.float64))
    back = integrate(f, y, 1.0, 0.0, 100)
    torch.testing.assert_close(back, y0, atol=1e-8, rtol=0)


def test_trajectory_shape_and_endpoints():
    traj = integrate(decay, torch.ones(5), 0.0, 1.0, 7, method="euler", return_trajectory=True)
    assert traj.shape == (8, 5)
    torch.testing.assert_close(traj[-1], torch.full((5,), 0.9**0 * (1 - 1 / 7) ** 7))


def test_single_steps_closed_form():
    h = 0.2
    y = rk4_step(decay, 0.0, torch.ones(1, dtype=torch.float64), h)
    assert abs(y.item() - (1 - h + h**2 / 2 - h**3 / 6 + h**4 / 24)) < 1e-15
    assert abs(euler_step(decay, 0.0, torch.ones(1, dtype=torch.float64), h).item() - 0.8) < 1e-15


def test_gradient_through_integration():
    lam = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    y = integrate(lambda t, y: -lam * y, torch.ones((), dtype=torch.float64), 0.0, 1.0, 50)
    y.backward()
    # d/dlam exp(-lam) = -exp(-lam)
    assert abs(lam.grad.item() + math.exp(-0.7)) < 1e-7


def test_ou_mean_and_variance(fresh_seed):
    theta, sigma, x0, T = 2.0, 0.5, 1.0, 1.0
    g = torch.Generator().manual_seed(fresh_seed)
    n = 20_000
    x = euler_maruyama(
        lambda t, x: -theta * x,
        lambda t, x: sigma,
        torch.full((n,), x0, dtype=torch.float64),
        0.0,
        T,
        200,
        generator=g,
    )
    mean = x0 * math.exp(-theta * T)
    var = sigma**2 / (2 * theta) * (1 - math.exp(-2 * theta * T))
    assert abs(x.mean().item() - mean) < 5 * math.sqrt(var / n) + 2e-3
    # sd of sample variance ~ var*sqrt(2/n) ~ 1%; EM bias O(h) ~ 1%
    assert abs(x.var().item() - var) < 0.06 * var


def test_brownian_motion_variance_and_reproducibility(fresh_seed):
    drift = lambda t, x: torch.zeros_like(x)
    g1 = torch.Generator().manual_seed(fresh_seed)
    g2 = torch.Generator().manual_seed(fresh_seed)
    a = euler_maruyama(
        drift,
        lambda t, x: 1.0,
        torch.zeros(4000, 2),
        0.0,
        2.0,
        10,
        generator=g1,
        return_trajectory=True,
    )
    b = euler_maruyama(
        drift,
        lambda t, x: 1.0,
        torch.zeros(4000, 2),
        0.0,
        2.0,
        10,
        generator=g2,
        return_trajectory=True,
    )
    assert a.shape == (11, 4000, 2)
    torch.testing.assert_close(a, b)
    assert abs(a[-1].var().item() - 2.0) < 0.2


def test_bad_inputs():
    y0 = torch.ones(2)
    with pytest.raises(ValueError, match="method"):
        integrate(decay, y0, 0.0, 1.0, 4, method="rk45")
    with pytest.raises(ValueError, match="n_steps"):
        integrate(decay, y0, 0.0, 1.0, 0)
    with pytest.raises(ValueError, match="t1"):
        integrate(decay, y0, 0.0, float("nan"), 3)
    with pytest.raises(TypeError, match="y0"):
        integrate(decay, [1.0], 0.0, 1.0, 3)
    with pytest.raises(ValueError, match="t1 must be greater"):
        euler_maruyama(decay, lambda t, y: 1.0, y0, 1.0, 0.0, 3)
