"The overview's *What each scale runs* table says what the presets run (Chapter 12)."

import pytest

from icml26_lit.ftrl.experiments import CONFIG
from tests._overview import first_number, scale_table


def _table() -> dict:
    return scale_table("12_ftrl")


_number = first_number


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_sizes_match_the_presets(scale):
    row, cfg = _table()[scale], CONFIG.get(scale)
    assert _number(row[0]) == cfg.n_seeds
    assert f"$d = {cfg.d}$" in row[1]
    assert f"{cfg.adam_steps:,} steps, {len(cfg.betas)} pairs" == row[3]
