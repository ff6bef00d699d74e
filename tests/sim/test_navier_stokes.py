"""Tests for icml26_lit.sim.navier_stokes: exact solutions, budgets, conservation, bad input."""

import math

import pytest
import torch

from icml26_lit.sim import (
    NavierStokes2D,
    budget_rates,
    energy,
    energy_spectrum,
    enstrophy,
    kolmogorov_forcing,
)


@pytest.mark.parametrize("n,k", [(16, 1), (32, 3)])
def test_taylor_green_decays_exactly(n, k):
    nu = 0.02
    s = NavierStokes2D(n, nu)
    w0 = s.taylor_green(k=k, amplitude=0.7)
    w = w0
    for _ in range(10):
        w = s.advance(w, 0.1)
    exact = w0 * math.exp(-2 * nu * k**2 * 1.0)
    torch.testing.assert_close(w, exact, atol=1e-8, rtol=1e-8)


def test_advection_closed_form_sign():
    s = NavierStokes2D(24, 0.0)
    w = torch.cos(s.x) + 4 * torch.cos(2 * s.y)
    torch.testing.assert_close(s.rhs(w), 6 * torch.sin(s.x) * torch.sin(2 * s.y))
    # a non-square box: psi = cos(2 pi x / L) + cos(4 pi y / L)
    L = 3.0
    s2 = NavierStokes2D(24, 0.0, length=L)
    a = 2 * math.pi / L
    w2 = a**2 * torch.cos(a * s2.x) + 4 * a**2 * torch.cos(2 * a * s2.y)
    expected = 6 * a**4 * torch.sin(a * s2.x) * torch.sin(2 * a * s2.y)
    torch.testing.assert_close(s2.rhs(w2), expected)


@pytest.mark.parametrize("forcing", [None, "kolmogorov"])
def test_budgets_hold_exactly(forcing, fresh_seed):
    s = NavierStokes2D(32, 3e-3, forcing=forcing)
    r = budget_rates(s, s.random_field(seed=fresh_seed % 10_000))
    torch.testing.assert_close(r["dE_solver"], r["dE_budget"], rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(r["dZ_solver"], r["dZ_budget"], rtol=1e-9, atol=1e-9)


def test_inviscid_truncated_system_conserves_energy_and_enstrophy():
    s = NavierStokes2D(32, 0.0)
    w0 = s.random_field(seed=3, max_velocity=1.0)
    w = w0
    for _ in range(20):
        w = s.advance(w, 0.05)
    assert (w - w0).abs().max() > 1e-2  # the flow did evolve
    assert abs(float(energy(s, w) / energy(s, w0)) - 1) < 1e-6
    assert abs(float(enstrophy(w) / enstrophy(w0)) - 1) < 1e-6


def test_without_dealiasing_enstrophy_is_not_conserved():
    # the 2/3 rule is what makes the conservation exact
    s = NavierStokes2D(16, 0.0, dealias=False)
    w0 = torch.randn(16, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    r = budget_rates(s, w0)
    assert abs(float(r["dZ_solver"])) > 1e-6


def test_energy_decay_matches_budget_over_time():
    s = NavierStokes2D(32, 5e-3)
    w = s.random_field(seed=2, max_velocity=1.0)
    E0 = float(energy(s, w))
    rates = []
    h = 0.02
    for _ in range(10):
        rates.append(-2 * s.nu * float(enstrophy(w)))
        w = s.advance(w, h)
    # trapezoid-free check: E(T) - E(0) ~ integral of -2 nu Z (left Riemann, Z smooth)
    dE = float(energy(s, w)) - E0
    assert dE < 0 and abs(dE - sum(rates) * h) < 0.05 * abs(dE)


def test_spectrum_parseval_and_forcing_shape():
    s = NavierStokes2D(32, 1e-3)
    w = s.random_field(seed=5)
    torch.testing.assert_close(energy_spectrum(w).sum(), energy(s, w))
    peak = int(energy_spectrum(w).argmax())
    assert 2 <= peak <= 6
    f = kolmogorov_forcing(32)
    assert torch.allclose(f, -4 * torch.cos(4 * s.y))


def test_velocity_is_divergence_free_and_max_speed():
    s = NavierStokes2D(32, 1e-3)
    w = s.random_field(seed=7, max_velocity=2.5)
    u, v = s.velocity(w)
    div = s.to_real(1j * s.kx * torch.fft.rfft2(u) + 1j * s.ky * torch.fft.rfft2(v))
    assert div.abs().max() < 1e-10
    assert abs(float(torch.sqrt(u**2 + v**2).max()) - 2.5) < 1e-9


def test_cfl_substeps_and_forced_run_bounded():
    s = NavierStokes2D(32, 1e-3, forcing="kolmogorov")
    w = s.random_field(seed=0)
    dt = s.stable_dt(w)
    assert dt <= 0.5 * s.dx / 5.0 + 1e-15
    traj = s.rollout(w, 20, 0.05)
    assert traj.shape == (21, 32, 32) and torch.isfinite(traj).all()


def test_bad_inputs():
    with pytest.raises(ValueError, match="n must be an even grid size"):
        NavierStokes2D(33, 1e-3)
    with pytest.raises(ValueError, match="n must be an even grid size"):
        NavierStokes2D(4, 1e-3)
    with pytest.raises(TypeError, match="n must be an int"):
        NavierStokes2D(32.0, 1e-3)
    with pytest.raises(ValueError, match="nu must be"):
        NavierStokes2D(32, -1.0)
    with pytest.raises(ValueError, match="forcing must be"):
        NavierStokes2D(32, 1e-3, forcing="taylor")
    s = NavierStokes2D(16, 1e-3)
    with pytest.raises(ValueError, match="omega must have shape"):
        s.advance(torch.zeros(8, 8), 0.1)
    bad = torch.zeros(16, 16)
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        s.advance(bad, 0.1)
    with pytest.raises(ValueError, match="duration"):
        s.advance(torch.zeros(16, 16), 0.0)


@pytest.mark.parametrize(
    "kwargs,msg",
    [
        (dict(max_velocity=0.0), "max_velocity must be a positive finite number"),
        (dict(max_velocity=-5.0), "max_velocity must be a positive finite number"),
        (dict(max_velocity=float("inf")), "max_velocity must be a positive finite number"),
        (dict(length=0.0), "length must be a positive finite number"),
        (dict(length=-1.0), "length must be a positive finite number"),
        (dict(length=float("nan")), "length must be a positive finite number"),
        (dict(cfl="0.5"), r"cfl must be a number in \(0, 1.5\]"),
        (dict(cfl=None), r"cfl must be a number in \(0, 1.5\]"),
        (dict(cfl=True), r"cfl must be a number in \(0, 1.5\]"),
        (dict(cfl=2.0), r"cfl must be a number in \(0, 1.5\]"),
    ],
)
def test_bad_solver_parameters(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        NavierStokes2D(16, 1e-3, **kwargs)


def test_bad_random_field_speed():
    s = NavierStokes2D(16, 1e-3)
    for v in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="max_velocity must be a positive finite number"):
            s.random_field(seed=0, max_velocity=v)
