"""The simulator's fast paths give every bit of their dense definitions.

`wave_course` sums each beat's wave only inside a window outside which the term is exactly 0.0 in
float64, and `rasterise_ecg` draws the twelve panels in one array operation. Both must equal the
plain formulas below bit for bit (`np.array_equal`, no tolerance): the same float64 operations in
the same order, with only exact zeros skipped.
"""

import numpy as np
import pytest
import torch

from icml26_lit.physio import LAYOUT, LEADS, rasterise_ecg, simulate_record
from icml26_lit.physio.ecg import wave_course


def dense_course(t, onsets, wave):
    "Every beat at every sample, summed over beats (the definition)."
    kind, tau, width, amp, _ = wave
    x = t[None, :] - onsets[:, None]
    if kind == "g":
        y = np.exp(-0.5 * ((x - tau) / width) ** 2)
    else:
        y = 1 / (1 + np.exp(-np.clip((x - tau) / 0.004, -50, 50)))
        y = y - 1 / (1 + np.exp(-np.clip((x - width) / 0.004, -50, 50)))
    return amp * y.sum(0)


def dense_image(signal, height, width, noise_rng):
    "One panel at a time (the definition), then the grid and the pixel noise."
    x = signal.double().numpy()
    n, ph, pw = x.shape[1], height // 3, width // 4
    rows = np.arange(ph)[:, None] + 0.5
    img = np.zeros((height, width))
    for r, names in enumerate(LAYOUT):
        for c, name in enumerate(names):
            tq = c * n / 4 + (np.arange(pw) + 0.5) * (n / 4) / pw
            y = np.interp(tq, np.arange(n), x[LEADS.index(name)])
            y = np.clip(ph / 2 - y * ph / 3, 0, ph - 1)
            prev = np.r_[y[:1], y[:-1]]
            lo, hi = np.minimum(y, prev) - 0.5, np.maximum(y, prev) + 0.5
            d = np.maximum(np.maximum(lo[None] - rows, rows - hi[None]), 0.0)
            img[r * ph : (r + 1) * ph, c * pw : (c + 1) * pw] = np.clip(1 - d, 0, 1)
    gy = (np.arange(height) % ph) % max(1, ph // 6) == 0
    gx = np.arange(width) % max(1, int(round(pw / 12.5))) == 0
    img = np.maximum(img, 0.15 * (gy[:, None] | gx[None, :]))
    return np.clip(img + noise_rng.normal(0, 0.05, img.shape), 0, 1)


@pytest.mark.parametrize("seed", range(20))
def test_wave_course_is_the_dense_sum(seed):
    rng = np.random.default_rng(seed)
    fs = rng.choice([50.0, 100.0, 500.0])
    t = np.arange(int(10 * fs)) / fs - rng.uniform(0, 0.5)
    onsets = np.sort(rng.uniform(-2.0, 11.0, rng.integers(1, 30)))  # beats off both ends too
    waves = [
        ("g", rng.uniform(-0.2, 0.5), rng.uniform(0.003, 0.12), rng.normal(), None),
        ("box", rng.uniform(0.0, 0.1), rng.uniform(0.15, 0.4), rng.normal(), None),
    ]
    for w in waves:
        assert np.array_equal(wave_course(t, onsets, w), dense_course(t, onsets, w)), (seed, w)


def test_wave_course_edge_cases():
    t = np.arange(100) / 100
    w = ("g", 0.0, 0.01, 1.0, None)
    assert np.array_equal(wave_course(t, np.array([50.0]), w), np.zeros(100))  # window misses t
    assert np.array_equal(wave_course(t, np.zeros(0), w), np.zeros(100))  # no beats
    with pytest.raises(ValueError, match="t must be strictly increasing"):
        wave_course(t[::-1], np.array([0.5]), w)


@pytest.mark.parametrize("size", [(48, 192), (12, 16), (36, 64), (60, 200)])
def test_rasterise_is_the_panel_loop(size):
    rec = simulate_record(["AF", "LBBB"], rng=3)
    got = rasterise_ecg(rec["signal"], 100.0, *size, rng=np.random.default_rng(7))
    want = dense_image(rec["signal"], *size, np.random.default_rng(7))
    assert torch.equal(got, torch.from_numpy(want).float())
