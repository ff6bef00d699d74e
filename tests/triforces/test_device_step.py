"""One fine-tuning step of Chapter 8's TriForces under the same-device check (Platform F).

On the CPU, not `meta`: the interaction stream's CSR (`build_csr`, Chapter 6) range-checks its
indices on the host and sizes `bincount` from data. `finetune` builds each batch's periodic graph
on the CPU (`collate`) and moves it to the model's device; the step runs the full three-stream
model (arm C) with the ci force head.
"""

import importlib

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.triforces.alloys import collate
from icml26_lit.triforces.experiments import CONFIG, make_alloy_dataset, make_arm
from icml26_lit.triforces.finetune import finetune

finetune_module = importlib.import_module("icml26_lit.triforces.finetune")  # the package
# re-exports the function `finetune` under the module's name


@pytest.fixture(scope="module")
def structures():
    cfg = CONFIG.get("ci")
    return make_alloy_dataset(4, 0, cfg.max_atoms, cfg.strain)


def _step(structures) -> None:
    cfg = CONFIG.get("ci")
    model = make_arm("C", 0, cfg)
    g = torch.Generator().manual_seed(0)
    with check_same_device():
        finetune(model, structures, 1, 2, 1e-3, cfg.head, generator=g)


def test_finetune_step_same_device(structures):
    _step(structures)


def test_batches_follow_the_model_device(structures):
    batch = finetune_module._on(collate(structures[:2], 5.0), torch.device("meta"))
    tensors = [v for v in batch.values() if isinstance(v, torch.Tensor)]
    assert tensors and all(v.is_meta for v in tensors)


def test_planted_other_device_batch_fails(structures, monkeypatch):
    # the batch goes to meta while the model stays on the CPU
    monkeypatch.setattr(
        finetune_module,
        "_on",
        lambda b, d: {k: v.to("meta") if torch.is_tensor(v) else v for k, v in b.items()},
    )
    with pytest.raises(MixedDeviceError):
        _step(structures)
