"""Chapter 18: the GCN generator and its constraint masks."""

import pytest
import torch

from icml26_lit.gcn_sr.generator import GCNGenerator, constraint_violations
from icml26_lit.gcn_sr.spbt import SPBT, TOKEN_ID, Library, V, is_valid


@pytest.mark.parametrize(
    "depth,lib",
    [
        (1, Library()),
        (3, Library(n_vars=2, const=True)),
        (5, Library()),
        (4, Library(binary=("mul",), unary=("sin", "cos"), const=True)),
    ],
)
def test_masked_decoding_is_always_valid(depth, lib, fresh_seed):
    torch.manual_seed(fresh_seed)
    spbt = SPBT(depth, lib)
    min_len = min(3, spbt.n_slots)
    gen = GCNGenerator(spbt, width=8, min_len=min_len)
    # large random weights make extreme, far-from-uniform policies
    with torch.no_grad():
        for p in gen.parameters():
            p.mul_(20)
    toks, lp, ent = gen.sample(300, generator=torch.Generator().manual_seed(fresh_seed))
    assert bool(is_valid(toks, lib).all())
    assert torch.isfinite(lp).all() and (lp <= 0).all() and (ent >= -1e-5).all()
    v = constraint_violations(toks, spbt, min_len=1)
    assert v["inverse pair"] == 0 and v["trig in trig"] == 0 and v["too long"] == 0
    c = toks == TOKEN_ID["const"]
    par = spbt.parent.clamp(min=0)
    under_unary = (toks[:, par] >= 5) & (toks[:, par] <= 8) & (spbt.parent >= 0)
    assert not bool((c & under_unary).any())


def test_length_bounds():
    spbt = SPBT(5)
    gen = GCNGenerator(spbt, width=8, min_len=5, max_len=9)
    toks, _, _ = gen.sample(400, generator=torch.Generator().manual_seed(0))
    length = (toks != 0).sum(1)
    assert int(length.max()) <= 9 and int(length.min()) >= 5


def test_teacher_forcing_equals_sampling(fresh_seed):
    torch.manual_seed(fresh_seed)
    gen = GCNGenerator(SPBT(4, Library(n_vars=2, const=True)), width=16, n_layers=3)
    toks, lp, ent = gen.sample(64, generator=torch.Generator().manual_seed(fresh_seed))
    lp2, ent2 = gen.log_prob(toks)
    torch.testing.assert_close(lp2, lp, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(ent2, ent, atol=1e-4, rtol=1e-5)
    _, lp3, ent3 = gen.decode(tokens=toks)  # the sequential reference
    torch.testing.assert_close(lp3, lp, atol=1e-4, rtol=1e-5)
    lp2.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in gen.parameters() if p.grad is not None)


def test_local_logits_equal_dense(fresh_seed):
    torch.manual_seed(fresh_seed)
    gen = GCNGenerator(SPBT(5), width=8, n_layers=2)
    tok = torch.randint(0, V, (5, 31))
    dec = torch.rand(5, 31) < 0.5
    for t in range(31):
        torch.testing.assert_close(gen.logits(tok, dec, t), gen.logits_dense(tok, dec, t))


def test_masked_probability_is_zero_and_forbidden_tokens_raise():
    spbt = SPBT(3)
    gen = GCNGenerator(spbt, width=8)
    # exp directly under log breaks the inverse-pair rule
    bad = torch.tensor([[TOKEN_ID["log"], TOKEN_ID["exp"], 0, TOKEN_ID["x1"], 0, 0, 0]])
    with pytest.raises(ValueError, match="constraint mask forbids"):
        gen.log_prob(bad)
    free = GCNGenerator(spbt, width=8, soft_constraints=False)
    lp, _ = free.log_prob(bad)
    assert torch.isfinite(lp).all()
    with pytest.raises(ValueError, match="exactly one of n"):
        gen.decode()
    with pytest.raises(ValueError, match="min_len <= max_len"):
        GCNGenerator(spbt, min_len=5, max_len=3)
    with pytest.raises(TypeError, match="spbt must be an SPBT"):
        GCNGenerator(3)


def test_data_embedding_requires_data():
    gen = GCNGenerator(SPBT(3), width=8, data_embedding=True)
    with pytest.raises(ValueError, match="set_data"):
        gen.sample(2)
    gen.set_data(torch.rand(10, 1), torch.rand(10))
    toks, lp, _ = gen.sample(4)
    assert bool(is_valid(toks).all())
