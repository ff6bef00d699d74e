"""One FFM training step and one KL estimate of Chapter 11 under the same-device check (Platform F).

Draws come from CPU generators (so a seed gives the same numbers on any device) and the step reads
its loss back, so it runs on the CPU with the *default* device set to `meta`: any tensor the step
builds without naming a device lands on meta and the same-device check fails on its first use.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.functional_kl.estimator import functional_kl
from icml26_lit.functional_kl.ffm import FunctionalFlowMatching
from icml26_lit.functional_kl.noise import GaussianNoise


def _model(noise, device=None):
    g = torch.Generator().manual_seed(0)
    return FunctionalFlowMatching(noise, 2, 3, width=8, generator=g, device=device)


def test_ffm_step_and_kl_same_device():
    noise = GaussianNoise(16, 4)
    ffm = _model(noise)
    g = torch.Generator().manual_seed(1)
    paths = [torch.randn(6, 16, 2, generator=g) for _ in range(3)]
    with torch.device("meta"), check_same_device():
        ffm.step(paths, 4, g)
        est = functional_kl(ffm.velocity(0), ffm.velocity(1), paths[0], noise, n_t=2, generator=g)
    assert est.per_path.shape == (6,)


def test_networks_follow_the_device_argument():
    ffm = _model(GaussianNoise(16, 4), device="meta")
    assert {p.device.type for p in ffm.net.parameters()} == {"meta"}
    assert {p.device.type for p in ffm.ema_net.parameters()} == {"meta"}


def test_planted_tensor_on_the_default_device_fails():
    noise = GaussianNoise(16, 4)
    v = _model(noise).velocity(0)
    x = torch.zeros(2, 16, 2)
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        v(x, torch.full((2,), 0.5))  # times built without device=: they land on meta
