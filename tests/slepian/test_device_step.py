"""One training step of Chapter 1's MLP head on `meta` under the same-device check (Platform F).

The encoders check their (lat, lon) input for NaNs and range at entry, a host read meta cannot
serve, and the experiment encodes once before training; so the step under test is the head's
training step (`train_head`: standardiser fit, one Adam step on a batch), on features and targets
that live on `meta`.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.slepian.experiments import CONFIG, train_head


def _step(predict=None) -> None:
    cfg = CONFIG.get("ci")
    f = torch.zeros(8, 5, device="meta")
    y = torch.zeros(8, device="meta")
    with check_same_device():
        train_head(f, y, {}, "mlp", 1, 4, cfg.lr, max_steps=1, predict=predict)


def test_head_step_on_meta():
    _step()


def test_planted_cpu_tensor_fails():
    # extra points to predict on (a map grid) left on the CPU while the head lives on meta
    with pytest.raises(MixedDeviceError):
        _step(predict=torch.zeros(3, 5))
