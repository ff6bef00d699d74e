"""Bad input fails at entry with a message naming the argument (Chapter 08)."""

import pytest
import torch

from icml26_lit.triforces.alloys import collate, make_alloy_dataset
from icml26_lit.triforces.finetune import finetune
from icml26_lit.triforces.model import TriForces, gaussian_basis


def test_triforces_width_must_be_positive():
    for d in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="d must be a positive int"):
            TriForces(d=d)


def test_gaussian_basis_needs_two_functions_and_a_positive_cutoff():
    r = torch.linspace(0.5, 4.5, 7)
    with pytest.raises(ValueError, match="n_gauss must be an int >= 2"):
        gaussian_basis(r, 5.0, 1)
    with pytest.raises(ValueError, match="cutoff must be positive"):
        gaussian_basis(r, 0.0, 4)
    assert gaussian_basis(r, 5.0, 2).shape == (7, 2)


def test_collate_names_cutoff_and_missing_keys():
    data = make_alloy_dataset(3, seed=0)
    with pytest.raises(ValueError, match="cutoff must be a positive number"):
        collate(data, cutoff=-1.0)
    no_cell = [{k: v for k, v in s.items() if k != "cell"} for s in data]
    with pytest.raises(ValueError, match=r"missing: \['cell'\]"):
        collate(no_cell)


def test_finetune_refuses_unlabelled_structures():
    data = make_alloy_dataset(3, seed=1)
    bare = [{k: v for k, v in s.items() if k not in ("energy", "forces")} for s in data]
    with pytest.raises(ValueError, match="structures must be labelled"):
        finetune(TriForces(d=8), bare, steps=1, batch_size=2)


def test_finetune_history_records_each_step():
    data = make_alloy_dataset(4, seed=2)
    h = []
    finetune(TriForces(d=8), data, steps=3, batch_size=2, history=h)
    assert len(h) == 3 and all(v == v and v >= 0 for v in h)
