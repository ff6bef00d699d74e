"The overview's *What each scale runs* table says what the presets run (Chapter 14)."

import pytest

from icml26_lit.prime_attention.experiments import CONFIG
from tests._overview import first_number, scale_table

_ALL = [
    "standard_48",
    "channel_48",
    "pairbias_48",
    "prime_48",
    "dynamic_48",
    "standard_30",
    "prime_30",
]


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_sizes_and_arms_match_the_presets(scale):
    row, cfg = scale_table("14_prime_attention")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds
    assert f"T = {cfg.n_steps:,} steps" in row[1] and f"batch {cfg.batch}," in row[1]
    assert row[1].endswith(f"{cfg.steps:,} steps")
    if row[2] == "all seven":
        assert cfg.arms == _ALL
    else:
        assert row[2] == "standard, pair bias, P1 at 48"
        assert cfg.arms == ["standard_48", "pairbias_48", "prime_48"]
    assert ("pilot" in row[3]) == bool(cfg.run_pilot)
