"The overview's *What each scale runs* table says what the presets run (Chapter 10)."

import pytest

from icml26_lit.tfmpe.experiments import CONFIG
from tests._overview import first_number, scale_table


def _table() -> dict:
    return scale_table("10_tfmpe")


_number = first_number


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_steps_match_the_presets(scale):
    row, cfg = _table()[scale], CONFIG.get(scale)
    assert _number(row[0]) == cfg.n_seeds and _number(row[1]) == cfg.n_steps


def test_the_arms_each_scale_names_run():
    from icml26_lit.tfmpe.experiments import methods_for

    t = _table()
    ci, cpu = CONFIG.get("ci"), CONFIG.get("cpu")
    assert methods_for(ci) == ["LF-TFMPE", "direct TFMPE"] and ci.sites == [2]
    assert all(w in t["ci"][2] for w in ("LF-TFMPE", "direct TFMPE", "S = 2"))
    assert "NPE" not in t["ci"][2] and "NPE" in t["colab"][2] and CONFIG.get("colab").npe
    assert methods_for(cpu) == methods_for(ci) and "`ci` arms" in t["cpu"][2]
    assert cpu.sites == [2, 10] and "S = 2" in t["cpu"][2] and "S = 10" in t["cpu"][2]
    assert cpu.n_sbc == 20 and "SBC" in t["cpu"][2] and "20 test sets" in t["cpu"][2]
    colab = CONFIG.get("colab")
    assert colab.pf and colab.fmpe and colab.sir and colab.functional and colab.n_sbc == 100
    assert "SBC" in t["colab"][2] and "SIR" in t["colab"][2]
    assert CONFIG.get("full").n_sbc == 200 and "200" in t["full"][2]
