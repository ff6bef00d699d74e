"""One training step of Chapter 12's O2NC-Adam on `meta` under the same-device check (Platform F).

`run_adam_one` reads each step's loss back (a host read meta cannot serve), so the test runs its
loop body: a batch drawn on the host and moved to the device, the L1 loss, backward, and one
optimiser step of each kind (the O2NC step with its clip or its ratio tracking, on the path
`backend="auto"` takes there).
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.ftrl.adam import O2NCAdam
from icml26_lit.ftrl.experiments import ADAM_KINDS, CONFIG, _net, adam_clip


def _optimiser(kind, net, cfg):
    betas = tuple(cfg.betas[0])
    if kind == "adam":
        return torch.optim.Adam(net.parameters(), lr=cfg.adam_lr, betas=betas)
    return O2NCAdam(
        net.parameters(),
        lr=cfg.adam_lr,
        betas=betas,
        clip=adam_clip(cfg, betas) if kind == "o2nc_clip" else None,
        ema=cfg.adam_ema,
        generator=torch.Generator().manual_seed(0),
        track_ratio=kind == "o2nc_free",
        backend="auto",
    )


def _step(kind, data_device="meta"):
    cfg = CONFIG.get("ci")
    net = _net(10, cfg.adam_hidden, 0).to("meta")
    X, y = torch.zeros(16, 10, device=data_device), torch.zeros(16, 1, device=data_device)
    opt = _optimiser(kind, net, cfg)
    g = torch.Generator().manual_seed(1)
    with check_same_device():
        for _ in range(2):  # the second step reads the state the first one wrote
            idx = torch.randint(0, X.shape[0], (cfg.adam_batch,), generator=g).to(X.device)
            opt.zero_grad()
            loss = (net(X[idx]) - y[idx]).abs().mean()
            loss.backward()
            opt.step()


@pytest.mark.parametrize("kind", ADAM_KINDS)
def test_adam_step_on_meta(kind):
    _step(kind)


def test_planted_cpu_batch_fails():
    with pytest.raises(MixedDeviceError):
        _step("o2nc_free", data_device="cpu")
