"""Tasks: exact posterior of the hierarchical Gaussian, SIR, and budget accounting."""

import math

import pytest
import torch

from icml26_lit.tfmpe.tasks import HierarchicalGaussian, HierarchicalSIR, SimulationBudget


def test_exact_posterior_agrees_with_importance_sampling():
    task = HierarchicalGaussian(n_sites=3, n_obs=4)
    g = torch.Generator().manual_seed(11)
    y = task.simulate(task.sample_prior(1, generator=g), generator=g)["y"]
    mean, cov = task.exact_posterior(y)
    draws = task.sample_prior(300_000, generator=g)
    ll = (
        torch.distributions.Normal(draws["theta"][:, :, None], 1.0).log_prob(y).sum((1, 2)).double()
    )
    w = torch.softmax(ll, 0)
    z = torch.cat([draws["mu"], draws["theta"]], 1).double()
    m_is = w @ z
    c_is = (w[:, None] * (z - m_is)).t() @ (z - m_is)
    torch.testing.assert_close(m_is, mean[0], atol=0.03, rtol=0)
    torch.testing.assert_close(c_is, cov[0], atol=0.03, rtol=0)


def test_exact_posterior_single_site_closed_form():
    # S = 1: mu and theta jointly Gaussian; theta | y has precision 1/(1+tau^2) + J/sigma^2
    task = HierarchicalGaussian(n_sites=1, n_obs=3, tau=0.5)
    y = torch.tensor([[[0.5, 1.0, 2.0]]])
    mean, cov = task.exact_posterior(y)
    prec = 1 / 1.25 + 3.0
    torch.testing.assert_close(cov[0, 1, 1], torch.tensor(1 / prec, dtype=torch.float64))
    torch.testing.assert_close(mean[0, 1], torch.tensor(3.5 / prec, dtype=torch.float64))


def test_exact_posterior_is_equivariant_to_site_permutation(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    task = HierarchicalGaussian(n_sites=5)
    y = task.simulate(task.sample_prior(4, generator=g), generator=g)["y"]
    perm = torch.randperm(5, generator=g)
    mean, cov = task.exact_posterior(y)
    mean_p, cov_p = task.exact_posterior(y[:, perm])
    full = torch.cat([torch.zeros(1, dtype=torch.long), perm + 1])
    torch.testing.assert_close(mean_p, mean[:, full], atol=1e-12, rtol=0)
    torch.testing.assert_close(cov_p, cov[:, full][:, :, full], atol=1e-12, rtol=0)


def test_function_valued_variant_subtracts_the_curve():
    task = HierarchicalGaussian(n_sites=2, functional=True)
    g = torch.Generator().manual_seed(0)
    p = task.sample_prior(3, generator=g)
    fi = task.sample_functional_inputs(3, generator=g)
    y = task.simulate(p, fi, generator=g)["y"]
    plain = HierarchicalGaussian(n_sites=2)
    torch.testing.assert_close(
        task.exact_posterior(y, fi["y"])[0],
        plain.exact_posterior(y - torch.sin(2 * math.pi * fi["y"]))[0],
    )
    with pytest.raises(ValueError, match="needs the observation times"):
        task.exact_posterior(y)


def test_bad_shapes_and_budget():
    task = HierarchicalGaussian(n_sites=2, n_obs=4)
    with pytest.raises(ValueError, match=r"y must have shape \(n, S, 4\)"):
        task.exact_posterior(torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="y contains NaN"):
        task.exact_posterior(torch.full((1, 2, 4), float("nan")))
    with pytest.raises(ValueError, match="n_sites must be a positive int"):
        HierarchicalGaussian(n_sites=0)
    bud = SimulationBudget(10)
    task.simulate(task.sample_prior(5), budget=bud)
    assert bud.used == 10
    with pytest.raises(ValueError, match="budget exceeded"):
        task.simulate(task.sample_prior(1), budget=bud)
    with pytest.raises(ValueError, match="total must be a positive int"):
        SimulationBudget(0)


def test_sir_final_size_and_padding():
    sir = HierarchicalSIR(i0=1e-6, horizon=400.0, n_steps=4000)
    traj = sir.trajectories(torch.tensor([0.75]), torch.tensor([0.25]))
    s, i = traj[..., 0], traj[..., 1]
    r = 1 - s - i
    assert (s[1:] <= s[:-1] + 1e-12).all()  # susceptibles never increase
    r_inf = float(r[-1, 0])
    assert abs(r_inf - (1 - (1 - 1e-6) * math.exp(-3.0 * r_inf))) < 1e-3
    sir = HierarchicalSIR(n_sites=4)
    g = torch.Generator().manual_seed(0)
    p, fi = sir.sample_prior(6, generator=g), sir.sample_functional_inputs(6, generator=g)
    y = sir.simulate(p, fi, generator=g)["y"]
    assert y.shape == (6, 4, 12) and (y[~fi["mask"]] == 0).all()
    n_obs = fi["mask"].sum(-1)
    assert n_obs.min() >= 8 and n_obs.max() <= 12
    # Poisson means: zero transmission gives no new infections
    rate = sir.expected_incidence(
        {"log_beta": torch.full((1, 1), -30.0), "log_gamma": torch.zeros(1, 1)},
        torch.tensor([[[5.0, 10.0]]]),
    )
    assert float(rate.max()) < 1e-6


def test_bad_sizes_and_scales_name_the_argument():
    for kw, msg in (
        (dict(sigma=0.0), "sigma must be a positive finite number, got 0.0"),
        (dict(tau=-0.5), "tau must be a positive finite number, got -0.5"),
        (dict(tau=0), "tau must be a positive finite number"),
        (dict(n_obs=0), "n_obs must be a positive int, got 0"),
    ):
        with pytest.raises(ValueError, match=msg):
            HierarchicalGaussian(**kw)
    task = HierarchicalGaussian(n_sites=2)
    with pytest.raises(ValueError, match="n must be a positive int, got -1"):
        task.sample_prior(-1)
    with pytest.raises(ValueError, match="n_sites must be a positive int, got 0"):
        task.sample_prior(3, n_sites=0)  # 0 is an error, not "the default number of sites"
    with pytest.raises(ValueError, match="n_sites must be a positive int, got 0"):
        task.prior_distribution(0)
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        task.sample_posterior(torch.zeros(2, 4), 0)
    assert task.sample_prior(3, n_sites=4)["theta"].shape == (3, 4)
    with pytest.raises(ValueError, match="n_sites must be a positive int, got 0"):
        HierarchicalSIR(n_sites=0)
    with pytest.raises(ValueError, match=r"i0 must lie in \(0, 1\)"):
        HierarchicalSIR(i0=1.5)
    with pytest.raises(ValueError, match="max_obs must be an int >= min_obs"):
        HierarchicalSIR(min_obs=5, max_obs=3)
    with pytest.raises(ValueError, match="n must be a positive int, got -1"):
        HierarchicalSIR().sample_prior(-1)
    with pytest.raises(ValueError, match="n_sites must be a positive int, got 0"):
        HierarchicalSIR().sample_functional_inputs(2, n_sites=0)
