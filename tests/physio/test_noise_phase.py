"""Physio substrate: coloured noise and phase integration against closed forms."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.physio import ar1_noise, beat_times, integrate_phase, pink_noise


def test_pink_noise_slope_and_moments(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = pink_noise((64, 4096), alpha=1.0, generator=g)
    assert x.shape == (64, 4096) and x.dtype == torch.float64
    # unit variance and zero mean per row by construction (exact up to rounding)
    torch.testing.assert_close(x.std(-1), torch.ones(64, dtype=torch.float64))
    torch.testing.assert_close(x.mean(-1), torch.zeros(64, dtype=torch.float64), atol=1e-12, rtol=0)
    # the log-log slope of the averaged periodogram is -alpha; 64 rows x ~2000 bins: the
    # fitted slope's sampling spread is ~0.01, so 0.1 is a >5-sigma band
    p = (torch.fft.rfft(x, dim=-1).abs() ** 2).mean(0)[1:].numpy()
    f = np.arange(1, len(p) + 1)
    slope = np.polyfit(np.log(f), np.log(p), 1)[0]
    assert abs(slope + 1.0) < 0.1, (slope, fresh_seed)


def test_pink_noise_white_at_alpha_zero(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = pink_noise((32, 2048), alpha=0.0, generator=g)
    r1 = (x[:, 1:] * x[:, :-1]).mean()  # lag-1 correlation of white noise: ~N(0, 1/sqrt(65k))
    assert abs(float(r1)) < 0.02, fresh_seed


def test_ar1_autocorrelation_and_variance(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    x = ar1_noise((16, 20000), phi=0.8, sigma=2.0, generator=g)
    # stationary: var = sigma^2, corr(lag k) = phi^k; 320k samples with correlation time ~9:
    # standard errors ~0.01 (var/4) and ~0.005 (corr), bands are > 5 sigma
    assert abs(float(x.var()) / 4.0 - 1.0) < 0.06, fresh_seed
    for k in (1, 2, 5):
        c = float((x[:, k:] * x[:, :-k]).mean() / x.var())
        assert abs(c - 0.8**k) < 0.03, (k, c, fresh_seed)


def test_noise_is_seeded():
    a = ar1_noise(50, 0.5, generator=torch.Generator().manual_seed(3))
    b = ar1_noise(50, 0.5, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_noise_bad_input():
    with pytest.raises(ValueError, match="shape"):
        pink_noise((0, 5))
    with pytest.raises(ValueError, match="alpha"):
        pink_noise(10, alpha=-1)
    with pytest.raises(ValueError, match="shape's last axis"):
        pink_noise((3, 1))
    with pytest.raises(ValueError, match="phi"):
        ar1_noise(10, phi=1.0)
    with pytest.raises(ValueError, match="sigma"):
        ar1_noise(10, phi=0.1, sigma=-1)


def test_integrate_phase_constant_rate():
    # phi_n = 2 pi f n / fs exactly; beats every 1/f s
    ph = integrate_phase(torch.full((1000,), 1.25), 100.0)
    torch.testing.assert_close(ph, 2 * math.pi * 1.25 * torch.arange(1000.0).double() / 100.0)
    bt = beat_times(ph, 100.0)
    torch.testing.assert_close(bt, torch.arange(1, 13).double() * 0.8, atol=1e-9, rtol=0)


def test_integrate_phase_linear_chirp():
    # f(t) = 1 + t: phi(t) = 2 pi (t + t^2 / 2); the left Riemann sum errs by pi t / fs
    fs, n = 1000.0, 5000
    t = torch.arange(n).double() / fs
    ph = integrate_phase(1 + t, fs)
    exact = 2 * math.pi * (t + t**2 / 2)
    assert float((ph - exact).abs().max()) <= math.pi * 5.0 / fs + 1e-9


def test_integrate_phase_batched_and_bad_input():
    r = torch.rand(3, 7).double()
    ph = integrate_phase(r, 10.0)
    for i in range(3):
        torch.testing.assert_close(ph[i], integrate_phase(r[i], 10.0))
    with pytest.raises(ValueError, match="rate_hz"):
        integrate_phase(torch.tensor([1.0, -1.0]), 10.0)
    with pytest.raises(ValueError, match="rate_hz"):
        integrate_phase(torch.zeros(0), 10.0)
    with pytest.raises(ValueError, match="fs"):
        integrate_phase(torch.ones(4), 0.0)
