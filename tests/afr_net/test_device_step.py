"""One training step of Chapter 17's networks under the same-device check (Platform F).

The step draws its batch order from a CPU generator and the cohort lives on the CPU, so it runs on
the CPU with the *default* device set to `meta`: any tensor the step builds without naming a device
lands on meta and the same-device check fails on its first use. (The Triton backend on the CPU
needs the interpreter, set before import; `backend="torch"` is what `auto` runs on CPU tensors.)
"""

import pytest
import torch

from icml26_lit.afr_net.experiments import (
    CONFIG,
    DualStreamGNN,
    _fit,
    _new_model,
    make_data,
    on_device,
    train_afrnet,
    train_gnn,
)
from icml26_lit.core.kernels import MixedDeviceError, check_same_device


@pytest.fixture(scope="module")
def small():
    cfg = CONFIG.get("ci")
    cfg.update(batch=4)
    return cfg, make_data(cfg, 0, cfg.effect, n_subjects=20)


def _model(arm, data, cfg):
    if arm in ("gcn", "gat"):
        return DualStreamGNN(data["graphs"]["x"].shape[-1], arm, hidden=8, embed=8, heads=2)
    return _new_model(data["graphs"], cfg, 0, "torch", arm, None)


@pytest.mark.parametrize("arm", ["energy", "sc", "ones", "gcn", "gat"])
def test_train_step_same_device(arm, small):
    cfg, data = small
    model = _model(arm, data, cfg)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.device("meta"), check_same_device():
        _, _, done, _ = _fit(model, data, cfg, 0, 1e-3, 1, None)
    assert done == 1
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before))  # it stepped


def test_planted_tensor_on_the_default_device_fails(small):
    cfg, data = small
    model = _model("energy", data, cfg)
    batch = {k: v[:2] for k, v in data["graphs"].items()}
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        model(dict(batch, x=batch["x"] + torch.zeros(1)))  # built without device=: on meta


def test_on_device_moves_every_tensor_and_keeps_the_cohort(small):
    _, data = small
    moved = on_device(data, "meta")
    tensors = [*moved["graphs"].values(), moved["y"], *moved["split"]]
    assert {t.device.type for t in tensors} == {"meta"}
    assert moved["cohort"] is data["cohort"]


@pytest.mark.parametrize("kind", ["afr", "gcn", "gat"])
def test_training_functions_take_device(kind, small):
    # the model and the data go to `device`; on the CPU the numbers are those of the default
    cfg, data = small

    def run(**kw):
        if kind == "afr":
            return train_afrnet(data, cfg, 0, 1e-3, steps=2, backend="torch", **kw)["model"]
        return train_gnn(data, cfg, 0, 1e-3, kind, steps=2, **kw)["model"]

    a, b = run(), run(device="cpu")
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
