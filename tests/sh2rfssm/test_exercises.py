"""Chapter 13's exercises: references accepted, curated wrong answers rejected, and the scan's
combine of exercise 3 associative and equal to the chapter's scans when folded."""

import pytest
import torch

import icml26_lit.sh2rfssm  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES, check
from icml26_lit.sh2rfssm._solutions import (
    _combine_no_carry,
    _combine_swapped,
    scan_combine,
)
from icml26_lit.sh2rfssm.layer import parallel_scan_2x2, sequential_scan_2x2

NAMES = sorted(n for n in EXERCISES if n.startswith("13."))


def test_three_exercises_with_two_wrong_answers_each():
    assert NAMES == ["13.1", "13.2", "13.3"]
    assert all(len(EXERCISES[n].wrong) >= 2 for n in NAMES)


def _draw(g, n=3):
    A = 0.7 * torch.randn(n, 2, 2, dtype=torch.float64, generator=g)
    b = torch.randn(n, 2, dtype=torch.float64, generator=g)
    return A, b


def test_combine_is_associative(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    (A1, b1), (A2, b2), (A3, b3) = _draw(g), _draw(g), _draw(g)
    left = scan_combine(*scan_combine(A1, b1, A2, b2), A3, b3)
    right = scan_combine(A1, b1, *scan_combine(A2, b2, A3, b3))
    for x, y in zip(left, right):
        torch.testing.assert_close(x, y, msg=f"seed={fresh_seed}")


def test_combine_folded_equals_the_scans(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    L = int(torch.randint(1, 20, (1,), generator=g))
    A, b = _draw(g, L)
    acc, hs = (A[0], b[0]), [b[0]]
    for t in range(1, L):
        acc = scan_combine(*acc, A[t], b[t])
        hs.append(acc[1])
    h = torch.stack(hs)
    torch.testing.assert_close(h, sequential_scan_2x2(A, b), msg=f"seed={fresh_seed}")
    torch.testing.assert_close(h, parallel_scan_2x2(A, b), msg=f"seed={fresh_seed}")


@pytest.mark.parametrize("wrong", [_combine_swapped, _combine_no_carry])
def test_plausible_wrong_combines_are_rejected(wrong):
    assert check("13.3", wrong, quiet=True).status == "incorrect"
    assert check("13.3", scan_combine, quiet=True).status == "correct"


def test_exercise_3_builds_no_model_at_import():
    # the registered exercise is a function: nothing is computed when the package is imported
    assert EXERCISES["13.3"].kind == "function" and EXERCISES["13.3"].reference is scan_combine
