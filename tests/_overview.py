"""Read a chapter overview's *What each scale runs* table, to compare it with the presets."""

import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def scale_table(folder: str) -> dict:
    "{scale: [cells]} of the table under *What each scale runs* in nbs/<folder>/00_overview."
    nb = json.loads((ROOT / "nbs" / folder / "00_overview.ipynb").read_text())
    text = next(
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "markdown" and "## What each scale runs" in "".join(c["source"])
    )
    rows = [r.strip().strip("|").split("|") for r in text.splitlines() if r.startswith("| `")]
    return {r[0].strip().strip("`"): [c.strip() for c in r[1:]] for r in rows}


def first_number(cell: str) -> int:
    "The integer a table cell starts with ('1,000 steps' -> 1000)."
    return int(cell.split()[0].replace(",", ""))
