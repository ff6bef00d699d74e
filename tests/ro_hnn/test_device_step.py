"""One training step of Chapter 3's RO-HNN on `meta` under the same-device check (Platform F).

`train_model` logs each step's loss as a Python float (a host read meta cannot serve), so the test
runs its loop body (batch draw, `window_loss` on one-step windows, backward, one RiemannianAdam
step).
"""

import geoopt
import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.ro_hnn.experiments import CONFIG, new_model
from icml26_lit.ro_hnn.model import window_loss


def _step(windows_device: str) -> None:
    cfg = CONFIG.get("ci")
    model = new_model(cfg, "rohnn", seed=0).to("meta")
    windows = torch.zeros(2, 6, 2 * cfg.n_pendula, dtype=torch.float64, device=windows_device)
    opt = geoopt.optim.RiemannianAdam(model.parameters(), lr=1e-3)
    with check_same_device():
        idx = torch.randint(windows.shape[1], (4,), generator=torch.Generator().manual_seed(0))
        loss, _ = window_loss(model, windows[:, idx.to(windows.device)])
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_train_step_on_meta():
    _step("meta")


def test_planted_cpu_windows_fail():
    # the decoder's kernel wrapper names the input on another device before the same-device mode
    with pytest.raises(
        (MixedDeviceError, ValueError), match="^x is on cpu but psi is on meta|received"
    ):
        _step("cpu")
