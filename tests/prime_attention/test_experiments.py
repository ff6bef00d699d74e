"""Chapter 14: the experiment's presets, smoke step and AUC."""

import json

import pytest
import torch

from icml26_lit.core import repo_root
from icml26_lit.prime_attention.experiments import CONFIG, pair_auc, smoke_step


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_smoke_step(scale):
    smoke_step(CONFIG.smoke(scale))


def test_ci_preset_is_the_protocol():
    c = CONFIG.get("ci")
    assert (c.n_steps, c.horizon, c.batch, c.steps, c.n_seeds) == (12_000, 12, 32, 400, 5)
    assert c.lr_grid == [1e-3, 3e-3] and c.pilot_seed == 100 and not c.run_pilot
    # ci trains the L = 48 arms (rows 1 and 4); the L = 30 arms join from the cpu preset up
    assert c.arms == ["standard_48", "prime_48"]
    for scale in ("cpu", "colab", "full"):
        assert CONFIG.get(scale).arms == ["standard_48", "prime_48", "standard_30", "prime_30"]
    path = repo_root() / "results" / "prime_attention" / "pilot_cpu.json"
    if path.exists():  # the ci picks are the committed cpu pilot's
        pilot = json.loads(path.read_text())["pilot"]
        assert c.lr == pilot["lr"] and c.noise_std == pilot["noise_std"]
        assert c.margin == pytest.approx(pilot["margin"], rel=1e-9)


def test_pair_auc():
    g = torch.zeros(3, 3, dtype=torch.bool)
    g[0, 1] = True
    s = torch.zeros(3, 3)
    s[0, 1] = 1.0
    assert pair_auc(s, g) == 1.0 and pair_auc(-s, g) == 0.0
