"The overview's *What each scale runs* table says what the presets run (Chapter 09)."

import pytest

from icml26_lit.ldr.experiments import CONFIG
from tests._overview import first_number, scale_table


def _table() -> dict:
    return scale_table("09_ldr")


_number = first_number


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_steps_match_the_presets(scale):
    row, cfg = _table()[scale], CONFIG.get(scale)
    assert _number(row[0]) == cfg.n_seeds and _number(row[1]) == cfg.steps
    if cfg.headline_seeds > cfg.n_seeds:  # the headline's runs on more seeds: the table says so
        assert f"{cfg.headline_seeds} for the headline" in row[0]


def test_the_arms_each_scale_names_run():
    t, cpu, colab = _table(), CONFIG.get("cpu"), CONFIG.get("colab")
    assert CONFIG.get("ci").weighted_nll and "importance-weighted" in t["ci"][2]
    assert cpu.weighted_nll and cpu.tilted and "importance weights that undo" in t["cpu"][2]
    assert cpu.tilted and cpu.variational and set(cpu.kinds) == {"var", "mad", "huber"}
    assert colab.n_data[-1] == 4096 and "4096" in t["colab"][2]
    assert CONFIG.get("full").many_well and "many-well" in t["full"][2]
