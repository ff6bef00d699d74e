"The overview's *What each scale runs* table says what the presets run (Chapter 04)."

import json

import pytest

from icml26_lit.antic.experiments import CONFIG, experiment_units
from tests._overview import ROOT, first_number, scale_table


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_trajectories_grid_frames_viscosity_match_the_presets(scale):
    row, cfg = scale_table("04_antic")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds
    assert row[1] == f"{cfg.n} x {cfg.n}"
    assert first_number(row[2]) == cfg.n_steps + 1
    assert float(row[3]) == cfg.nu
    records = [u for u in experiment_units(cfg) if u[0] == "record"]
    assert len(records) == cfg.n_seeds  # one live run per trajectory


def test_the_arms_each_scale_names_run():
    t = scale_table("04_antic")
    for scale in ("ci", "cpu"):
        cfg = CONFIG.get(scale)
        assert not cfg.ablations and not cfg.ranks and not cfg.thresholds
        assert "ablation" not in t[scale][4]
    assert f"LoRA rank {CONFIG.get('ci').rank}" in t["ci"][4]
    for scale in ("colab", "full"):
        cfg, what = CONFIG.get(scale), t[scale][4]
        assert set(cfg.ablations) == {"full", "cold"}
        assert (scale == "full" and what.startswith("`colab`")) or (
            "no-LoRA and cold-start ablations" in what and "decoded-anchor" in what
        )
        kinds = {u[0] for u in experiment_units(cfg)}
        assert {"mode", "rank", "anchor", "threshold"} <= kinds
    colab, full = CONFIG.get("colab"), CONFIG.get("full")
    assert colab.ranks == [4, 8] and "LoRA ranks 4 and 8" in t["colab"][4]
    assert colab.thresholds == [0.95] and "threshold 0.95" in t["colab"][4]
    assert full.thresholds == [0.8, 0.95] and "thresholds 0.8 and 0.95" in t["full"][4]
    assert (colab.hidden, colab.n_layers, colab.n_freq, colab.rank) == (64, 5, 64, 16)


def test_one_deviations_note_in_the_chapter():
    notes = 0
    for path in sorted((ROOT / "nbs" / "04_antic").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        notes += sum("Deviations from the paper." in "".join(c["source"]) for c in cells)
    assert notes == 1
