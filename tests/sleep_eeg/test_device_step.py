"""Training steps of Chapter 15's tokenizer and translators under the same-device check
(Platform F).

The steps validate their inputs and read losses back (host reads meta cannot serve), so they run
on the CPU with the *default* device set to `meta`: any tensor a step builds without naming a
device lands on meta and the same-device check fails on its first use. Random draws come from CPU
generators and are moved to the model's device, so a seed gives the same numbers on any device.
"""

import pytest
import torch

from icml26_lit.core.kernels import MixedDeviceError, check_same_device
from icml26_lit.sleep_eeg.generator import (
    LaplaceControl,
    RespirationToEEG,
    fit_translator,
    generate_tokens,
)
from icml26_lit.sleep_eeg.tokenizer import SpectrogramTokenizer, fit_tokenizer

L = 24  # samples per breathing window (small)


def _data(g):
    return torch.randn(3, 10, L, generator=g), torch.randint(8, (3, 80), generator=g)


def test_token_translator_step_and_decoding_same_device():
    g = torch.Generator().manual_seed(0)
    windows, tokens = _data(g)
    model = RespirationToEEG(8, L, d=16, n_layers=1, n_heads=2, generator=g)
    with torch.device("meta"), check_same_device():
        fit_translator(model, windows, tokens, steps=1, batch=2, generator=g)
        out = generate_tokens(model, windows, steps=2, greedy=False, generator=g)
    assert out.shape == (3, 80) and out.device.type == "cpu"


def test_laplace_control_step_and_sampling_same_device():
    g = torch.Generator().manual_seed(0)
    windows, _ = _data(g)
    model = LaplaceControl(6, L, d=16, n_layers=1, n_heads=2, generator=g)
    target = torch.randn(3, 80, 6, generator=g)
    with torch.device("meta"), check_same_device():
        fit_translator(model, windows, target, 1, 2, generator=g)
        draws = model.sample(windows, 2, generator=g)
    assert draws.shape == (2, 3, 80, 6)


def test_tokenizer_steps_same_device():
    g = torch.Generator().manual_seed(0)
    tok = SpectrogramTokenizer(8, 4, 16, backend="torch", generator=g)
    spec = torch.randn(32, 5, 32, generator=g)
    with torch.device("meta"), check_same_device():
        fit_tokenizer(tok, spec, steps=2, batch=8, generator=g)  # init, EMA, restarts


def test_planted_tensor_on_the_default_device_fails():
    g = torch.Generator().manual_seed(0)
    windows, tokens = _data(g)
    model = RespirationToEEG(8, L, d=16, n_layers=1, n_heads=2, generator=g)
    with pytest.raises(MixedDeviceError), torch.device("meta"), check_same_device():
        model(windows, torch.where(torch.ones(3, 80, dtype=torch.bool), tokens, 0))
