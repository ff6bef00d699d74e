"The overview's *What each scale runs* table says what the presets run (Chapter 19)."

import pytest

from icml26_lit.verbalized_persuasion.experiments import CONFIG
from tests._overview import first_number, scale_table


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_sizes_and_arms_match_the_presets(scale):
    row, cfg = scale_table("19_verbalized_persuasion")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds
    assert row[1] == f"{cfg.n_letters:,} / {cfg.n_test:,}"
    assert row[2] == f"$d = {cfg.d_model}$, {cfg.n_layers} layers"
    assert row[3] == f"{cfg.steps:,}"
    assert row[4] == f"{cfg.n_iters} × {cfg.n_rollouts}"
    assert row[5] == "exact reader"


def test_the_table_covers_every_scale():
    assert set(scale_table("19_verbalized_persuasion")) == set(CONFIG.scales)
