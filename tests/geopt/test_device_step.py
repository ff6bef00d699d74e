"One training step of Chapter 2's Transolver on `meta` under the same-device check (Platform F)."

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.geopt.experiments import CONFIG, make_model, train


def _step(x_device: str) -> None:
    cfg = CONFIG.get("ci")
    model = make_model(cfg, 6, seed=0, backend="torch").to("meta")
    x = torch.zeros(4, 16, 8, device=x_device)
    y = torch.zeros(4, 16, 6, device="meta")
    with check_same_device():
        train(model, x, y, steps=1, batch=2, generator=torch.Generator().manual_seed(0))


def test_train_step_on_meta():
    _step("meta")


def test_planted_cpu_input_fails():
    with pytest.raises(MixedDeviceError):
        _step("cpu")
