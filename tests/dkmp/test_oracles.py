"""Independent oracles: ASE's Lennard-Jones calculator; compile_check for the star kernel."""

import numpy as np
import pytest
import torch

from icml26_lit.core import HAS_TRITON
from icml26_lit.dkmp import ToyForceField

ase = pytest.importorskip("ase")


def test_lennard_jones_equals_ase():
    from ase import Atoms
    from ase.calculators.lj import LennardJones

    g = torch.Generator().manual_seed(0)
    n, sigma, eps = 12, 3.4, 0.09
    grid = torch.stack(torch.meshgrid(*[torch.arange(3.0, dtype=torch.float64)] * 3, indexing="ij"))
    lattice = 3.8 * grid.reshape(3, -1).T[:n]  # near the LJ minimum, jittered: both signs of force
    pos = lattice + 0.4 * torch.rand(n, 3, generator=g, dtype=torch.float64)
    full = dict(dtype=torch.float64)  # float64 sigma: a float32 3.4 is off by 3e-8 relative
    ff = ToyForceField(
        torch.zeros(n, **full), torch.full((n,), sigma, **full), torch.full((n,), eps, **full)
    )
    e, f = ff.energy_and_forces(pos)
    atoms = Atoms("Ar" * n, positions=pos.numpy())
    atoms.calc = LennardJones(sigma=sigma, epsilon=eps, rc=1000.0, smooth=False)
    # ASE shifts each pair by its value at rc = 1000 A: 4 eps (sigma/rc)^6 ~ 5e-16, far below rtol
    np.testing.assert_allclose(float(e), atoms.get_potential_energy(), rtol=1e-8)
    np.testing.assert_allclose(f.numpy(), atoms.get_forces(), rtol=1e-8, atol=1e-10)


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
def test_star_kernel_compiles_for_t4_and_h100():
    from icml26_lit.core import compile_check
    from icml26_lit.dkmp.kernels import _SIG_STAR, _star_message_kernel

    # compile_check raises if a target fails to compile
    reports = compile_check(_star_message_kernel, _SIG_STAR, {"BLOCK_E": 16, "BLOCK_F": 32})
    assert [tuple(r.target) for r in reports] == [(7, 5), (9, 0)]
