"""The experiment's building blocks on tiny sizes: memory measurement vs model, smoke step."""
import torch

from icml26_lit.core import Config
from icml26_lit.flashschnet.experiments import CONFIG, memory_table, smoke_step, saved_bytes
from icml26_lit.flashschnet.memory import force_call_cost, predicted_step


def _tiny():
    cfg = Config(CONFIG.get("ci"))
    cfg.update(n_beads=16, n_replicas=2, fold_steps=30, hidden=16, filters=16, gaussians=16, interactions=2, cutoff=9.0)
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
    p = predicted_step(plain, 4, 100.0)
    assert abs(p["ms"] - plain.bytes / 100e9 * 1e3) < 1e-12
    assert abs(p["ns_per_day"] - 4 / (p["ms"] / 1e3) * 4e-6 * 86400) < 1e-9


def test_ladder_benchmark_runs_on_cpu():
    from icml26_lit.flashschnet.experiments import PATHS, ladder_benchmark
    cfg = _tiny()
    cfg.update(n_beads=8, fold_steps=0, ladder_replicas=[2], ladder_steps=2)
    rows = ladder_benchmark(cfg, 0, torch.device("cpu"), backend="torch")
    assert [r["path"] for r in rows] == list(PATHS) and all(r["timesteps_mol_per_s"] > 0 for r in rows)


def test_registered_benchmarks_have_models():
    from icml26_lit.core import BENCHMARKS
    import icml26_lit.flashschnet.kernels  # noqa: F401
    ours = [b for k, b in BENCHMARKS.items() if k.startswith("06.")]
    assert len(ours) == 3 and all(b.bytes_model()["bytes"] > 0 for b in ours)
