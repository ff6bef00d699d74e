"""Where the book's files are and which of them a run takes: chapter folders, notebooks, test
folders, budgets, and the timings file that `make test` writes."""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
BUILD = ROOT / "_build"
EXEC = BUILD / "exec"
CLAIMS = BUILD / "claims"
HTML = ROOT / "book" / "_build" / "html"
PY = sys.executable
BOOTSTRAP_MARK = "icml26-lit: colab bootstrap"
LAST = (
    "index.ipynb",
    "performance.ipynb",
)  # run after every chapter: they read its claims and times


def substrates() -> tuple[str, ...]:
    "Substrate packages, from the layers contract of .importlinter (between chapters and core)."
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / ".importlinter")
    layers = [x.strip() for x in cfg["importlinter:contract:layers"]["layers"].splitlines()]
    layers = [x for x in layers if x]
    return tuple(
        m.strip().removeprefix("icml26_lit.") for ly in layers[2:-1] for m in ly.split("|")
    )


# ----------------------------------------------------------------------------- selection
NO_CORE = os.environ.get("ICML26_NO_CORE") == "1"  # quick iteration on one chapter: skip chapter 0


def chapter_dirs(chapters: list[str] | None) -> list[Path]:
    "nbs/00_core and the chapter folders named by two-digit numbers (all when None)."
    dirs = sorted(p for p in NBS.iterdir() if p.is_dir() and re.match(r"\d\d_", p.name))
    if chapters:
        unknown = set(chapters) - {d.name[:2] for d in dirs}
        if unknown:
            print(
                f"CHAPTERS names unknown chapters {sorted(unknown)}; "
                f"known: {' '.join(d.name[:2] for d in dirs)}"
            )
            raise SystemExit(2)
        dirs = [d for d in dirs if (d.name[:2] == "00" and not NO_CORE) or d.name[:2] in chapters]
    return dirs


def in_book(folder: str) -> bool:
    "Is the chapter folder in the book (its entry in book/chapters.json names it)?"
    chapters = json.loads((ROOT / "book" / "chapters.json").read_text())
    return folder.startswith("00") or folder in {c["folder"] for c in chapters if c["folder"]}


def notebooks(chapters: list[str] | None) -> list[Path]:
    "Every notebook to execute, the front page last: the book's chapters, or those named."
    # a chapter not yet in the book (folder null in chapters.json) runs only when named
    dirs = [d for d in chapter_dirs(chapters) if chapters or in_book(d.name)]
    nbs = [nb for d in dirs for nb in sorted(d.glob("*.ipynb"))]
    top = sorted(NBS.glob("*.ipynb"), key=lambda p: (p.name in LAST, p.name)) if not NO_CORE else []
    return nbs + top


def test_dirs(chapters: list[str] | None) -> list[Path]:
    "tests/core, tests/example, and each chosen chapter's tests and substrate tests."
    out = [] if NO_CORE else [ROOT / "tests" / "core", ROOT / "tests" / "example"]
    subs = substrates()
    for d in chapter_dirs(chapters):
        if d.name.startswith("00"):
            continue
        out.append(ROOT / "tests" / d.name[3:])
        for nb in d.glob("*.ipynb"):
            for sub in re.findall(r"default_exp (\w+)\.", nb.read_text()):
                if sub in subs:
                    out.append(ROOT / "tests" / sub)
    seen, res = set(), []
    for p in out:
        if p not in seen and p.is_dir() and any(p.glob("test_*.py")):
            seen.add(p)
            res.append(p)
    return res


def budget_s(nb: Path) -> int:
    "The CI budget of a notebook: 120 s for experiments, 30 s for every other notebook."
    return 120 if "experiments" in nb.stem else 30


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def has_parameters(nb: Path) -> bool:
    cells = json.loads(nb.read_text())["cells"]
    return any("parameters" in c.get("metadata", {}).get("tags", []) for c in cells)


def exec_path(nb: Path) -> Path:
    return EXEC / nb.relative_to(ROOT)


TIMINGS: dict = {}  # written to book/_build/timings.json by `make test`
TIMINGS_PATH = ROOT / "book" / "_build" / "timings.json"


def write_timings() -> None:
    "Per-stage, per-test-folder and per-notebook seconds of this run, for the Performance page."
    TIMINGS_PATH.parent.mkdir(parents=True, exist_ok=True)
    TIMINGS["written_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    TIMINGS_PATH.write_text(json.dumps(TIMINGS, indent=1))
