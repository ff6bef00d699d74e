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


def test_interview_gain_decides_as_the_two_stage_reader():
    "Exercise 19.4's gain is >= 0 exactly where two_stage_plan interviews a recommended letter."
    import numpy as np

    from icml26_lit.verbalized_persuasion._solutions import _interview_gain
    from icml26_lit.verbalized_persuasion.prompt_psro import two_stage_plan

    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % (1 << 32)))
    for _ in range(200):
        p, q, p2, q2 = rng.uniform(0.05, 1, 4)
        m, t, c = rng.uniform(0.1, 0.6), rng.uniform(0.3, 0.7), rng.uniform(0.01, 0.2)
        gain = _interview_gain(p, q, p2, q2, m, t, c)
        if abs(gain) < 1e-9:  # the plan's tie tolerance is on an unnormalised scale
            continue
        assert (gain > 0) == bool(two_stage_plan((p, q, p2, q2), m, t, c)[0][1])
