"Chapter 19: the exercises' checker accepts the references and rejects every curated wrong answer."

import pytest

import icml26_lit.verbalized_persuasion  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES, check

NAMES = sorted(n for n in EXERCISES if n.startswith("19."))


def test_three_exercises_registered():
    assert NAMES == ["19.1", "19.2", "19.3"]


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
    import icml26_lit.verbalized_persuasion as vp

    assert vp.__all__ and all(hasattr(vp, n) for n in vp.__all__)
    assert "_solutions" not in vp.__all__
