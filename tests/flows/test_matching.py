"""Flow matching (icml26_lit.flows.matching): exact targets, loss, sampling and log-densities."""

import math

import pytest
import torch

from icml26_lit.flows.matching import (
    SIGMA_MIN,
    cfm_loss,
    divergence,
    gaussian_velocity,
    integrate_adaptive,
    interpolate,
    log_prob_ode,
    sample_ode,
    target_velocity,
)


def test_target_velocity_is_time_derivative_of_path(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x0, x1 = (
        torch.randn(6, 4, generator=g, dtype=torch.float64),
        torch.randn(6, 4, generator=g, dtype=torch.float64),
    )
    t = torch.rand(6, generator=g, dtype=torch.float64) * 0.9 + 0.05
    h = 1e-6
    fd = (interpolate(x0, x1, t + h) - interpolate(x0, x1, t - h)) / (2 * h)
    u = target_velocity(x1, interpolate(x0, x1, t), t)
    torch.testing.assert_close(u, fd, atol=1e-7, rtol=1e-7)
    # constructed case: u_t = x1 - (1 - sigma_min) x0 exactly, for every t
    torch.testing.assert_close(u, x1 - (1 - SIGMA_MIN) * x0)


def test_path_endpoints():
    x0, x1 = torch.randn(3, 2), torch.randn(3, 2)
    torch.testing.assert_close(interpolate(x0, x1, 0.0), x0)
    torch.testing.assert_close(interpolate(x0, x1, 1.0), x1 + SIGMA_MIN * x0)


def test_loss_zero_for_exact_conditional_velocity():
    # a single data point: the conditional velocity is the marginal one, so the loss can be 0
    x1 = torch.full((64, 3), 1.5, dtype=torch.float64)
    x0 = torch.randn(64, 3, dtype=torch.float64)
    t = torch.rand(64, dtype=torch.float64)
    v = lambda xt, tt: target_velocity(x1, xt, tt)
    assert float(cfm_loss(v, x1, t=t, x0=x0)) < 1e-20
    assert float(cfm_loss(lambda xt, tt: v(xt, tt) + 0.1, x1, t=t, x0=x0)) == pytest.approx(0.01)


def test_gaussian_velocity_minimises_loss():
    g = torch.Generator().manual_seed(0)
    data = -1.0 + 0.7 * torch.randn(20000, 1, generator=g)
    v = gaussian_velocity(-1.0, 0.7)
    t, x0 = torch.rand(20000, generator=g), torch.randn(20000, 1, generator=g)
    base = cfm_loss(v, data, t=t, x0=x0)
    for delta in (0.05, -0.05):
        assert cfm_loss(lambda x, tt: v(x, tt) + delta, data, t=t, x0=x0) > base
    assert cfm_loss(lambda x, tt: 1.1 * v(x, tt), data, t=t, x0=x0) > base


def test_padding_never_leaks_into_loss(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x1 = torch.randn(8, 5, generator=g)
    mask = torch.rand(8, 5, generator=g) > 0.3
    mask[0, 0] = True
    t, x0 = torch.rand(8, generator=g), torch.randn(8, 5, generator=g)
    v = lambda x, tt: 0.5 * x
    a = cfm_loss(v, x1, mask=mask, t=t, x0=x0)
    garbage = torch.where(mask, x1, torch.full_like(x1, 1e6))
    b = cfm_loss(v, garbage, mask=mask, t=t, x0=x0)
    torch.testing.assert_close(a, b)
    # equals the plain mean over the real elements
    xt = interpolate(x0, x1, t)
    err = (v(xt, t) - target_velocity(x1, xt, t)) ** 2
    torch.testing.assert_close(a, err[mask].mean())


def test_loss_bad_input():
    with pytest.raises(TypeError, match="x1 must be a torch.Tensor"):
        cfm_loss(lambda x, t: x, [1.0, 2.0])
    with pytest.raises(ValueError, match="x1 must have a non-empty leading batch"):
        cfm_loss(lambda x, t: x, torch.zeros(0, 2))


@pytest.mark.parametrize("method", ["rk4", "adaptive"])
def test_sampling_reaches_the_gaussian(method):
    g = torch.Generator().manual_seed(1)
    x0 = torch.randn(40000, 1, generator=g, dtype=torch.float64)
    xs = sample_ode(gaussian_velocity(2.0, 0.5), x0, n_steps=16, method=method)
    sd = math.sqrt(0.25 + SIGMA_MIN**2)
    # the exact flow map is affine: x1 = 2 + sd * x0 (up to integration error)
    torch.testing.assert_close(xs, 2.0 + sd * x0, atol=2e-4 if method == "rk4" else 1e-4, rtol=0)


def test_adaptive_integrator_on_exponential_decay():
    y, steps = integrate_adaptive(
        lambda t, y: -y, torch.ones(3, dtype=torch.float64), 0.0, 2.0, rtol=1e-8, atol=1e-10
    )
    torch.testing.assert_close(
        y, torch.full((3,), math.exp(-2.0), dtype=torch.float64), atol=1e-8, rtol=0
    )
    assert steps > 3


def test_divergence_exact_for_linear_field():
    A = torch.tensor([[1.0, 2.0, 0.0], [0.5, -3.0, 1.0], [0.0, 0.0, 0.25]], dtype=torch.float64)
    x = torch.randn(4, 3, dtype=torch.float64)
    v, div = divergence(lambda x, t: x @ A.t(), x, torch.zeros(4))
    torch.testing.assert_close(div, torch.full((4,), float(A.trace()), dtype=torch.float64))
    mask = torch.tensor([True, False, True])
    _, div_m = divergence(lambda x, t: x @ A.t(), x, torch.zeros(4), mask=mask)
    torch.testing.assert_close(div_m, torch.full((4,), 1.25, dtype=torch.float64))


def test_log_prob_matches_gaussian_density():
    pts = torch.linspace(-1.0, 5.0, 9, dtype=torch.float64)[:, None]
    lp = log_prob_ode(gaussian_velocity(2.0, 0.8), pts, n_steps=32)
    exact = torch.distributions.Normal(2.0, math.sqrt(0.64 + SIGMA_MIN**2)).log_prob(pts[:, 0])
    torch.testing.assert_close(lp, exact, atol=1e-4, rtol=1e-4)


def test_log_prob_multivariate_and_masked():
    # independent dimensions: the joint log-density is the sum; a masked dimension is excluded
    v1, v2 = gaussian_velocity(0.0, 1.0), gaussian_velocity(1.0, 2.0)
    vel = lambda x, t: torch.stack([v1(x[:, 0], t), v2(x[:, 1], t)], 1)
    pts = torch.tensor([[0.3, -1.0], [1.0, 2.0]], dtype=torch.float64)
    lp = log_prob_ode(vel, pts, n_steps=32)
    exact = torch.distributions.Normal(0.0, math.sqrt(1 + SIGMA_MIN**2)).log_prob(
        pts[:, 0]
    ) + torch.distributions.Normal(1.0, math.sqrt(4 + SIGMA_MIN**2)).log_prob(pts[:, 1])
    torch.testing.assert_close(lp, exact, atol=1e-4, rtol=1e-4)
    lp_m = log_prob_ode(vel, pts, n_steps=32, mask=torch.tensor([True, False]))
    torch.testing.assert_close(
        lp_m,
        torch.distributions.Normal(0.0, math.sqrt(1 + SIGMA_MIN**2)).log_prob(pts[:, 0]),
        atol=1e-4,
        rtol=1e-4,
    )


def test_target_velocity_refuses_its_pole_and_a_bad_sigma_min():
    "With sigma_min = 0 the velocity (x1 - x_t) / (1 - t) has a pole at t = 1: an error, not inf."
    from icml26_lit.flows.matching import target_velocity

    x = torch.ones(2, 3)
    with pytest.raises(ValueError, match="t must be below 1 when sigma_min = 0"):
        target_velocity(x, x, torch.tensor([0.5, 1.0]), sigma_min=0)
    with pytest.raises(ValueError, match="sigma_min must be a number in"):
        target_velocity(x, x, 0.5, sigma_min=1.0)
    assert torch.isfinite(target_velocity(x, x, torch.tensor([0.5, 1.0]))).all()  # default s
