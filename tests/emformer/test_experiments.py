"""Chapter 05: the experiment's presets, the committed pilot, the scheduled arm and the budget."""

import json
import math

import pytest
import torch

from icml26_lit.emformer import finetune_emformer, pretrain_emformer
from icml26_lit.emformer.experiments import (
    CONFIG,
    SIN,
    Config_with,
    arm_mode,
    check_budget,
)
from tests._overview import ROOT, first_number, scale_table
from tests.emformer.test_model import _tiny  # the tiny model the model tests use

PILOT = ROOT / "results" / "emformer" / "pilot_cpu.json"


def test_ci_model_step_is_the_committed_pilot_pick():
    # the ci preset carries the cpu pilot's model step as a number; the notebook reads no file
    committed = json.loads(PILOT.read_text())
    assert CONFIG.get("ci").model_dt == round(committed["model_dt"], 4)
    assert CONFIG.get("cpu").model_dt == round(committed["model_dt"], 4)


def test_cpu_budget_is_the_committed_pilot_budget():
    # the cpu run pretrains for the budget its pilot checked, and that pilot cleared both floors
    budget = json.loads(PILOT.read_text())["budget"]
    assert budget["pretrain_steps"] == CONFIG.get("cpu").pretrain_steps
    assert budget["seed"] >= 100 > CONFIG.get("cpu").n_seeds  # no evaluation seed
    last = budget["log"][-1]
    assert budget["skill"] == all(last[k] < f for k, f in budget["floors"].items())


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_the_overview_table_matches_the_presets(scale):
    seeds, data, model, steps, runs = scale_table("05_emformer")[scale]
    cfg = CONFIG.get(scale)
    assert first_number(seeds) == cfg.n_seeds
    assert first_number(data) == cfg.n_train
    assert first_number(model.replace("width", "")) == cfg.dim
    assert f"patch {cfg.patch}" in model
    assert first_number(steps) == cfg.pretrain_steps
    assert first_number(steps.split(", ")[1]) == cfg.rollouts * cfg.rollout_len
    for arm in cfg.arms:
        assert f"`{arm}`" in runs
    assert ("BPTT" in runs) == ("bptt" in cfg.arms)
    assert ("pilot" in runs) == bool(cfg.pilot)
    assert str(cfg.leads[-1]) in runs


def test_the_scheduled_arm_raises_lambda_and_the_learned_one_does_not():
    g = torch.Generator().manual_seed(3)
    train = torch.randn(3, 6, 3, 8, 16, generator=g)
    lams = {}
    for arm in (SIN, "accumulative"):
        m = _tiny()
        total = 2 * 3
        from icml26_lit.emformer import scheduled_w

        h = finetune_emformer(
            m,
            train,
            arm_mode(arm),
            K=2,
            rollouts=2,
            rollout_len=3,
            batch=2,
            generator=torch.Generator().manual_seed(5),
            w_schedule=(lambda t: scheduled_w(t, total)) if arm == SIN else None,
        )
        lams[arm] = [r["lambda"] for r in h]
    # lambda = (sin(pi t / T - pi / 2) + 1) / 2 at t = 0..T-1: fp32 sine, a few ulps
    want = [(math.sin(math.pi * t / 6 - math.pi / 2) + 1) / 2 for t in range(6)]
    assert lams[SIN] == pytest.approx(want, abs=1e-6)
    assert max(lams["accumulative"]) < 1e-6  # the learned phase's gradient vanishes at -pi/2
    assert arm_mode(SIN) == "accumulative" and arm_mode("detach") == "detach"


def test_budget_pilot_logs_and_rejects_a_bad_interval():
    tiny = Config_with(
        CONFIG.smoke("ci"),
        n_train=4,
        n_test=2,
        pretrain_steps=3,
        batch=2,
        dim=32,
        depth=(1, (1, 2, 1), 1),
    )
    state = torch.random.get_rng_state()
    out = check_budget(tiny, every=2)
    assert torch.equal(state, torch.random.get_rng_state())  # the global RNG is untouched
    assert [e["step"] for e in out["log"]] == [2, 3]
    assert out["skill"] == all(out["log"][-1][k] < f for k, f in out["floors"].items())
    assert out == check_budget(tiny, every=2)  # same seed, same numbers
    with pytest.raises(ValueError, match="every must be a positive int"):
        check_budget(tiny, every=0)


def test_pretrain_callback_sees_every_step_and_is_checked():
    train = torch.randn(2, 3, 3, 8, 16, generator=torch.Generator().manual_seed(0))
    seen = []
    pretrain_emformer(_tiny(), train, 3, batch=2, callback=lambda s, m: seen.append(s))
    assert seen == [1, 2, 3]
    with pytest.raises(TypeError, match="callback must be callable"):
        pretrain_emformer(_tiny(), train, 1, batch=2, callback=3)
