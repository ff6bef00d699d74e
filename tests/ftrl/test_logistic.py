"Chapter 12: discounted ONS and its ensemble on logistic regression."

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from icml26_lit.ftrl.linear import DiscountEnsemble, ewa_mixture
from icml26_lit.ftrl.logistic import (
    DiscountedONS,
    dons_probabilities,
    drifting_logistic_stream,
    logistic_pseudo_regret,
    project_ball_Anorm,
)


def test_projection_is_the_constrained_argmin(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    d = 4
    M = rng.normal(size=(d, d))
    A = M @ M.T + 0.05 * np.eye(d)
    c = 4 * rng.normal(size=d)
    w = project_ball_Anorm(c[None], A[None], 1.0)[0]
    cons = {"type": "ineq", "fun": lambda z: 1.0 - z @ z}
    ref = minimize(
        lambda z: (z - c) @ A @ (z - c),
        np.zeros(d),
        constraints=[cons],
        method="SLSQP",
        options=dict(ftol=1e-14, maxiter=500),
    ).x
    assert (w - c) @ A @ (w - c) <= (ref - c) @ A @ (ref - c) + 1e-6
    assert abs(np.linalg.norm(w) - 1.0) < 1e-9


def test_ons_is_ftrl_on_surrogates_when_ball_inactive(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    T, d, g, beta, eps = 30, 3, 0.85, 0.4, 0.5
    X = rng.normal(size=(T, d)) / 2
    Y = np.where(rng.random(T) < 0.5, -1, 1)
    ons = DiscountedONS(d, g, radius=1e3, curvature=beta, eps=eps)
    ws, gs = [], []
    for t in range(T):
        ws.append(ons.w.copy())
        gs.append(-Y[t] / (1 + math.exp(Y[t] * X[t] @ ons.w)) * X[t])
        ons.update(X[t], Y[t])
    obj = lambda w: (
        sum(
            g ** (T - 1 - s) * (gs[s] @ w + beta / 2 * (gs[s] @ (w - ws[s])) ** 2) for s in range(T)
        )
        + eps / 2 * w @ w
    )
    ref = minimize(obj, np.zeros(d), method="BFGS", options=dict(gtol=1e-11)).x
    np.testing.assert_allclose(ons.w, ref, atol=1e-5)


def test_batched_matches_class_and_stays_in_ball(fresh_seed):
    X, Y, U = drifting_logistic_stream(40, 3, 2.0, radius=3.0, seed=fresh_seed % 1000)
    P = dons_probabilities(X[None], Y[None], [0.6, 1.0], radius=1.0, curvature=0.5)
    for k, g in enumerate([0.6, 1.0]):
        ref = DiscountedONS(3, g, radius=1.0, curvature=0.5)
        for t in range(40):
            assert math.isclose(P[0, k, t], ref.predict(X[t]), rel_tol=1e-7, abs_tol=1e-9)
            ref.update(X[t], Y[t])
            assert np.linalg.norm(ref.w) <= 1.0 + 1e-9


def test_pseudo_regret_is_kl():
    X = np.array([[1.0, 0.0]])
    U = np.array([[2.0, 0.0]])
    p = 1 / (1 + math.exp(-2.0))
    q = 0.3
    kl = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
    assert math.isclose(logistic_pseudo_regret(np.array([q]), X, U)[0], kl, rel_tol=1e-12)
    assert logistic_pseudo_regret(np.array([p]), X, U)[0] < 1e-12


def test_logistic_mixture_meta_regret_at_most_log_k():
    X, Y, U = drifting_logistic_stream(500, 4, 5.0, radius=2.0, seed=3)
    P = dons_probabilities(X[None], Y[None], [0.5, 0.9, 1.0], radius=3.0, curvature=0.5)[0]
    mix, _ = ewa_mixture(P, Y, loss="logistic")
    ll = lambda q: -np.log(np.where(Y > 0, q, 1 - q))
    assert ll(mix).sum() <= ll(P).sum(-1).min() + math.log(3) + 1e-9


def test_bad_labels_and_dimensions():
    ons = DiscountedONS(3)
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        ons.update(np.ones(3), 0)
    with pytest.raises(ValueError, match=r"x must have shape \(3,\)"):
        ons.update(np.ones(2), 1)
    with pytest.raises(ValueError, match="discount must lie in"):
        DiscountedONS(3, discount=0.0)
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        dons_probabilities(np.ones((1, 2, 3)), np.array([[1.0, 0.0]]), [1.0])
    ens = DiscountEnsemble([DiscountedONS(3)], loss="logistic")
    ens.predict(np.ones(3))
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        ens.update(np.ones(3), 2)


def test_ons_overflow_is_a_clear_error():
    with pytest.raises(ValueError, match="A_t overflowed"):
        DiscountedONS(2).update(np.array([1e200, 1e200]), 1)
    with pytest.raises(ValueError, match="X contains NaN"):
        dons_probabilities(np.full((1, 2, 3), np.nan), np.ones((1, 2)), [1.0])
