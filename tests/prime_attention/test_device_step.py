"""One training step of Chapter 14's forecaster under the same-device check (Platform F).

The model's forward checks its input for NaN (a host read meta cannot serve), so the step runs on
the CPU with the *default* device set to `meta`: any tensor the step builds without naming a
device lands on meta and the same-device check fails on its first use. The prime arms run once
more through the Triton kernels (the interpreter), forward and backward.
"""

import pytest
import torch

from icml26_lit.core import HAS_TRITON
from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.prime_attention.experiments import _ARMS, CONFIG, load_data, train_step
from icml26_lit.prime_attention.model import PrimeITransformer


@pytest.fixture(scope="module")
def data():
    return load_data(3000, CONFIG.get("ci").noise_std, 0)


def _model(arm, backend="torch"):
    attention, L, mode = _ARMS[arm]
    return PrimeITransformer(
        12,
        L,
        CONFIG.get("ci").horizon,
        attention=attention,
        mode=mode,
        backend=backend,
        generator=torch.Generator().manual_seed(0),
        channel_embedding=arm.startswith("channel"),
    )


_CASES = [(arm, "torch") for arm in _ARMS] + [
    pytest.param(arm, "triton", marks=pytest.mark.skipif(not HAS_TRITON, reason="needs triton"))
    for arm in ("prime_48", "dynamic_48")
]


@pytest.mark.parametrize("arm, backend", _CASES)
def test_train_step_same_device(data, arm, backend):
    X, Y = data["windows"][_ARMS[arm][1]]["train"]
    model = _model(arm, backend)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.device("meta"), check_same_device():
        train_step(model, opt, X, Y, 4, torch.Generator().manual_seed(7))
    assert all(p.device.type == "cpu" for p in model.parameters())
    assert any(not torch.equal(a, p) for a, p in zip(before, model.parameters()))  # it stepped


def test_planted_tensor_on_the_default_device_fails(data):
    X, Y = data["windows"][48]["train"]
    model = _model("prime_48")
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        model(X[:2] + torch.zeros(1))  # built without device=: lands on meta


def test_step_draws_on_the_generator_not_the_default_device(data):
    # the batch indices come from the CPU generator whatever the default device: the same windows
    X, Y = data["windows"][48]["train"]
    steps = []
    for default in ("cpu", "meta"):
        model = _model("pairbias_48")
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        with torch.device(default), check_same_device():
            train_step(model, opt, X, Y, 4, torch.Generator().manual_seed(7))
        steps.append([p.detach().clone() for p in model.parameters()])
    for a, b in zip(*steps):
        assert torch.equal(a, b)
