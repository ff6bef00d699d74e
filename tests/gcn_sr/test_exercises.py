"""Chapter 18's exercises: three registered, each with curated wrong answers, and the SPBT
encoding exercise rejecting the sequence encoding and its other plausible mistakes on fresh
random trees."""

import numpy as np
import torch

import icml26_lit.gcn_sr  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES, check
from icml26_lit.gcn_sr._solutions import (
    _encode_draw,
    _level_packed_fill,
    _prefix_fill,
    _unary_right_fill,
)
from icml26_lit.gcn_sr.spbt import TOKEN_ID, from_tree, is_valid, to_tree

NAMES = sorted(n for n in EXERCISES if n.startswith("18."))


def test_three_exercises_registered():
    # tests/core/test_exercises.py checks the reference, the stub and every wrong answer
    assert NAMES == ["18.1", "18.2", "18.3"]
    assert all(len(EXERCISES[n].wrong) >= 2 for n in NAMES)
    assert EXERCISES["18.3"].kind == "function"  # the student writes code, not a number


def _student(tree, depth):
    "A correct answer written independently of from_tree."
    out = torch.zeros(2**depth - 1, dtype=torch.int64)

    def place(node, i):
        out[i] = TOKEN_ID[node[0]]
        for k, child in enumerate(node[1:]):
            place(child, 2 * i + 1 + k)

    place(tree, 0)
    return out


def test_spbt_encoding_accepts_a_correct_answer_and_rejects_the_wrong_ones(fresh_seed):
    assert check("18.3", _student, quiet=True).status == "correct"
    for wrong in (_prefix_fill, _unary_right_fill, _level_packed_fill):
        assert check("18.3", wrong, quiet=True).status == "incorrect", wrong.__name__
    rng = np.random.default_rng(fresh_seed)
    differ = {f.__name__: 0 for f in (_prefix_fill, _unary_right_fill, _level_packed_fill)}
    for _ in range(50):
        tree, depth = _encode_draw(rng)
        want = from_tree(tree, depth)
        assert bool(is_valid(want)) and to_tree(want) == tree  # the draw is a fitting tree
        assert torch.equal(_student(tree, depth), want)
        for f in (_prefix_fill, _unary_right_fill, _level_packed_fill):
            differ[f.__name__] += not torch.equal(f(tree, depth), want)
    assert all(n > 0 for n in differ.values()), differ  # each mistake shows on random trees
