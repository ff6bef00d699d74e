"Chapter 19: the experiments' building blocks (leak calibration, final rollouts, cost model)."

import numpy as np
import torch

from icml26_lit.verbalized_persuasion.experiments import (
    CONFIG,
    final_value,
    leak_check,
    projected_seconds,
)
from icml26_lit.verbalized_persuasion.letters import Prompt
from icml26_lit.verbalized_persuasion.prompt_psro import PromptPSROResult, Rollouts


def test_leak_check_calibrates_the_leak_lp():
    lc = leak_check(0.5)
    assert abs(lc["leak_lp"] - 0.5) < 1e-6  # brentq to its default xtol, far inside the 0.02 band
    assert abs(lc["honest"] - 1 / 3) < 1e-12 and abs(lc["lp"] - 2 / 3) < 1e-9
    assert 0 < lc["leak"] < 1


def _result(prompts, mix, rule):
    return PromptPSROResult(0.0, prompts, np.asarray(mix), rule, [rule], [], len(prompts))


def test_final_value_with_the_exact_reader_matches_the_closed_form():
    n = 2000
    ro = Rollouts(n, torch.Generator().manual_seed(int(torch.randint(1 << 30, (1,)))), True)
    # follow at (1, q): hire rate mu0 + (1 - mu0) q; its Monte Carlo SE is (1 - mu0) sqrt(q(1-q)/n)
    res = _result([Prompt(1.0, 0.45), Prompt(0.75, 0.2)], [0.75, 0.25], "follow")
    v, p_s, q = final_value(res, None, ro, 0.2112)
    exact = 0.75 * (1 / 3 + 2 / 3 * 0.45) + 0.25 * (0.75 / 3 + 2 / 3 * 0.2)
    assert abs(v - exact) < 4 * (2 / 3) * np.sqrt(0.25 / n) + 4 * np.sqrt(0.25 / n) / 3
    assert abs(p_s - (0.75 + 0.25 * 0.75)) < 1e-12 and abs(q - (0.75 * 0.45 + 0.25 * 0.2)) < 1e-12
    # ignore never hires; the exact threshold reader at q = 0.6 > 1/2 hires only the revealed
    assert final_value(_result([Prompt(1.0, 0.45)], [1.0], "ignore"), None, ro, 0.2112)[0] == 0
    v_t = final_value(_result([Prompt(1.0, 0.6)], [1.0], "threshold"), None, ro, 0.2112)[0]
    assert v_t == 0.0  # obfuscated letters reveal nothing and the posterior 5/11 < 1/2


def test_projection_is_linear_in_seeds_and_counts_the_pilot():
    t = dict(corpus=1e-4, step=0.04, prompt=0.1, letter=2e-4, overhead=0.0)
    ci = CONFIG.get("ci")
    pr = [projected_seconds(type(ci)(dict(ci, n_seeds=n)), t) for n in (1, 2, 3)]
    assert np.isclose(pr[2] - pr[1], pr[1] - pr[0]) and pr[0] > 0
    with_pilot = projected_seconds(type(ci)(dict(ci, run_pilot=True)), t)
    assert with_pilot > pr[2]


def test_presets():
    ci, cpu = CONFIG.get("ci"), CONFIG.get("cpu")
    assert ci.n_seeds == 3 and not ci.run_pilot and cpu.run_pilot
    assert (ci.lr, ci.schedule) in [(r["lr"], r["schedule"]) for r in ci.pilot_grid]
    assert (cpu.n_seeds, cpu.n_letters, cpu.steps, cpu.n_rollouts, cpu.n_iters, cpu.n_test) == (
        4, 32000, 3000, 64, 8, 2000
    )  # fmt: skip
    assert ci.err_band == cpu.err_band == 0.05 and cpu.interview_cost == 0.1


def test_the_carried_pick_is_the_committed_pilots():
    "Every preset carries the cpu pilot's rate and schedule, and cpu its corpus size: the file's."
    import json
    import pathlib

    f = pathlib.Path(__file__).resolve().parents[2] / "results/verbalized_persuasion/pilot_cpu.json"
    picks = json.loads(f.read_text())["pilot"]["picks"]
    assert set(picks) == {"n_letters", "schedule", "lr"}, picks
    for scale in CONFIG.scales:
        assert all(CONFIG.get(scale)[k] == picks[k] for k in ("lr", "schedule")), (scale, picks)
    assert CONFIG.get("cpu").n_letters == picks["n_letters"]


def test_the_pilot_picks_the_recipe_nearest_bayes(monkeypatch):
    "run_pilot trains each recipe of the grid on the pilot seed and keeps the smallest error."
    from icml26_lit.verbalized_persuasion import experiments as ex

    seen = []

    def fake_train(cfg, seed, lr, leak):
        seen.append((seed, cfg.n_letters, cfg.schedule, lr))
        return cfg, [], None

    errs = iter([0.07, 0.03, 0.05])
    monkeypatch.setattr(ex, "train_receiver", fake_train)
    monkeypatch.setattr(ex, "receiver_error", lambda rx, n, leak, g: dict(err=next(errs)))
    grid = [dict(n_letters=10, schedule="constant", lr=1e-3), dict(schedule="cosine", lr=3e-3),
            dict(n_letters=30, schedule="cosine", lr=1e-2)]  # fmt: skip
    cpu = CONFIG.get("cpu")
    out = ex.run_pilot(type(cpu)(dict(cpu, pilot_grid=grid)), 0.2112)
    assert out["picks"] == grid[1] and len(out["validation"]) == 3
    assert seen == [(99, 10, "constant", 1e-3), (99, cpu.n_letters, "cosine", 3e-3),
                    (99, 30, "cosine", 1e-2)]  # fmt: skip


def test_grid_optimum_is_the_exhaustive_best_and_covers_the_search():
    from icml26_lit.verbalized_persuasion.experiments import grid_optimum
    from icml26_lit.verbalized_persuasion.prompt_psro import prompt_psro

    ro, cache = Rollouts(32, torch.Generator().manual_seed(11)), {}
    res = prompt_psro(None, ro, n_iters=3, rules=("threshold",), cache=cache,
                      generator=torch.Generator().manual_seed(12))  # fmt: skip
    grid = grid_optimum(cache, None, ro, True, 0.2112)
    assert len(cache) == 63 and grid.value >= res.value - 1e-12
    assert grid.value == max(u_s[0] for u_s, _ in cache.values())
    assert grid.receiver_rule == "threshold" and grid.sender_mix.tolist() == [1.0]


def test_recommending_every_strong_student_dominates():
    "Against a follow rule and the exact reader alike, p_strong = 1 is never worse than less."
    from icml26_lit.verbalized_persuasion.classic import recommendation_letter, solve_obedience_lp
    from icml26_lit.verbalized_persuasion.letters import P_STRONG, Q_GRID
    from icml26_lit.verbalized_persuasion.prompt_psro import RULES, hire_decisions, rule_payoffs

    seed = int(torch.randint(1 << 30, (1,)))
    ro = Rollouts(64, torch.Generator().manual_seed(seed))
    follow = RULES.index("follow")
    for q in Q_GRID[::4]:
        u = [
            rule_payoffs(hire_decisions(Prompt(p, q), ro, None, 0.2112, 0.5), ro.n, 1 / 3, 0.5)[0]
            for p in sorted(P_STRONG)
        ]
        # follow: the hire rate mu0 p + (1 - mu0) q rises with p on the same draws
        assert all(a[follow] <= b[follow] + 1e-12 for a, b in zip(u, u[1:])), (seed, q, u)
    # the commitment LP's optimum recommends every strong student
    scheme = solve_obedience_lp(recommendation_letter()).scheme  # (states, messages)
    assert np.isclose(scheme[1].max(), 1.0, atol=1e-7), scheme


def test_a_seed_leaves_the_global_rng_alone_and_repeats():
    from icml26_lit.verbalized_persuasion.experiments import run_seed

    ci = CONFIG.get("ci")
    tiny = type(ci)(dict(ci, n_letters=64, d_model=16, n_heads=2, n_layers=1, steps=2,
                         n_rollouts=4, n_iters=1, n_starts=1, n_final=8, n_test=16))  # fmt: skip
    torch.manual_seed(1)
    np.random.seed(1)
    before, before_np = torch.random.get_rng_state(), np.random.get_state()[1].copy()
    a = run_seed(tiny, 3, 3e-3, 0.2112)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert np.array_equal(np.random.get_state()[1], before_np)
    torch.manual_seed(2)  # another global state: the same numbers
    b = run_seed(tiny, 3, 3e-3, 0.2112)
    for k in ("on", "off", "grid", "two_stage"):
        assert a[k]["value"] == b[k]["value"], k
    assert a["losses"] == b["losses"] and a["on"]["rule"] == "threshold"
