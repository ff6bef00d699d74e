"""Chapter 18: the DSR-style sequence generator (prefix-order LSTM on the scaffold)."""

import itertools

import pytest
import sympy as sp
import torch

from icml26_lit.gcn_sr.fitness import nguyen
from icml26_lit.gcn_sr.generator import SequenceGenerator, constraint_violations
from icml26_lit.gcn_sr.spbt import (
    SPBT,
    TOKEN_ID,
    Library,
    V,
    count_trees,
    is_valid,
    random_tree,
    to_tree,
)
from icml26_lit.gcn_sr.swpg import GCNSR


def _prefix(tree: tuple) -> list:
    "Pre-order token names of a nested-tuple tree."
    return [tree[0]] + [n for child in tree[1:] for n in _prefix(child)]


@pytest.mark.parametrize(
    "depth,lib",
    [
        (1, Library()),
        (3, Library(n_vars=2, const=True)),
        (5, Library()),
        (4, Library(binary=("mul",), unary=("sin", "cos"), const=True)),
    ],
)
def test_samples_are_valid_and_keep_the_priors(depth, lib, fresh_seed):
    spbt = SPBT(depth, lib)
    gen = SequenceGenerator(
        spbt,
        width=8,
        min_len=min(3, spbt.n_slots),
        generator=torch.Generator().manual_seed(fresh_seed),
    )
    with torch.no_grad():  # large weights: extreme, far-from-uniform policies
        for p in gen.parameters():
            p.mul_(20)
    toks, lp, ent = gen.sample(300, generator=torch.Generator().manual_seed(fresh_seed))
    assert bool(is_valid(toks, lib).all())
    assert torch.isfinite(lp).all() and (lp <= 0).all() and (ent >= -1e-5).all()
    v = constraint_violations(toks, spbt, min_len=min(3, spbt.n_slots) if depth > 1 else 1)
    assert v == {"inverse pair": 0, "trig in trig": 0, "too long": 0, "too short": 0}
    c = toks == TOKEN_ID["const"]
    par = spbt.parent.clamp(min=0)
    under_unary = (toks[:, par] >= 5) & (toks[:, par] <= 8) & (spbt.parent >= 0)
    assert not bool((c & under_unary).any())


def test_probabilities_of_every_tree_sum_to_one(fresh_seed):
    lib = Library(binary=("add", "div"), unary=("exp",), n_vars=2)
    ids = [i for i in range(V) if lib.allowed[i]]
    fills = torch.tensor(list(itertools.product(ids, repeat=7)))
    fills = fills[is_valid(fills, lib)]
    assert len(fills) == count_trees(3, lib)
    gen = SequenceGenerator(
        SPBT(3, lib),
        width=6,
        min_len=1,
        soft_constraints=False,
        generator=torch.Generator().manual_seed(fresh_seed),
    )
    lp, ent = gen.log_prob(fills)
    torch.testing.assert_close(lp.double().exp().sum(), torch.tensor(1.0, dtype=torch.float64))
    assert (ent >= 0).all()


def test_teacher_forcing_equals_sampling_and_reaches_every_tree(fresh_seed):
    spbt = SPBT(5)
    gen = SequenceGenerator(spbt, width=16, generator=torch.Generator().manual_seed(fresh_seed))
    toks, lp, ent = gen.sample(64, generator=torch.Generator().manual_seed(fresh_seed + 1))
    lp2, ent2 = gen.log_prob(toks)
    torch.testing.assert_close(lp2, lp, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(ent2, ent, atol=1e-4, rtol=1e-5)
    lp2.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in gen.parameters())
    # without the soft priors every valid tree has a finite log-probability (GP elites)
    free = SequenceGenerator(spbt, soft_constraints=False, min_len=1, width=8)
    rng = torch.Generator().manual_seed(fresh_seed)
    trees = torch.stack([random_tree(5, Library(), rng) for _ in range(40)])
    assert torch.isfinite(free.log_prob(trees)[0]).all()


def test_decoding_runs_in_prefix_order():
    "Step k fills the k-th token of the tree's pre-order: the sampled tokens arrive in that order."
    spbt = SPBT(4)
    gen = SequenceGenerator(spbt, width=8, generator=torch.Generator().manual_seed(0))
    seen = []
    orig = gen.head.forward
    gen.head.forward = lambda h: (seen.append(h.shape[0]), orig(h))[1]
    toks, _, _ = gen.sample(1, generator=torch.Generator().manual_seed(3))
    names = _prefix(to_tree(toks[0]))
    assert len(seen) == len(names)  # one step per node, none for the empty slots
    # teacher forcing with a tree whose pre-order differs from its level order
    tree = ("add", ("sin", ("x1",)), ("mul", ("x1",), ("x1",)))
    from icml26_lit.gcn_sr.spbt import from_tree

    order = []
    fill = from_tree(tree, 4)
    gen.head.forward = lambda h: (order.append(None), orig(h))[1]
    gen.log_prob(fill[None])
    assert len(order) == len(_prefix(tree)) == 6


def test_seeded_weights_and_samples_leave_the_global_rng_alone():
    torch.manual_seed(123)
    state = torch.random.get_rng_state()
    a = GCNSR(depth=3, decoder="sequence", seed=7)
    assert torch.equal(torch.random.get_rng_state(), state)
    torch.manual_seed(999)
    b = GCNSR(depth=3, decoder="sequence", seed=7)
    pa, pb = (torch.cat([p.flatten() for p in m.generator.parameters()]) for m in (a, b))
    assert torch.equal(pa, pb)  # the seed alone decides the weights
    X, y, _ = nguyen(1, seed=0)
    runs = []
    for g in (1, 2):
        torch.manual_seed(g)
        state = torch.random.get_rng_state()
        m = GCNSR(depth=4, decoder="sequence", mode="pg", budget=120, batch_size=40, seed=3).fit(
            X, y
        )
        assert torch.equal(torch.random.get_rng_state(), state)
        runs.append((m.best_reward, m.history))
    assert runs[0] == runs[1]


def test_sequence_arm_trains_and_recovers_a_small_target():
    X, y, truth = nguyen(1, seed=0)
    m = GCNSR(depth=4, decoder="sequence", mode="pg", budget=400, batch_size=50, lr=1e-2, seed=0)
    m.fit(X, y, truth=truth)
    assert m.n_updates >= 1 and m.best_reward > 0.5  # above the mean predictor
    assert sp.simplify(m.best_expression).free_symbols <= {sp.Symbol("x1", real=True)}


def test_bad_input():
    with pytest.raises(ValueError, match="decoder must be 'gcn' or 'sequence', got 'rnn'"):
        GCNSR(decoder="rnn")
    with pytest.raises(TypeError, match="spbt must be an SPBT, got int"):
        SequenceGenerator(5)
    with pytest.raises(ValueError, match="width must be a positive integer, got 0"):
        SequenceGenerator(SPBT(3), width=0)
    with pytest.raises(ValueError, match="need 1 <= min_len <= max_len"):
        SequenceGenerator(SPBT(2), min_len=5)
    gen = SequenceGenerator(SPBT(3), width=4, min_len=1)
    with pytest.raises(ValueError, match="give exactly one of n"):
        gen.decode()
    with pytest.raises(ValueError, match=r"tokens must have shape \(B, 7\)"):
        gen.log_prob(torch.zeros(2, 3, dtype=torch.long))
    bad = torch.zeros(1, 7, dtype=torch.long)
    bad[0, 0] = TOKEN_ID["x1"]
    bad[0, 1] = TOKEN_ID["x1"]  # a slot under a terminal holds a token
    with pytest.raises(ValueError, match="not a valid fill"):
        gen.log_prob(bad)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        gen.reset_parameters(0)
