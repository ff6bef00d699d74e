"""Alloy data: EMT labels (forces = -grad E, size consistency, no net force), the generator."""

import numpy as np
import pytest
import torch
from ase import Atoms
from ase.build import bulk

from icml26_lit.triforces import (
    ELEMENTS,
    collate,
    edge_vectors,
    element_fractions,
    emt_label,
    make_alloy_dataset,
)
from icml26_lit.triforces.alloys import random_alloy


def test_emt_forces_are_minus_gradient(fresh_seed):
    rng = np.random.default_rng(fresh_seed)
    atoms = random_alloy(rng, max_atoms=6)
    _, forces = emt_label(atoms)
    h = 1e-5  # central differences: error O(h^2 E''') ~ 1e-9, rounding ~ 1e-16 / h ~ 1e-11
    for i in range(len(atoms)):
        for a in range(3):
            plus, minus = atoms.copy(), atoms.copy()
            plus.positions[i, a] += h
            minus.positions[i, a] -= h
            fd = -(emt_label(plus)[0] - emt_label(minus)[0]) / (2 * h)
            assert abs(fd - forces[i, a]) < 1e-6, (fresh_seed, i, a, fd, forces[i, a])


@pytest.mark.parametrize("symbol", ELEMENTS)
def test_primitive_equals_cubic_per_atom(symbol):
    e1, f1 = emt_label(bulk(symbol, "fcc"))
    e4, f4 = emt_label(bulk(symbol, "fcc", cubic=True))
    assert abs(e4 / 4 - e1) < 1e-10  # same crystal: same energy per atom (rounding only)
    assert np.abs(f4).max() < 1e-10 and np.abs(f1).max() < 1e-10  # perfect lattice: no force


def test_dataset_forces_sum_to_zero_and_is_reproducible(fresh_seed):
    seed = fresh_seed % 10_000
    data = make_alloy_dataset(30, seed=seed)
    again = make_alloy_dataset(30, seed=seed)
    other = make_alloy_dataset(30, seed=seed + 1)
    for s, t in zip(data, again):
        assert torch.equal(s["pos"], t["pos"]) and s["energy"] == t["energy"]
        assert float(s["forces"].sum(0).abs().max()) < 1e-9  # translation invariance of EMT
        assert 1 <= len(s["numbers"]) <= 8 and len(set(s["numbers"].tolist())) <= 2
    assert any(s["energy"] != t["energy"] for s, t in zip(data, other))  # seeds redraw the data
    fr = element_fractions(data)
    np.testing.assert_allclose(fr.sum(1), 1.0, rtol=0, atol=1e-12)


def test_max_atoms_and_lattices():
    data = make_alloy_dataset(60, seed=3, max_atoms=1)
    assert all(len(s["numbers"]) == 1 for s in data)
    big = make_alloy_dataset(40, seed=4, max_atoms=32)
    assert max(len(s["numbers"]) for s in big) > 8
    assert {s["lattice"] for s in big} == {0, 1, 2, 3}


def test_collate_edges():
    data = make_alloy_dataset(5, seed=0)
    b = collate(data, cutoff=4.0)
    vec = edge_vectors(b)
    assert bool((vec.norm(dim=1) < 4.0 + 1e-5).all())  # float32 positions: 1e-5 A rounding
    assert b["energy"].shape == (5,) and b["forces"].shape == (int(b["n_atoms"].sum()), 3)


def test_bad_input():
    with pytest.raises(ValueError, match="max_atoms"):
        make_alloy_dataset(3, max_atoms=0)
    with pytest.raises(ValueError, match="n must be"):
        make_alloy_dataset(-1)
    with pytest.raises(TypeError, match="atoms must be an ase.Atoms"):
        emt_label("Cu")
    with pytest.raises(ValueError, match="atoms.numbers must lie in 1..118"):
        emt_label(Atoms(numbers=[200], cell=np.eye(3) * 3, pbc=True))
    with pytest.raises(ValueError, match="EMT does not parametrise"):
        emt_label(Atoms("Fe", cell=np.eye(3) * 3, pbc=True))
    with pytest.raises(ValueError, match="zero volume"):
        emt_label(Atoms("Cu", cell=np.diag([3.0, 3.0, 0.0]), pbc=True))
    with pytest.raises(ValueError, match="positions contains NaN"):
        emt_label(Atoms("Cu", positions=[[np.nan, 0, 0]], cell=np.eye(3) * 3, pbc=True))
    bad = make_alloy_dataset(1, seed=0)
    bad[0]["numbers"] = bad[0]["numbers"] * 0
    with pytest.raises(ValueError, match="numbers"):
        collate(bad)
