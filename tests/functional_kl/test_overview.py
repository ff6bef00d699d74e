"The overview's *What each scale runs* table says what the presets run (Chapter 11)."

import pytest

from icml26_lit.functional_kl.experiments import CONFIG
from tests._overview import first_number, scale_table


def _table() -> dict:
    return scale_table("11_functional_kl")


_number = first_number


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_steps_match_the_presets(scale):
    row, cfg = _table()[scale], CONFIG.get(scale)
    assert _number(row[0]) == cfg.ti_seeds and _number(row[1]) == cfg.steps
    assert f"{cfg.n_fill} " in row[1] or (scale == "ci" and cfg.n_fill == 4)
    assert _number(row[2]) == cfg.gauss_seeds and f"{cfg.gauss_steps:,} steps" in row[2]
    assert ("pilot" in row[3]) == bool(cfg.run_pilot)


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_ou_seeds_checkpoints_and_width_study_match_the_presets(scale):
    row, cfg = _table()[scale], CONFIG.get(scale)
    assert f"{cfg.gauss_seeds} Gaussian and {cfg.ou_seeds} OU seeds" in row[2]
    assert f"FKL at {cfg.checkpoints} checkpoints" in row[1]
    wide = f"{cfg.width_seeds} TI seeds again at width {cfg.width_alt}"
    assert (wide in row[3]) == (cfg.width_seeds > 0)
