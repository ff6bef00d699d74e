"The overview's *What each scale runs* table says what the presets run (Chapter 16)."

import pytest

from icml26_lit.ecg_r1.experiments import CONFIG
from tests._overview import first_number, scale_table


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_sizes_and_arms_match_the_presets(scale):
    row, cfg = scale_table("16_ecg_r1")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds
    assert row[1] == f"{cfg.n_sft:,} / {cfg.n_rl:,} / {cfg.n_test:,}"
    assert row[2] == f"$d = {cfg.d_model}$, {cfg.n_layers} layers, {cfg.style} reports"
    assert row[3] == f"{cfg.sft_steps:,} / {cfg.rl_steps:,}"
    assert (row[4] == "no IMD, answers only") == cfg.colab_claims
    assert (row[4] == "none") == (not cfg.colab_claims)


def test_the_table_covers_every_scale():
    assert set(scale_table("16_ecg_r1")) == set(CONFIG.scales)
