"""The experiment's building blocks on tiny sizes: memory measurement vs model, smoke step."""

import math

import pytest
import torch

from icml26_lit.core import Config
from icml26_lit.flashschnet.experiments import CONFIG, memory_table, saved_bytes, smoke_step
from icml26_lit.flashschnet.memory import force_call_cost, predicted_step


def _tiny():
    cfg = Config(CONFIG.get("ci"))
    cfg.update(
        n_beads=16,
        n_replicas=2,
        fold_steps=30,
        hidden=16,
        filters=16,
        gaussians=16,
        interactions=2,
        cutoff=9.0,
    )
    return cfg


def test_smoke_step_all_scales():
    for s in ("ci", "colab", "full"):
        smoke_step(CONFIG.smoke(s))


def test_saved_memory_measured_matches_model_and_ladder_order():
    from icml26_lit.md.chain import bead_chain

    cfg = _tiny()
    z, pos, batch = bead_chain(cfg.n_beads, cfg.n_replicas, seed=1, fold_steps=30)
    mem = memory_table(cfg, 0, z, pos, batch, with_pyg=False)
    for k in ("plain", "+message passing", "+CSR", "+16-bit"):
        assert abs(mem[k]["measured"] / mem[k]["model"] - 1) < 0.3, (k, mem[k])
    assert mem["+16-bit"]["measured"] < mem["+CSR"]["measured"] < mem["plain"]["measured"]
    assert mem["+CSR"]["atomics"] == 0 and mem["+message passing"]["atomics"] > 0


def test_saved_bytes_counts_only_live_graph():
    x = torch.randn(100, requires_grad=True)
    assert saved_bytes(lambda: (x * x).sum()) == 400  # x saved (once, same storage)
    assert saved_bytes(lambda: (torch.sin(x + 1), (x * 2).sum())[1]) == 0  # sin's graph was dropped


def test_memory_model_closed_forms():
    c = force_call_cost(10, 100, 8, 4, 2, rbf=True, message=True, csr=True)
    assert c.float_atomics == 0
    coo = force_call_cost(10, 100, 8, 4, 2, rbf=True, message=True)
    assert coo.float_atomics == 2 * 2 * 100 * 8
    plain = force_call_cost(10, 100, 8, 4, 2)
    assert plain.float_atomics == 2 * 2 * 100 * 8 + 2 * 3 * 100
    # bytes by hand, N=10, E=100, F=8, K=4, L=2, float32 (forward; backward counted twice more):
    # radial basis 7*E*K*4 + 40*E = 15200; filter MLP L*(E*K*4 + 5*E*F*4) = 35200;
    # message L*6*E*F*4 = 38400; aggregation L*3*E*F*4 = 19200; total 3 * 108000 = 324000 B
    assert plain.bytes == 324_000
    p = predicted_step(plain, 4, 100.0)
    # 324000 B at 100 GB/s = 3.24 us; 4 replicas / 3.24 us * 4 fs * 86400 s/day = 426666.67 ns/day
    assert abs(p["ms"] - 3.24e-3) < 1e-15
    assert abs(p["timesteps_mol_per_s"] - 4 / 3.24e-6) < 1e-6
    assert abs(p["ns_per_day"] - 426_666.666_666_67) < 1e-6


def test_ladder_benchmark_runs_on_cpu():
    from icml26_lit.flashschnet.experiments import PATHS, ladder_benchmark

    cfg = _tiny()
    cfg.update(n_beads=8, fold_steps=0, ladder_replicas=[2], ladder_steps=2)
    cfg.update(ladder_steps=6, timing_repeats=3)
    rows = ladder_benchmark(cfg, 0, torch.device("cpu"), backend="torch")
    assert [r["path"] for r in rows] == list(PATHS) and all(
        r["timesteps_mol_per_s"] > 0 for r in rows
    )
    assert all(len(r["rates"]) == 3 and min(r["rates"]) > 0 for r in rows)  # repeated timings


def test_registered_benchmarks_have_models():
    import icml26_lit.flashschnet.kernels  # noqa: F401
    from icml26_lit.core import BENCHMARKS

    ours = [b for k, b in BENCHMARKS.items() if k.startswith("06.")]
    assert len(ours) == 3 and all(b.bytes_model()["bytes"] > 0 for b in ours)


def test_integrated_autocorrelation_of_ar1_and_white_noise():
    import numpy as np

    from icml26_lit.flashschnet.experiments import integrated_autocorrelation

    g = np.random.default_rng(1)
    for phi in (0.5, 0.8):  # tau = (1 + phi) / (1 - phi) = 3 and 9
        x = np.zeros((20000, 4))
        for t in range(1, len(x)):
            x[t] = phi * x[t - 1] + g.standard_normal(4)
        tau = (1 + phi) / (1 - phi)
        # the estimate's sd is about tau * sqrt(2 (2 M + 1) / (T C)) with window M = 5 tau: < 5%
        assert abs(integrated_autocorrelation(x) - tau) < 0.12 * tau, phi
    assert abs(integrated_autocorrelation(g.standard_normal(4000)) - 1) < 0.2
    with pytest.raises(ValueError, match="x must have shape"):
        integrated_autocorrelation(np.zeros(3))
    with pytest.raises(ValueError, match="no column that varies"):
        integrated_autocorrelation(np.ones((10, 2)))


def test_ks_distances_and_groups():
    import numpy as np
    from scipy.stats import ks_2samp

    from icml26_lit.flashschnet.experiments import ks_distances, split_groups

    g = np.random.default_rng(2)
    a = dict(rg=g.normal(size=(50, 2)), bonds=g.normal(size=(50, 6)))
    b = dict(rg=g.normal(1.0, size=(50, 2)), bonds=g.normal(size=(50, 6)))
    d = ks_distances(a, b)
    assert d["rg"] == ks_2samp(a["rg"].ravel(), b["rg"].ravel()).statistic and d["rg"] > 0.3
    assert ks_distances(a, a) == {"rg": 0.0, "bonds": 0.0}
    run = dict(rg=np.arange(12.0).reshape(2, 6), bonds=np.arange(2 * 6 * 3.0).reshape(2, 18))
    groups = split_groups(run, 3, 2, 4)  # 3 groups of 2 chains of 4 beads (3 bonds each)
    assert groups[1]["rg"].tolist() == [[2, 3], [8, 9]] and groups[2]["bonds"].shape == (2, 6)
    assert groups[2]["bonds"][0].tolist() == list(range(12, 18))
    with pytest.raises(ValueError, match="samples hold 6 replicas"):
        split_groups(run, 2, 2, 4)


def test_force_rounding_bound_and_no_reseed():
    from icml26_lit.flashschnet.experiments import force_rounding, make_model, make_system

    cfg = _tiny()
    z, pos, batch = make_system(cfg, 4)
    state = torch.random.get_rng_state()
    r = force_rounding(cfg, 4, z, pos, batch)
    # make_model leaves the global RNG alone
    assert torch.equal(torch.random.get_rng_state(), state)
    # the bound sits at float64 rounding of the forces: far below float32's, above zero
    assert 0 < r["bound"] < 1e-10 * r["force_scale"]
    assert r["gap"] <= r["bound"]
    m1, m2 = make_model(cfg, 4, "plain"), make_model(cfg, 4, "+16-bit")
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters()))


def test_flash_saves_less_than_plain_and_pyg_schnet():
    "The saved-for-backward comparisons (guaranteed by the design, so tests rather than rows)."
    from icml26_lit.md.chain import bead_chain

    cfg = _tiny()
    z, pos, batch = bead_chain(cfg.n_beads, cfg.n_replicas, seed=2, fold_steps=30)
    mem = memory_table(cfg, 0, z, pos, batch, with_pyg=True)
    assert mem["+16-bit"]["measured"] < mem["plain"]["measured"]
    assert mem["+16-bit"]["measured"] < mem["PyG SchNet"]["measured"]


def test_bench_headline_matches_the_committed_bench_file(tmp_path, monkeypatch):
    "results/flashschnet/full.json is record_bench_headline of the committed H200 bench file."
    import json

    from icml26_lit.core import results_dir
    from icml26_lit.flashschnet.experiments import record_bench_headline, write_full_headline

    root = results_dir()
    bench = root / "bench" / "NVIDIA-H200-2026-12-04.json"
    committed = json.loads((root / "flashschnet" / "full.json").read_text())
    fresh = json.loads(write_full_headline(bench, tmp_path / "full.json").read_text())
    keep = ("claim", "ours", "baseline", "verdict", "test", "headline", "magnitude", "scale")
    assert [{k: c[k] for k in keep} for c in fresh["claims"]] == [
        {k: c[k] for k in keep} for c in committed["claims"]
    ]
    c = fresh["claims"][0]
    assert c["headline"] and c["scale"] == "full" and c["test"] == "exact"
    assert c["verdict"] == "holds" and abs(c["magnitude"] - 26.0942 / 24.1227) < 1e-3
    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path / "claims"))
    with pytest.raises(ValueError, match="no chapter 06 row"):
        record_bench_headline({"benchmarks": []})
    with pytest.raises(ValueError, match="'benchmarks' list"):
        record_bench_headline({"rows": []})


def test_write_full_headline_goes_through_results_dir(tmp_path, monkeypatch):
    "Without `dst` the file lands in results_dir(); outside a checkout `dst` is required."
    import json

    from icml26_lit.core import results_dir
    from icml26_lit.flashschnet.experiments import write_full_headline

    bench = results_dir() / "bench" / "NVIDIA-H200-2026-12-04.json"
    monkeypatch.setenv("ICML26_RESULTS_DIR", str(tmp_path / "res"))
    out = write_full_headline(bench)
    assert out == tmp_path / "res" / "flashschnet" / "full.json"
    assert json.loads(out.read_text())["claims"][0]["headline"]
    monkeypatch.delenv("ICML26_RESULTS_DIR")
    monkeypatch.setattr("icml26_lit.core.results_dir", lambda: None)
    with pytest.raises(ValueError, match="dst is needed"):
        write_full_headline(bench)


def test_pyg_schnet_and_make_model_leave_the_global_rng_alone():
    "Weights come from `seed` alone: the same under two global states, which stay unchanged."
    from icml26_lit.flashschnet.experiments import make_model, pyg_schnet

    cfg = _tiny()
    params = []
    for global_seed in (11, 12):
        torch.manual_seed(global_seed)
        state = torch.random.get_rng_state()
        pyg, ours = pyg_schnet(cfg, 5), make_model(cfg, 5, "plain")
        assert torch.equal(torch.random.get_rng_state(), state)
        params.append([p.detach().clone() for p in [*pyg.parameters(), *ours.parameters()]])
    assert all(torch.equal(p, q) for p, q in zip(*params))


def test_make_model_names_a_bad_path():
    from icml26_lit.flashschnet.experiments import make_model

    with pytest.raises(ValueError, match="path must be one of"):
        make_model(_tiny(), 0, "+flash")


def test_overview_table_matches_the_presets():
    "The overview's 'What each scale runs' rows state each preset's seeds and Langevin sizes."
    import json
    import pathlib

    nb = pathlib.Path(__file__).resolve().parents[2] / "nbs/06_flashschnet/00_overview.ipynb"
    text = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
    rows = {ln.split("|")[1].strip(" `"): ln for ln in text.splitlines() if ln.startswith("| `")}
    for s in ("ci", "cpu", "colab", "full"):
        cfg, row = CONFIG.get(s), rows[s]
        cells = [c.strip() for c in row.split("|")]
        assert cells[2] == str(cfg.n_seeds), s
        assert f"{cfg.md_beads} beads x {cfg.md_replicas} replicas" in cells[5], s
        assert f"{cfg.md_steps:,} recorded steps, {cfg.null_pairs} pairs" in cells[5], s
        if s in ("colab", "full"):
            assert f"{cfg.n_beads} beads x {cfg.n_replicas} replicas" in cells[3], s


def test_cpu_preset_carries_the_committed_pilot_sizes():
    "The cpu preset's Langevin sizes are those the committed pilot measured, on its own seed."
    import json

    from icml26_lit.core import results_dir
    from icml26_lit.flashschnet.experiments import MIN_MIXING, PILOT_SEED, PILOT_STEPS

    pilot = json.loads((results_dir() / "flashschnet" / "pilot_cpu.json").read_text())["pilot"]
    cfg = CONFIG.get("cpu")
    assert {k: pilot["sizes"][k] for k in ("md_beads", "md_burn", "md_every")} == {
        k: cfg[k] for k in ("md_beads", "md_burn", "md_every")
    }
    # the pilot ran its own length and held ten autocorrelation times of each observable, so
    # its estimate of tau is not cut short by the run (a short run underestimates tau)
    assert pilot["sizes"]["md_steps"] == PILOT_STEPS
    assert pilot["mixed"] and min(pilot["mixing"].values()) >= MIN_MIXING
    # the recorded steps: 1.25 x MIN_MIXING autocorrelation times of the slower observable,
    # rounded up to a thousand steps
    tau = max(pilot["tau"].values())
    assert cfg.md_steps == pilot["md_steps"] == 1000 * math.ceil(1.25 * MIN_MIXING * tau / 1000)
    # the pilot's chain, weights and noise are none of the evaluation seeds'
    assert pilot["seed"] == PILOT_SEED and PILOT_SEED not in range(cfg.n_seeds)
    assert set(pilot["tau"]) == {"rg", "bonds"} and MIN_MIXING == 10


@pytest.mark.parametrize("tau", [0.0, -5.0, float("nan"), float("inf"), "600"])
def test_md_steps_for_names_a_bad_tau(tau):
    from icml26_lit.flashschnet.experiments import md_steps_for

    with pytest.raises(ValueError, match="tau must be a positive number of steps"):
        md_steps_for(tau)


def test_md_steps_for_rounds_up_to_a_thousand():
    from icml26_lit.flashschnet.experiments import md_steps_for

    # 1.25 x 10 x tau: 453 -> 5,662.5 -> 6,000; 800 -> 10,000 exactly; 800.1 -> 11,000
    assert [md_steps_for(t) for t in (453.0, 800.0, 800.1, 1)] == [6000, 10000, 11000, 1000]


def _md_results(mixed: bool) -> dict:
    "run_experiment's results with a made-up Langevin unit (mixed or not) and two seeds."
    seeds = {s: dict(gap=1e-14, bound=1e-13) for s in (0, 1)}
    tau = dict(rg=500.0 if not mixed else 50.0, bonds=2.0)
    md = dict(ks_ours=0.1, ks_tol=0.3, ks_null=[0.2, 0.3], tau=tau, mixed=mixed)
    md["mixing"] = {k: 1000 / v for k, v in tau.items()}
    return dict(seeds=seeds, md=md, ladder=None)


def test_langevin_row_is_not_decided_when_the_runs_do_not_mix(tmp_path, monkeypatch):
    from icml26_lit.flashschnet.experiments import record_claims

    monkeypatch.setenv("ICML26_CLAIMS_DIR", str(tmp_path))
    cfg = Config(CONFIG.get("ci"))
    cfg.update(md_steps=1000)
    row = record_claims(_md_results(False), cfg, "ci")[1]
    assert row.verdict == "not decided" and row.calibrated is False
    assert "2.0 autocorrelation times of radius of gyration" in row.calibration
    assert "tau = 500 steps" in row.calibration
    row = record_claims(_md_results(True), cfg, "ci")[1]
    assert row.verdict == "holds" and row.calibrated is True


def test_md_pilot_names_a_bad_replica_count():
    from icml26_lit.flashschnet.experiments import md_pilot

    with pytest.raises(ValueError, match="n_replicas must be a positive integer"):
        md_pilot(CONFIG.get("ci"), n_replicas=0)
    with pytest.raises(ValueError, match="md_steps must be a positive integer"):
        md_pilot(CONFIG.get("ci"), md_steps=0)


def test_sizes_table_follows_the_committed_pilots():
    "The experiments page's table of pilots (beads, tau, holds) is the committed pilot files'."
    import json
    import pathlib

    from icml26_lit.core import results_dir

    nb = pathlib.Path(__file__).resolve().parents[2] / "nbs/06_flashschnet/07_experiments.ipynb"
    cell = next(
        "".join(c["source"])
        for c in json.loads(nb.read_text())["cells"]
        if "".join(c["source"]).startswith("## Sizes")
    )
    for name in ("pilot_cpu.json", "pilot_cpu_30beads.json", "pilot_cpu_20beads.json"):
        pilot = json.loads((results_dir() / "flashschnet" / name).read_text())["pilot"]
        rg, beads = pilot["tau"]["rg"], pilot["sizes"]["md_beads"]
        row = f"| {beads} | {round(rg):,} | {pilot['mixing']['rg']:.1f} $\\tau$"
        assert row in cell, row
