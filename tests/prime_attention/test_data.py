"""Chapter 14: the simulators, the oracle, the windows and the cross-correlation score."""

import math
import socket

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from icml26_lit.prime_attention.data import (
    TRUE_PAIRS,
    daphnet_path,
    lagged_xcorr_scores,
    load_daphnet,
    make_windows,
    simulate_pair_laws,
    simulate_var2,
    split_bounds,
    window_index,
)
from icml26_lit.prime_attention.model import PrimeITransformer


def test_xcorr_peaks_at_lag3_copy_alone(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    x = rng.standard_normal((3000, 4))
    x[3:, 1] = x[:-3, 0] + 0.1 * rng.standard_normal(2997)
    sc = lagged_xcorr_scores(torch.as_tensor(x))
    assert divmod(int(sc.argmax()), 4) == (0, 1) and float(sc[0, 1]) > 0.95
    assert float(sc.diagonal().abs().max()) == 0.0


def test_pair_graph_and_laws():
    x, g = simulate_pair_laws(2000, noise_std=0.0, seed=3)
    assert {tuple(p) for p in torch.nonzero(g).tolist()} == set(TRUE_PAIRS)
    xd = x.double()
    r = xd[7:, 3] / xd[:-7, 2]  # sign-inverted lag-7 copy: a constant negative ratio
    assert float(r.max()) < 0 and float(r.std() / r.abs().mean()) < 1e-5


def _var_case(seed, n=6000, sigma=0.1):
    x, A = simulate_var2(n, noise_std=sigma, seed=seed)
    a, b = split_bounds(n)["test"]
    pred = x[a + 1 : b - 1] @ A[0].T + x[a : b - 2] @ A[1].T  # oracle forecast of x[a + 2 : b]
    err2 = (x[a + 2 : b] - pred).pow(2)
    return x, A, err2


def test_var2_oracle_is_sigma2():
    _, _, err2 = _var_case(0)
    se = float(err2.std() / math.sqrt(err2.numel()))
    assert abs(float(err2.mean()) - 0.01) < 3 * se


def test_statsmodels_var_reaches_oracle():
    from statsmodels.tsa.api import VAR

    x, A, err2 = _var_case(1)
    a, b = split_bounds(len(x))["test"]
    res = VAR(x[: split_bounds(len(x))["train"][1]].numpy()).fit(maxlags=6, ic="aic")
    p = res.k_ar
    xn = x.numpy()
    pred = np.stack([res.forecast(xn[t - p : t], 1)[0] for t in range(a + 2, b)])
    mse = float(((xn[a + 2 : b] - pred) ** 2).mean())
    assert abs(mse / float(err2.mean()) - 1) < 0.02


def test_trained_model_does_not_beat_oracle():
    # leakage check: a standard model trained 150 steps must not beat the true-coefficient predictor
    x, A, _ = _var_case(2, n=4000)
    L = 8
    X, Y = make_windows(x.float(), L, 1, "train")
    Xt, Yt = make_windows(x.float(), L, 1, "test")
    m = PrimeITransformer(6, L, 1, attention="standard", generator=torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(150):
        idx = torch.randint(len(X), (32,), generator=g)
        opt.zero_grad()
        F.mse_loss(m(X[idx]), Y[idx]).backward()
        opt.step()
    with torch.no_grad():
        e_model = (m(Xt) - Yt).pow(2).double().flatten()
    xd = Xt.double()
    oracle = xd[:, -1] @ A[0].T + xd[:, -2] @ A[1].T
    e_oracle = (oracle - Yt[:, 0].double()).pow(2).flatten()
    d = e_model - e_oracle
    se = float(d.std() / math.sqrt(d.numel()))
    assert float(d.mean()) > -2 * se


def test_no_test_input_overlaps_training_target():
    for L, H in ((48, 12), (30, 12), (2, 1)):
        tr = set(window_index(12_000, L, H, "train")[1].flatten().tolist())
        for split in ("val", "test"):
            assert not tr & set(window_index(12_000, L, H, split)[0].flatten().tolist())
    assert len(window_index(12_000, 48, 12, "test")[0]) == 1741


def test_daphnet_opens_no_network(monkeypatch):
    if daphnet_path() is None:
        pytest.skip("aeon is not installed")

    def refuse(*a, **k):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    d = load_daphnet()
    assert d.shape == (7040, 9) and bool(torch.isfinite(d).all())


def test_data_bad_input():
    with pytest.raises(ValueError, match="n_steps must be an integer >= 64"):
        simulate_pair_laws(10)
    with pytest.raises(ValueError, match="n_steps must be an integer >= 64"):
        simulate_var2(5)
    with pytest.raises(ValueError, match="noise_std must be"):
        simulate_pair_laws(100, noise_std=float("nan"))
    x = torch.zeros(500, 3)
    with pytest.raises(ValueError, match="lookback must be an integer >= 2"):
        make_windows(x, 1, 1, "train")
    with pytest.raises(ValueError, match="horizon must be an integer >= 1"):
        make_windows(x, 4, 0, "train")
    with pytest.raises(ValueError, match="too short"):
        make_windows(x, 60, 20, "test")
    x[3, 1] = float("nan")
    with pytest.raises(ValueError, match="x contains NaN"):
        make_windows(x, 4, 1, "train")
    with pytest.raises(ValueError, match="x contains NaN"):
        lagged_xcorr_scores(x)


def test_granger_scores_match_statsmodels(fresh_seed):
    from statsmodels.tsa.stattools import grangercausalitytests

    from icml26_lit.prime_attention.data import granger_scores

    x = np.random.default_rng(fresh_seed).standard_normal((300, 3))
    x[2:, 1] += 0.5 * x[:-2, 0]
    ours = granger_scores(torch.as_tensor(x), max_lag=2, squares=False)
    xn = (x - x.mean(0)) / x.std(0)
    for i, j in ((0, 1), (1, 0), (2, 1)):
        sm = grangercausalitytests(xn[:, [j, i]], maxlag=[2])[2][0]["ssr_ftest"][0]
        assert float(ours[i, j]) == pytest.approx(sm, rel=1e-5)  # float32 of a float64 statistic
    assert float(ours.diagonal().abs().max()) == 0.0


def test_granger_with_squares_sees_the_even_and_modulated_laws():
    from icml26_lit.prime_attention.data import granger_scores

    x, graph = simulate_pair_laws(4000, seed=3)
    lin, sq = granger_scores(x, squares=False), granger_scores(x)
    false = ~graph & ~torch.eye(12, dtype=torch.bool)
    for p in ((4, 5), (8, 9)):  # tanh(x)^2 and x_{t-2} s_t: no linear trace, seen in squares
        assert float(sq[p]) > float(sq[false].max()) > 0
        assert float(lin[p]) < float(sq[p])
    assert bool((sq >= lin).all())  # the larger of the two statistics


def test_granger_bad_input():
    from icml26_lit.prime_attention.data import granger_scores

    with pytest.raises(ValueError, match="max_lag must be a positive integer"):
        granger_scores(torch.zeros(100, 3), max_lag=0)
    with pytest.raises(ValueError, match="needs >= 50"):
        granger_scores(torch.zeros(20, 3))
    with pytest.raises(ValueError, match="N >= 2"):
        granger_scores(torch.zeros(100, 1))
    with pytest.raises(ValueError, match="NaN"):
        granger_scores(torch.full((100, 3), float("nan")))
