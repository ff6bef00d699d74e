"""The chapter's exercises: registered on import; reference correct, curated wrong answers not."""

import math

import pytest

import icml26_lit.slepian  # noqa: F401  (registers 01.1 to 01.3)
from icml26_lit.core.exercises import EXERCISES, check


def test_registered():
    assert sorted(k for k in EXERCISES if k.startswith("01.")) == ["01.1", "01.2", "01.3"]


@pytest.mark.parametrize("name", ["01.1", "01.2", "01.3"])
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


def test_mode_choice_exercise_by_hand():
    # an independent answer: pairs by (|m|, λ) found in plain Python, the cut K by hand
    import torch

    def by_hand(eigenvalues, orders, theta_deg, L):
        n = eigenvalues.numel()
        N = (L + 1) ** 2 * (1 - math.cos(math.radians(theta_deg))) / 2
        K = max(1, min(math.floor(2 * N), n))
        lam, m = eigenvalues.tolist(), orders.tolist()
        kept = {(abs(m[i]), lam[i]) for i in range(K) if lam[i] > 0.05}
        return torch.tensor([i for i in range(n) if (abs(m[i]), lam[i]) in kept], dtype=torch.long)

    assert check("01.3", by_hand, quiet=True).status == "correct"


def test_mode_choice_matches_the_experiments_encoder():
    from icml26_lit.slepian import SlepianEncoder
    from icml26_lit.slepian.concentration import slepian_cap

    ex, cap = EXERCISES["01.3"], slepian_cap(10.0, 40)
    chosen = ex.reference(cap.eigenvalues, cap.orders, 10.0, 40)
    assert chosen.numel() == SlepianEncoder(10.0, (36.0, 138.0), L=40).out_dim == 23
    # each wrong answer differs on some fixed case (not only on a lucky random draw)
    for w in ex.wrong:
        assert any(
            w(*c).shape != ex.reference(*c).shape or not (w(*c) == ex.reference(*c)).all()
            for c in ex.cases
        )
