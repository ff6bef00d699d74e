"""The exercise checker, checked: each exercise three ways; bad answers; student copies."""

import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path

import pytest
import torch

import icml26_lit
from icml26_lit.core.exercises import EXERCISES, check, exercises, hint, register_exercise, solution

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import bootstrap  # noqa: E402
import exercises as student  # noqa: E402  (book/exercises.py)

for m in pkgutil.iter_modules(icml26_lit.__path__):  # importing a chapter registers its exercises
    if m.ispkg and m.name != "core":
        importlib.import_module(f"icml26_lit.{m.name}")

BOOK = sorted(n for n in EXERCISES if not n.startswith("00.9"))


def _stub(*args, **kwargs):
    raise NotImplementedError  # your code here


def test_every_chapter_with_an_exercises_notebook_registers_three():
    for master in student.masters():
        text = "".join("".join(c["source"]) for c in json.loads(master.read_text())["cells"])
        names = sorted(set(__import__("re").findall(r'check\("(\d\d\.\d+)"', text)))
        assert len(names) >= 3, f"{master}: at least three checked exercises, found {names}"
        assert set(names) <= set(EXERCISES), (
            f"{master} checks unregistered exercises {set(names) - set(EXERCISES)}"
        )


@pytest.mark.parametrize("name", BOOK)
def test_reference_is_correct_stub_not_attempted_wrong_incorrect(name):
    ex = EXERCISES[name]
    ref = (
        ex.reference if ex.kind == "function" else (ex.value() if callable(ex.value) else ex.value)
    )
    v = check(name, ref, quiet=True)
    assert v.status == "correct", v
    assert (
        check(name, _stub if ex.kind == "function" else ..., quiet=True).status == "not attempted"
    )
    assert ex.wrong, f"{name} has no curated wrong answer"
    for w in ex.wrong:
        v = check(name, w, quiet=True)
        assert v.status == "incorrect", f"{name}: a curated wrong answer passed: {v}"


def test_bad_answers_get_verdicts_not_tracebacks():
    register_exercise(
        "00.91",
        "Double x.",
        reference=lambda x: 2 * x,
        cases=[(torch.ones(3),)],
        wrong=[lambda x: x],
        time_limit_s=0.3,
    )
    try:
        assert "answered by a function" in check("00.91", 42, quiet=True).message
        assert "cannot be called" in check("00.91", lambda x, y: x, quiet=True).message
        assert "raised RuntimeError" in check("00.91", lambda x: x.view(7), quiet=True).message
        assert "shape (1,)" in check("00.91", lambda x: x[:1], quiet=True).message
        assert "dtype torch.float64" in check("00.91", lambda x: 2 * x.double(), quiet=True).message
        t0 = time.perf_counter()
        v = check("00.91", lambda x: time.sleep(5) or x, quiet=True)
        assert v.status == "incorrect" and "limit" in v.message and time.perf_counter() - t0 < 3
        assert check("00.91", lambda x: ..., quiet=True).status == "not attempted"
        with pytest.raises(KeyError, match="known exercises: .*00.91"):
            check("00.0", 1.0)
        assert "has hints" not in hint("00.91") and "no hints" in hint("00.91")
        assert "lambda" in solution("00.91")
    finally:
        del EXERCISES["00.91"]


def test_number_exercise_and_bad_registration():
    register_exercise(
        "00.92", "pi to 3 decimals", value=3.14159, tolerance=dict(abs=5e-4), wrong=[3.0]
    )
    try:
        assert check("00.92", 3.1416, quiet=True).status == "correct"
        assert check("00.92", 3.15, quiet=True).status == "incorrect"
        assert check("00.92", float("nan"), quiet=True).status == "incorrect"
        assert check("00.92", lambda: 3.14, quiet=True).status == "incorrect"
        assert check("00.92", None, quiet=True).status == "not attempted"
    finally:
        del EXERCISES["00.92"]
    with pytest.raises(ValueError, match="tolerance must be a dict"):
        register_exercise("00.93", "x", value=1.0, tolerance=dict(rtol=0.1), wrong=[2.0])
    with pytest.raises(ValueError, match="wrong must hold"):
        register_exercise("00.93", "x", value=1.0)
    assert "00.93" not in exercises("00")


def _master(tmp_path):
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": "#| export\n#| hide\ndef _secret_reference(x):\n"
                "    return x * 1234567 + 89",
            },
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": "```{exercise}\n:label: ex-99-1\nMultiply.\n```",
            },
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}],
                "execution_count": 3,
                "source": "def answer(x):\n    raise NotImplementedError",
            },
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": "```{solution} ex-99-1\n:class: dropdown\n"
                "    return x * 1234567 + 89\n```",
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return nb


def test_student_copy_drops_every_solution(tmp_path):
    nb = _master(tmp_path)
    copy = student.student_copy(nb)
    text = json.dumps(copy)
    assert "1234567" not in text and "ex-99-1" in text and "NotImplementedError" in text
    assert copy["cells"][1]["outputs"] == [] and copy["cells"][1]["execution_count"] is None
    assert "return x * 1234567 + 89" in student.solution_lines(nb)
    (tmp_path / "leak.html").write_text("<pre>return x * 1234567 + 89</pre>")
    lines = student.solution_lines(nb)
    found = {
        s
        for f in tmp_path.glob("*.html")
        for s in lines
        if s in __import__("html").unescape(f.read_text())
    }
    assert found == {"return x * 1234567 + 89"}


def test_committed_student_copies_match_and_hold_no_solution():
    assert student.masters(), "no exercises notebook found"
    assert student.check() == 0  # drift or a leaked solution line fails here
    for m in student.masters():
        assert (
            student.COLAB + student.student_path(m).relative_to(ROOT).as_posix() in m.read_text()
        ), f"{m}: the Colab badge must open the student copy"


def test_every_first_cell_is_the_bootstrap(tmp_path):
    assert bootstrap.check() == 0
    bad = tmp_path / "nbs" / "05_x" / "01_a.ipynb"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        json.dumps({"cells": [{"cell_type": "code", "source": bootstrap.MARK + "\nimport os"}]})
    )
    monkey_root = bootstrap.NBS
    try:
        bootstrap.NBS = tmp_path / "nbs"
        assert bootstrap.drifted([bad]) == [bad]
    finally:
        bootstrap.NBS = monkey_root
    assert "TRITON_INTERPRET" in bootstrap.source(ROOT / "nbs" / "12_ftrl" / "90_exercises.ipynb")
    assert "TRITON_INTERPRET" not in bootstrap.source(ROOT / "nbs" / "12_ftrl" / "01_regret.ipynb")
