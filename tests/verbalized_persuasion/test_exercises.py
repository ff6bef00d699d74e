"""Chapter 19: four exercises registered and the public names. The checker's verdicts on each
reference, stub and wrong answer are tested for every chapter by tests/core/test_exercises.py."""

import icml26_lit.verbalized_persuasion  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES

NAMES = sorted(n for n in EXERCISES if n.startswith("19."))


def test_four_exercises_registered():
    assert NAMES == ["19.1", "19.2", "19.3", "19.4"]


def test_public_names():
    import icml26_lit.verbalized_persuasion as vp

    assert vp.__all__ and all(hasattr(vp, n) for n in vp.__all__)
    assert "_solutions" not in vp.__all__
