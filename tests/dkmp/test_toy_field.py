"""Tests of icml26_lit.dkmp.toy_field: closed forms, exclusions by scipy, forces by differences."""

import math

import numpy as np
import pytest
import torch
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from icml26_lit.dkmp.toy_field import COULOMB_K, ToyForceField, exclusion_scales

F64 = torch.float64


def test_coulomb_pair_closed_form():
    ff = ToyForceField(torch.tensor([1.0, 1.0]), torch.ones(2), torch.zeros(2), epsilon_r=1.0)
    pos = torch.tensor([[0.0, 0, 0], [0.0, 10.0, 0]], dtype=F64)
    e, f = ff.energy_and_forces(pos)
    assert abs(float(e) - 33.20637) < 1e-12  # 332.0637 * 1 * 1 / 10, exact up to rounding
    # epsilon_r = 4 (default) divides by four
    ff4 = ToyForceField(torch.tensor([1.0, 1.0]), torch.ones(2), torch.zeros(2))
    assert abs(float(ff4.energy_and_forces(pos)[0]) - 33.20637 / 4) < 1e-12
    torch.testing.assert_close(f[1], torch.tensor([0.0, 3.320637, 0.0], dtype=F64))  # repulsion


def test_lennard_jones_lorentz_berthelot_by_hand():
    sig, eps = torch.tensor([3.0, 3.6], dtype=F64), torch.tensor([0.2, 0.05], dtype=F64)
    ff = ToyForceField(torch.zeros(2), sig, eps)
    r = 3.9
    pos = torch.tensor([[0.0, 0, 0], [r, 0, 0]], dtype=F64)
    s, e = (3.0 + 3.6) / 2, math.sqrt(0.2 * 0.05)
    want = 4 * e * ((s / r) ** 12 - (s / r) ** 6)
    got, f = ff.energy_and_forces(pos)
    assert abs(float(got) - want) < 1e-15
    dwant = 4 * e * (-12 * s**12 / r**13 + 6 * s**6 / r**7)  # dE/dr
    assert abs(float(f[1, 0]) + dwant) < 1e-14


def test_four_atom_chain_by_hand():
    # chain 0-1-2-3: only the 1-4 pair (0, 3) is non-bonded, scaled by 0.5; plus three bonds
    q = torch.tensor([0.5, -0.2, 0.3, -0.4], dtype=F64)  # float64: no float32 rounding of q
    ff = ToyForceField(
        q,
        torch.zeros(4),
        torch.zeros(4),
        torch.tensor([[0, 1], [1, 2], [2, 3]]),
        bond_k=100.0,
        bond_r0=1.5,
    )
    pos = torch.tensor([[0.0, 0, 0], [1.4, 0, 0], [1.4, 1.6, 0], [3.0, 1.6, 0]], dtype=F64)
    r03 = math.hypot(3.0, 1.6)
    want = 100 * (0.1**2 + 0.1**2 + 0.1**2) + 0.5 * COULOMB_K * 0.5 * -0.4 / (4.0 * r03)
    assert abs(float(ff.energy_and_forces(pos)[0]) - want) < 1e-12


def _random_molecule(g, n):
    bonds = [(i, int(torch.randint(0, i, (1,), generator=g))) for i in range(1, n)]  # a tree
    bonds += [(0, n - 1), (2, 5)]  # and two rings
    return torch.tensor(bonds)


def test_exclusions_equal_scipy_shortest_path(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    n = 14
    bonds = _random_molecule(g, n)
    adj = csr_matrix((np.ones(len(bonds)), (bonds[:, 0].numpy(), bonds[:, 1].numpy())), (n, n))
    hops = shortest_path(adj, directed=False, unweighted=True)
    want = torch.tensor([[0.0 if h <= 2 else 0.5 if h == 3 else 1.0 for h in row] for row in hops])
    assert torch.equal(exclusion_scales(bonds, n, 0.5).float(), want), fresh_seed
    # the energy equals a plain pair loop over those scales
    q = torch.randn(n, generator=g, dtype=F64)
    sig, eps = torch.rand(n, generator=g, dtype=F64) + 1, torch.rand(n, generator=g, dtype=F64)
    pos = torch.randn(n, 3, generator=g, dtype=F64) * 4
    ff = ToyForceField(q, sig, eps, bonds, bond_k=50.0, bond_r0=1.2)
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r = float((pos[i] - pos[j]).norm())
            s, ep = (sig[i] + sig[j]) / 2, math.sqrt(eps[i] * eps[j])
            lj = 4 * ep * ((s / r) ** 12 - (s / r) ** 6)
            e += float(want[i, j]) * (float(lj) + COULOMB_K * float(q[i] * q[j]) / (4.0 * r))
    for a, b in bonds.tolist():
        e += 50.0 * (float((pos[a] - pos[b]).norm()) - 1.2) ** 2
    # a sum of ~100 terms of size up to ~1e4: a relative 1e-12 covers the rounding
    assert abs(float(ff.energy_and_forces(pos)[0]) - e) <= 1e-12 * max(1.0, abs(e)) * 100


def test_forces_are_minus_gradient_and_invariant(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    n = 10
    bonds = _random_molecule(g, n)
    ff = ToyForceField(
        torch.randn(n, generator=g),
        torch.rand(n, generator=g) + 1,
        torch.rand(n, generator=g) * 0.2,
        bonds,
        bond_r0=1.5,
    )
    pos = torch.randn(n, 3, generator=g, dtype=F64) * 3
    e, f = ff.energy_and_forces(pos)
    h = 1e-5  # central differences: error ~ h^2 |E'''| + eps |E| / h, about 1e-8 here
    fd = torch.zeros_like(pos)
    for i in range(n):
        for k in range(3):
            dp = torch.zeros_like(pos)
            dp[i, k] = h
            fd[i, k] = -(ff.energy(pos + dp) - ff.energy(pos - dp)) / (2 * h)
    torch.testing.assert_close(f, fd, rtol=1e-6, atol=1e-6 * max(1.0, float(f.abs().max())))
    torch.testing.assert_close(
        f.sum(0), torch.zeros(3, dtype=F64), rtol=0, atol=1e-9 * float(f.abs().max())
    )
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g, dtype=F64))
    e2, f2 = ff.energy_and_forces(pos @ q.T + torch.randn(3, generator=g, dtype=F64))
    torch.testing.assert_close(e2, e, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(f2, f @ q.T, rtol=1e-8, atol=1e-8 * float(f.abs().max()))


def test_toy_field_bad_input():
    q = torch.zeros(3)
    with pytest.raises(ValueError, match="sigma must have shape"):
        ToyForceField(q, torch.ones(2), torch.ones(3))
    with pytest.raises(ValueError, match="bonds holds atom indices"):
        ToyForceField(q, torch.ones(3), torch.ones(3), torch.tensor([[0, 3]]))
    with pytest.raises(ValueError, match="epsilon_r must be a positive"):
        ToyForceField(q, torch.ones(3), torch.ones(3), epsilon_r=0.0)
    ff = ToyForceField(q, torch.ones(3), torch.ones(3))
    with pytest.raises(ValueError, match="pos must have shape"):
        ff.energy_and_forces(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="pos contains NaN"):
        ff.energy_and_forces(torch.full((3, 3), float("nan")))


def test_bad_input_fails_at_entry_naming_the_argument():
    q, one = torch.tensor([1.0, -1.0, 0.0]), torch.ones(3)
    with pytest.raises(ValueError, match="sigma and epsilon must be non-negative"):
        ToyForceField(q, torch.tensor([1.0, -1.0, 1.0]), one)
    with pytest.raises(TypeError, match="bonds must hold integer atom indices"):
        ToyForceField(q, one, one, torch.tensor([[0.0, 1.0]]))  # a float is refused, not cast
    with pytest.raises(ValueError, match=r"bonds holds atom indices outside \[0, 3\)"):
        exclusion_scales(torch.tensor([[0, 5]]), 3)
    with pytest.raises(ValueError, match="n_atoms must be a positive int"):
        exclusion_scales(torch.tensor([[0, 1]]), 0)
    ff = ToyForceField(q, one, one * 0.1)
    same = torch.tensor([[0.0, 0, 0], [0.0, 0, 0], [5.0, 0, 0]], dtype=F64)
    with pytest.raises(ValueError, match="interacting atoms 0 and 1 at the same point"):
        ff.energy(same)
    bonded = ToyForceField(q, one, one * 0.1, torch.tensor([[0, 1]]), bond_r0=0.0)
    assert math.isfinite(float(bonded.energy(same)))  # a 1-2 pair at one point is excluded
