"Chapter 12: the exercises' checker accepts the references and rejects every curated wrong answer."

import pytest

import icml26_lit.ftrl  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES, check

NAMES = sorted(n for n in EXERCISES if n.startswith("12."))


def test_three_exercises_registered():
    assert NAMES == ["12.1", "12.2", "12.3"]


@pytest.mark.parametrize("name", NAMES)
def test_reference_correct_stub_and_wrong_answers(name):
    ex = EXERCISES[name]
    if ex.reference is not None:
        assert check(name, ex.reference, quiet=True).status == "correct"

        def stub(*args, **kwargs):
            raise NotImplementedError

        assert check(name, stub, quiet=True).status == "not attempted"
    else:
        value = ex.value() if callable(ex.value) else ex.value
        assert check(name, value, quiet=True).status == "correct"
        assert check(name, ..., quiet=True).status == "not attempted"
    for w in ex.wrong:
        assert check(name, w, quiet=True).status == "incorrect"


def test_public_names():
    import icml26_lit.ftrl as ftrl

    assert ftrl.__all__ and all(hasattr(ftrl, n) for n in ftrl.__all__)
    assert "_solutions" not in ftrl.__all__
