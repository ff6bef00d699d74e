"Chapter 12: dynamic regret, discounted regret and the discounted-to-dynamic identity."

import math

import numpy as np
import pytest

from icml26_lit.ftrl.regret import (
    discount_grid,
    discounted_regret,
    dynamic_regret,
    optimal_discount,
    path_length,
    reduction_terms,
)


@pytest.mark.parametrize("lam", [0.3, 0.9, 0.999, 1.0])
def test_reduction_identity_random_learners_and_comparators(fresh_seed, lam):
    rng = np.random.default_rng(fresh_seed)
    T, d = 30, 4
    us = np.cumsum(rng.normal(size=(T, d)), axis=0)
    xs = rng.normal(size=(T, d)) * 3
    A = rng.normal(size=(T, d, d))
    c = rng.normal(size=(T, d))
    # arbitrary (non-convex even) per-round losses: the identity is pure algebra
    f = lambda t, w: np.sin(w @ A[t] @ c[t]) + ((w - c[t]) ** 2).sum(-1)
    L = np.stack([f(t, us) for t in range(T)])
    la = np.array([f(t, xs[t]) for t in range(T)])
    terms = reduction_terms(la, L, lam)
    total = terms["last"] + terms["forgetting"] + terms["drift"]
    assert math.isclose(total, terms["dynamic_regret"], rel_tol=1e-10, abs_tol=1e-9)
    assert math.isclose(
        terms["dynamic_regret"], dynamic_regret(la, np.diag(L)), rel_tol=1e-12, abs_tol=1e-12
    )


def test_drift_term_bounded_by_lipschitz_path(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    T, d, lam = 50, 3, 0.8
    us = np.cumsum(0.2 * rng.normal(size=(T, d)), axis=0)
    c = rng.normal(size=(T, d))
    f = lambda t, w: np.linalg.norm(w - c[t], axis=-1)  # 1-Lipschitz
    L = np.stack([f(t, us) for t in range(T)])
    la = np.array([f(t, rng.normal(size=d)) for t in range(T)])
    terms = reduction_terms(la, L, lam)
    assert terms["drift"] <= lam * path_length(us) / (1 - lam) + 1e-9


def test_discounted_regret_matches_direct_sum(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    a, b = rng.random(12), rng.random(12)
    R = discounted_regret(a, b, 0.6)
    direct = [sum(0.6 ** (t - s) * (a[s] - b[s]) for s in range(t + 1)) for t in range(12)]
    np.testing.assert_allclose(R, direct, rtol=1e-12)


def test_path_length_and_static_regret():
    u = np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 4.0], [0.0, 0.0]])
    assert path_length(u) == 10.0
    assert dynamic_regret([1, 2, 3], [0, 0, 1]) == 5.0
    np.testing.assert_array_equal(dynamic_regret([1, 2], [0, 1], cumulative=True), [1, 2])


@pytest.mark.parametrize("bad", [0.0, -1.0, 1.01, float("nan")])
def test_bad_discount(bad):
    with pytest.raises(ValueError, match="discount must lie in"):
        discounted_regret([1.0], [0.0], bad)


def test_bad_shapes():
    with pytest.raises(ValueError, match="losses_comparator has 2"):
        dynamic_regret([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="loss_matrix must have shape"):
        reduction_terms([1.0, 2.0], np.zeros((3, 3)), 0.5)


def test_discount_grid_and_optimum():
    g = discount_grid(1000)
    assert g[-1] == 1.0 and len(g) == 11
    np.testing.assert_allclose(1 - g[:-1], 2.0 ** -np.arange(1, 11))
    assert math.isclose(optimal_discount(1000, 10.0, 10), 1 - math.sqrt(10 / (10 * 1000)))
    with pytest.raises(ValueError, match="horizon must be an integer >= 2"):
        discount_grid(1)


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(path=float("nan")), "path must be a finite number >= 0"),
        (dict(path=float("inf")), "path must be a finite number >= 0"),
        (dict(path=-0.5), "path must be a finite number >= 0"),
        (dict(lipschitz=float("nan")), "lipschitz must be a finite number >= 0"),
        (dict(horizon=0), "horizon must be a positive integer"),
        (dict(dim=2.5), "dim must be a positive integer"),
    ],
)
def test_optimal_discount_rejects_bad_input(kw, msg):
    with pytest.raises(ValueError, match=msg):
        optimal_discount(**{**dict(horizon=100, path=1.0, dim=3), **kw})
    with pytest.raises(TypeError, match="path must be a number"):
        optimal_discount(100, "1.0", 3)


@pytest.mark.parametrize("name", ["X", "Y"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_check_streams_rejects_non_finite(name, bad):
    from icml26_lit.ftrl.regret import check_streams

    X, Y = np.zeros((2, 5, 3)), np.zeros((2, 5))
    (X if name == "X" else Y)[1, 2, ...] = bad
    with pytest.raises(ValueError, match=f"{name} contains NaN or infinite values"):
        check_streams(X, Y, [0.9])


def test_check_betas_names_the_bad_beta():
    from icml26_lit.ftrl.regret import check_betas

    assert check_betas((0.5, 0.25)) == (0.5, 0.25)
    with pytest.raises(ValueError, match="beta1 must lie in"):
        check_betas((float("nan"), 0.9))
    with pytest.raises(TypeError, match="betas must be a pair"):
        check_betas(0.9)
