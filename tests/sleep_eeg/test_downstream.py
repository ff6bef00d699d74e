"""Chapter 15 downstream stagers: chance under permuted labels, features, bad input."""

import numpy as np
import pytest
import torch

from icml26_lit.sleep_eeg.downstream import (
    BreathingNet,
    breathing_windows,
    context_features,
    eeg_features,
    fit_breathing_net,
    fit_stager,
    net_accuracy,
    respiration_features,
    stage_accuracy,
)
from icml26_lit.sleep_eeg.simulator import simulate_cohort


def test_permuted_labels_give_chance(fresh_seed):
    c = simulate_cohort(8, 1.0, seed=fresh_seed)
    x = respiration_features(c.resp, c.fs_resp)
    rng = np.random.default_rng(fresh_seed)
    y = c.stages.copy()
    y_perm = rng.permuted(y[:5].ravel()).reshape(5, -1)  # labels carry no information
    model, _ = fit_stager(x[:5], y_perm)
    pred = model.predict(x[5:].reshape(-1, x.shape[-1]))
    acc = float(stage_accuracy(model, x[5:], y[5:]).mean())
    # predictions independent of the labels: chance = sum_k P(pred = k) P(y = k)
    q = np.bincount(pred, minlength=5) / len(pred)
    p = np.bincount(y[5:].ravel(), minlength=5) / y[5:].size
    chance = float(q @ p)
    # stages persist for ~10 epochs, so blocks of 10 epochs, not epochs, are the independent units
    se = np.sqrt(chance * (1 - chance) / (y[5:].size / 10))
    assert abs(acc - chance) < 3 * se, (acc, chance, se, fresh_seed)


def test_context_features():
    x = np.arange(2 * 4 * 1, dtype=float).reshape(2, 4, 1)
    c = context_features(x, 1)
    assert c.shape == (2, 4, 3)
    np.testing.assert_array_equal(c[0, :, 1], x[0, :, 0])  # the centre is the epoch itself
    np.testing.assert_array_equal(c[0, :, 0], [0, 0, 1, 2])  # previous epoch, edge repeated
    np.testing.assert_array_equal(c[0, :, 2], [1, 2, 3, 3])


def test_respiration_rate_feature_tracks_the_true_rate():
    c = simulate_cohort(4, 1.0, seed=3)
    f = respiration_features(c.resp, c.fs_resp)
    true = np.asarray(c.rate).reshape(4, 120, -1).mean(-1)
    z = (true - true.mean(1, keepdims=True)) / true.std(1, keepdims=True)
    assert np.corrcoef(f[:, :, 8].ravel(), z.ravel())[0, 1] > 0.6  # feature 0 at offset 0


def test_downstream_bad_input():
    with pytest.raises(ValueError, match="fs"):
        respiration_features(torch.randn(2, 600), 7.33)  # a rate not dividing the epoch
    with pytest.raises(ValueError, match="resp must be"):
        respiration_features(torch.randn(2, 100), 10)  # shorter than an epoch
    with pytest.raises(ValueError, match="resp contains NaN"):
        respiration_features(torch.full((1, 300), float("nan")), 10)
    with pytest.raises(ValueError, match="spec must be"):
        eeg_features(torch.randn(2, 3, 4, 32))
    with pytest.raises(ValueError, match="k must be"):
        context_features(np.zeros((1, 2, 3)), -1)
    with pytest.raises(ValueError, match="n_folds"):
        fit_stager(np.zeros((2, 5, 3)), np.zeros((2, 5), int))


def test_breathing_windows_carry_the_neighbours_and_ignore_the_gain():
    r = torch.randn(2, 3000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = breathing_windows(r, 10.0)  # 10 epochs of 30 s, 60 samples each at 2 Hz
    assert x.shape == (2, 10, 300)
    torch.testing.assert_close(x[:, 2:, :60], x[:, :-2, 120:180])  # epoch e-2 sits first
    torch.testing.assert_close(x[:, :, 120:180].reshape(2, -1), x[:, :, 120:180].reshape(2, -1))
    # z-scored per night: a belt's gain and offset do not change the input (float32 rounding)
    torch.testing.assert_close(breathing_windows(5 * r + 3, 10.0), x, rtol=1e-5, atol=1e-5)
    block = r.reshape(2, -1, 5).mean(-1)
    z = (block - r.mean(1, keepdim=True)) / r.std(1, keepdim=True)
    torch.testing.assert_close(x[:, 3, 120:180], z[:, 180:240].float())


def test_breathing_net_learns_a_planted_stage_and_is_seeded():
    c = simulate_cohort(6, 1.0, seed=3, coupling=1.0)
    x = breathing_windows(c.resp, c.fs_resp)
    state = torch.random.get_rng_state()
    net, lr, losses, curve = fit_breathing_net(x[:4], c.stages[:4], steps=60, batch=32, seed=1)
    assert torch.equal(torch.random.get_rng_state(), state)  # the global RNG is untouched
    assert lr in (3e-4, 1e-3, 3e-3) and len(losses) == 60 and curve == []
    again, *_ = fit_breathing_net(x[:4], c.stages[:4], steps=60, batch=32, seed=1)
    assert torch.equal(net(x[4]), again(x[4]))  # a seed fixes the network
    acc = net_accuracy(net, x[4:], c.stages[4:])
    assert acc.shape == (2,) and ((0 <= acc) & (acc <= 1)).all()


def test_breathing_net_bad_input():
    x, y = torch.zeros(3, 4, 300), np.zeros((3, 4), int)
    with pytest.raises(ValueError, match="x .S, E, L. and y"):
        fit_breathing_net(x, y[:, :2])
    with pytest.raises(ValueError, match="lrs must be"):
        fit_breathing_net(x, y, lrs=(0.0,))
    with pytest.raises(ValueError, match="steps must be"):
        fit_breathing_net(x, y, steps=0)
    with pytest.raises(ValueError, match="n_folds"):
        fit_breathing_net(x[:2], y[:2])
    with pytest.raises(ValueError, match="rate must divide"):
        breathing_windows(torch.randn(1, 600), 10.0, rate=3.0)
    with pytest.raises(ValueError, match="context must be"):
        breathing_windows(torch.randn(1, 600), 10.0, context=-1)
    with pytest.raises(ValueError, match="x must be"):
        BreathingNet()(torch.zeros(2, 301))
