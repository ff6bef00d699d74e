"""Tests of icml26_lit.dkmp.adk: the AdK files' counts, the field on AdK, minimisation."""

import pytest
import torch

from icml26_lit.dkmp.adk import AdKRecord, load_adk, load_adk_solvated, minimise
from icml26_lit.dkmp.toy_field import ToyForceField


@pytest.fixture(scope="module")
def adk():
    return load_adk()


def test_adk_counts(adk):
    assert adk.positions.shape == (98, 3341, 3)
    assert adk.bonds.shape == (3365, 2)
    assert adk.charges.shape == (3341,)
    assert abs(float(adk.charges.sum()) + 4.0) < 1e-5  # PSF charges carry 6 decimals
    assert set(adk.elements) == {"C", "H", "N", "O", "S"}
    assert load_adk(slice(0, 3)).positions.shape == (3, 3341, 3)
    assert load_adk_solvated().shape == (47681, 3)


def _fragment(adk, n):
    keep = (adk.bonds < n).all(1)
    sub = slice(0, n)
    return AdKRecord(adk.positions[:2, sub], adk.charges[sub], adk.bonds[keep], adk.elements[sub])


def test_minimise_lowers_energy_and_force(adk):
    small = _fragment(adk, 150)
    ff = ToyForceField.from_adk(small)
    x0 = small.positions[1]  # a frame other than the bond reference
    e0, f0 = ff.energy_and_forces(x0)
    x = minimise(ff, x0, steps=100)
    e1, f1 = ff.energy_and_forces(x)
    assert float(e1) < float(e0)
    assert float(f1.norm(dim=1).max()) < 0.1 * float(f0.norm(dim=1).max())
    # bonds of the reference frame sit at their rest length: zero bond energy there
    b = small.positions[0][small.bonds[:, 0]] - small.positions[0][small.bonds[:, 1]]
    torch.testing.assert_close(b.norm(dim=1), ff.bond_r0)


def test_adk_bad_input(adk):
    with pytest.raises(ValueError, match="frame must be"):
        ToyForceField.from_adk(adk, frame=98)
    ff = ToyForceField.from_adk(_fragment(adk, 20))
    with pytest.raises(ValueError, match="pos must have shape"):
        minimise(ff, torch.zeros(21, 3))
