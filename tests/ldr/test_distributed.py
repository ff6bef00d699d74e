"""Chapter 09's runs split over two gloo ranks: the same units and numbers as one process."""

import pytest

from icml26_lit.ldr.experiments import CONFIG, experiment_units, run_unit
from tests._trees import assert_trees_close as _close

# two sizes, two seeds (a third for the headline's runs), tiny flows and a few steps: 17 runs,
# NLL, LDR, zuko's NSF and biased data
RUN = """
import sys, torch
from icml26_lit.core.distributed import init_distributed
from icml26_lit.ldr.experiments import CONFIG, run_experiment
init_distributed()
ci = CONFIG.get("ci")
cfg = type(ci)(ci, n_data=[16, 32], nll_weight_decay=[1.0, 0.0], n_seeds=2, headline_seeds=3,
               steps=3, n_eval=128, n_test=64, n_layers=1, hidden=8, n_biased=32)
res = run_experiment(cfg, 4, "cpu")
if res is not None:  # rank 0
    drop = ("seconds",)
    out = {k: [{a: b for a, b in r.items() if a not in drop} for r in res[k]]
           for k in ("unbiased", "biased", "tilted", "extra")}
    torch.save(dict(out, untrained=res["untrained"]), sys.argv[1])
"""


def test_run_experiment_units_split_over_two_ranks(one_and_two_ranks):
    one, two = one_and_two_ranks(RUN)
    keys = [(r["method"], r["n"], r["seed"], r["model"], r["kind"]) for r in one["unbiased"]]
    assert keys == [
        (r["method"], r["n"], r["seed"], r["model"], r["kind"]) for r in two["unbiased"]
    ]
    # two seeds of every run, a third of the headline's (NLL at each size, LDR at the first)
    assert len(keys) == 2 * 4 + 3 and len(one["biased"]) == 2 * 3
    assert [k[2] for k in keys[-3:]] == [1006] * 3 and "zuko" not in {k[3] for k in keys[-3:]}
    assert [r["seed"] for r in one["biased"]] == [1004] * 3 + [1005] * 3
    # each run draws data, initialisation, minibatches and evaluation samples from its own seed
    # and runs whole on one rank, on one thread: the same float ops in the same order, so 1e-6
    # (as asked) is far above the ~0 difference expected; a run fed another seed's data or
    # initialisation moves the ESS by ~1e-2 and more
    _close(one, two)
    kept = [r for r in one["unbiased"] if "flow" in r]  # the first seed's flows, as weights
    assert [(r["method"], r["seed"]) for r in kept] == [("nll", 1004), ("nll+ldr", 1004)]


def test_units_and_a_unit_that_is_not_one():
    cpu = CONFIG.get("cpu")
    units = experiment_units(cpu, 0)
    cases = [u["case"] for u in units]
    # tilted: NLL, NLL + LDR and mode-reweighted NLL; variational: reverse KL with and without LDR
    assert cases.count("tilted") == 3 * cpu.n_seeds
    assert cases.count("variational") == 2 * cpu.n_seeds
    assert "many-well 32-D" not in cases and "many-well 32-D" in {
        u["case"] for u in experiment_units(CONFIG.get("full"), 0)
    }
    with pytest.raises(ValueError, match="is not a unit of this experiment"):
        run_unit(CONFIG.get("ci"), dict(case="hot", seed=0, method="nll"))
