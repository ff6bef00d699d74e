"Chapter 09's exercise on the LDR loss: the written solution passes, plausible mistakes do not."

import torch

import icml26_lit.ldr  # noqa: F401 (registers the chapter's exercises)
from icml26_lit.core.exercises import EXERCISES, check


def _solution(log_q, u, kind):  # the solution printed under exercise 3
    d = log_q + u
    z = d - (d.median() if kind == "mad" else d.mean())
    if kind == "var":
        return (z**2).mean()
    if kind == "mad":
        return z.abs().mean()
    return torch.where(z.abs() <= 1, 0.5 * z**2, z.abs() - 0.5).mean()


def test_the_written_solution_and_another_correct_form_pass():
    assert check("09.3", _solution, quiet=True).status == "correct"

    def by_library(log_q, u, kind):  # torch's own biased variance is also right
        d = log_q + u
        return d.var(unbiased=False) if kind == "var" else _solution(log_q, u, kind)

    assert check("09.3", by_library, quiet=True).status == "correct"


def test_plausible_mistakes_are_rejected():
    ex = EXERCISES["09.3"]
    assert len(ex.wrong) >= 2
    for w in ex.wrong:
        assert check("09.3", w, quiet=True).status == "incorrect"

    def huber_around_median(log_q, u, kind):
        if kind != "huber":
            return _solution(log_q, u, kind)
        d = log_q + u
        z = d - d.median()
        return torch.where(z.abs() <= 1, 0.5 * z**2, z.abs() - 0.5).mean()

    assert check("09.3", huber_around_median, quiet=True).status == "incorrect"
