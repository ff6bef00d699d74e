"""Chapter 15 downstream stagers: chance under permuted labels, features, bad input."""

import numpy as np
import pytest
import torch

from icml26_lit.sleep_eeg.downstream import (
    context_features,
    eeg_features,
    fit_stager,
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
