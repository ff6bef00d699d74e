"""One force call (energy, then forces by autograd) of each of Chapter 6's paths under the
same-device check (Platform F).

The radius graph has a data-dependent edge count (meta has no values), so the step runs on the
CPU with the *default* device set to `meta`: any tensor the step builds without naming the device
of its inputs lands on meta and the same-device check fails on its first use.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.flashschnet.experiments import CONFIG, PATHS, bead_chain, make_model


@pytest.fixture(scope="module")
def chain():
    return bead_chain(CONFIG.get("ci").n_beads, 2, seed=0, fold_steps=0)


@pytest.mark.parametrize("path", list(PATHS))
def test_force_call_same_device(chain, path):
    z, pos, batch = chain
    model = make_model(CONFIG.get("ci"), 0, path, backend="torch")
    with torch.device("meta"), check_same_device():
        energy, forces = model.energy_and_forces(z, pos, batch)
    assert energy.device == forces.device == pos.device


def test_planted_tensor_on_the_default_device_fails(chain):
    z, pos, batch = chain
    model = make_model(CONFIG.get("ci"), 0, "plain", backend="torch")
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        energy, _ = model.energy_and_forces(z, pos, batch)
        energy + torch.zeros(len(energy))  # built without device=: lands on meta
