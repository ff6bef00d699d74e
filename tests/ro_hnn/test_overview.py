"The overview's *What each scale runs* table says what the presets run (Chapter 03)."

import pytest

from icml26_lit.ro_hnn.experiments import ARMS, CONFIG
from tests._overview import first_number, scale_table

NAMES = {  # the table's name of each arm -> the preset's arm
    "RO-HNN": "rohnn",
    "latent NODE": "node",
    "MLP autoencoder + latent HNN": "mlp_hnn",
}


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_the_table_matches_the_presets(scale):
    seeds, ablation, steps, pendula, trajectories, arms = scale_table("03_ro_hnn")[scale]
    cfg = CONFIG.get(scale)
    assert first_number(seeds) == cfg.n_seeds
    assert first_number(ablation) == min(cfg.n_ablation_seeds, cfg.n_seeds)
    assert first_number(steps) == cfg.steps and first_number(pendula) == cfg.n_pendula
    train, test = (t.split() for t in trajectories.split("/"))
    assert (int(train[0]), int(train[2])) == (cfg.n_train, cfg.train_steps)
    assert (int(test[0]), int(test[2])) == (cfg.n_test, cfg.test_steps)
    assert tuple(NAMES[a.strip()] for a in arms.split(",")) == ARMS
