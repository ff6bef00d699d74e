"""Chapter 12's run on one process and split over two gloo ranks: the same units, the same numbers
as one process and as one batch of every seed's streams, and results the launcher can write."""

import numpy as np

RUN = """
import json, os, sys, tempfile
import numpy as np, torch
from book.run_distributed import jsonable
from icml26_lit.core import Config
from icml26_lit.core.distributed import init_distributed
from icml26_lit.ftrl.experiments import CONFIG, experiment_units, record_claims, run_experiment
init_distributed()
cfg = Config(CONFIG.get("ci"))
cfg.update(T_max=128, n_T=2, n_seeds=2, P_sweep=[1.0, 2.0], ridge_every=16, log_T_max=64,
           log_n_T=2, adam_steps=3, n_probe=2, betas=[[0.9, 0.999], [0.99, 0.9]])
res = run_experiment(cfg, 5, "cpu")
if res is not None:  # rank 0
    json.dumps(jsonable(res))  # what book/run_distributed.py writes
    os.environ["ICML26_CLAIMS_DIR"] = tempfile.mkdtemp()  # not the book's claims folder
    claims = [(c.claim, c.verdict, c.ours, c.baseline) for c in record_claims(res, cfg, "ci")]
    keys = ("experts", "ensemble", "river", "ridge")
    streams = {p: {k: torch.as_tensor(np.asarray(r[k])) for k in keys if k in r}
               for p, r in res.items() if p not in ("adam", "river_pilot")}
    metas = {p: r["meta"] for p, r in res.items() if p not in ("adam", "river_pilot")}
    adam = {k: [(r["loss"], r["proxy"], r["max_ratio"]) for r in v] for k, v in res["adam"].items()}
    torch.save(dict(units=experiment_units(cfg, 5), streams=streams, metas=metas, adam=adam,
                    claims=claims), sys.argv[1])
"""


def test_run_experiment_units_split_over_two_ranks(one_and_two_ranks):
    one, two = one_and_two_ranks(RUN)
    # every unit draws its streams (or its Adam task, initialisation and minibatches) from its own
    # seed and runs whole on one rank, on one thread: the same float ops in the same order as on
    # one process, so the numbers agree bit for bit; 1e-6 is the bound the issue asks for, far
    # below what another seed's stream would move them. Wall-clock seconds are left out.
    assert one["units"] == two["units"] and len(one["units"]) == 3 * 2 + 2 * 3 * 2
    assert one["metas"] == two["metas"]
    for part in one["streams"]:
        for k, a in one["streams"][part].items():
            b = two["streams"][part][k]
            assert a.shape == b.shape and float((a - b).abs().max()) <= 1e-6, (part, k)
    assert (
        list(one["adam"])
        == list(two["adam"])
        == [
            (b1, b2, k)
            for b1, b2 in ((0.9, 0.999), (0.99, 0.9))
            for k in ("adam", "o2nc_clip", "o2nc_free")
        ]
    )
    for k in one["adam"]:
        np.testing.assert_allclose(
            one["adam"][k], two["adam"][k], rtol=0, atol=1e-6, err_msg=str(k)
        )
    assert [c[:2] for c in one["claims"]] == [c[:2] for c in two["claims"]]
    assert [len(c[2]) for c in one["claims"]] == [2] * 3 + [2, 2]  # the seeds 5 and 6 of the run


def test_seeds_run_alone_equal_one_batch():
    "A seed's streams run alone give the numbers of the batch of every seed (the units' premise)."
    from icml26_lit.core import Config
    from icml26_lit.ftrl.experiments import CONFIG, run_experiment, run_linear, run_logistic

    cfg = Config(CONFIG.get("ci"))
    cfg.update(T_max=256, n_T=3, n_seeds=3, P_sweep=[1.0, 4.0], ridge_every=16, log_T_max=128)
    cfg.update(log_n_T=3, eta_sweep=[0.5], adam_steps=1, n_probe=1, betas=[[0.9, 0.999]])
    res = run_experiment(cfg, 2, "cpu")
    tuned = Config(dict(cfg, river_lr=res["river_pilot"]["lr"]))  # OGD's step: the pilot's pick
    whole = dict(
        linear=run_linear(tuned, 2),
        logistic=run_logistic(cfg, 2),
        logistic_theory=run_logistic(
            cfg, 2, curvature=res["logistic_theory"]["curvature"], top_only=True
        ),
    )
    for part, batch in whole.items():
        assert res[part]["meta"] == batch["meta"], part
        for k in ("experts", "ensemble", "river", "ridge"):
            if k in batch:  # exactly: per-stream arithmetic does not depend on the batch
                np.testing.assert_array_equal(res[part][k], batch[k], err_msg=f"{part} {k}")
    np.testing.assert_array_equal(
        res["linear"]["eta_sweep"][0.5], whole["linear"]["eta_sweep"][0.5]
    )
