#!/usr/bin/env python
"""The first cell of every notebook, generated from one template (`make toc` writes them).

    python book/bootstrap.py write   # rewrite every notebook's first cell from the template
    python book/bootstrap.py check   # exit 1, naming the notebooks, if a first cell drifted

On Colab the cell installs the package with the chapter's extra, keeping Colab's own torch and
triton, then the chapter's packages from the no-deps block of requirements/pins.txt with
`--no-deps`; elsewhere it does nothing. An exercises notebook also turns on Triton's interpreter
when the machine has no GPU, so its kernel exercises run on a CPU-only Colab too.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "requirements"))
import pins  # noqa: E402  (requirements/pins.py: the no-deps block)

NBS = ROOT / "nbs"
MARK = "# icml26-lit: colab bootstrap (hidden in the book; does nothing outside Colab)"
SKIP = ("index.ipynb", "performance.ipynb")  # book pages, not chapter notebooks
TEMPLATE = (
    MARK
    + """
import sys

if "google.colab" in sys.modules:
    import importlib.metadata as md
    import importlib.util
    import subprocess

    keep = [f"{p}=={md.version(p)}" for p in ("torch", "triton") if importlib.util.find_spec(p)]
    open("/tmp/icml26-keep.txt", "w").write("\\n".join(keep))  # keep Colab's own torch and triton
    numpy_was = md.version("numpy")
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    pkg = "icml26_lit[{extra}] @ git+https://github.com/icml26-lit/icml26-lit@v{version}"
    subprocess.run([*pip, "-c", "/tmp/icml26-keep.txt", pkg], check=True)"""
)
# printed when the extra upgraded numpy: modules already imported in the runtime are the old ones
RESTART = """
    if md.version("numpy") != numpy_was:
        print(f"numpy {numpy_was} -> {md.version('numpy')}: restart the runtime (Runtime > Restart")
        print("session), then run this notebook again from the top; the install is kept.")"""
# requirements/pins.txt's no-deps block: their own dependencies are not wanted
NODEPS = """
    nodeps = {pins}  # installed without their dependencies
    subprocess.run([*pip, "--no-deps", *nodeps], check=True)"""
INTERPRETER = """
import os
import shutil

if shutil.which("nvidia-smi") is None:  # no GPU: kernel exercises run in Triton's interpreter
    os.environ.setdefault("TRITON_INTERPRET", "1")"""


def notebooks() -> list[Path]:
    return [
        p
        for p in sorted(NBS.rglob("*.ipynb"))
        if p.name not in SKIP and ".ipynb_checkpoints" not in p.parts
    ]


def extra(nb: Path) -> str:
    "The package extra a notebook installs: its chapter's slug (Chapter 0: triton, or example)."
    folder = nb.parent.name
    if folder == "00_core":
        m = re.search(r"#\|\s*default_exp\s+(\w+)", nb.read_text())
        return "example" if m and m.group(1) == "example" else "triton"
    return folder[3:]


def version() -> str:
    "The book's version (settings.ini): the setup cell installs the code of tag v<version>."
    m = re.search(r"^version\s*=\s*(\S+)", (ROOT / "settings.ini").read_text(), re.M)
    return m.group(1)


def source(nb: Path) -> str:
    "The first cell `nb` must have."
    name = extra(nb)
    text = TEMPLATE.replace("{extra}", name.replace("_", "-")).replace("{version}", version())
    nodeps = pins.nodeps_for(name)
    if nodeps:
        text += NODEPS.replace("{pins}", json.dumps(nodeps))  # double quotes, as ruff format wants
    text += RESTART
    return text + (INTERPRETER if nb.stem.startswith("90_exercises") else "")


def _cell(text: str) -> dict:
    lines = text.split("\n")
    return dict(
        cell_type="code",
        execution_count=None,
        metadata={},
        outputs=[],
        source=[x + "\n" for x in lines[:-1]] + [lines[-1]],
    )


def write(paths=None) -> int:
    for nb in paths or notebooks():
        data = json.loads(nb.read_text())
        first = data["cells"][0] if data["cells"] else None
        want = source(nb)
        if first is not None and MARK in "".join(first.get("source", "")):
            if "".join(first["source"]) == want:
                continue
            cid = first.get("id")
            data["cells"][0] = _cell(want)
            if cid:
                data["cells"][0]["id"] = cid
        else:  # a new first cell, with a stable id (nbformat 4.5 requires one)
            data["cells"].insert(
                0, dict(_cell(want), id=hashlib.sha1(str(nb.name).encode()).hexdigest()[:8])
            )
        nb.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"bootstrap written: {nb.relative_to(ROOT)}")
    return 0


def drifted(paths=None) -> list[Path]:
    "Notebooks whose first cell is not the template's."
    out = []
    for nb in paths or notebooks():
        cells = json.loads(nb.read_text())["cells"]
        if not cells or "".join(cells[0].get("source", "")) != source(nb):
            out.append(nb)
    return out


def check(paths=None) -> int:
    bad = drifted(paths)
    for nb in bad:
        print(
            f"{nb.relative_to(ROOT) if nb.is_relative_to(ROOT) else nb}: the first cell is not the "
            "Colab bootstrap of book/bootstrap.py (run `make toc`)"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "check"
    sys.exit({"write": write, "check": check}.get(cmd, lambda: 2)())
