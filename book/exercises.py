#!/usr/bin/env python
"""Student copies of the exercises notebooks: every solution removed (`make exercises`).

    python book/exercises.py write    # book/student/NN_slug/90_exercises.ipynb from the masters
    python book/exercises.py check    # exit 1: a committed student copy drifted or holds a solution
    python book/exercises.py html     # also build the student HTML book under book/_build/student/

A solution is a markdown cell holding a `{solution}` directive, or a code cell exported to the
chapter's private `_solutions` module (its `#| export` cells hold the reference answers).
"""

from __future__ import annotations

import copy
import html as _html
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS, STUDENT = ROOT / "nbs", ROOT / "book" / "student"
HTML_OUT = ROOT / "book" / "_build" / "student"
SOLUTION_MD = re.compile(r"^\s*(```+|:::+)\s*\{solution\}", re.M)
EXPORT = re.compile(r"^\s*#\|\s*(export|exporti|exports|default_exp)\b", re.M)
# lines too generic to identify a solution (they also appear in stubs and prose)
GENERIC = re.compile(r"^(import |from |```|:::|:class:|:label:|#\||\)|\]|$)")


def masters() -> list[Path]:
    "Every exercises notebook of the book."
    return sorted(NBS.glob("*/90_exercises.ipynb"))


def is_solution(cell: dict) -> bool:
    src = "".join(cell.get("source", ""))
    if cell["cell_type"] == "markdown":
        return bool(SOLUTION_MD.search(src))
    return cell["cell_type"] == "code" and bool(EXPORT.search(src))


def student_copy(nb: dict) -> dict:
    "The notebook without solution cells, outputs or execution counts."
    out = copy.deepcopy(nb)
    out["cells"] = [c for c in out["cells"] if not is_solution(c)]
    for c in out["cells"]:
        if c["cell_type"] == "code":
            c["outputs"], c["execution_count"] = [], None
    out.setdefault("metadata", {})["icml26_student"] = True
    return out


def solution_lines(nb: dict) -> set[str]:
    "The distinctive lines of a notebook's solutions (for the leak checks)."
    keep = set()
    stub_text = "".join("".join(c.get("source", "")) for c in nb["cells"] if not is_solution(c))
    for c in nb["cells"]:
        if is_solution(c):
            for line in "".join(c["source"]).splitlines():
                s = line.strip()
                if len(s) >= 16 and not GENERIC.match(s) and s not in stub_text:
                    keep.add(s)
    return keep


def student_path(master: Path) -> Path:
    return STUDENT / master.parent.name / master.name


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


COLAB = "https://colab.research.google.com/github/icml26-lit/icml26-lit/blob/main/"


def badge(master: Path) -> str:
    "The Colab badge of an exercises page: it opens the student copy, not the master."
    url = COLAB + student_path(master).relative_to(ROOT).as_posix()
    return f"[![Open the student copy in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def ensure_badge(master: Path) -> None:
    "Put the badge under the title of the master's first markdown cell, once."
    nb = json.loads(master.read_text())
    md = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    src = "".join(md["source"])
    if COLAB in src:
        return
    lines = src.split("\n")
    at = 2 if len(lines) > 1 and lines[1].startswith(">") else 1
    lines[at:at] = ["", badge(master)]
    text = "\n".join(lines)
    md["source"] = [x + "\n" for x in text.split("\n")[:-1]] + [text.split("\n")[-1]]
    master.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def write() -> int:
    for m in masters():
        ensure_badge(m)
        dst = student_path(m)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(dumps(student_copy(json.loads(m.read_text()))))
        print(f"wrote {dst.relative_to(ROOT)}")
    return 0


def check() -> int:
    "1 if a student copy is missing, drifted from its master, or holds a solution line."
    bad = 0
    for m in masters():
        nb, dst = json.loads(m.read_text()), student_path(m)
        if not dst.exists() or dst.read_text() != dumps(student_copy(nb)):
            print(
                f"{dst.relative_to(ROOT)} is missing or differs from {m.relative_to(ROOT)}: "
                "run make exercises"
            )
            bad += 1
            continue
        text = dst.read_text()
        leaks = [s for s in solution_lines(nb) if s in text]
        if leaks:
            print(f"{dst.relative_to(ROOT)} holds solution lines: {leaks[:3]}")
            bad += 1
    return 1 if bad else 0


def html() -> int:
    "Build the student book (no solutions, no copied sources) under book/_build/student/."
    import yaml

    write()
    work = ROOT / "_build" / "student"
    cfg = yaml.safe_load((ROOT / "book" / "_config.yml").read_text())
    cfg["title"] = cfg["title"] + " (exercises, student edition)"
    cfg.setdefault("sphinx", {}).setdefault("config", {}).update(
        hide_solutions=True, html_copy_source=False
    )
    cfg.pop("bibtex_bibfiles", None)
    cfg["sphinx"].setdefault("extra_extensions", ["sphinx_exercise"])
    if "sphinx_exercise" not in cfg["sphinx"]["extra_extensions"]:
        cfg["sphinx"]["extra_extensions"].append("sphinx_exercise")
    cfg["sphinx"]["config"].pop("bibtex_reference_style", None)
    ext = cfg["sphinx"]["extra_extensions"]
    cfg["sphinx"]["extra_extensions"] = [e for e in ext if "bibtex" not in e]
    src = work / "src"
    subprocess.run(["rm", "-rf", str(src)], check=True)
    pages = []
    for m in masters():  # a source folder of its own: only the student copies are read
        dst = src / m.parent.name / m.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(student_path(m).read_bytes())
        pages.append(f"{m.parent.name}/{m.stem}")
    (src / "index.md").write_text(
        "# Exercises: student edition\n\nThe exercises of every chapter, "
        "without solutions. Check your answers with `check` in each notebook.\n"
    )
    toc = {"format": "jb-book", "root": "index", "chapters": [{"file": p} for p in pages]}
    (work / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    cfg["sphinx"]["config"]["html_static_path"] = []
    cfg["sphinx"]["config"].pop("html_css_files", None)
    (work / "_config.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    jb = Path(sys.executable).parent / "jupyter-book"
    rc = subprocess.run(
        [
            str(jb),
            "build",
            str(src),
            "--config",
            str(work / "_config.yml"),
            "--toc",
            str(work / "_toc.yml"),
            "--path-output",
            str(work / "out"),
        ]
    ).returncode
    if rc:
        return rc
    HTML_OUT.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["rm", "-rf", str(HTML_OUT)], check=True)
    (work / "out" / "_build" / "html").rename(HTML_OUT)
    leaks = leaks_in(HTML_OUT)
    for f, s in leaks[:5]:
        print(f"solution line in the student build: {f}: {s!r}")
    print(f"student book: {HTML_OUT.relative_to(ROOT)}{'' if not leaks else ' (LEAKS SOLUTIONS)'}")
    return 1 if leaks else 0


def leaks_in(folder: Path) -> list[tuple[str, str]]:
    "(file, line) for every solution line found in any file under `folder`."
    lines = set().union(*(solution_lines(json.loads(m.read_text())) for m in masters()))
    out = []
    for f in folder.rglob("*"):
        if f.is_file() and f.suffix in {".html", ".ipynb", ".txt", ".js", ".json", ".md", ".py"}:
            text = _html.unescape(f.read_text(errors="ignore"))
            out += [(str(f.relative_to(folder)), s) for s in lines if s in text]
    return out


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "write"
    sys.exit({"write": write, "check": check, "html": html}.get(cmd, lambda: 2)())
