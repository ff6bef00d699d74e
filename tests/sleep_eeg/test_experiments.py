"""The experiments helpers: one tiny seed, the calibration pick, the scores, the cost projection."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.sleep_eeg import experiments as X


def _tiny(**kw):
    c = X.CONFIG.get("ci")
    small = dict(n_translator=4, n_labelled=3, n_test=3, hours=2 / 3, tok_steps=5, steps=3)
    small["net_steps"] = 3
    return type(c)(dict(c, **small, k_sweep=(16,), **kw))


def test_run_seed_returns_every_number_and_a_seed_fixes_them():
    cfg = _tiny()
    r = X.run_seed(cfg, 0)
    keys = ("es_token", "es_laplace", "mae_greedy", "mae_laplace", "mae_oracle")
    keys += ("acc_real", "acc_synth", "acc_breath", "acc_breath_features", "majority")
    for k in keys:
        assert np.isfinite(r[k]), k
    for k in ("acc_real", "acc_synth", "acc_breath", "majority"):
        assert 0 <= r[k] <= 1, k
    assert r["es_token"] > 0 and r["es_laplace"] > 0 and 0 < r["mae_oracle"] < 1
    assert set(r["k_sweep"]) == {64, 16} and r["k_sweep"][64]["mae"] == r["mae_greedy"]
    assert 1 <= r["k_sweep"][16]["codes_used"] <= 16
    assert [s for s, _ in r["curve_synth"]] == [1, 2, 3]  # staging along the translator's steps
    assert [s for s, _ in r["curve_breath"]] == [1, 2, 3]  # and along the network's
    again = X.run_seed(cfg, 0)
    assert (again["es_token"], again["es_laplace"]) == (r["es_token"], r["es_laplace"])
    assert (again["acc_synth"], again["acc_breath"]) == (r["acc_synth"], r["acc_breath"])


def test_calibrate_picks_the_coupling_nearest_the_band_middle(monkeypatch):
    acc = {0.2: 0.52, 0.3: 0.60, 0.4: 0.66, 0.5: 0.75}
    monkeypatch.setattr(X, "seed_data", lambda cfg, seed, coupling=None: dict(c=coupling))
    monkeypatch.setattr(
        X, "stagers", lambda d: dict(acc_real=0.86, acc_breath_features=acc[d["c"]], majority=0.5)
    )
    cfg = X.CONFIG.get("ci")
    assert cfg.coupling_grid == (0.2, 0.3, 0.4, 0.5) and cfg.breath_band == (0.55, 0.70)
    cal = X.calibrate(cfg)
    assert cal["coupling"] == 0.3  # |0.60 - 0.625| = 0.025 beats |0.66 - 0.625| = 0.035
    assert [t["coupling"] for t in cal["tried"]] == [0.2, 0.3, 0.4, 0.5]
    acc.update({c: 0.9 for c in acc})
    with pytest.warns(UserWarning, match="no coupling"):
        X.calibrate(cfg)


def test_scores_of_a_constant_forecast_match_closed_forms():
    cfg = _tiny()
    g = torch.Generator().manual_seed(0)
    y = torch.randn(9, 80, 5, 32, generator=g)  # 3 nights of 3 chunks
    c = torch.full_like(y, 0.3)
    s = X.scores(cfg, dict(point=c, draws=c.expand(4, *c.shape)), y)
    nights = y.reshape(3, -1)
    mae = ((nights - 0.3).abs().mean(1) / (nights.amax(1) - nights.amin(1))).mean()
    # identical draws: no spread term, the energy score is the L2 error per epoch
    es = (y.reshape(-1, 160) - 0.3).norm(dim=-1).mean()
    assert math.isclose(s["mae"], float(mae), rel_tol=1e-6)  # float32 sums
    assert math.isclose(s["es"], float(es), rel_tol=1e-6)


def test_projection_counts_every_piece():
    cfg = X.CONFIG.get("cpu")
    t = dict(sim=0.2, stager=0.1, laplace=0.02, token=0.03, tok=0.005, forward=0.01, overhead=7)
    t["net"] = 0.004
    n_subj = 64 + 12 + 12
    decode = (5 + 10) * 8 * 0.01  # 1 greedy + 4 draws, and the 10 points of the staging curve
    net = 10 * 150 * 0.004  # 3 learning rates x 3 folds, then the refit
    per_seed = n_subj * 0.2 + 24 * 0.1 + 600 * 0.02 + net + (600 * 0.005 + 600 * 0.03 + decode)
    assert math.isclose(X.projected_seconds(cfg, t), 5 * per_seed + 7)


def test_presets_carry_the_fallbacks_and_the_pilot_grid():
    ci, cpu = X.CONFIG.get("ci"), X.CONFIG.get("cpu")
    assert (ci.steps, ci.n_translator, ci.n_seeds) == (150, 16, 2)
    assert (cpu.steps, cpu.n_translator, cpu.n_seeds) == (600, 64, 5) and cpu.run_pilot
    colab = X.CONFIG.get("colab")
    assert colab.steps == 2000 and colab.steps != cpu.steps  # set for colab, not inherited
    assert cpu.net_lrs == ci.net_lrs and len(ci.net_lrs) == 3  # the stagers' C grid has three
    assert ci.lr_token in ci.lr_grid and ci.lr_laplace in ci.lr_grid
    assert ci.coupling in ci.coupling_grid and not ci.run_pilot
