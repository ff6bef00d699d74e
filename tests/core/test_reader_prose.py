"""The book speaks to readers: no markdown cell of nbs/ carries the history of its own making, the
project's workflow or the machine it was run on (history belongs in CHANGELOG.md; deviations from
the paper stay, in the chapter's "Deviations from the paper" note)."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROCESS_TALK = {
    "history": [
        r"\bearlier versions?\b",
        r"\bfirst versions?\b",
        r"\bfirst edition\b",
        r"\bchanged from\b",
        r"\bnow uses\b",
    ],
    "workflow": [
        r"\b(?:the|this) issue\b",  # "the order"; the verb ("the kernels issue") passes
        r"\bissue #?\d+\b",
        r"\b(?:the|chapter|this) brief\b",
        r"\bbrief's\b",
        r"\bfallbacks? taken\b",
        r"\bthis session\b",
        r"\bthe session that\b",
    ],
    "machine chatter": [
        r"\bload averages?\b",
        r"\b(?:at |a )?load (?:of |about |around |near )?\d[\d.]*(?:[-–]\d[\d.]*)?",
        r"\bbeside another job\b",
        r"\bshared with other jobs\b",
    ],
}


def process_talk(text: str) -> list[tuple[str, str, int]]:
    "(kind, matched words, position) for each piece of process talk in `text`, lines joined."
    flat = " ".join(text.split())
    hits = sorted(
        (m.start(), -m.end(), kind, m.group(0))
        for kind, pats in PROCESS_TALK.items()
        for pat in pats
        for m in re.finditer(pat, flat, re.I)
    )
    out, end = [], -1
    for start, neg_end, kind, words in hits:  # overlapping matches count once
        if start >= end:
            out.append((kind, words, start))
            end = -neg_end
    return out


def prose_problems(root: Path) -> list[str]:
    "One line per piece of process talk in a markdown cell of a notebook under nbs/."
    out = []
    for nb in sorted((root / "nbs").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in nb.parts:
            continue
        for i, c in enumerate(json.loads(nb.read_text())["cells"]):
            if c["cell_type"] != "markdown":
                continue
            src = c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            flat = " ".join(src.split())
            for kind, words, at in process_talk(src):
                ctx = flat[max(0, at - 60) : at + len(words) + 40]
                out.append(f"{nb.relative_to(root)}, cell {i}: {kind}, {words!r}: ...{ctx}...")
    return out


PLANTED = [
    ("An earlier version here used $v = m$.", "history"),
    ("Changed from the first edition: the loss is now squared.", "history"),
    ("The first version of this page made staging trivial.", "history"),
    ("The sizes shrink in the issue's order.", "workflow"),
    ("Prompt-PSRO is not tuned: its budget is the issue's.", "workflow"),
    ("(the chapter brief's 300 beads become 128)", "workflow"),
    ("Fallbacks taken: the projection read 121 s.", "workflow"),
    ("It was stopped before the end of this session.", "workflow"),
    ("on a machine whose load average was 11-19 on its 2 cores", "machine chatter"),
    ("74 s of CPU at load about 12", "machine chatter"),
    ("62 s of wall time for the notebook on one thread, beside another job", "machine chatter"),
]
READER_PROSE = [  # prose for readers: none may be caught
    "The slider picks the lead time of the forecast.",
    "Every load and store is masked, so odd sizes work.",
    "The metrics used to compare the runs, and the helpers that compute them.",
    "The atomic additions the COO kernels issue are counted, not measured.",
    "Here we deviate from the paper: the first layer is wider. The paper's version is in Table 2.",
    "This is the first vector of the basis; the second version of the loss adds a margin.",
    "The ci preset runs in 110 s of one thread.",
]


@pytest.mark.parametrize("line,kind", PLANTED)
def test_detector_catches_planted_process_talk(line, kind):
    assert kind in {k for k, _, _ in process_talk("Some prose.\n" + line + "\nMore prose.")}


@pytest.mark.parametrize("line", READER_PROSE)
def test_detector_leaves_reader_prose_alone(line):
    assert process_talk(line) == []


def test_check_names_the_notebook_and_cell(tmp_path):
    d = tmp_path / "nbs" / "07_demo"
    d.mkdir(parents=True)
    cells = [
        dict(cell_type="code", metadata={}, source="x = 1  # an earlier version", outputs=[]),
        dict(cell_type="markdown", metadata={}, source=["# Demo\n", "An earlier version\n", "ran"]),
    ]
    (d / "01_idea.ipynb").write_text(json.dumps(dict(cells=cells)))
    assert prose_problems(tmp_path) == [
        "nbs/07_demo/01_idea.ipynb, cell 1: history, 'earlier version': "
        "...# Demo An earlier version ran..."
    ]


def test_no_process_talk_in_the_book():
    found = prose_problems(ROOT)
    assert not found, "process talk in reader prose (reword; history goes to CHANGELOG.md):\n" + (
        "\n".join(found)
    )
