"Chapter 12: discounted VAW, Sherman-Morrison, the ensemble and the drifting streams."

import math

import numpy as np
import pytest

from icml26_lit.ftrl.linear import (
    DiscountedVAW,
    DiscountEnsemble,
    drifting_comparator,
    drifting_linear_stream,
    dvaw_predictions,
    ewa_mixture,
    linear_pseudo_regret,
    sherman_morrison,
)
from icml26_lit.ftrl.regret import path_length


def test_discount_one_equals_closed_form_vaw(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    T, d, eps = 40, 5, 0.7
    X, Y = rng.normal(size=(T, d)), rng.normal(size=T)
    vaw = DiscountedVAW(d, 1.0, eps)
    for t in range(T):
        A = eps * np.eye(d) + X[: t + 1].T @ X[: t + 1]
        direct = X[t] @ np.linalg.solve(A, X[:t].T @ Y[:t])
        assert math.isclose(vaw.predict(X[t]), direct, rel_tol=1e-8, abs_tol=1e-10)
        vaw.update(X[t], Y[t])


def test_discounted_vaw_is_the_ftrl_argmin(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    T, d, g, eps = 25, 3, 0.8, 0.5
    X, Y = rng.normal(size=(T, d)), rng.normal(size=T)
    dv = DiscountedVAW(d, g, eps)
    for t in range(T):
        w = dv.weights(X[t])
        # gradient of sum_{s<t} g^{t-s} (y_s - <x_s,w>)^2/2 + <x_t,w>^2/2 + g^t eps |w|^2/2
        grad = (
            sum(g ** (t - s) * (X[s] @ w - Y[s]) * X[s] for s in range(t))
            + (X[t] @ w) * X[t]
            + g ** (t + 1) * eps * w
        )
        np.testing.assert_allclose(grad, 0.0, atol=1e-8)
        dv.update(X[t], Y[t])


def test_sherman_morrison_equals_direct_inverse(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    M = rng.normal(size=(6, 6))
    A = M @ M.T + np.eye(6)
    x = rng.normal(size=6)
    for g in (1.0, 0.7):
        np.testing.assert_allclose(
            sherman_morrison(np.linalg.inv(A), x, g),
            np.linalg.inv(g * A + np.outer(x, x)),
            rtol=1e-9,
            atol=1e-12,
        )


def test_batched_experts_match_the_class(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    X, Y = rng.normal(size=(2, 20, 3)), rng.normal(size=(2, 20))
    grid = [0.5, 0.9, 1.0]
    P = dvaw_predictions(X, Y, grid, eps=2.0)
    for b in range(2):
        for k, g in enumerate(grid):
            ref = DiscountedVAW(3, g, eps=2.0)
            for t in range(20):
                assert math.isclose(P[b, k, t], ref.predict(X[b, t]), rel_tol=1e-8, abs_tol=1e-10)
                ref.update(X[b, t], Y[b, t])


def test_ensemble_online_equals_vectorised_and_regret_bound(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    T, d = 300, 3
    X = rng.normal(size=(T, d)) / math.sqrt(d)
    Y = np.clip(X @ np.array([0.5, -0.5, 0.2]) + 0.05 * rng.normal(size=T), -1, 1)
    grid = [0.5, 0.9, 1.0]
    ens = DiscountEnsemble([DiscountedVAW(d, g) for g in grid], eta=0.25, bound=1.0)
    preds = []
    for t in range(T):
        preds.append(ens.predict(X[t]))
        ens.update(X[t], Y[t])
    P = dvaw_predictions(X[None], Y[None], grid)[0]
    mix, W = ewa_mixture(P, Y, eta=0.25, bound=1.0)
    np.testing.assert_allclose(preds, mix, rtol=1e-8, atol=1e-10)
    # exp-concave aggregation: meta regret <= log K / eta against every expert
    loss = lambda p: 0.5 * (Y - np.clip(p, -1, 1)) ** 2
    assert loss(mix).sum() <= loss(P).sum(-1).min() + math.log(3) / 0.25 + 1e-9


def test_drifting_comparator_path_and_norm(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    for kind in ("rotate", "walk"):
        U = drifting_comparator(500, 6, 7.0, kind, 2.0, rng)
        assert abs(path_length(U) - 7.0) < 0.05
        np.testing.assert_allclose(np.linalg.norm(U, axis=1), 2.0)
    U = drifting_comparator(500, 6, 10 * math.sqrt(2), "switch", 1.0, rng)
    assert len(np.unique(U, axis=0)) == 11


def test_static_vaw_fails_under_drift_and_discounting_helps():
    X, Y, U = drifting_linear_stream(3000, 5, 15.0, seed=0)
    P = dvaw_predictions(X[None], Y[None], [0.95, 1.0])[0]
    r = linear_pseudo_regret(P, X, U).sum(-1)
    assert r[0] < 0.5 * r[1]


def test_bad_inputs():
    with pytest.raises(ValueError, match="discount must lie in"):
        DiscountedVAW(3, discount=0.0)
    with pytest.raises(ValueError, match="discount must lie in"):
        DiscountedVAW(3, discount=1.5)
    v = DiscountedVAW(3)
    with pytest.raises(ValueError, match=r"x must have shape \(3,\)"):
        v.predict(np.ones(4))
    with pytest.raises(ValueError, match="different feature dimensions"):
        DiscountEnsemble([DiscountedVAW(3), DiscountedVAW(4)])
    with pytest.raises(ValueError, match="kind must be"):
        drifting_comparator(10, 3, 1.0, kind="spiral")


def test_predict_overflow_is_a_clear_error():
    big = np.array([1e200, 1e200, 0.0])
    with pytest.raises(ValueError, match="overflowed to a non-finite value"):
        DiscountedVAW(3).predict(big)
    v = DiscountedVAW(3)
    v.predict(np.ones(3))
    with pytest.raises(ValueError, match="b_t overflowed"):
        v.update(np.full(3, 10.0), 1e308)  # y x = 1e309 overflows
    with pytest.raises(ValueError, match="overflowed"):
        dvaw_predictions(np.array([[[1e200, 1e200, 0.0]] * 2]), np.zeros((1, 2)), [0.9])


def test_nan_streams_are_rejected():
    X, Y = np.zeros((1, 4, 2)), np.zeros((1, 4))
    Y[0, 1] = np.nan
    with pytest.raises(ValueError, match="Y contains NaN or infinite values"):
        dvaw_predictions(X, Y, [0.9])
    with pytest.raises(ValueError, match="expert_preds contains NaN"):
        ewa_mixture(np.full((2, 4), np.nan), np.zeros(4))


def test_ensemble_rejects_experts_of_the_other_loss():
    from icml26_lit.ftrl.logistic import DiscountedONS

    with pytest.raises(
        ValueError,
        match="loss='squared' mixes values, but DiscountedONS predicts "
        "a probability: use loss='logistic'",
    ):
        DiscountEnsemble([DiscountedONS(3)], loss="squared")
    with pytest.raises(ValueError, match="loss='logistic' mixes probabilities, but DiscountedVAW"):
        DiscountEnsemble([DiscountedVAW(3), DiscountedONS(3)], loss="logistic")
    DiscountEnsemble([DiscountedONS(3)], loss="logistic")  # the right pairing is accepted
