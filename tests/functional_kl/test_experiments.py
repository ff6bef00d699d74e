"""Chapter 11: the experiment's presets, smoke step and the exercises' checkers."""

import icml26_lit.functional_kl  # noqa: F401  registers the exercises
from icml26_lit.core.exercises import EXERCISES, check
from icml26_lit.functional_kl.experiments import CONFIG, smoke_step
from icml26_lit.functional_kl.ground_truths import ou_grid_kl


def test_presets():
    assert set(CONFIG.scales) == {"ci", "cpu", "colab", "full"}
    ci, cpu = CONFIG.get("ci"), CONFIG.get("cpu")
    assert (
        ci.ti_seeds >= 4
        and ci.ou_seeds >= 2
        and cpu.ti_seeds == 10
        and cpu.steps == 3000
        and cpu.batch == 512
    )


def test_smoke_step():
    smoke_step(CONFIG.smoke("ci"))


def test_exercises_registered_and_checked():
    assert {"11.1", "11.2", "11.3", "11.4"} <= set(EXERCISES)
    assert check("11.1", 0.5, quiet=True).status == "correct"
    assert check("11.1", 1.0, quiet=True).status == "incorrect"
    assert check("11.3", ou_grid_kl(1, 3, 1, 1, 32), quiet=True).status == "correct"
    assert check("11.3", None, quiet=True).status == "not attempted"
