"The overview's *What each scale runs* table says what the presets run (Chapter 01)."

import pytest

from icml26_lit.slepian.experiments import CONFIG
from tests._overview import first_number, scale_table


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_epochs_match_the_presets(scale):
    row, cfg = scale_table("01_slepian")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds and first_number(row[1]) == cfg.epochs


def test_the_arms_each_scale_names_run():
    t = scale_table("01_slepian")
    ci, cpu, colab, full = (CONFIG.get(s) for s in ("ci", "cpu", "colab", "full"))
    assert set(ci.encoders.split(",")) == {"sh_high", "sh", "slepian", "hybrid", "cartesian"}
    assert ci.heads == "mlp" and not ci.classification and f"{ci.n_train} training" in t["ci"][2]
    assert ci.L_slepian == 40 and ci.L_sh_high == 40 and ci.L_global == 9
    # cpu: ci's task and arms, with the pilot fixing the budget
    assert {k: v for k, v in cpu.items() if k not in ("n_seeds", "epochs", "pilot")} == {
        k: v for k, v in ci.items() if k not in ("n_seeds", "epochs", "pilot")
    }
    assert cpu.pilot and not ci.pilot and cpu.max_epochs == cpu.epochs == 200
    assert f"pilot seed ({cpu.pilot_seed})" in t["cpu"][2] and cpu.pilot_seed >= cpu.n_seeds
    assert "latlon" in colab.encoders and colab.L_slepian == 80 and colab.classification
    assert set(colab.heads.split(",")) == {"linear", "mlp", "siren"} and "SIREN" in t["colab"][2]
    assert "40000 training" in t["colab"][2] and colab.n_train == 40000
    assert full.n_train == 200000 and full.L_slepian == 120 and full.sigma_km == 10.0
    assert "200000 training" in t["full"][2] and "$L = 120$" in t["full"][2]
