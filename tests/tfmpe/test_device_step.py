"""One training step of Chapter 10's TFMPE on `meta` under the same-device check (Platform F).

The estimator is built with `device="meta"`; standardisation statistics come from the CPU
simulations (as in `fit`), the tokens are moved to the device, and `_train_step` takes one Adam
step on the flow-matching loss of an 8-set batch (first-batch validation off: it reads values).
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.tfmpe.experiments import CONFIG
from icml26_lit.tfmpe.model import TFMPE
from icml26_lit.tfmpe.tasks import HierarchicalGaussian


def _step(batch_device: str) -> None:
    cfg = CONFIG.get("ci")
    task = HierarchicalGaussian(n_sites=2)
    g = torch.Generator().manual_seed(0)
    params = task.sample_prior(16, 2, generator=g)
    obs = task.simulate(params, generator=g)
    est = TFMPE(task.labels, latent_dim=16, n_encoder=1, n_heads=cfg.n_heads, device="meta")
    cond, targ = est._split(params, obs)
    tok, _ = est._prepare(cond, targ, None, None, None)
    idx = torch.randint(0, 16, (8,), generator=g).to(batch_device)
    opt = torch.optim.Adam(est.net.parameters(), lr=1e-3)
    with check_same_device():
        loss = est._train_step(tok.select(idx), opt, g, validate=False)
    assert loss.is_meta and loss.dim() == 0


def test_train_step_on_meta():
    _step("meta")


def test_planted_cpu_batch_index_fails():
    # batch indices left on the CPU (as `fit` drew them before moving them) meet meta tokens
    with pytest.raises(MixedDeviceError):
        _step("cpu")
