"""Chapter 14: the experiment's presets, smoke step and AUC."""

import json

import pytest
import torch

from icml26_lit.core import results_dir
from icml26_lit.prime_attention.experiments import (
    CONFIG,
    arm_lr,
    last_value_mse,
    pair_auc,
    smoke_step,
)
from icml26_lit.prime_attention.model import PrimeITransformer


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_smoke_step(scale):
    smoke_step(CONFIG.smoke(scale))


def test_ci_preset_is_the_protocol():
    c = CONFIG.get("ci")
    assert (c.n_steps, c.horizon, c.batch, c.steps, c.n_seeds) == (12_000, 12, 32, 400, 5)
    assert c.lr_grid == [1e-3, 3e-3, 1e-2, 3e-2] and c.pilot_seed == 100 and not c.run_pilot
    # ci trains the headline's and plain attention's L = 48 arms; the others join from cpu up
    assert c.arms == ["standard_48", "pairbias_48", "prime_48"]
    for scale in ("cpu", "colab", "full"):
        assert CONFIG.get(scale).arms == [
            "standard_48",
            "channel_48",
            "pairbias_48",
            "prime_48",
            "dynamic_48",
            "standard_30",
            "prime_30",
        ]
    path = None if results_dir() is None else results_dir() / "prime_attention" / "pilot_cpu.json"
    if path is not None and path.exists():  # the ci picks are the committed cpu pilot's
        pilot = json.loads(path.read_text())["pilot"]
        assert c.lr == pilot["lr"] and c.noise_std == pilot["noise_std"]
        assert c.margin == pytest.approx(pilot["margin"], rel=1e-9)


def test_pair_auc():
    g = torch.zeros(3, 3, dtype=torch.bool)
    g[0, 1] = True
    s = torch.zeros(3, 3)
    s[0, 1] = 1.0
    assert pair_auc(s, g) == 1.0 and pair_auc(-s, g) == 0.0


def test_last_value_mse_is_the_persistence_forecast():
    X = torch.zeros(2, 5, 3)
    X[:, -1] = torch.tensor([1.0, 2.0, 3.0])
    Y = torch.tensor([1.0, 2.0, 3.0]).expand(2, 4, 3).clone()
    assert last_value_mse(X, Y) == 0.0  # a constant series is forecast exactly
    Y[:, :, 0] += 2.0  # channel 0 misses by 2 at every step: MSE 4 / 3 over the channels
    assert last_value_mse(X, Y) == pytest.approx(4 / 3)


def test_every_arm_has_a_pilot_pick():
    for scale in ("ci", "cpu"):
        c = CONFIG.get(scale)
        assert set(arm_lr(c, c.lr)) == set(c.arms)
    c = CONFIG.get("cpu")
    with pytest.raises(ValueError, match="lr has no pick for the arms"):
        arm_lr(c, {"standard_48": 1e-3})


def test_channel_embeddings_tell_identical_channels_apart():
    g = lambda: torch.Generator().manual_seed(0)
    m = PrimeITransformer(3, 8, 2, attention="standard", channel_embedding=True, generator=g())
    plain = PrimeITransformer(3, 8, 2, attention="standard", generator=g())
    x = torch.randn(1, 8, 1).expand(1, 8, 3).contiguous()  # three identical channels
    with torch.no_grad():
        y_plain, y = plain(x), m(x)
    # plain attention cannot tell identical channels apart; channel embeddings can
    torch.testing.assert_close(y_plain[..., 0], y_plain[..., 1])
    assert not torch.allclose(y[..., 0], y[..., 1])


def test_train_arm_ignores_and_keeps_the_global_rng():
    from icml26_lit.prime_attention.experiments import load_data, train_arm

    c = CONFIG.smoke("ci")
    data = load_data(3000, c.noise_std, 0)
    out = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        state = torch.random.get_rng_state()
        r = train_arm(data, "pairbias_48", c, 0, 3e-3, steps=3)
        assert torch.equal(torch.random.get_rng_state(), state)  # not reseeded, not consumed
        out.append(r["test_mse"])
    assert out[0] == out[1]
