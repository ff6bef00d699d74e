"Chapter 12: the experiment helpers at tiny sizes."

import numpy as np
import pytest

from icml26_lit.core import Config
from icml26_lit.ftrl.experiments import (
    CONFIG,
    loglog_slope,
    prefix_totals,
    river_predictions,
    run_linear,
    smoke_step,
    stream_batch,
    window_ridge_predictions,
)


def test_loglog_slope_exact():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert abs(loglog_slope(x, 3 * x**0.75) - 0.75) < 1e-12


def test_prefix_streams_have_the_requested_path():
    X, Y, U, meta = stream_batch([100, 400], [2.0, 4.0], 2, 3, 400)
    from icml26_lit.ftrl.regret import path_length

    for b, (T, P, _) in enumerate(meta):
        assert abs(path_length(U[b, :T]) - P) < 1e-3
    tot = prefix_totals(np.ones((4, 400)), meta)
    np.testing.assert_array_equal(tot, [100, 100, 400, 400])


def test_river_is_online_gradient_descent():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(50, 3)), rng.normal(size=50)
    p = river_predictions(X, Y, lr=0.05)
    w, ref = np.zeros(3), []
    for t in range(50):
        ref.append(X[t] @ w)
        # river's squared loss (y - y_hat)^2: gradient 2 (y_hat - y) x
        w -= 0.05 * 2 * (X[t] @ w - Y[t]) * X[t]
    np.testing.assert_allclose(p, ref, rtol=1e-6, atol=1e-9)


def test_window_ridge_uses_only_the_past():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(60, 2)), rng.normal(size=60)
    p1 = window_ridge_predictions(X, Y, 20, 10)
    Y2 = Y.copy()
    Y2[40:] += 100
    p2 = window_ridge_predictions(X, Y2, 20, 10)
    np.testing.assert_array_equal(p1[:41], p2[:41])


def test_run_linear_tiny():
    cfg = Config(CONFIG.get("ci"))
    cfg.update(T_max=256, n_T=3, n_seeds=2, P_sweep=[1.0, 2.0])
    res = run_linear(cfg, baselines=False)
    assert res["experts"].shape == (3 * 2 + 2 * 2, len(res["grid"]))
    assert np.all(res["ensemble"] > 0)


@pytest.mark.parametrize("scale", ["ci", "colab", "full"])
def test_smoke(scale):
    smoke_step(CONFIG.smoke(scale))


def test_eta_sweep_and_logistic_top_only_reuse_the_same_streams():
    cfg = Config(CONFIG.get("ci"))
    cfg.update(
        T_max=128, n_T=2, n_seeds=2, P_sweep=[1.0], eta_sweep=[0.125, 0.5], log_T_max=64, log_n_T=2
    )
    lin = run_linear(cfg, baselines=False)
    top = np.asarray(lin["ensemble"])[2:4]  # the T_max rung, both seeds
    # eta = ewa_eta in the sweep must reproduce the main ensemble exactly (same streams)
    np.testing.assert_allclose(lin["eta_sweep"][0.125], top, rtol=1e-12)
    from icml26_lit.ftrl.experiments import run_logistic

    full = run_logistic(cfg)
    part = run_logistic(cfg, top_only=True)
    np.testing.assert_allclose(part["ensemble"], np.asarray(full["ensemble"])[2:], rtol=1e-12)
    assert run_logistic(cfg, curvature=0.01, top_only=True)["curvature"] == 0.01


def test_discounting_beats_static_learners_under_drift():
    # the behaviour the reduction is built on, checked here rather than scored: against a
    # rotating comparator the static learners (gamma = 1) fall behind, the ensembles do not,
    # and every learner beats predicting 0
    from icml26_lit.ftrl.experiments import run_logistic

    cfg = Config(CONFIG.get("ci"))
    cfg.update(T_max=4000, n_T=1, n_seeds=2, P_sweep=[], log_T_max=2000, log_n_T=1)
    lin = run_linear(cfg, baselines=False)
    static, ens, zero = lin["experts"][:, -1], lin["ensemble"], lin["zero"]
    assert np.all(ens < 0.5 * static) and np.all(ens < zero)
    logi = run_logistic(cfg)
    assert np.all(logi["ensemble"] < 0.5 * logi["experts"][:, -1])


def test_tuned_river_step_and_the_headline_row(tmp_path, monkeypatch):
    from icml26_lit.ftrl.experiments import record_claims, run_experiment, tune_river_lr

    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    cfg = Config(CONFIG.get("ci"))
    cfg.update(T_max=256, n_T=2, n_seeds=2, P_sweep=[1.0], ridge_every=16, log_T_max=64)
    cfg.update(log_n_T=2, adam_steps=2, n_probe=2, betas=[[0.9, 0.999], [0.99, 0.9]])
    lr, regret = tune_river_lr(cfg)
    assert lr in cfg.river_lr_grid and regret[lr] == min(regret.values())
    res = run_experiment(cfg, 0, "cpu")
    assert res["river_pilot"]["lr"] == lr
    rows = record_claims(res, cfg, "ci")
    assert [c.headline for c in rows] == [True] + [False] * 4
    assert all(c.floor is not None for c in rows)
    clipped = [r for k, rs in res["adam"].items() if k[2] == "o2nc_clip" for r in rs]
    assert all(0.0 <= r["clipped_share"] <= 1.0 for r in clipped)


@pytest.mark.parametrize("kind", ["adam", "o2nc_clip", "o2nc_free"])
def test_adam_runs_neither_read_nor_move_the_global_rng(kind):
    import torch

    from icml26_lit.ftrl.experiments import run_adam_one

    cfg = Config(CONFIG.get("ci"))
    cfg.update(adam_steps=5, n_probe=2)
    runs = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        np.random.seed(global_seed)
        before, np_before = torch.get_rng_state(), np.random.get_state()[1].copy()
        runs.append(run_adam_one(cfg, kind, (0.9, 0.999), seed=3))
        assert torch.equal(torch.get_rng_state(), before)
        assert np.array_equal(np.random.get_state()[1], np_before)
    a, b = runs
    assert a["losses"] == b["losses"] and a["loss"] == b["loss"] and a["proxy"] == b["proxy"]
