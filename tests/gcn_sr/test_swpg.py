"""Chapter 18: GP on fills, similarity, SWPG rewards and loss, the GCN-SR loop."""

import math

import numpy as np
import pytest
import torch

from icml26_lit.gcn_sr.fitness import nguyen
from icml26_lit.gcn_sr.kernels import score
from icml26_lit.gcn_sr.spbt import SPBT, Library, from_tree, is_valid, random_tree, to_tree
from icml26_lit.gcn_sr.swpg import (
    GCNSR,
    SubtreeIndex,
    crossover,
    gp_refine,
    mutate,
    risk_seeking_select,
    spbt_similarity,
    swpg_loss,
    swpg_rewards,
)


def _subtrees(tree):
    out = [tree]
    for c in tree[1:]:
        out += _subtrees(c)
    return out


def test_gp_operators_keep_validity_and_material(fresh_seed):
    lib = Library(n_vars=2)
    spbt = SPBT(5, lib)
    idx = SubtreeIndex(spbt)
    rng, g = np.random.default_rng(fresh_seed), torch.Generator().manual_seed(fresh_seed)
    for _ in range(60):
        a, b = random_tree(5, lib, g).numpy(), random_tree(5, lib, g).numpy()
        child = crossover(a, b, idx, rng)
        assert bool(is_valid(torch.tensor(child), lib))
        # the child contains a subtree of b, and outside it is a
        ct = to_tree(torch.tensor(child))
        assert any(s in _subtrees(ct) for s in _subtrees(to_tree(torch.tensor(b))))
        m = mutate(a, idx, rng)
        assert bool(is_valid(torch.tensor(m), lib))


def test_similarity_properties(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    lib = Library()
    a = torch.stack([random_tree(4, lib, g) for _ in range(20)])
    s = spbt_similarity(a, a)
    torch.testing.assert_close(s, s.T)
    torch.testing.assert_close(s.diagonal(), torch.ones(20))
    x = from_tree(("add", ("x1",), ("x1",)), 3)
    y = from_tree(("add", ("x1",), ("sin", ("x1",))), 3)
    # agree on slots 0 and 1, union is {0, 1, 2, 5}: 2 / 4
    assert float(spbt_similarity(x[None], y[None])) == 0.5


def test_swpg_rewards_closed_form():
    t = torch.stack([from_tree(("x1",), 3), from_tree(("sin", ("x1",)), 3)])
    e = torch.stack([from_tree(("sin", ("x1",)), 3), from_tree(("x1",), 3)])
    r = torch.tensor([0.1, 0.2])
    er = torch.tensor([0.9, 0.5])
    w = torch.softmax(er / 0.2, 0)
    sim = spbt_similarity(t, e)
    out = swpg_rewards(t, r, e, er, beta=0.7, temperature=0.2)
    torch.testing.assert_close(out, r + 0.7 * sim @ w)
    torch.testing.assert_close(swpg_rewards(t, r, e, er, beta=0.0), r)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        swpg_rewards(t, r, e, er, temperature=0.0)


def test_loss_gradient_is_finite_with_invalid_rewards():
    lp = torch.tensor([-1.0, -2.0, -3.0, float("-inf")], requires_grad=True)
    r = torch.tensor([math.nan, math.inf, 0.3, 0.9])
    idx, thr = risk_seeking_select(torch.nan_to_num(r, nan=0.0, posinf=0.0), 0.5)
    loss = swpg_loss(lp, r, thr, torch.tensor([0.1, 0.2, math.nan, 0.3]))
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(lp.grad).all()
    with pytest.raises(ValueError, match="epsilon"):
        risk_seeking_select(r, 0.0)


def test_risk_seeking_gradient_sign():
    # only samples above the quantile get weight; a higher reward pushes log p up harder
    lp = torch.zeros(4, requires_grad=True)
    r = torch.tensor([0.1, 0.2, 0.5, 0.9])
    idx, thr = risk_seeking_select(r, 0.5)
    assert sorted(idx.tolist()) == [2, 3]
    swpg_loss(lp[idx], r[idx], thr).backward()
    assert lp.grad[3] < lp.grad[2] <= 0 and lp.grad[0] == 0


def test_gp_refine_counts_and_validity():
    X, y, _ = nguyen(1)
    lib = Library()
    spbt = SPBT(5, lib)
    g = torch.Generator().manual_seed(0)
    seeds = torch.stack([random_tree(5, lib, g) for _ in range(30)])
    r, _ = score(seeds, X, y)
    calls = []

    def scorer(t):
        calls.append(len(t))
        return score(t, X, y)

    t, rr, c = gp_refine(
        seeds,
        r,
        scorer,
        SubtreeIndex(spbt),
        generations=3,
        n_offspring=20,
        rng=np.random.default_rng(0),
    )
    assert calls == [20, 20, 20] and t.shape == (60, 31)
    assert bool(is_valid(t, lib).all())
    torch.testing.assert_close(rr, score(t, X, y)[0])


@pytest.mark.parametrize("mode", ["swpg", "pg", "imitation"])
def test_gcnsr_respects_budget(mode):
    X, y, _ = nguyen(1)
    m = GCNSR(depth=4, mode=mode, budget=130, batch_size=40, gp_offspring=30, width=8, seed=1)
    m.fit(X, y)
    assert m.n_evals == 130
    assert m.best_reward > 0 and math.isfinite(m.best_nrmse)
    assert str(m.best_expression)


def test_gcnsr_never_gets_nan_from_invalid_expressions():
    # data where exp overflows for most trees: rewards are 0, parameters stay finite
    X = torch.linspace(300, 900, 20, dtype=torch.float64)[:, None]
    y = torch.linspace(0, 1, 20, dtype=torch.float64)
    m = GCNSR(
        depth=4,
        library=Library(binary=("mul",), unary=("exp",)),
        budget=200,
        batch_size=50,
        width=8,
        seed=0,
        mode="swpg",
        gp_offspring=20,
    )
    m.fit(X, y)
    assert all(torch.isfinite(p).all() for p in m.generator.parameters())


def _record_training(m):
    "Wrap the generator so that every sampled batch and every trained batch is kept."
    drawn, trained = [], []
    sample, log_prob = m.generator.sample, m.generator.log_prob

    def _sample(n, generator=None):
        out = sample(n, generator=generator)
        drawn.append(out[0].cpu().clone())
        return out

    def _log_prob(tokens):
        trained.append((len(drawn) - 1, tokens.cpu().clone()))
        return log_prob(tokens)

    m.generator.sample, m.generator.log_prob = _sample, _log_prob
    return drawn, trained


def _rows_in(a, b):
    "Whether each row of a (n, S) occurs among the rows of b (m, S)."
    return (a[:, None, :] == b[None, :, :]).all(-1).any(1)


@pytest.mark.parametrize("mode", ["swpg", "pg"])
def test_swpg_trains_only_on_the_generators_own_samples(mode):
    # SWPG: elites only shape rewards; the training batch is a subset of the batch just drawn
    X, y, _ = nguyen(2)
    m = GCNSR(depth=4, mode=mode, budget=400, batch_size=40, gp_offspring=30, width=8, seed=3)
    drawn, trained = _record_training(m)
    m.fit(X, y)
    assert len(trained) == m.n_updates >= 3
    for k, t in trained:
        assert bool(_rows_in(t, drawn[k]).all())


def test_imitation_does_train_on_gp_elites():
    # the same check fails for the NGGPPS-style ablation: the check can tell the two apart
    X, y, _ = nguyen(2)
    m = GCNSR(
        depth=4, mode="imitation", budget=400, batch_size=40, gp_offspring=30, width=8, seed=3
    )
    drawn, trained = _record_training(m)
    m.fit(X, y)
    assert any(not bool(_rows_in(t, drawn[k]).all()) for k, t in trained)


def test_gcnsr_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    state = torch.random.get_rng_state()
    a = GCNSR(depth=3, seed=7)
    assert torch.equal(torch.random.get_rng_state(), state)
    b = GCNSR(depth=3, seed=7)
    c = GCNSR(depth=3, seed=8)
    pa, pb, pc = (torch.cat([p.flatten() for p in m.generator.parameters()]) for m in (a, b, c))
    assert torch.equal(pa, pb) and not torch.equal(pa, pc)  # the seed alone decides the weights


def test_gcnsr_bad_input():
    with pytest.raises(ValueError, match="mode must be"):
        GCNSR(mode="ppo")
    with pytest.raises(ValueError, match="gp_generations must be a positive integer, got 0"):
        GCNSR(gp_generations=0)
    with pytest.raises(ValueError, match="beta must be a finite number >= 0, got nan"):
        GCNSR(beta=math.nan)
    with pytest.raises(TypeError, match="library must be a Library, got str"):
        GCNSR(library="x1")
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        GCNSR(temperature=0.0)
    with pytest.raises(ValueError, match="epsilon must lie in"):
        GCNSR(epsilon=0.0)
    with pytest.raises(ValueError, match="gp_offspring must be a positive integer or None"):
        GCNSR(gp_offspring=-1)
    with pytest.raises(ValueError, match="budget must be a positive integer"):
        GCNSR(budget=0)
    with pytest.raises(ValueError, match="depth must be an integer >= 1"):
        GCNSR(depth=0)
    m = GCNSR(depth=3, budget=10)
    with pytest.raises(ValueError, match="same length"):
        m.fit(torch.zeros(5, 1, dtype=torch.float64), torch.zeros(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="X contains NaN"):
        m.fit(torch.full((5, 1), math.nan), torch.zeros(5))
    with pytest.raises(ValueError, match="library has 1 variables"):
        m.fit(torch.zeros(5, 2), torch.arange(5.0))
    with pytest.raises(ValueError, match="call fit"):
        m.best_expression
