"""Chapter 18: batched evaluation, constants, reward, Nguyen data, exact recovery."""

import math

import numpy as np
import pytest
import sympy as sp
import torch

from icml26_lit.gcn_sr.fitness import (
    PROTECT,
    check_data,
    evaluate_batch,
    fit_constants,
    is_recovered,
    nguyen,
    nrmse,
    reward,
)
from icml26_lit.gcn_sr.fitness import (
    score_reference as score,
)
from icml26_lit.gcn_sr.spbt import (
    VAR_SYMBOLS,
    VOCAB,
    Library,
    decode,
    encode,
    from_tree,
    random_tree,
)


def _eval_np(t, c, X):
    "Independent recursive numpy evaluation of one fill with the protected operators."
    t = t.tolist()

    def rec(i):
        n = VOCAB[t[i]]
        if n == "const":
            return np.full(len(X), float(c[i]))
        if n.startswith("x"):
            return X[:, int(n[1:]) - 1]
        a = rec(2 * i + 1)
        if n == "sin":
            return np.sin(a)
        if n == "cos":
            return np.cos(a)
        if n == "exp":
            return np.exp(a)
        if n == "log":
            return np.where(
                np.abs(a) > PROTECT, np.log(np.where(np.abs(a) > PROTECT, np.abs(a), 1)), 0.0
            )
        b = rec(2 * i + 2)
        if n == "add":
            return a + b
        if n == "sub":
            return a - b
        if n == "mul":
            return a * b
        return np.where(np.abs(b) > PROTECT, a / np.where(np.abs(b) > PROTECT, b, 1), 1.0)

    return rec(0)


def test_evaluate_matches_recursive_numpy(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    lib = Library(n_vars=2, const=True)
    X = torch.rand(33, 2, generator=g, dtype=torch.float64) * 4 - 2
    toks = torch.stack([random_tree(5, lib, g) for _ in range(60)])
    c = torch.randn(60, 31, generator=g, dtype=torch.float64)
    Y = evaluate_batch(toks, c, X).numpy()
    with np.errstate(all="ignore"):
        for i in range(60):
            ref = np.broadcast_to(_eval_np(toks[i], c[i], X.numpy()), (33,))
            ok = np.isfinite(ref)
            np.testing.assert_allclose(Y[i][ok], ref[ok], rtol=1e-10, atol=1e-10)
            assert np.array_equal(np.isfinite(Y[i]), ok)


def test_evaluate_matches_sympy_lambdify(fresh_seed):
    # trees without div/log: no protection involved, so the true operators must agree
    g = torch.Generator().manual_seed(fresh_seed)
    lib = Library(binary=("add", "sub", "mul"), unary=("sin", "cos", "exp"), n_vars=2)
    X = torch.rand(25, 2, generator=g, dtype=torch.float64) * 2 - 1
    toks = torch.stack([random_tree(4, lib, g) for _ in range(40)])
    Y = evaluate_batch(toks, None, X)
    for i in range(40):
        f = sp.lambdify(VAR_SYMBOLS[:2], decode(toks[i]), "numpy")
        ref = np.broadcast_to(f(X[:, 0].numpy(), X[:, 1].numpy()), (25,))
        np.testing.assert_allclose(Y[i].numpy(), ref, rtol=1e-9, atol=1e-9)


def test_reward_closed_form_and_invalid():
    y = torch.tensor([1.0, 2.0, 4.0, 8.0], dtype=torch.float64)
    sd = y.std(unbiased=False)
    y_hat = torch.stack([y, y + 2 * sd, y.clone()])
    y_hat[2, 1] = math.inf
    torch.testing.assert_close(nrmse(y_hat, y)[:2], torch.tensor([0.0, 2.0], dtype=torch.float64))
    torch.testing.assert_close(
        reward(y_hat, y), torch.tensor([1.0, 1 / 3, 0.0], dtype=torch.float64)
    )
    # an exp overflow scores 0, never NaN
    X = torch.full((5, 1), 800.0, dtype=torch.float64)
    t = encode(("exp", ("x1",)), 3)
    r, _ = score(t[None], X, torch.arange(5.0, dtype=torch.float64))
    assert r.tolist() == [0.0]


def test_fit_constants_least_squares(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    X = torch.rand(40, 1, generator=g, dtype=torch.float64) * 2 - 1
    a, b = torch.randn(2, generator=g, dtype=torch.float64)
    y = a * X[:, 0] + b + 0.01 * torch.randn(40, generator=g, dtype=torch.float64)
    t = from_tree(("add", ("mul", ("const",), ("x1",)), ("const",)), 3)
    c = fit_constants(t[None], X, y)
    A = torch.stack([X[:, 0], torch.ones(40, dtype=torch.float64)], 1)
    ls = torch.linalg.lstsq(A, y).solution
    torch.testing.assert_close(c[0, [3, 2]], ls, atol=1e-6, rtol=1e-6)


def test_fit_constants_matches_scipy_loss():
    from scipy.optimize import minimize

    X, y, _ = nguyen(10)
    t = from_tree(
        ("mul", ("const",), ("mul", ("sin", ("x1",)), ("cos", ("mul", ("const",), ("x2",))))), 5
    )
    c = fit_constants(t[None], X, y)
    slots = (t == 9).nonzero().flatten()

    def loss(v):
        cc = torch.zeros(1, 31, dtype=torch.float64)
        cc[0, slots] = torch.tensor(v)
        return float((evaluate_batch(t[None], cc, X)[0] - y).pow(2).mean())

    ref = minimize(loss, np.ones(2), method="BFGS")
    ours = loss(c[0, slots].numpy())
    assert ours <= ref.fun + 1e-9 and ours < 1e-12  # the truth 2 sin(x) cos(y) is reachable


def test_nguyen_and_bad_data():
    for i in range(1, 13):
        X, y, e = nguyen(i, n_points=7, seed=i)
        assert X.shape[0] == 7 and torch.isfinite(y).all()
        f = sp.lambdify(VAR_SYMBOLS[: X.shape[1]], e, "numpy")
        np.testing.assert_allclose(np.broadcast_to(f(*X.T.numpy()), (7,)), y.numpy())
    with pytest.raises(ValueError, match="Nguyen benchmark number"):
        nguyen(13)
    with pytest.raises(ValueError, match="n_points"):
        nguyen(1, n_points=1)
    with pytest.raises(ValueError, match="same length"):
        check_data(torch.zeros(5, 1), torch.zeros(4))
    with pytest.raises(ValueError, match="X contains NaN"):
        check_data(torch.tensor([[math.nan], [0.0]]), torch.zeros(2))
    with pytest.raises(ValueError, match="y contains NaN"):
        check_data(torch.zeros(2, 1), torch.tensor([0.0, math.nan]))
    with pytest.raises(ValueError, match="beyond the 1 columns"):
        evaluate_batch(encode(("x2",), 1)[None], None, torch.zeros(3, 1))


def test_invalid_fills_are_rejected():
    X, y, truth = nguyen(1)
    good = encode(("sin", ("x1",)), 3)
    cases = {
        "the root is empty": [0, 0, 0, 0, 0, 0, 0],
        "a unary node has a non-empty right child": [5, 10, 10, 0, 0, 0, 0],
        "a binary node has an empty child": [1, 10, 0, 0, 0, 0, 0],
        "a slot under an empty slot or a terminal is not empty": [10, 10, 0, 0, 0, 0, 0],
        "an operator sits on the last level": [5, 5, 0, 5, 0, 0, 0],
    }
    for rule, fill in cases.items():
        bad = torch.stack([good, torch.tensor(fill)])
        with pytest.raises(ValueError, match=f"invalid fill \\(row 1\\): {rule}"):
            evaluate_batch(bad, None, X)
        with pytest.raises(ValueError, match="invalid fill"):
            score(bad, X, y)
        with pytest.raises(ValueError, match="invalid fill"):
            fit_constants(bad, X, y)
    with pytest.raises(TypeError, match="truth must be a sympy expression, got str"):
        is_recovered(good, None, "sin(x1)", X)


def test_exact_recovery():
    X, y, truth = nguyen(7)
    Xt, _, _ = nguyen(7, n_points=500, seed=9)
    x = ("x1",)
    right = encode(
        ("add", ("log", ("add", x, ("div", x, x))), ("log", ("add", ("mul", x, x), ("div", x, x)))),
        5,
    )
    almost = encode(("add", ("log", ("add", x, ("div", x, x))), ("log", ("mul", x, x))), 5)
    assert is_recovered(right, None, truth, Xt)
    assert not is_recovered(almost, None, truth, Xt)
    # constants are rounded: 0.99999 -> 1
    t, c = encode(
        ("add", ("log", ("add", x, ("const",))), ("log", ("add", ("mul", x, x), ("const",)))),
        5,
        return_constants=True,
    )
    c = torch.zeros(31, dtype=torch.float64)
    c[t == 9] = 0.9999996
    assert is_recovered(t, c, truth, Xt)
