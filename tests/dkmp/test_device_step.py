"""One training step of Chapter 7's DKMP arm under the same-device check (Platform F).

On the CPU, not `meta`: DKMP's radius graph has a data-dependent edge count (meta has no values).
The step is `train_arm` (forces by autograd with create_graph, Adam, cosine schedule) on a tiny
charged polymer, which `train_arm` moves to the device it is given.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.dkmp.experiments import CONFIG, charged_polymer, make_arm, train_arm


@pytest.fixture(scope="module")
def data():
    return charged_polymer(32, 0, CONFIG.get("ci").q, n_frames=3, burn_in=5, every=2)


def _step(data, data_device: str) -> None:
    cfg = CONFIG.get("ci")
    tiny = type(cfg)(dict(cfg, n_train=2, batch=2))
    arm = make_arm("dkmp", data, tiny, 0, torch.device("cpu"))
    with check_same_device():
        train_arm(arm, data, tiny, 0, cfg.lr_dkmp, 1, torch.arange(2), torch.device(data_device))


def test_train_step_same_device(data):
    _step(data, "cpu")


def test_planted_other_device_data_fails(data):
    # the arm stays on the CPU while train_arm moves the frames to meta
    with pytest.raises(MixedDeviceError):
        _step(data, "meta")
