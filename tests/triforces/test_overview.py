"The overview's *What each scale runs* table says what the presets run (Chapter 08)."

import pytest

from icml26_lit.triforces.experiments import CONFIG
from tests._overview import first_number, scale_table


def _arms(cell: str) -> list:
    return [a.strip() for a in cell.split(",")]


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_the_table_matches_the_presets(scale):
    row = scale_table("08_triforces")[scale]
    seeds, labels, unlabelled, test, steps, ssl_steps, batch, model, big, small, pilot = row
    cfg = CONFIG.get(scale)
    assert first_number(seeds) == cfg.n_seeds
    assert [int(n.replace(",", "")) for n in labels.split(" and ")] == cfg.n_labels
    assert first_number(unlabelled) == cfg.n_unlabelled and first_number(test) == cfg.n_test
    assert first_number(steps) == cfg.steps and first_number(ssl_steps) == cfg.ssl_steps
    assert first_number(batch) == cfg.batch
    atoms, cutoff, head, width = (c.strip() for c in model.split(","))
    assert int(atoms) == cfg.max_atoms and float(cutoff.split()[0]) == cfg.cutoff
    assert head == cfg.head and int(width) == cfg.d
    assert _arms(big) == cfg.arms_big and _arms(small) == cfg.arms_small
    assert pilot.startswith("seed 100") == cfg.run_pilot and cfg.pilot_seed == 100
