"""ecg_r1.experiments: presets, pairing, a smoke step of every arm, the logistic calibration."""

import numpy as np
import pytest
import torch

from icml26_lit.ecg_r1.experiments import (
    ARMS,
    CONFIG,
    build_encoders,
    logistic_jaccard,
    new_model,
    post_train,
    projected_seconds,
    run_seed,
    seed_data,
    train_arm,
)
from icml26_lit.ecg_r1.protocol import vocabulary
from icml26_lit.lm import WordTokenizer
from icml26_lit.physio import LABELS, random_labels


def _tiny(**kw):
    ci = CONFIG.get("ci")
    base = dict(ci, n_sft=8, n_rl=4, n_test=4, n_encoder=16, encoder_steps=1, sft_steps=2)
    return type(ci)(dict(base, rl_steps=1, n_prompts=2, max_new_tokens=8, **kw))


@pytest.fixture(scope="module")
def setup():
    cfg = _tiny()
    enc = build_encoders(cfg)
    tok = WordTokenizer(vocabulary(cfg.style))
    data = seed_data(cfg, 0, new_model(cfg, tok, enc, 0))
    return cfg, enc, tok, data


def test_presets_structure():
    assert CONFIG.scales == ("ci", "cpu", "colab", "full")
    ci, cpu = CONFIG.get("ci"), CONFIG.get("cpu")
    assert ci.n_seeds == 3 and cpu.n_seeds == 13
    assert (cpu.n_sft, cpu.n_rl) == (2 * ci.n_sft, 2 * ci.n_rl)
    assert cpu.run_pilot and not ci.run_pilot
    assert ci.lr_sft_grid == [1e-3, 3e-3] and ci.lr_rl_grid == [1e-4, 3e-4]
    for arm in ARMS:
        assert ci[f"lr_{arm}"] in ci.lr_sft_grid
    assert ci.lr_grpo in ci.lr_rl_grid and ci.lr_more_sft in ci.lr_rl_grid
    assert ci.jaccard_band == [0.55, 0.80] and ci.evidence_band == [0.30, 0.85]
    assert CONFIG.get("colab").style == "full"


def test_seeds_redraw_records_and_init(setup):
    cfg, enc, tok, data = setup
    other = seed_data(cfg, 1, new_model(cfg, tok, enc, 1))
    assert not torch.equal(data["test"]["sig"], other["test"]["sig"])
    a, b, c = (new_model(cfg, tok, enc, s) for s in (0, 0, 1))
    assert all(torch.equal(x, y) for x, y in zip(a.lm.parameters(), b.lm.parameters()))
    assert not torch.equal(a.lm.head_weight, c.lm.head_weight)


def test_arms_start_from_the_same_weights_and_batches(setup):
    cfg, enc, tok, data = setup
    m1, l1 = train_arm(cfg, tok, enc, data, "imd", 1e-3, 0, steps=2)
    m2, l2 = train_arm(cfg, tok, enc, data, "imd", 1e-3, 0, steps=2)
    assert l1 == l2  # deterministic given the seed
    _, ls = train_arm(cfg, tok, enc, data, "signal", 1e-3, 0, steps=2)
    assert np.isfinite(ls).all()


def test_post_train_copies_and_runs_both_methods(setup):
    cfg, enc, tok, data = setup
    m, _ = train_arm(cfg, tok, enc, data, "imd", 1e-3, 0, steps=1)
    before = m.lm.head_weight.detach().clone()
    g, hist = post_train(cfg, m, data, "grpo", 3e-4, 0, steps=1)
    s, losses = post_train(cfg, m, data, "more_sft", 3e-4, 0, steps=2)
    assert torch.equal(m.lm.head_weight, before)
    assert len(hist) == 1 and len(losses) == 2
    assert not torch.equal(s.lm.head_weight, before)


def test_bad_input_names_the_argument(setup):
    cfg, enc, tok, data = setup
    with pytest.raises(ValueError, match="arm"):
        train_arm(cfg, tok, enc, data, "audio", 1e-3, 0)
    with pytest.raises(ValueError, match="method"):
        post_train(cfg, new_model(cfg, tok, enc, 0), data, "ppo", 1e-4, 0)
    with pytest.raises(ValueError, match="seed"):
        seed_data(cfg, -1, new_model(cfg, tok, enc, 0))


def test_run_seed_smoke(setup):
    cfg, enc, tok, _ = setup
    r = run_seed(cfg, tok, enc, 0)
    for k in ("jac_imd", "jac_spec", "ev_grpo", "ev_more_sft", "jac_grpo", "jac_more_sft"):
        assert 0 <= r[k] <= 1, k
    assert set(r["scores"]["imd"]) == {"both", "signal", "image"}
    assert set(r["scores"]["signal"]) == {"signal"}


def test_logistic_jaccard_separable_and_chance():
    rng = np.random.default_rng(0)
    labs = [random_labels(rng, 0.3) for _ in range(160)]
    y = torch.tensor([[float(n in lab) for n in LABELS] for lab in labs])
    noise = torch.randn(160, 10, 32, generator=torch.Generator().manual_seed(0))
    sig = noise.clone()
    sig[:, :, :10] += 3 * y[:, None, :]  # the labels, plainly in the features
    img = torch.randn(160, 12, 32, generator=torch.Generator().manual_seed(1))
    tr = dict(sig=sig[:120], img=img[:120], labels=labs[:120])
    te = dict(sig=sig[120:], img=img[120:], labels=labs[120:])
    assert logistic_jaccard(tr, te) > 0.9
    blind = dict(tr, sig=noise[:120])
    assert logistic_jaccard(blind, dict(te, sig=noise[120:])) < 0.8


def test_projection_is_linear_in_seeds():
    t = dict(encoders=5.0, sim=0.004, sft=0.02, grpo=0.1, eval=0.001)
    ci = CONFIG.get("ci")
    p = [projected_seconds(type(ci)(dict(ci, n_seeds=n)), t) for n in (1, 2, 3)]
    assert p[2] - p[1] == pytest.approx(p[1] - p[0]) and p[0] > t["encoders"]


def test_colab_arms_no_imd_and_answer_only(setup):
    cfg, enc, tok, _ = setup
    cc = type(cfg)(dict(cfg, colab_claims=True))
    data = seed_data(cc, 0, new_model(cc, tok, enc, 0))
    ao, true = data["sft"]["answer_only"], data["sft"]["targets"]
    assert len(ao) == len(true)
    # the same records' answers, without the protocol's <think>
    for a, t in zip(ao, true):
        assert "<think>" not in tok.decode(a) and "<think>" in tok.decode(t)
        assert tok.decode(t).split("</think>")[1].strip() == tok.decode(a).strip()
    _, l1 = train_arm(cc, tok, enc, data, "noimd", 1e-3, 0, steps=2)
    _, l2 = train_arm(cc, tok, enc, data, "imd", 1e-3, 0, steps=2)
    assert np.isfinite(l1).all() and l1 != l2  # no IMD sees other inputs from the same batches
    r = run_seed(cc, tok, enc, 0)
    assert {"noimd", "answer_only"} <= set(r["scores"]) and set(r["scores"]["noimd"]) == {"both"}
    for k in ("jac_imd_full", "jac_noimd_full", "jac_imd_all", "jac_answer_only", "bleu_imd"):
        assert 0 <= r[k] <= 1, k
    assert "jac_noimd_full" not in run_seed(cfg, tok, enc, 0)  # ci trains neither extra arm
