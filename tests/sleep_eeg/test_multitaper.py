"""Chapter 15 multitaper: tapers against scipy, the PSD against closed forms and against MNE."""

import numpy as np
import pytest
import torch
from scipy.signal.windows import dpss

from icml26_lit.sleep_eeg import dpss_tapers, epoch_spectrogram, multitaper_psd, normalise_nights


@pytest.mark.parametrize("n,nw,k", [(384, 3.0, 5), (257, 2.5, 4), (1000, 4.0, 7)])
def test_tapers_match_scipy(n, nw, k):
    h, lam = dpss_tapers(n, nw, k, return_ratios=True)
    ref, ref_lam = dpss(n, nw, k, sym=False, return_ratios=True)
    # up to sign; eigenvector rounding ~1e-12, the eigen solvers differ: 1e-8 is ample
    sign = np.sign((h.numpy() * ref).sum(1, keepdims=True))
    np.testing.assert_allclose(h.numpy(), sign * ref, atol=1e-8)
    np.testing.assert_allclose(lam.numpy(), ref_lam, rtol=1e-9)


def test_psd_white_noise_and_sinusoid(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    fs, n, sigma = 64.0, 384, 1.7
    _, p = multitaper_psd(sigma * torch.randn(3000, n, generator=g, dtype=torch.float64), fs)
    # mean over 3000 x 190 bins of a chi^2_10-like estimate: relative SE ~ 0.5%, 3% is > 5 SE
    level = float(p[:, 1:-1].mean())
    assert abs(level / (2 * sigma**2 / fs) - 1) < 0.03, (level, fresh_seed)
    rng = np.random.default_rng(fresh_seed)
    a, f0, ph = 0.5 + 3 * rng.random(), 5 + 20 * rng.random(), 6.3 * rng.random()
    t = torch.arange(n, dtype=torch.float64) / fs
    f, p = multitaper_psd(a * torch.sin(2 * np.pi * f0 * t + ph), fs)
    power = float(p[(f > f0 - 2) & (f < f0 + 2)].sum() * fs / n)
    # NW = 3: the leakage outside +-2 Hz is < 1e-3 of the power; 3% covers the window's ripple
    assert abs(power / (a**2 / 2) - 1) < 0.03, (a, f0, power, fresh_seed)


@pytest.mark.parametrize("n", [384, 385, 1920])
def test_psd_matches_mne(n, fresh_seed):
    mne_tf = pytest.importorskip("mne.time_frequency")
    rng = np.random.default_rng(fresh_seed)
    fs, nw = 64.0, 3.0
    x = rng.standard_normal((6, n)).cumsum(1) * 0.1 + rng.standard_normal((6, n))
    ref, freqs = mne_tf.psd_array_multitaper(
        x,
        fs,
        bandwidth=2 * nw * fs / n,
        adaptive=False,
        normalization="full",
        remove_dc=False,
        verbose=False,
    )
    f, p = multitaper_psd(torch.from_numpy(x), fs, nw, 5)
    np.testing.assert_allclose(f.numpy(), freqs)
    # MNE keeps tapers with concentration > 0.9 (five at NW = 3), the same periodic tapers and
    # weights: the two differ by float64 FFT rounding; rtol 1e-6 (the issue asks 1e-3) off DC
    # and Nyquist, where MNE's default remove_dc would differ (off here) and the halving applies
    np.testing.assert_allclose(p.numpy()[:, 1:-1], ref[:, 1:-1], rtol=1e-6)


def test_epoch_spectrogram_shape_and_bands():
    fs = 64
    t = torch.arange(1920, dtype=torch.float64) / fs
    x = torch.stack([torch.sin(2 * np.pi * 10.2 * t), torch.sin(2 * np.pi * 20.3 * t)])
    s = epoch_spectrogram(x, fs)
    assert s.shape == (2, 5, 32) and s.dtype == torch.float32
    # 32 equal bands over [0.5, 32]: 10.2 Hz in band 9, 20.3 Hz in band 20
    width = 31.5 / 32
    assert int(s[0].mean(0).argmax()) == int((10.2 - 0.5) // width)
    assert int(s[1].mean(0).argmax()) == int((20.3 - 0.5) // width)
    # chunking does not change the result
    y = torch.randn(7, 1920, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(epoch_spectrogram(y, fs, chunk=2), epoch_spectrogram(y, fs))


def test_multitaper_bad_input():
    with pytest.raises(ValueError, match="n_tapers"):
        dpss_tapers(100, 3.0, 6)
    with pytest.raises(ValueError, match="nw"):
        dpss_tapers(10, 6.0, 1)
    with pytest.raises(ValueError, match="x contains NaN"):
        multitaper_psd(torch.tensor([1.0, float("nan"), 2.0]), 10.0)
    with pytest.raises(ValueError, match="fs"):
        multitaper_psd(torch.randn(10), -1.0)
    with pytest.raises(ValueError, match="one 30-s epoch"):
        epoch_spectrogram(torch.randn(3, 1000), 64)  # shorter than an epoch
    with pytest.raises(ValueError, match="fs="):
        epoch_spectrogram(torch.randn(3, 1920), 64.3)  # a rate that does not divide the epoch
    with pytest.raises(ValueError, match="eeg contains NaN"):
        epoch_spectrogram(torch.full((1, 1920), float("nan")), 64)
    with pytest.raises(ValueError, match="spec"):
        normalise_nights(torch.randn(2, 1, 5, 32))
