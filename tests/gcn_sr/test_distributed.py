"""Chapter 18's run on one process and split over two gloo ranks: the same units, the same numbers,
results the launcher can write as JSON, and the claims recorded from them."""

from tests._trees import assert_trees_close as _close

RUN = """
import json, os, sys, tempfile, torch
from book.run_distributed import jsonable
from icml26_lit.core.distributed import init_distributed
from icml26_lit.gcn_sr.experiments import CONFIG, experiment_units, record_claims, run_experiment
init_distributed()
ci = CONFIG.get("ci")
cfg = type(ci)(dict(ci, tasks=[1], n_seeds=2, budget=60, batch_size=20, gp_offspring=10,
                    n_test=50, gplearn_population=20, methods=["gcn_sr", "pg", "gplearn"]))
res = run_experiment(cfg, 4, "cpu")
if res is not None:  # rank 0
    os.environ["ICML26_CLAIMS_DIR"] = tempfile.mkdtemp()  # not the book's claims folder
    claims = [(c.claim, c.verdict, c.ours, c.baseline) for c in record_claims(res, cfg, "ci")]
    # the wall-clock seconds differ from run to run: left out
    drop = lambda r: {k: v for k, v in r.items() if k != "seconds"}
    runs = {m: [drop(r) for r in rs] for m, rs in res.items()}
    runs = json.loads(json.dumps(jsonable(runs)))  # as book/run_distributed.py writes them
    torch.save(dict(units=experiment_units(cfg, 4), runs=runs, claims=claims), sys.argv[1])
"""


def test_run_experiment_units_split_over_two_ranks(one_and_two_ranks):
    one, two = one_and_two_ranks(RUN)
    # each unit draws its points, its generator's weights and samples and its GP choices (or
    # gplearn's random_state) from its own seed and runs whole on one rank, on one thread: the
    # same float ops in the same order as on one process, so the numbers agree bit for bit; 1e-6
    # is the bound the issue asks for, far below the gap between two seeds' NRMSE
    units = [(1, s, m) for s in (4, 5) for m in ("gcn_sr", "pg", "gplearn")]
    assert one["units"] == two["units"] == units
    assert [[(r["task"], r["seed"]) for r in rs] for rs in one["runs"].values()] == [
        [(1, 4), (1, 5)]
    ] * 3
    _close(one["runs"], two["runs"])
    _close(one["claims"], two["claims"])
    # one NRMSE row per baseline (and a recovery row where some method recovered Nguyen-1),
    # each over the seeds found in the results (4 and 5)
    assert len(one["claims"]) >= 2 and all(len(c[2]) == 2 for c in one["claims"])
