"""One training step of each of Chapter 13's classifiers under the same-device check (Platform F).

`train_classifier` reads its loss back (a host read meta cannot serve), so it runs on the CPU with
the *default* device set to `meta`: any tensor a step builds without naming a device lands on meta
and the same-device check fails on its first use. (On the CPU the layer's linear recurrence runs
through scipy's IIR filter, which meta cannot serve either.)
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.sh2rfssm.experiments import (
    CONFIG,
    LIFScanNet,
    LRUNet,
    make_sh2rfssm,
    make_tone_bursts,
    train_classifier,
)

ARMS = {
    "imex": dict(method="imex"),
    "im": dict(method="im"),
    "non-spiking": dict(spiking=False),
}


def _model(arm):
    cfg = CONFIG.get("ci")
    if arm == "lif":
        return LIFScanNet(1, cfg.tone_hidden, 4, threshold=cfg.tone_picks["lif"][1])
    if arm in ("lru", "lru non-spiking"):
        return LRUNet(1, 4, hidden=cfg.tone_hidden, spiking=arm == "lru")
    return make_sh2rfssm(cfg, 1, 4, 0, **ARMS[arm])


@pytest.mark.parametrize("arm", [*ARMS, "lif", "lru", "lru non-spiking"])
def test_train_step_same_device(arm):
    X, y = make_tone_bursts(4, 128, burst=32, seed=0)
    model = _model(arm)
    with torch.device("meta"), check_same_device():
        loss = train_classifier(model, X, y, 1, 1e-3)
    assert loss == loss


def test_planted_tensor_on_the_default_device_fails():
    X, y = make_tone_bursts(4, 128, burst=32, seed=0)
    model = _model("imex")
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        model(X[:2] + torch.zeros(1))  # built without device=: lands on meta
