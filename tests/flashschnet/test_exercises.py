"""Chapter 06's exercises: references accepted, stubs not attempted, curated wrong answers
rejected, and exercise 3's reference (the CSR CFConv's backward) equal to autograd through the
plain CFConv on fresh random graphs."""

import math
import secrets

import torch

import icml26_lit.flashschnet  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES, check
from icml26_lit.flashschnet._solutions import _ct_inputs, _cutoff_term_reference
from icml26_lit.flashschnet.kernels import cfconv_reference

NAMES = sorted(n for n in EXERCISES if n.startswith("06."))


def test_three_exercises_registered():
    # the reference, stub and curated wrong answers of every exercise are checked in
    # tests/core/test_exercises.py; the chapter asks for at least two wrong answers each
    assert NAMES == ["06.1", "06.2", "06.3"]
    assert all(len(EXERCISES[n].wrong) >= 2 for n in NAMES)


def test_the_written_solution_of_exercise_3_is_accepted():
    "The solution printed under exercise 3, as a student would type it."

    def cutoff_term(x, filter, edge_index, dist, cutoff, grad_m):
        src, dst = edge_index
        dc = torch.where(
            dist < cutoff,
            -0.5 * math.pi / cutoff * torch.sin(math.pi * dist / cutoff),
            torch.zeros_like(dist),
        )
        return dc * (x[src] * filter * grad_m[dst]).sum(-1)

    assert check("06.3", cutoff_term, quiet=True).status == "correct"


def test_exercise_3_reference_is_the_plain_cfconv_gradient():
    "The flash CSR backward's distance term equals autograd through cfconv_reference (float64)."
    seed = secrets.randbelow(2**31)
    g = torch.Generator().manual_seed(seed)
    x, w, ei, dist, rc, gm = _ct_inputs(9, 7, 40, g, torch.float64)
    d = dist.clone().requires_grad_(True)
    (want,) = torch.autograd.grad(cfconv_reference(x, w, ei, d, rc), d, grad_outputs=gm)
    got = _cutoff_term_reference(x, w, ei, dist, rc, gm)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12, msg=f"seed {seed}")
