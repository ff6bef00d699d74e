"""Chapter 13: seeded code keeps the global RNG; the LRU baseline equals its recurrence."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from icml26_lit.sh2rfssm.experiments import (
    CONFIG,
    LRULayer,
    LRUNet,
    local_seed,
    run_regression,
    run_tone,
    tone_data,
)
from icml26_lit.sh2rfssm.layer import SH2RFSSM, HRFLayer, KernelRegressor


def _states():
    return torch.get_rng_state(), np.random.get_state()[1].copy()


def _same_states(a, b):
    return torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def _params(m):
    return [p.detach().clone() for p in m.state_dict().values()]


@pytest.mark.parametrize(
    "build",
    [
        lambda: SH2RFSSM(3, 4, hidden=8, seed=5),
        lambda: SH2RFSSM(3, 1, hidden=8, task="regression", seed=5),
        lambda: KernelRegressor(8, 2, generator=torch.Generator().manual_seed(5)),
        lambda: HRFLayer(3, 8, generator=torch.Generator().manual_seed(5)),
        lambda: LRUNet(3, 4, hidden=8, seed=5),
    ],
)
def test_seeded_models_ignore_and_keep_the_global_rng(build):
    torch.manual_seed(1)
    before = _states()
    a = _params(build())
    assert _same_states(before, _states())  # nothing drawn from the global RNG
    torch.manual_seed(2)  # another global state: the same initial values
    b = _params(build())
    assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_heads_are_drawn_from_the_seed():
    a, b = SH2RFSSM(3, 4, hidden=8, seed=5), SH2RFSSM(3, 4, hidden=8, seed=6)
    assert not torch.equal(a.head.weight, b.head.weight)
    bound = 1 / 8**0.5  # PyTorch's default bounds for a Linear with 8 inputs
    w, b = a.head.weight.detach(), a.head.bias.detach()
    assert float(w.abs().max()) <= bound and float(b.abs().max()) <= bound
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        SH2RFSSM(3, 4, seed=-1)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        LRUNet(3, 4, seed=1.5)


def _tiny_cfg():
    cfg = CONFIG.get("ci")
    small = dict(tone_length=64, tone_burst=16, tone_train=8, tone_test=8, tone_epochs=1)
    return type(cfg)({**cfg, **small, "tone_batch": 4, "tone_hidden": 4, "hidden": 4})


@pytest.mark.parametrize("arm", ["sh2rfssm", "lru", "lru_ann", "lif"])
def test_runs_are_the_same_under_two_global_states_and_keep_them(arm):
    cfg = _tiny_cfg()
    data = tone_data(cfg, 0)
    out = []
    for global_seed in (11, 12):
        torch.manual_seed(global_seed)
        np.random.seed(global_seed)
        before = _states()
        r = run_tone(cfg, arm, 3, 0.01, 1.0, data)
        assert _same_states(before, _states()), "a run changed the caller's RNG state"
        out.append((r["acc"], r["curve"]))
    assert out[0] == out[1]


def test_regression_run_is_the_same_under_two_global_states():
    cfg = CONFIG.get("ci")
    cfg = type(cfg)({**cfg, "reg_length": 32, "reg_train": 4, "reg_epochs": 1, "hidden": 4})
    out = []
    for global_seed in (11, 12):
        torch.manual_seed(global_seed)
        before = _states()
        r = run_regression(cfg, 2)
        assert _same_states(before, _states())
        out.append((r["mse"], r["curve"]))
    assert out[0] == out[1]


def test_local_seed_validates_its_seed():
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        with local_seed(-3):
            pass


def test_importing_the_chapter_builds_nothing_from_the_global_rng():
    code = (
        "import torch; torch.manual_seed(0); s = torch.get_rng_state()\n"
        "import icml26_lit.sh2rfssm, icml26_lit.sh2rfssm.experiments\n"
        "assert torch.equal(s, torch.get_rng_state()), 'import drew from the global RNG'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_lru_layer_equals_the_complex_recurrence(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    C, H, L, B = 2, 3, int(torch.randint(1, 70, (1,), generator=g)), 2
    layer = LRULayer(C, H, spiking=False, theta=0.0, generator=g).double()
    with torch.no_grad():  # move the parameters off their initial values
        for p in (layer.nu_log, layer.phase_log, layer.gamma_log, layer.c, layer.d):
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    x = torch.randn(B, L, C, generator=g, dtype=torch.float64)
    with torch.no_grad():
        cur, lam = layer.proj(x), layer.eigenvalues()
        c = torch.complex(layer.c[0], layer.c[1])
        s, ys = torch.zeros(B, H, dtype=lam.dtype), []
        for t in range(L):
            s = lam * s + layer.gamma_log.exp() * cur[:, t]
            ys.append((c * s).real + layer.d * cur[:, t])
        expected = torch.nn.functional.gelu(torch.stack(ys, 1))
        torch.testing.assert_close(layer(x), expected, msg=f"seed={fresh_seed}")
    assert bool((lam.abs() < 1).all())  # the exponential parametrisation keeps it stable


def test_lru_initial_eigenvalues_on_the_ring():
    layer = LRULayer(1, 500, r_range=(0.9, 0.99), max_phase=0.5)
    lam = layer.eigenvalues().detach()
    assert float(lam.abs().min()) >= 0.9 - 1e-6 and float(lam.abs().max()) <= 0.99 + 1e-6
    assert float(lam.angle().min()) >= 0 and float(lam.angle().max()) <= 0.5 + 1e-6
    torch.testing.assert_close(
        layer.gamma_log.exp().detach() ** 2, 1 - lam.abs() ** 2, rtol=1e-5, atol=1e-6
    )
    for kw, msg in (
        (dict(r_range=(0.9, 1.0)), "r_range must satisfy"),
        (dict(max_phase=0.0), "max_phase must be in"),
        (dict(theta=-1.0), "theta must be non-negative"),
    ):
        with pytest.raises(ValueError, match=msg):
            LRULayer(1, 4, **kw)
    with pytest.raises(ValueError, match="hidden must be a positive integer"):
        LRULayer(1, 0)
