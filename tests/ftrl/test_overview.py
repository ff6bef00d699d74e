"The overview's *What each scale runs* table says what the presets run (Chapter 12)."

import json
import pathlib

import pytest

from icml26_lit.ftrl.experiments import CONFIG

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _table() -> dict:
    "{scale: [cells]} of the table under *What each scale runs* in the overview notebook."
    nb = json.loads((ROOT / "nbs" / "12_ftrl" / "00_overview.ipynb").read_text())
    text = next(
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "markdown" and "## What each scale runs" in "".join(c["source"])
    )
    rows = [r.strip().strip("|").split("|") for r in text.splitlines() if r.startswith("| `")]
    return {r[0].strip().strip("`"): [c.strip() for c in r[1:]] for r in rows}


def _number(cell: str) -> int:
    return int(cell.split()[0].replace(",", ""))


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_sizes_match_the_presets(scale):
    row, cfg = _table()[scale], CONFIG.get(scale)
    assert _number(row[0]) == cfg.n_seeds
    assert f"$d = {cfg.d}$" in row[1]
    assert f"{cfg.adam_steps:,} steps, {len(cfg.betas)} pairs" == row[3]
