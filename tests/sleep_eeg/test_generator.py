"""Chapter 15 generator: the energy score against scoringrules, decoding, the Laplace control."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.sleep_eeg.generator import (
    LaplaceControl,
    RespirationToEEG,
    energy_score,
    fit_translator,
    generate_tokens,
    respiration_windows,
)

L = 40  # a short window keeps the tests fast


def test_energy_score_matches_scoringrules(fresh_seed):
    sr = pytest.importorskip("scoringrules")
    rng = np.random.default_rng(fresh_seed)
    x, y = rng.normal(size=(5, 7, 12)), rng.normal(size=(7, 12))
    ref = sr.es_ensemble(y, np.moveaxis(x, 0, 1), m_axis=-2, v_axis=-1)  # estimator "nrg"
    got = energy_score(torch.from_numpy(x), torch.from_numpy(y))
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10)  # float64 sums of 25 norms


def test_energy_score_point_forecast_and_bad_input():
    y = torch.randn(3, 4, dtype=torch.float64)
    p = y + torch.tensor([3.0, 4.0, 0.0, 0.0], dtype=torch.float64)
    torch.testing.assert_close(energy_score(p.expand(4, 3, 4), y), torch.full((3,), 5.0).double())
    with pytest.raises(ValueError, match="at least 2 draws"):
        energy_score(torch.randn(1, 3, 4), y)
    with pytest.raises(ValueError, match="y must have shape"):
        energy_score(torch.randn(2, 3, 4), torch.randn(3, 5))


def test_respiration_windows():
    x = torch.randn(2, 4800) * 5 + 3
    w = respiration_windows(x, 10)
    assert w.shape == (2, 2, 2400)
    torch.testing.assert_close(w.mean(-1), torch.zeros(2, 2), atol=1e-5, rtol=0)
    torch.testing.assert_close(w.std(-1), torch.ones(2, 2), atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="fs="):
        respiration_windows(x, 10.003)
    with pytest.raises(ValueError, match="resp must be"):
        respiration_windows(torch.randn(2, 1000), 10)  # shorter than a window
    with pytest.raises(ValueError, match="resp contains NaN"):
        respiration_windows(torch.full((1, 2400), float("nan")), 10)


def test_models_are_seeded_by_their_generator():
    torch.manual_seed(1)
    a = RespirationToEEG(
        8, L, d=16, n_layers=1, n_heads=2, generator=torch.Generator().manual_seed(3)
    )
    torch.manual_seed(2)  # the global RNG must not matter
    b = RespirationToEEG(
        8, L, d=16, n_layers=1, n_heads=2, generator=torch.Generator().manual_seed(3)
    )
    for (k, v), w in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(v, w), k
    assert isinstance(a.backbone.proj, torch.nn.Linear) and a.backbone.proj.in_features == L


def test_decoding_fills_every_position_and_greedy_is_deterministic(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    m = RespirationToEEG(8, L, d=16, n_layers=1, n_heads=2, generator=g).eval()
    w = torch.randn(3, 10, L, generator=g)
    t1 = generate_tokens(m, w, steps=8)
    assert t1.shape == (3, 80) and int(t1.max()) < 8 and int(t1.min()) >= 0  # no [MASK] left
    assert torch.equal(t1, generate_tokens(m, w, steps=8))
    t2 = generate_tokens(m, w, greedy=False, generator=g)
    assert int(t2.max()) < 8


def test_generator_learns_a_breathing_determined_token():
    # the token is 1 when the window's first sample is positive: learnable from the projection
    g = torch.Generator().manual_seed(0)
    w = torch.randn(64, 10, L, generator=g)
    tokens = (w[:, :, 0] > 0).long().repeat_interleave(8, 1)
    m = RespirationToEEG(2, L, d=16, n_layers=1, n_heads=2, generator=g)
    losses = fit_translator(m, w, tokens, steps=150, batch=16, lr=3e-3, generator=g)
    acc = (generate_tokens(m, w) == tokens).float().mean()
    assert losses[-1] < 0.5 * losses[0] and acc > 0.9, (losses[0], losses[-1], float(acc))


def test_laplace_samples_follow_the_law(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    c = LaplaceControl(6, L, d=16, n_layers=1, n_heads=2, generator=g).eval()
    w = torch.randn(1, 10, L, generator=g)
    with torch.no_grad():
        loc, b = c(w)
    x = c.sample(w, 4000, generator=g)  # (4000, 1, 80, 6)
    # Laplace: median = loc, |x - loc| / b ~ Exp(1); its mean over 4000 draws has SE 0.016, and
    # the max over 480 cells stays below ~4 SE: the bound is 9 SE
    dev = (x - loc).abs().mean(0) / b
    assert float((dev - 1).abs().max()) < 6 / math.sqrt(4000) * 1.5, fresh_seed
    assert float(((x.median(0).values - loc) / b).abs().max()) < 0.1, fresh_seed


def test_laplace_sample_is_finite_at_a_zero_uniform(monkeypatch):
    # torch.rand returns exactly 0 about once in 2^24 draws; the inverse CDF must stay finite there
    g = torch.Generator().manual_seed(0)
    c = LaplaceControl(2, L, d=16, n_layers=1, n_heads=2, generator=g).eval()
    w = torch.randn(1, 10, L, generator=g)
    zeros = lambda shape, generator=None, device=None: torch.zeros(shape)  # noqa: E731
    monkeypatch.setattr(torch, "rand", zeros)
    x = c.sample(w, 3)
    assert bool(torch.isfinite(x).all())
    with torch.no_grad():
        loc, b = c(w)
    # the draw lands deep in the lower tail: loc - b log(1 / (2 eps)), eps = 2^-23
    assert torch.allclose(x[0], loc - b * math.log(2.0**22), rtol=1e-5, atol=1e-5)


def test_laplace_nll_is_minimised_at_the_median():
    # a constant target: the fitted location should reach it, the scale shrink
    g = torch.Generator().manual_seed(0)
    c = LaplaceControl(3, L, d=16, n_layers=1, n_heads=2, generator=g)
    w = torch.randn(32, 10, L, generator=g)
    y = torch.full((32, 80, 3), 0.7)
    fit_translator(c, w, y, steps=150, batch=8, lr=3e-3, generator=g)
    with torch.no_grad():
        loc, b = c(w)
    assert float((loc - 0.7).abs().mean()) < 0.05 and float(b.mean()) < 0.1


def test_generator_bad_input():
    m = RespirationToEEG(4, L, d=16, n_layers=1, n_heads=2)
    with pytest.raises(ValueError, match="windows must have shape"):
        m(torch.randn(2, 9, L), torch.zeros(2, 80, dtype=torch.long))
    with pytest.raises(ValueError, match="windows contains NaN"):
        m(torch.full((1, 10, L), float("nan")), torch.zeros(1, 80, dtype=torch.long))
    with pytest.raises(ValueError, match="n_codes"):
        RespirationToEEG(0, L)
    with pytest.raises(ValueError, match="same number of chunks"):
        fit_translator(m, torch.randn(2, 10, L), torch.zeros(3, 80, dtype=torch.long))
    w, t = torch.randn(2, 10, L), torch.zeros(2, 80, dtype=torch.long)
    with pytest.raises(ValueError, match="lr must be"):
        fit_translator(m, w, t, steps=1, lr=float("nan"))
    with pytest.raises(TypeError, match="on_step must be callable"):
        fit_translator(m, w, t, steps=1, on_step=3)


def test_on_step_sees_every_step_and_leaves_the_training_alone():
    w = torch.randn(4, 10, L, generator=torch.Generator().manual_seed(0))
    t = torch.randint(4, (4, 80), generator=torch.Generator().manual_seed(1))
    seen = []

    def look(step, m):
        m.eval()  # an evaluation switches the mode; training resumes in train mode
        seen.append(step)

    a = RespirationToEEG(
        4, L, d=16, n_layers=1, n_heads=2, generator=torch.Generator().manual_seed(2)
    )
    b = RespirationToEEG(
        4, L, d=16, n_layers=1, n_heads=2, generator=torch.Generator().manual_seed(2)
    )
    la = fit_translator(a, w, t, 4, 2, 1e-3, torch.Generator().manual_seed(3))
    lb = fit_translator(
        b, w, t, 4, 2, 1e-3, torch.Generator().manual_seed(3), on_step=lambda s: look(s, b)
    )
    assert seen == [1, 2, 3, 4] and la == lb  # the same losses with and without the hook
