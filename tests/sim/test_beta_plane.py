"""Chapter 05 substrate: the beta-plane vorticity solver against exact solutions and invariants."""

import math

import pytest
import torch

from icml26_lit.sim import BetaPlane, NavierStokes2D, rossby_wave


def test_rossby_wave_keeps_the_exact_frequency():
    # a single wave has J(psi, zeta) = 0: exact nonlinear solution with omega = -beta k / |k|^2
    s = BetaPlane(ny=16, nx=32, beta=2.0)
    for m, n in ((1, 1), (2, 1), (3, 2)):
        z0 = rossby_wave(s, m, n, amplitude=1.0)
        zT = s.run(z0, 0.01, 150)[-1]
        exact = rossby_wave(s, m, n, amplitude=1.0, t=1.5)
        # RK4 phase error (omega dt)^5 per step, omega <= 2: ~1e-10 relative; 1e-8 leaves margin
        assert float((zT - exact).abs().max() / exact.abs().max()) < 1e-8
    k = 2 * math.pi / s.lx * 2
    l = 2 * math.pi / s.ly * 1
    # the hand-worked frequency: beta = 2, k = 2, l = 2 -> omega = -2 * 2 / 8 = -0.5 (westward)
    assert math.isclose(-s.beta * k / (k * k + l * l), -0.5)


def test_unforced_inviscid_run_keeps_energy_and_enstrophy():
    s = BetaPlane(ny=16, nx=32, beta=2.0)
    st = s.run(s.random_field(2, torch.Generator().manual_seed(3)), 0.01, 60)
    u, v = s.velocity(st)
    E = 0.5 * (u**2 + v**2).mean(dim=(-2, -1))
    Z = 0.5 * (st[1:] ** 2).mean(dim=(-2, -1))
    # only RK4's O(dt^4) error changes them; over 60 steps drift ~1e-8 .. 1e-6
    assert float((E[-1] / E[1] - 1).abs().max()) < 1e-5
    assert float((Z[-1] / Z[0] - 1).abs().max()) < 1e-4


def test_drag_decays_energy_at_rate_two_mu():
    s = BetaPlane(ny=16, nx=32, beta=1.0, drag=0.1)
    z0 = rossby_wave(s, 1, 1, amplitude=1.0)  # linear dynamics: exact decay exp(-mu t)
    zT = s.run(z0, 0.01, 100)[-1]
    exact = rossby_wave(s, 1, 1, amplitude=math.exp(-0.1), t=1.0)
    assert float((zT - exact).abs().max() / exact.abs().max()) < 1e-8


def test_beta_zero_square_box_is_navier_stokes():
    ns = NavierStokes2D(16, 1e-3, drag=0.05)
    bp = BetaPlane(16, 16, 2 * math.pi, beta=0.0, nu=1e-3, drag=0.05)
    w = ns.random_field(0, max_velocity=1.0)
    ref = w.clone()
    for _ in range(10):
        ref = ns.step(ref, 0.02)
    out = bp.run(w[None], 0.02, 10)[-1, 0]
    # same sign conventions and dealiasing: agreement to fp64 FFT rounding (~1e-15)
    torch.testing.assert_close(out, ref, rtol=1e-11, atol=1e-11)


def test_random_field_rms_velocity_and_generator():
    s = BetaPlane()
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    a, b = s.random_field(3, g1), s.random_field(3, g2)
    assert torch.equal(a, b)
    u, v = s.velocity(a)
    torch.testing.assert_close(
        (u**2 + v**2).mean(dim=(-2, -1)).sqrt(),
        torch.ones(3, dtype=torch.float64),
        rtol=1e-12,
        atol=0,
    )
    assert s.run(a, 0.02, 10, save_every=5).shape == (3, 3, 32, 64)


def test_bad_input():
    with pytest.raises(ValueError, match="ny must be an even"):
        BetaPlane(ny=31)
    with pytest.raises(ValueError, match="nx must be an even"):
        BetaPlane(nx=63)
    with pytest.raises(ValueError, match="nu must be >= 0"):
        BetaPlane(nu=-1.0)
    s = BetaPlane(ny=8, nx=8)
    with pytest.raises(ValueError, match="zeta0 contains NaN"):
        s.run(torch.full((1, 8, 8), float("nan"), dtype=torch.float64), 0.1, 1)
    with pytest.raises(ValueError, match="zeta0 must have shape"):
        s.run(torch.zeros(1, 8, 6, dtype=torch.float64), 0.1, 1)
    with pytest.raises(ValueError, match="dt must be > 0"):
        s.run(torch.zeros(1, 8, 8, dtype=torch.float64), 0.0, 1)
    with pytest.raises(TypeError, match="generator must be"):
        s.random_field(1, 0)
