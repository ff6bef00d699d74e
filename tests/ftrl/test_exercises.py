"Chapter 12: the exercises' checker accepts the references and rejects every curated wrong answer."

import numpy as np
import pytest

import icml26_lit.ftrl  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES, check

NAMES = sorted(n for n in EXERCISES if n.startswith("12."))


def test_three_exercises_registered():
    assert NAMES == ["12.1", "12.2", "12.3"]


@pytest.mark.parametrize("name", NAMES)
def test_reference_correct_stub_and_wrong_answers(name):
    ex = EXERCISES[name]
    if ex.reference is not None:
        assert check(name, ex.reference, quiet=True).status == "correct"

        def stub(*args, **kwargs):
            raise NotImplementedError

        assert check(name, stub, quiet=True).status == "not attempted"
    else:
        value = ex.value() if callable(ex.value) else ex.value
        assert check(name, value, quiet=True).status == "correct"
        assert check(name, ..., quiet=True).status == "not attempted"
    for w in ex.wrong:
        assert check(name, w, quiet=True).status == "incorrect"


def test_public_names():
    import icml26_lit.ftrl as ftrl

    assert ftrl.__all__ and all(hasattr(ftrl, n) for n in ftrl.__all__)
    assert "_solutions" not in ftrl.__all__


def _dvaw_by_solve(X, y, discount, eps=1.0):
    "A correct answer written another way: A_t kept and solved each round (O(d^3))."
    T, d = X.shape
    A, b, out = eps * np.eye(d), np.zeros(d), np.empty(T)
    for t in range(T):
        A = discount * A + np.outer(X[t], X[t])
        out[t] = X[t] @ np.linalg.solve(A, b)
        b = discount * (b + y[t] * X[t])
    return out


def test_dvaw_exercise_accepts_a_solve_and_rejects_each_slip(fresh_seed):
    ex = EXERCISES["12.3"]
    assert check("12.3", _dvaw_by_solve, quiet=True).status == "correct"
    assert len(ex.wrong) >= 2
    rng = np.random.default_rng(fresh_seed)
    X, y, discount, eps = ex.draw(rng)
    want = ex.reference(X, y, discount, eps)
    np.testing.assert_allclose(_dvaw_by_solve(X, y, discount, eps), want, rtol=1e-8, atol=1e-12)
    assert want.shape == (len(y),) and want.dtype == np.float64 and want[0] == 0.0  # b_1 = 0
    for w in ex.wrong:  # each slip is off on the fixed cases, by far more than the tolerance
        worst = max(np.abs(w(*c) - ex.reference(*c)).max() for c in ex.cases)
        assert worst > 0.05, worst
