"""One training step of Chapter 04's neural field under the same-device check (Platform F).

`fit_field` reads its loss back (a host read meta cannot serve), so it runs on the CPU with the
*default* device set to `meta`: any tensor a step builds without naming a device lands on meta and
the same-device check fails on its first use. The steps cover the first frame (every weight, full
batch), a later frame (LoRA factors only, mini-batches drawn from a host generator) and attaching
the LoRA factors.
"""

import math

import pytest
import torch

from icml26_lit.antic.neural_field import NeuralField, fit_field
from icml26_lit.core.kernels import MixedDeviceError, check_same_device


def _data(n=64):
    g = torch.Generator().manual_seed(0)
    return torch.rand(n, 2, generator=g) * 2 * math.pi, torch.randn(n, generator=g)


def test_fit_field_steps_same_device():
    x, y = _data()
    field = NeuralField(hidden=16, n_layers=2, n_freq=16, seed=0, backend="torch")
    with torch.device("meta"), check_same_device():
        mse_all = fit_field(field, x, y, 2)
        field.add_lora(2, seed=1)
        mse_lora = fit_field(field, x, y, 2, params="lora", batch_size=16, seed=3)
        out = field(x)
    assert math.isfinite(mse_all) and math.isfinite(mse_lora)
    assert out.device.type == "cpu" and out.shape == (64, 1)
    assert {p.device.type for p in field.parameters()} == {"cpu"}


def test_lora_factors_follow_the_field():
    # drawn on the host, then placed with the field's device and dtype: the same numbers as a
    # float32 field's, on any device
    f32 = NeuralField(hidden=16, n_layers=2, n_freq=16, seed=0)
    f64 = NeuralField(hidden=16, n_layers=2, n_freq=16, seed=0).double()
    f32.add_lora(3, seed=5)
    f64.add_lora(3, seed=5)
    for a, b in zip(f32.lora_parameters(), f64.lora_parameters()):
        assert b.dtype == torch.float64 and torch.equal(a.double(), b)
    meta = NeuralField(hidden=16, n_layers=2, n_freq=16, seed=0).to("meta")
    meta.add_lora(3, seed=5)
    assert {p.device.type for p in meta.lora_parameters()} == {"meta"}


def test_planted_tensor_on_the_default_device_fails():
    x, _ = _data()
    field = NeuralField(hidden=16, n_layers=2, n_freq=16, seed=0, backend="torch")
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        field(x + torch.zeros(1))  # built without device=: lands on meta
