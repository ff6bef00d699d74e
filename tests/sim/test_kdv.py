"""Tests for icml26_lit.sim.kdv: exact soliton, conservation laws, RK4 order, rhs, bad input."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.sim.kdv import RK4_IMAG_LIMIT, KdV1D


def test_soliton_translates_exactly():
    # n = 128 on L = 10 pi: k_max = 12.8, so a large step is allowed;
    # c = 2 travels 4 (an eighth of L)
    s = KdV1D(128, dt=1e-3)
    u0 = s.soliton(2.0, 25.0)  # close to the right edge: the soliton wraps around the domain
    u1 = s.advance(u0, 2.0)
    exact = s.soliton(2.0, 25.0 + 2.0 * 2.0)
    assert float((u1 - exact).abs().max()) < 1e-6 * float(exact.max())
    # a wrong speed (or a wrong sign of either term) is far off
    assert float((u1 - s.soliton(2.0, 25.0 + 1.9 * 2.0)).abs().max()) > 0.1


def test_soliton_profile_and_alpha_scaling():
    s = KdV1D(256, alpha=2.0)
    u = s.soliton(4.0, 10.0)
    # (3c/alpha) sech^2(sqrt(c)/2 (x - x0)), plus its two periodic copies at x0 -+ L
    expected = sum(
        6.0 / torch.cosh(math.sqrt(4.0) / 2 * (s.x - 10.0 - m * s.length)) ** 2 for m in (-1, 0, 1)
    )
    torch.testing.assert_close(u, expected, atol=1e-12, rtol=0)
    assert float(u.max()) == pytest.approx(6.0, rel=1e-2)
    # the same soliton is an exact travelling wave: u_t = -c u_x
    torch.testing.assert_close(s.rhs(u), -4.0 * s.derivative(u), atol=1e-7, rtol=0)
    # negative alpha flips the soliton
    torch.testing.assert_close(KdV1D(256, alpha=-2.0).soliton(4.0, 10.0), -u)
    # superposition and periodic wrap of the position
    torch.testing.assert_close(s.solitons([4.0, 1.0], [10.0, 20.0]), u + s.soliton(1.0, 20.0))
    torch.testing.assert_close(s.soliton(4.0, 10.0 + s.length), u)


def test_rhs_matches_independent_numpy_fft(fresh_seed):
    # a random band-limited field (modes up to n/8),
    # u u_x computed in numpy from the full complex FFT
    n, L, alpha = 64, 7.0, 1.3
    s = KdV1D(n, length=L, alpha=alpha)
    rng = np.random.default_rng(fresh_seed)
    coef = np.zeros(n, dtype=complex)
    coef[1 : n // 8] = rng.normal(size=n // 8 - 1) + 1j * rng.normal(size=n // 8 - 1)
    coef[-(n // 8) + 1 :] = np.conj(coef[1 : n // 8][::-1])
    u = np.fft.ifft(coef).real * n
    k = 2 * np.pi * np.fft.fftfreq(n, d=L / n)
    U = np.fft.fft(u)
    ux = np.fft.ifft(1j * k * U).real
    uxxx = np.fft.ifft((1j * k) ** 3 * U).real
    expected = -uxxx - alpha * u * ux
    got = s.rhs(torch.from_numpy(u)).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-9 * np.abs(expected).max())


def test_rhs_closed_form_on_cosine():
    s = KdV1D(32, length=2 * math.pi, alpha=0.5)
    u = 3.0 * torch.cos(2 * s.x)
    # u_t = -u_xxx - alpha u u_x = -3 * 8 sin 2x + 0.5 * 9 * 2 cos 2x sin 2x
    expected = -24.0 * torch.sin(2 * s.x) + 9.0 * torch.cos(2 * s.x) * torch.sin(2 * s.x)
    torch.testing.assert_close(s.rhs(u), expected)
    # batched fields
    torch.testing.assert_close(s.rhs(torch.stack([u, u])), torch.stack([expected, expected]))


def test_energy_derivative_vanishes_and_sign():
    # dH/dt = int (-u_xx - alpha u^2 / 2) u_t dx = 0 for the conserved sign, on a resolved field
    s = KdV1D(256)
    u = s.solitons([4.0, 1.0], [8.0, 14.0])
    ut = s.rhs(u)
    dH = float(((-s.derivative(u, 2) - 0.5 * s.alpha * u**2) * ut).sum() * s.dx)
    dH_wrong = float(((-s.derivative(u, 2) + 0.5 * s.alpha * u**2) * ut).sum() * s.dx)
    scale = float((s.derivative(u, 2).abs() * ut.abs()).sum() * s.dx)
    assert abs(dH) < 1e-8 * scale and abs(dH_wrong) > 1e-2 * scale


def test_conservation_over_a_collision():
    s = KdV1D(128, dt=1e-3)
    u0 = s.solitons([2.0, 0.5], [6.0, 12.0])
    traj = s.rollout(u0, 10, 0.3)
    assert traj.shape == (11, 128)
    for f, tol in ((s.mass, 1e-12), (s.momentum, 1e-8), (s.energy, 1e-8)):
        q = f(traj)
        assert float((q / q[0] - 1).abs().max()) < tol, f.__name__
    # the collision actually happened: the field changed a lot
    assert float((traj[-1] - u0).abs().max()) > 1.0


def test_rk4_fourth_order_in_dt():
    s0 = KdV1D(64, dt=0.004)
    u0 = s0.solitons([1.0, 0.25], [8.0, 18.0])
    ref = KdV1D(64, dt=0.004 / 32).advance(u0, 0.4)
    errs = [float((KdV1D(64, dt=0.004 / m).advance(u0, 0.4) - ref).abs().max()) for m in (1, 2, 4)]
    ratios = [errs[0] / errs[1], errs[1] / errs[2]]
    assert all(13 < r < 19 for r in ratios), (errs, ratios)


def test_stability_limit_and_default_dt():
    s = KdV1D(256)
    assert s.k_max == pytest.approx(25.6)
    assert s.dt * s.k_max**3 == pytest.approx(1.5)
    assert s.dt_max * s.k_max**3 == pytest.approx(RK4_IMAG_LIMIT)
    assert RK4_IMAG_LIMIT < 2 * math.sqrt(2)
    KdV1D(256, dt=0.99 * s.dt_max)
    with pytest.raises(ValueError, match=r"dt=.* is unstable for RK4"):
        KdV1D(256, dt=1.01 * s.dt_max)
    # a tall field makes the nonlinear frequency matter: advance refuses an unstable step
    near = KdV1D(256, dt=0.99 * s.dt_max)
    with pytest.raises(ValueError, match=r"dt=.* is unstable for this field"):
        near.advance(near.soliton(25.0, 10.0), 0.01)


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        (dict(n=255), ValueError, "n must be an even"),
        (dict(n=4), ValueError, "n must be an even"),
        (dict(n=64.0), TypeError, "n must be an int"),
        (dict(length=0.0), ValueError, "length must be a positive"),
        (dict(alpha=float("nan")), ValueError, "alpha must be a finite"),
        (dict(dt=-1e-4), ValueError, "dt must be a positive"),
        (dict(dt=float("inf")), ValueError, "dt must be a positive"),
    ],
)
def test_bad_constructor_arguments(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        KdV1D(**kwargs)


def test_bad_fields_and_arguments():
    s = KdV1D(32, length=2 * math.pi)
    with pytest.raises(ValueError, match=r"u must have shape \(\.\.\., 32\)"):
        s.rhs(torch.zeros(31))
    with pytest.raises(ValueError, match="u contains non-finite values"):
        s.mass(torch.full((32,), float("inf")))
    with pytest.raises(TypeError, match="u must be a torch.Tensor"):
        s.rhs(np.zeros(32))
    with pytest.raises(ValueError, match="u0 contains non-finite values"):
        s.rollout(torch.full((32,), float("nan")), 2, 0.1)
    with pytest.raises(ValueError, match="duration must be a positive"):
        s.advance(torch.zeros(32), 0.0)
    with pytest.raises(ValueError, match="n_steps must be an int >= 0"):
        s.rollout(torch.zeros(32), -1, 0.1)
    with pytest.raises(ValueError, match="velocity must be a positive"):
        s.soliton(-1.0, 0.0)
    with pytest.raises(ValueError, match="position must be a finite"):
        s.soliton(1.0, float("nan"))
    with pytest.raises(
        ValueError, match="velocities and positions must be non-empty and of equal length"
    ):
        s.solitons([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="alpha must be nonzero"):
        KdV1D(32, alpha=0.0).soliton(1.0, 0.0)
