"""periodic_radius_graph against matscipy's and ase's neighbour lists ("ijS"), brute force."""

import numpy as np
import pytest
import torch

from icml26_lit.md import periodic_radius_graph

ase_nl = pytest.importorskip("ase.neighborlist")
ase = pytest.importorskip("ase")
matscipy_nl = pytest.importorskip("matscipy.neighbours")


def _random_cell(g, scale):
    # triclinic: a random lower-triangular-ish matrix with a healthy volume
    while True:
        c = torch.randn(3, 3, generator=g, dtype=torch.float64) * 0.6 + torch.eye(3) * scale
        if abs(float(torch.linalg.det(c))) > 0.3 * scale**3:
            return c


def _triples(ei, shift):
    return sorted((int(j), int(i), *map(int, s)) for (j, i), s in zip(ei.t(), shift))


def _matscipy_triples(pos, cell, r):
    atoms = ase.Atoms("H" * len(pos), positions=pos.numpy(), cell=cell.numpy(), pbc=True)
    i, j, S = matscipy_nl.neighbour_list("ijS", atoms, r)  # D = x_j - x_i + S cell
    return sorted((int(b), int(a), *map(int, s)) for a, b, s in zip(i, j, S))


def _ase_triples(pos, cell, r):
    atoms = ase.Atoms("H" * len(pos), positions=pos.numpy(), cell=cell.numpy(), pbc=True)
    i, j, S = ase_nl.neighbor_list("ijS", atoms, r)  # D = x_j - x_i + S cell
    return sorted((int(b), int(a), *map(int, s)) for a, b, s in zip(i, j, S))


@pytest.mark.parametrize("n_atoms, scale, r", [(1, 2.0, 5.0), (3, 3.0, 4.0), (8, 5.0, 5.0)])
def test_matches_matscipy_and_ase_neighbour_lists(fresh_seed, n_atoms, scale, r):
    g = torch.Generator().manual_seed(fresh_seed)
    for _ in range(3):
        cell = _random_cell(g, scale)
        # fractional coordinates in [-0.5, 1.5): atoms outside the cell too
        pos = (torch.rand(n_atoms, 3, generator=g, dtype=torch.float64) * 2 - 0.5) @ cell
        ei, shift = periodic_radius_graph(pos, cell, r)
        assert _triples(ei, shift) == _matscipy_triples(pos, cell, r)
        assert _triples(ei, shift) == _ase_triples(pos, cell, r)
        vec = pos[ei[0]] + shift.double() @ cell - pos[ei[1]]
        assert bool((vec.norm(dim=1) < r).all())
        # sorted by target: a CSR over targets is a plain prefix sum
        assert bool((ei[1][1:] >= ei[1][:-1]).all())


def test_one_atom_cell_smaller_than_cutoff():
    cell = torch.tensor([[0.0, 1.8, 1.8], [1.8, 0.0, 1.8], [1.8, 1.8, 0.0]], dtype=torch.float64)
    ei, shift = periodic_radius_graph(torch.zeros(1, 3, dtype=torch.float64), cell, 5.0)
    one = torch.zeros(1, 3, dtype=torch.float64)
    assert _triples(ei, shift) == _matscipy_triples(one, cell, 5.0) == _ase_triples(one, cell, 5.0)
    assert bool((ei == 0).all()) and not bool((shift == 0).all(1).any())  # no home self-edge
    # fcc nearest neighbours: 12 at a / sqrt2 = 2.546 A
    d = (shift.double() @ cell).norm(dim=1)
    assert int((d < 2.6).sum()) == 12


def test_batch_matches_replicas_one_by_one(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    sizes = [2, 1, 5]
    cells = torch.stack([_random_cell(g, 3.0) for _ in sizes])
    pos = [torch.rand(n, 3, generator=g, dtype=torch.float64) @ c for n, c in zip(sizes, cells)]
    batch = torch.cat([torch.full((n,), k) for k, n in enumerate(sizes)])
    ei, shift = periodic_radius_graph(torch.cat(pos), cells, 4.5, batch)
    start = 0
    for k, n in enumerate(sizes):
        e1, s1 = periodic_radius_graph(pos[k], cells[k], 4.5)
        sel = batch[ei[1]] == k
        assert torch.equal(ei[:, sel], e1 + start) and torch.equal(shift[sel], s1)
        start += n


def test_translation_invariant_edge_set(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    cell = _random_cell(g, 3.0)
    pos = torch.rand(4, 3, generator=g, dtype=torch.float64) @ cell
    ei, shift = periodic_radius_graph(pos, cell, 4.0)
    moved = pos + torch.tensor([7.3, -2.1, 11.9], dtype=torch.float64)
    ei2, shift2 = periodic_radius_graph(moved, cell, 4.0)
    d1 = np.sort((pos[ei[0]] + shift.double() @ cell - pos[ei[1]]).norm(dim=1).numpy())
    d2 = np.sort((moved[ei2[0]] + shift2.double() @ cell - moved[ei2[1]]).norm(dim=1).numpy())
    np.testing.assert_allclose(d1, d2, rtol=0, atol=1e-12)  # translation moves rounding only


def test_bad_input():
    pos, cell = torch.zeros(2, 3), torch.eye(3)
    with pytest.raises(ValueError, match="r must be a positive"):
        periodic_radius_graph(pos, cell, -1.0)
    with pytest.raises(ValueError, match="zero volume"):
        periodic_radius_graph(pos, torch.diag(torch.tensor([1.0, 1.0, 0.0])), 1.0)
    with pytest.raises(ValueError, match="cell must have shape"):
        periodic_radius_graph(pos, torch.eye(2), 1.0)
    with pytest.raises(ValueError, match="pos contains NaN"):
        periodic_radius_graph(pos * float("nan"), cell, 1.0)
    with pytest.raises(ValueError, match="batch must have shape"):
        periodic_radius_graph(pos, cell, 1.0, torch.zeros(3, dtype=torch.long))
    ei, shift = periodic_radius_graph(torch.zeros(0, 3), cell, 1.0)
    assert ei.shape == (2, 0) and shift.shape == (0, 3)
