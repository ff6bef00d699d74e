"""Tests of icml26_lit.md.chain: priors, observables, chain generator."""

import math

import pytest
import torch

from icml26_lit.md.chain import ChainPrior, bead_chain, bond_lengths, radius_of_gyration


def test_prior_forces_are_minus_gradient(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    prior = ChainPrior(attraction=1.0)
    p = torch.randn(10, 3, dtype=torch.float64, generator=g) * 4
    batch = torch.tensor([0] * 6 + [1] * 4)
    e, f = prior.energy_and_forces(p, batch)
    assert e.shape == (2,)
    h = 1e-6
    for i, k in [(0, 0), (5, 2), (7, 1)]:
        dp = torch.zeros_like(p)
        dp[i, k] = h
        fd = -float((prior(p + dp, batch) - prior(p - dp, batch)).sum()) / (2 * h)
        assert abs(fd - float(f[i, k])) < 1e-5 * max(1.0, abs(fd))


def test_prior_closed_forms():
    two = torch.tensor([[0.0, 0, 0], [4.0, 0, 0]], dtype=torch.float64)
    assert abs(float(ChainPrior(repulsion=0.0)(two)) - 0.5 * 50 * 0.04) < 1e-12
    three = torch.tensor([[0.0, 0, 0], [3.8, 0, 0], [3.8, 3.8, 0]], dtype=torch.float64)
    # beads 0 and 2 are 2 bonds apart: repulsion (4 / d)^6 with d = 3.8 sqrt 2
    assert abs(float(ChainPrior()(three)) - (4 / (3.8 * math.sqrt(2))) ** 6) < 1e-12
    separate = ChainPrior(repulsion=0.0)(two, torch.tensor([0, 1]))  # two replicas: no bond
    assert torch.equal(separate, torch.zeros(2, dtype=torch.float64))


def test_observables():
    pos = torch.tensor([[0.0, 0, 0], [2.0, 0, 0], [0.0, 0, 0], [0.0, 6.0, 0]], dtype=torch.float64)
    batch = torch.tensor([0, 0, 1, 1])
    torch.testing.assert_close(
        radius_of_gyration(pos, batch), torch.tensor([1.0, 3.0], dtype=torch.float64)
    )
    torch.testing.assert_close(
        bond_lengths(pos, batch), torch.tensor([2.0, 6.0], dtype=torch.float64)
    )


def test_bead_chain_is_compact_and_seeded():
    z, pos, batch = bead_chain(30, 3, seed=4, fold_steps=150)
    assert z.shape == (90,) and pos.shape == (90, 3) and int(batch.max()) == 2
    assert bool((z >= 1).all() and (z <= 20).all())
    raw = bead_chain(30, 1, seed=4, fold_steps=0)[1]
    assert bool((radius_of_gyration(pos, batch) < radius_of_gyration(raw)).all())
    assert abs(float(bond_lengths(pos, batch).mean()) - 3.8) < 0.25
    assert torch.equal(bead_chain(30, 3, seed=4, fold_steps=150)[1], pos)
    with pytest.raises(ValueError, match="n_beads must be"):
        bead_chain(1)
    with pytest.raises(ValueError, match="seed must be"):
        bead_chain(5, seed=-1)
