"The overview's *What each scale runs* table says what the presets run (Chapter 02)."

import pytest

from icml26_lit.geopt.experiments import CONFIG
from tests._overview import first_number, scale_table


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_steps_match_the_presets(scale):
    row, cfg = scale_table("02_geopt")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds and first_number(row[1]) == cfg.steps


def test_the_arms_and_counts_each_scale_names_run():
    t = scale_table("02_geopt")
    ci, cpu, colab, full = (CONFIG.get(s) for s in ("ci", "cpu", "colab", "full"))
    assert ci.labels == [8, 16] and ci.a_labels == [8] and "arm A at 8" in t["ci"][2]
    assert cpu.labels == cpu.a_labels == [8, 16, 32] and "all four arms" in t["cpu"][2]
    assert colab.a_labels == colab.labels == [8, 16, 32, 64] and "all four arms" in t["colab"][2]
    assert full.a_labels == full.labels and full.hidden == 256 and full.layers == 8
    assert f"{cpu.n_volume} volume + {cpu.n_surface} surface" in t["cpu"][2]
    assert f"width {ci.hidden}" in t["ci"][2] and f"width {cpu.hidden}" in t["cpu"][2]
    for row, cfg in ((t["ci"][2], ci), (t["cpu"][2], cpu)):
        assert f"{cfg.n_pre_airfoils} airfoils and {cfg.n_pre_shapes} shapes" in row
        assert f"({cfg.pre_steps:,} steps each)" in row
        assert f"pilot seed ({cfg.pilot_seed})" in row
    assert f"{colab.n_volume} + {colab.n_surface} points" in t["colab"][2]
    assert f"{full.n_volume:,} + {full.n_surface} points" in t["full"][2]
