"The overview's *What each scale runs* table says what the presets run (Chapter 18)."

import pytest

from icml26_lit.gcn_sr.experiments import CONFIG
from tests._overview import first_number, scale_table

ARMS = {  # the table's name of each arm -> the preset's method
    "GCN-SR": "gcn_sr",
    "sequence generator": "sequence_pg",
    "plain PG": "pg",
    "PG at equal updates": "pg_equal_updates",
    "GCN-SR with one GP generation": "gcn_sr_gp1",
    "imitation": "imitation",
    "no-mask": "no_mask",
    "gplearn": "gplearn",
    "DEAP": "deap",
    "pyoperon": "pyoperon",
}


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_the_table_matches_the_presets(scale):
    seeds, evals, tasks, arms, tuning = scale_table("18_gcn_sr")[scale]
    cfg = CONFIG.get(scale)
    assert first_number(seeds) == cfg.n_seeds and first_number(evals) == cfg.budget
    assert [int(t) for t in tasks.split(",")] == cfg.tasks
    assert [ARMS[a.strip()] for a in arms.split(",")] == cfg.methods
    assert tuning == "none, all at defaults"
