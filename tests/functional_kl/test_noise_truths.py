"""Chapter 11: noise measure, estimator and closed-form ground truths."""

import math

import pytest
import torch

from icml26_lit.functional_kl.estimator import functional_kl, sample_importance_times
from icml26_lit.functional_kl.ground_truths import (
    OUProcess,
    gaussian_kl,
    gaussian_mode_kl,
    gaussian_path_velocity,
    ou_grid_kl,
    ou_path_kl,
)
from icml26_lit.functional_kl.noise import GaussianNoise, fourier_basis, matern_eigenvalues


@pytest.mark.parametrize("M,N,var", [(32, 8, 1.0), (128, 32, 2.5), (101, 50, 0.3)])
def test_matern_sums_to_variance_times_M(M, N, var):
    lam = matern_eigenvalues(M, N, variance=var)
    # a sum of <= 101 positive float64 terms: relative rounding ~1e-15; 1e-10 leaves margin
    assert abs(lam.sum().item() / (var * M) - 1) < 1e-10
    # the unnormalised ratio lambda_1/lambda_2 from the Matérn formula (nu = 1/2, l = 0.1)
    r = (100 + (4 * math.pi) ** 2) / (100 + (2 * math.pi) ** 2)
    assert abs(lam[1].item() / lam[2].item() - r) < 1e-10


def test_basis_orthonormal_and_cm_norm_by_hand():
    Phi = fourier_basis(12, 5)
    torch.testing.assert_close(Phi.T @ Phi, torch.eye(11, dtype=torch.float64), atol=1e-12, rtol=0)
    nz = GaussianNoise(12, 5)
    tau = torch.arange(12, dtype=torch.float64) / 12
    h = torch.cos(2 * math.pi * 2 * tau)[None, :, None]
    # cos(2 pi 2 x) = sqrt(M/2) * column (k=2, cos): norm^2 = (M/2) / lambda_2
    assert abs(nz.cm_norm(h).item() - 6 / nz.eigenvalues[2].item()) < 1e-9


def _gauss_setup(n=128):
    nz = GaussianNoise(128, 32)
    tau = torch.arange(128, dtype=torch.float64) / 128
    mA = (0.5 * torch.sin(2 * math.pi * tau))[:, None]
    vA = gaussian_path_velocity(mA, nz.eigenvalues, nz)
    vB = gaussian_path_velocity(0 * mA, nz.eigenvalues, nz)
    xa = mA[None] + nz.sample(n, 1, torch.Generator().manual_seed(0), dtype=torch.float64)
    return nz, mA, vA, vB, xa


def test_closed_form_value():
    nz, mA, *_ = _gauss_setup()
    assert abs(gaussian_mode_kl(mA, 0 * mA, nz.eigenvalues, nz) - 0.422333) < 1e-6


@pytest.mark.parametrize("schedule", ["uniform", "importance"])
def test_estimator_matches_closed_form_within_1pct(schedule):
    # uniform: the integrand is deterministic here (c = lambda), 128 paths suffice; importance:
    # the random times give a 1.5% stderr at 128 paths, so 2048 paths (stderr ~0.4%)
    nz, mA, vA, vB, xa = _gauss_setup(128 if schedule == "uniform" else 2048)
    exact = gaussian_mode_kl(mA, 0 * mA, nz.eigenvalues, nz)
    est = functional_kl(
        vA, vB, xa, nz, n_t=100, schedule=schedule, generator=torch.Generator().manual_seed(3)
    )
    # quadrature/truncation bias ~0.1%; importance MC error ~0.4% (2.5 sigma inside 1%)
    assert abs(est.value / exact - 1) < 0.01, est


def test_estimator_triton_equals_torch_under_interpreter():
    nz = GaussianNoise(16, 5)
    tau = torch.arange(16, dtype=torch.float64) / 16
    m = torch.stack([torch.sin(2 * math.pi * tau), torch.cos(2 * math.pi * tau)], 1)
    vA, vB = (gaussian_path_velocity(s * m, nz.eigenvalues, nz) for s in (1.0, 0.0))
    x = m[None] + nz.sample(6, 2, torch.Generator().manual_seed(0), dtype=torch.float64)
    r = [
        functional_kl(
            vA,
            vB,
            x,
            nz,
            n_t=3,
            schedule="importance",
            backend=b,
            generator=torch.Generator().manual_seed(5),
        )
        for b in ("torch", "triton")
    ]
    # same draws, fp64, different summation order: ~1e-15 relative; 1e-10 is safe
    assert abs(r[0].value - r[1].value) <= 1e-10 * abs(r[0].value)


def test_ou_closed_form_equals_grid_gaussian_kl():
    assert abs(ou_path_kl(1, 2, 1, 1) - 0.403426) < 1e-6
    assert abs(ou_grid_kl(1, 2, 1, 1, 101) - 0.403408) < 1e-6


def test_unit_variance_ou_is_singular_and_grows_with_M():
    with pytest.warns(UserWarning, match="grow with"):
        assert ou_path_kl(1, 2, math.sqrt(2), 2) == math.inf
    vals = [ou_grid_kl(1, 2, math.sqrt(2), 2, M) for M in (16, 32, 64)]
    assert [round(v, 2) for v in vals] == [1.33, 2.87, 5.96]


def test_gaussian_kl_by_hand_and_ou_sampler():
    # 1-D: KL(N(1, 2) || N(0, 1)) = 0.5 (2 + 1 - 1 - log 2)
    v = gaussian_kl(torch.ones(1), 2 * torch.ones(1, 1), torch.zeros(1), torch.ones(1, 1))
    assert abs(v - 0.5 * (2 - math.log(2))) < 1e-12
    x = OUProcess(2.0, 1.0).sample(40000, torch.linspace(0, 1, 3), torch.Generator().manual_seed(0))
    # stationary variance 0.25: MC error 0.25 * sqrt(2/40000) ~ 2e-3
    assert abs(x[:, :, 0].var(0).mean().item() - 0.25) < 0.01


def test_importance_times_follow_the_capped_weight():
    # the official sampler: density min(t, te)/(1 - min(t, te)) / Z on [0, 1), Z = -log(1 - te)
    te = 0.9
    t = sample_importance_times(100_000, te, torch.Generator().manual_seed(0))
    assert t.min() >= 0 and t.max() < 1
    z = -math.log1p(-te)
    # mass above te is te / Z = 0.391 (binomial sd 1.5e-3, so 6e-3 is 4 sd); within [te, 1)
    # uniform: its mean is (1 + te) / 2 (sd of the mean ~1e-4)
    hi = t[t > te]
    assert abs(len(hi) / len(t) - te / z) < 6e-3
    assert abs(hi.mean().item() - (1 + te) / 2) < 1e-3
    # below te the CDF is (-t - log(1 - t)) / Z: at t = 0.5, 0.1 (sd 1e-3)
    assert abs((t <= 0.5).double().mean().item() - (-0.5 + math.log(2)) / z) < 5e-3


def test_importance_estimate_of_a_constant_integrand_is_z():
    # a constant velocity difference h: ||h||^2_CM is the same at every t, so the importance
    # estimate is exactly Z ||h||^2 with Z = -log(1 - t_eps), the official normaliser. The
    # earlier sampler (support [0, t_eps], Z = -log(1 - t_eps) - t_eps) gave 30% less here.
    nz = GaussianNoise(16, 4)
    h = nz.reconstruct(torch.ones(1, 9, 1, dtype=torch.float64))  # one unit per mode
    va = lambda x, t: h.expand_as(x)  # noqa: E731
    vb = lambda x, t: torch.zeros_like(x)  # noqa: E731
    x = nz.sample(8, 1, torch.Generator().manual_seed(0), dtype=torch.float64)
    cm = nz.cm_norm(h).item()
    est = functional_kl(
        va, vb, x, nz, n_t=16, schedule="importance", t_eps=0.96,
        generator=torch.Generator().manual_seed(1), backend="torch",
    )  # fmt: skip
    # fp64: dividing the weight back out leaves ~1e-12 relative (t up to 1 - 2^-20)
    assert abs(est.value / (-math.log1p(-0.96) * cm) - 1) < 1e-9, est


@pytest.mark.parametrize(
    "call,word",
    [
        (lambda: GaussianNoise(16, 8), "n_modes"),
        (lambda: GaussianNoise(16, 4, length_scale=0.0), "length_scale"),
        (lambda: GaussianNoise(16, 4, variance=-1.0), "variance"),
        (lambda: GaussianNoise(16, 4).project(torch.zeros(2, 15, 1)), "grid"),
        (lambda: GaussianNoise(16, 4).cm_norm(torch.full((2, 16, 1), float("nan"))), "finite"),
        (
            lambda: functional_kl(
                lambda x, t: x,
                lambda x, t: x,
                torch.zeros(4, 16, 1),
                GaussianNoise(16, 4),
                t_eps=1.5,
            ),
            "t_eps",
        ),
        (
            lambda: functional_kl(
                lambda x, t: x,
                lambda x, t: x,
                torch.zeros(4, 16, 1),
                GaussianNoise(16, 4),
                schedule="x",
            ),
            "schedule",
        ),
        (
            lambda: functional_kl(
                lambda x, t: x, lambda x, t: x, torch.zeros(4, 8, 1), GaussianNoise(16, 4)
            ),
            "paths_a",
        ),
        (lambda: OUProcess(-1.0, 1.0), "theta"),
    ],
)
def test_bad_input(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_bad_velocities_and_paths_get_errors_naming_them():
    from icml26_lit.functional_kl.ffm import FunctionalFlowMatching

    noise, g = GaussianNoise(16, 4), torch.Generator().manual_seed(0)
    x = noise.sample(3, 2, g)
    ok = lambda xt, t: xt
    nan = lambda xt, t: torch.full_like(xt, float("nan"))
    with pytest.raises(FloatingPointError, match="velocity_b returned non-finite"):
        functional_kl(ok, nan, x, noise, n_t=2, generator=g)
    with pytest.raises(ValueError, match=r"velocity_a must return a tensor of shape \(3, 16, 2\)"):
        functional_kl(lambda xt, t: xt[..., :1], ok, x, noise, n_t=2, generator=g)
    with pytest.raises(ValueError, match="velocity_a must return a tensor"):
        functional_kl(lambda xt, t: 0.0, ok, x, noise, n_t=2, generator=g)
    ffm = FunctionalFlowMatching(noise, 2, 1, width=8, generator=g)
    with pytest.raises(ValueError, match=r"paths\[0\] has D = 3; this model was built for dim = 2"):
        ffm.fit([noise.sample(4, 3, g)], 1, 2, g)
