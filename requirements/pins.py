"""Read requirements/pins.txt: the regular pins, and the block installed with `--no-deps`.

    python requirements/pins.py regular   # names of the regular pins (the venv installs them with -c pins.txt)
    python requirements/pins.py nodeps    # names of the no-deps block (installed with --no-deps -c pins.txt)

The block starts at the line `# installed with --no-deps` and runs to the end of the file; each of its
lines is `name==version  # chapter slug(s) that need it`.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

PINS = Path(__file__).resolve().parent / "pins.txt"
NODEPS_MARK = "# installed with --no-deps"


def _split(text: str) -> tuple[list[str], list[str]]:
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith(NODEPS_MARK)), len(lines))
    return lines[:at], lines[at + 1:]


def _pins(lines: list[str]) -> list[tuple[str, str, list[str]]]:
    out = []
    for line in lines:
        body, _, comment = line.partition("#")
        body = body.strip()
        if not body:
            continue
        if not re.fullmatch(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.+-]+", body):
            raise ValueError(f"pins.txt: {line!r} is not `name==version`")
        name, version = body.split("==")
        out.append((name, version, comment.split()))
    return out


def regular(text: str | None = None) -> list[tuple[str, str]]:
    "(name, version) of every pin above the no-deps block."
    return [(n, v) for n, v, _ in _pins(_split(text if text is not None else PINS.read_text())[0])]


def nodeps(text: str | None = None) -> list[tuple[str, str, list[str]]]:
    "(name, version, chapters) of every pin in the no-deps block; each names the chapters that need it."
    out = _pins(_split(text if text is not None else PINS.read_text())[1])
    for name, _, chapters in out:
        if not chapters:
            raise ValueError(f"pins.txt: no-deps pin {name} names no chapter (`{name}==...  # slug`)")
    return out


def nodeps_for(chapter: str, text: str | None = None) -> list[str]:
    "`name==version` of the no-deps pins a chapter (its package slug) needs."
    return [f"{n}=={v}" for n, v, chapters in nodeps(text) if chapter in chapters]


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which not in ("regular", "nodeps"):
        print("usage: python requirements/pins.py regular|nodeps", file=sys.stderr)
        sys.exit(2)
    rows = regular() if which == "regular" else nodeps()
    print("\n".join(r[0] for r in rows))
