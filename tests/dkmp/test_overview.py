"The overview's *What each scale runs* table says what the presets run (Chapter 07)."

import json

import pytest

from icml26_lit.dkmp.experiments import CONFIG
from tests._overview import ROOT, first_number, scale_table


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_beads_steps_width_match_the_presets(scale):
    row, cfg = scale_table("07_dkmp")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds
    assert first_number(row[1]) == cfg.n_beads
    assert first_number(row[2]) == cfg.steps
    assert first_number(row[3]) == cfg.width
    assert ("the pilot at these sizes" in row[4]) == (scale == "cpu")


def test_what_runs_matches_the_presets():
    t, ci = scale_table("07_dkmp"), CONFIG.get("ci")
    assert "reads `q`" in t["ci"][4] and not ci.run_pilot  # ci reads the cpu pilot's picks
    assert (
        f"{ci.n_levels} star levels" in t["ci"][4]
        and f"{ci.n_levels + 1} interactions" in t["ci"][4]
    )
    assert (
        f"trained on {ci.n_train} frames" in t["ci"][4]
        and f"tested on {ci.n_test} frames" in t["ci"][4]
    )
    assert all(CONFIG.get(s).run_pilot for s in ("cpu", "colab", "full"))
    assert (
        "the pilot at these sizes" in t["cpu"][4] and "calibrated at these sizes" in t["colab"][4]
    )
    assert ci.pilot_seeds == [100, 101, 102] and "seeds 100-102" in t["cpu"][4]


def test_one_deviations_note_in_the_chapter():
    notes = 0
    for path in sorted((ROOT / "nbs" / "07_dkmp").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        notes += sum("Deviations from the paper." in "".join(c["source"]) for c in cells)
    assert notes == 1
