"""The chapter's exercises: registered on import; reference correct, curated wrong answers not."""

import math

import pytest

import icml26_lit.slepian  # noqa: F401  (registers 01.1 to 01.3)
from icml26_lit.core.exercises import EXERCISES, check


def test_registered():
    assert sorted(k for k in EXERCISES if k.startswith("01.")) == ["01.1", "01.2", "01.3"]


@pytest.mark.parametrize("name", ["01.1", "01.2"])
def test_function_exercises(name):
    ex = EXERCISES[name]
    assert check(name, ex.reference, quiet=True).status == "correct"

    def stub(*args):
        raise NotImplementedError

    assert check(name, stub, quiet=True).status == "not attempted"
    assert ex.wrong and all(check(name, w, quiet=True).status == "incorrect" for w in ex.wrong)


def test_shannon_exercise_by_hand():
    # an independent answer: tr D from the per-order blocks equals the closed form
    from icml26_lit.slepian.concentration import cap_order_matrices

    def by_trace(theta_deg, L):
        blocks = cap_order_matrices(theta_deg, L)
        return float(blocks[0].trace() + 2 * sum(b.trace() for b in blocks[1:]))

    assert check("01.1", by_trace, quiet=True).status == "correct"
    assert (
        check(
            "01.1", lambda t, L: (L + 1) ** 2 * (1 - math.cos(math.radians(t))) / 2, quiet=True
        ).status
        == "correct"
    )
