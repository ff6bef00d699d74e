#!/usr/bin/env python
"""Colab-ready copies of the notebooks, the ones the book's Colab buttons open (`make toc` writes
them).

    python book/colab.py write   # book/colab/NN_slug/<notebook>.ipynb from nbs/
    python book/colab.py check   # exit 1, naming the copies that differ from what `write` makes

Colab shows MyST directives (`{note}`, `{exercise}`, `{solution}`) as raw text, solutions
included. A copy keeps the Colab setup cell first, turns each admonition into a Markdown block
quote with its title, drops every solution (an exercises notebook is copied as its student copy,
see book/exercises.py), drops the cells the book hides (`remove-cell`) and every output.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))
import bootstrap  # noqa: E402
import exercises  # noqa: E402

COLAB = ROOT / "book" / "colab"
OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<kind>[\w-]+)\}[ \t]*(?P<title>.*)$")
CODE = re.compile(r"^(?P<fence>`{3,})[\w+-]*\s*$")
OPTION = re.compile(r"^:[\w-]+:")
TITLES = {"note": "Note", "warning": "Warning", "exercise": "Exercise", "tip": "Tip"}


def _parse(lines: list[str], i: int = 0, fence: str | None = None) -> tuple[list, int]:
    "Lines into a tree: plain lines, and (kind, title, children) for each directive."
    out = []
    while i < len(lines):
        line = lines[i]
        if fence is not None and line.strip() == fence:
            return out, i + 1
        m = OPEN.match(line.strip())
        if m:
            j = i + 1
            while j < len(lines) and OPTION.match(lines[j].strip()):
                j += 1  # :label:, :class: and the like mean nothing on Colab
            body, i = _parse(lines, j, m["fence"])
            out.append((m["kind"], m["title"].strip(), body))
            continue
        m = CODE.match(line.strip())
        if m:  # a code block inside a directive: its closing fence is not the directive's
            j = i + 1
            while j < len(lines) and lines[j].strip() != m["fence"]:
                j += 1
            out.extend(lines[i : j + 1])
            i = j + 1
            continue
        out.append(line)
        i += 1
    return out, i


def _render(tree: list) -> list[str]:
    out = []
    for node in tree:
        if isinstance(node, str):
            out.append(node)
            continue
        kind, title, body = node
        if kind == "solution":
            continue  # the reader writes it
        head = TITLES.get(kind, kind.capitalize())
        inner = _render(body)
        while inner and not inner[-1].strip():
            inner.pop()
        while inner and not inner[0].strip():
            inner.pop(0)
        out.append(f"> **{head}.** {title}".rstrip() if title else f"> **{head}.**")
        out.append(">")
        out += [f"> {ln}".rstrip() for ln in inner]
    return out


def plain_markdown(text: str) -> str:
    "MyST admonitions as block quotes, solutions dropped: what Colab's Markdown can show."
    return "\n".join(_render(_parse(text.split("\n"))[0]))


def colab_copy(nb: Path) -> dict:
    "The Colab-ready notebook of `nb`."
    nb = nb.resolve()
    data = json.loads(nb.read_text())
    if nb.stem.startswith("90_exercises"):
        data = exercises.student_copy(data)
    out = data  # freshly read (or a student copy): edited in place
    cells = []
    for k, c in enumerate(out["cells"]):
        tags = c.get("metadata", {}).get("tags", [])
        if k > 0 and "remove-cell" in tags:
            continue
        src = "".join(c["source"])
        if c["cell_type"] == "markdown":
            src = plain_markdown(src)
        c["source"] = src.splitlines(keepends=True)
        if c["cell_type"] == "code":
            c["outputs"], c["execution_count"] = [], None
        cells.append(c)
    out["cells"] = cells
    meta = out.setdefault("metadata", {})
    meta.pop("icml26_student", None)
    meta["icml26_colab"] = str(nb.relative_to(ROOT))
    meta.setdefault("colab", {})["provenance"] = []
    return out


def target(nb: Path) -> Path:
    return COLAB / nb.resolve().relative_to(ROOT / "nbs")


def text(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if argv not in (["write"], ["check"]):
        print(__doc__)
        return 2
    want = {target(nb): text(colab_copy(nb)) for nb in bootstrap.notebooks()}
    if argv == ["write"]:
        for path, body in want.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text() != body:
                path.write_text(body)
        stale = set(COLAB.rglob("*.ipynb")) - set(want)
        for path in stale:
            path.unlink()
        print(f"wrote {len(want)} Colab copies under {COLAB.relative_to(ROOT)}")
        return 0
    bad = [p for p, body in want.items() if not p.exists() or p.read_text() != body]
    bad += sorted(set(COLAB.rglob("*.ipynb")) - set(want))
    for p in bad:
        print(f"stale: {p.relative_to(ROOT)}")
    if bad:
        print("run python book/colab.py write (or make toc)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
