"The overview's *What each scale runs* table says what the presets run (Chapter 11)."

import json
import pathlib

import pytest

from icml26_lit.functional_kl.experiments import CONFIG

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _table() -> dict:
    "{scale: [cells]} of the table under *What each scale runs* in the overview notebook."
    nb = json.loads((ROOT / "nbs" / "11_functional_kl" / "00_overview.ipynb").read_text())
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
def test_seeds_and_steps_match_the_presets(scale):
    row, cfg = _table()[scale], CONFIG.get(scale)
    assert _number(row[0]) == cfg.ti_seeds and _number(row[1]) == cfg.steps
    assert f"{cfg.n_fill} " in row[1] or (scale == "ci" and cfg.n_fill == 4)
    assert _number(row[2]) == cfg.gauss_seeds and f"{cfg.gauss_steps:,} steps" in row[2]
    assert ("pilot" in row[3]) == bool(cfg.run_pilot)
