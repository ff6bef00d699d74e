"""One pre-training step of Chapter 5's EMFormer on `meta` under the same-device check (Platform F).

`pretrain` logs each step's loss as Python floats (a host read meta cannot serve), so the test
runs its loop body: `_sample`, the composite loss, backward, clipping, AdamW and the schedule.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.emformer.experiments import CONFIG, new_model
from icml26_lit.emformer.finetune import _loss, _optimizer, _sample, _update


def _step(train_device: str) -> None:
    cfg = CONFIG.get("ci")
    model = new_model(cfg, seed=0, backend="torch").to("meta")
    train = torch.zeros(3, 4, 3, cfg.ny, cfg.nx, device=train_device)  # (N, T, C, H, W)
    opt, sched = _optimizer(model, 1e-3, 1e-4, 2)
    model.train()
    with check_same_device():
        seq = _sample(train, 2, 1, torch.Generator().manual_seed(0))
        loss, _ = _loss(model, model(seq[0]), seq[1], None)
        _update(model, opt, sched, loss, 20.0)


def test_pretrain_step_on_meta():
    _step("meta")


def test_planted_cpu_data_fails():
    with pytest.raises(MixedDeviceError):
        _step("cpu")
