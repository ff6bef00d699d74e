"The overview's *What each scale runs* table says what the presets run (Chapter 09)."

import json
import pathlib

import pytest

from icml26_lit.ldr.experiments import CONFIG

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _table() -> dict:
    "{scale: [cells]} of the table under *What each scale runs* in the overview notebook."
    nb = json.loads((ROOT / "nbs" / "09_ldr" / "00_overview.ipynb").read_text())
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
    assert _number(row[0]) == cfg.n_seeds and _number(row[1]) == cfg.steps


def test_the_arms_each_scale_names_run():
    t, cpu, colab = _table(), CONFIG.get("cpu"), CONFIG.get("colab")
    assert not CONFIG.get("ci").weighted_nll and "weighted" not in t["ci"][2]
    assert cpu.weighted_nll and "importance-weighted" in t["cpu"][2]
    assert cpu.tilted and cpu.variational and set(cpu.kinds) == {"var", "mad", "huber"}
    assert colab.n_data[-1] == 4096 and "4096" in t["colab"][2]
    assert CONFIG.get("full").many_well and "many-well" in t["full"][2]
