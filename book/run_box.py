#!/usr/bin/env python
"""The "Run this chapter" box of every chapter overview, generated (`make toc` writes it).

    python book/run_box.py write   # put the box before the overview's scale-times cell
    python book/run_box.py check   # exit 1, naming the overviews whose box drifted

The box names the extra to install (with the book's version tag), the packages the setup cell
installs without their dependencies, whether the GPU is used, and links the Colab-ready copy of
the overview; the times of each scale follow it, from `scale_times` (the committed results).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))
sys.path.insert(0, str(ROOT / "requirements"))
import bootstrap  # noqa: E402
import pins  # noqa: E402

HEAD = "## Run this chapter"
REPO = "icml26-lit/icml26-lit"


def overviews() -> list[Path]:
    return sorted(p for p in (ROOT / "nbs").glob("[0-9][0-9]_*/00_overview.ipynb"))


def box(nb: Path) -> str:
    "The box's Markdown for the overview `nb`."
    name = bootstrap.extra(nb)
    extra = name.replace("_", "-")
    tag = f"v{bootstrap.version()}"
    colab = f"https://colab.research.google.com/github/{REPO}/blob/main/book/colab/"
    colab += f"{nb.parent.name}/{nb.name}"
    nodeps = pins.nodeps_for(name)
    lines = [
        HEAD,
        "",
        f"[Open this chapter in Colab]({colab})",
        "(its first cell installs what the chapter needs), or install it yourself:",
        "",
        "```bash",
        f'pip install "icml26_lit[{extra}] @ git+https://github.com/{REPO}@{tag}"',
    ]
    if nodeps:
        lines.append(f"pip install --no-deps {' '.join(nodeps)}  # their own dependencies unused")
    lines += [
        "```",
        "",
        "The GPU is optional: on a CUDA device each op with a Triton kernel uses it",
        '(`backend="auto"`), and every scale up to `cpu` runs on a CPU. How long each scale took',
        "where it was measured:",
    ]
    return "\n".join(lines)


def _scale_cell(cells: list) -> int | None:
    for i, c in enumerate(cells):
        if c["cell_type"] == "code" and "scale_times(" in "".join(c["source"]):
            return i
    return None


def with_box(nb: Path) -> dict | None:
    "The overview with its box in place (before the scale-times cell), or None if it has none."
    data = json.loads(nb.read_text())
    cells = [c for c in data["cells"] if not "".join(c["source"]).startswith(HEAD)]
    i = _scale_cell(cells)
    if i is None:
        return None
    if i > 0 and cells[i - 1]["cell_type"] == "markdown":
        prev = "".join(cells[i - 1]["source"])
        if prev.startswith("How long each scale took"):  # the box's last sentence replaces it
            cells.pop(i - 1)
            i -= 1
    cell = {"cell_type": "markdown", "metadata": {}, "source": box(nb).splitlines(keepends=True)}
    if "id" in cells[i]:
        cell["id"] = "run-this-chapter"
    data["cells"] = cells[:i] + [cell] + cells[i:]
    return data


def main(argv: list[str]) -> int:
    if argv not in (["write"], ["check"]):
        print(__doc__)
        return 2
    bad = []
    for nb in overviews():
        data = with_box(nb)
        if data is None:
            bad.append(f"{nb.relative_to(ROOT)}: no scale_times cell to put the box before")
            continue
        body = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        if json.loads(nb.read_text()) == data:
            continue
        if argv == ["write"]:
            nb.write_text(body)
        else:
            bad.append(f"{nb.relative_to(ROOT)}: the Run this chapter box drifted")
    for b in bad:
        print(b)
    if bad and argv == ["check"]:
        print("run python book/run_box.py write (or make toc)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
