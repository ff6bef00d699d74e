"""One training step of Chapter 09's flow, per method, under the same-device check (Platform F).

`fit` reads each step's loss back (a host read meta cannot serve), so the step runs on the CPU with
the *default* device set to `meta`: any tensor the step builds without naming its device lands on
meta and the same-device check fails on its first use. Minibatch rows are drawn on the generator's
device (a seed gives the same rows on any device) and moved to the data's.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.ldr.experiments import CONFIG, make_flow
from icml26_lit.ldr.objectives import METHODS, fit
from icml26_lit.ldr.targets import DoubleWell2D


def _setup():
    target = DoubleWell2D()
    x = target.sample(64, torch.Generator().manual_seed(0))
    return target, x, target.energy(x), make_flow("ours", 2, CONFIG.get("ci"), "cpu")


@pytest.mark.parametrize("center", ["batch", "learned"])
@pytest.mark.parametrize("method", METHODS)
def test_fit_step_same_device(method, center):
    target, x, u, flow = _setup()
    g = torch.Generator().manual_seed(1)
    with torch.device("meta"), check_same_device():
        hist = fit(flow, method, x, u, target.energy, center=center, steps=2, batch=16, generator=g)
    assert len(hist["loss"]) == 2


def test_planted_tensor_on_the_default_device_fails():
    target, x, u, flow = _setup()
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        flow.log_prob(x + torch.zeros(2))  # built without device=: lands on meta
