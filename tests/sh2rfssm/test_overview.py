"The overview's *What each scale runs* table says what the presets run (Chapter 13)."

import pytest

from icml26_lit.sh2rfssm.experiments import CONFIG, TONE_NAMES
from tests._overview import first_number, scale_table

ARMS = {name: key for key, name in TONE_NAMES.items()}


def _arms(cell: str) -> tuple:
    return tuple(ARMS[a.strip()] for a in cell.split(","))


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_the_table_matches_the_presets(scale):
    row = scale_table("13_sh2rfssm")[scale]
    jv_seeds, jv_epochs, tone_seeds, length, burst, n_train, arms, tuned, reg = row
    cfg = CONFIG.get(scale)
    assert first_number(jv_seeds) == cfg.n_seeds and first_number(jv_epochs) == cfg.jv_epochs
    assert first_number(tone_seeds) == cfg.tone_seeds
    assert first_number(length) == cfg.tone_length and first_number(burst) == cfg.tone_burst
    assert first_number(n_train) == cfg.tone_train
    assert _arms(arms) == tuple(cfg.tone_arms)
    if cfg.run_pilot:
        assert _arms(tuned) == tuple(cfg.pilot_arms)
    else:
        assert tuned.startswith("none")
    if cfg.regression:
        assert first_number(reg) == cfg.reg_length
    else:
        assert reg == "none"
