"""lm.model: tokenizer, TinyLM (causality, padding, head) and generation with a KV cache."""

import pytest
import torch

from icml26_lit.lm import TinyLM, WordTokenizer, generate


def _lm(seed=0, V=13, **kw):
    return TinyLM(
        V,
        d_model=16,
        n_layers=2,
        n_heads=2,
        max_len=64,
        generator=torch.Generator().manual_seed(seed),
        **kw,
    )


def test_tokenizer_roundtrip_and_errors():
    tok = WordTokenizer(["a", "b", "a", "**Step", "1**"])
    assert tok.vocab == ["<pad>", "<bos>", "<eos>", "a", "b", "**Step", "1**"]
    assert tok.decode(tok.encode("**Step 1** a  b")) == "**Step 1** a b"
    assert tok.decode([1, 3, 2, 0]) == "a" and tok.decode([1, 3], skip_special=False) == "<bos> a"
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.encode("a c")
    with pytest.raises(ValueError, match="words must be"):
        WordTokenizer(["a b"])
    with pytest.raises(TypeError, match="text must be"):
        tok.encode(3)


def test_init_is_seeded_and_validated():
    a, b = _lm(1), _lm(1)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    with pytest.raises(ValueError, match="vocab_size"):
        TinyLM(0)
    with pytest.raises(ValueError, match="backend"):
        TinyLM(5, backend="cuda")


def test_ids_and_embeds_agree_and_head_logprobs():
    lm = _lm()
    ids = torch.randint(0, 13, (2, 7), generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(lm.hidden(ids), lm.hidden(embeds=lm.embed(ids)))
    tgt = torch.roll(ids, -1, 1)
    tgt[:, -1] = -100
    want = torch.log_softmax(lm(ids), -1).gather(-1, tgt.clamp(min=0)[..., None])[..., 0]
    want[:, -1] = 0
    torch.testing.assert_close(lm.token_logprobs(tgt, ids=ids), want)
    with pytest.raises(ValueError, match="exactly one"):
        lm.hidden()


def test_left_padding_is_invisible():
    lm = _lm()
    ids = torch.randint(3, 13, (1, 5), generator=torch.Generator().manual_seed(4))
    padded = torch.cat([torch.zeros(1, 3, dtype=torch.long), ids], 1)
    mask = torch.tensor([[False] * 3 + [True] * 5])
    # fp32 through two blocks: the same arithmetic up to summation order, 1e-5 is ample
    torch.testing.assert_close(
        lm.hidden(padded, attention_mask=mask)[:, 3:], lm.hidden(ids), atol=1e-5, rtol=1e-5
    )


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_cached_generation_equals_uncached(temperature, fresh_seed):
    lm = _lm(fresh_seed % 1000)
    g = torch.Generator().manual_seed(fresh_seed)
    prompt = torch.randint(3, 13, (4, 6), generator=g)
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[1, :3] = False
    mask[2, :1] = False
    outs = [
        generate(
            lm,
            prompt,
            attention_mask=mask,
            max_new_tokens=12,
            temperature=temperature,
            eos_id=2,
            generator=torch.Generator().manual_seed(fresh_seed),
            use_cache=c,
        )
        for c in (True, False)
    ]
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1]), fresh_seed


def test_generation_stops_at_eos_and_pads():
    lm = _lm()
    with torch.no_grad():  # make <eos> (id 2) overwhelmingly likely
        lm.ln_f.weight.zero_()  # final hidden state = ln_f.bias = e_0
        lm.ln_f.bias.zero_()
        lm.ln_f.bias[0] = 1.0
        lm.head.weight.zero_()
        lm.head.weight[2, 0] = 50.0
    prompt = torch.randint(3, 13, (2, 3), generator=torch.Generator().manual_seed(0))
    out, n = generate(lm, prompt, max_new_tokens=5, temperature=0, eos_id=2)
    assert out.shape == (2, 1) and n.tolist() == [1, 1] and out[:, 0].tolist() == [2, 2]


def test_sampling_frequencies_follow_softmax():
    # a 1-token prompt and a fixed head: the first token's law is softmax(z / T)
    lm = _lm(V=5)
    prompt = torch.full((20000, 1), 3)
    z = lm(prompt[:1])[0, -1].detach()
    p = torch.softmax(z / 0.5, -1)
    out, _ = generate(
        lm, prompt, max_new_tokens=1, temperature=0.5, generator=torch.Generator().manual_seed(0)
    )
    freq = torch.bincount(out[:, 0], minlength=5).double() / 20000
    # binomial sd <= sqrt(0.25 / 20000) = 0.0035: 0.02 is over 5 sigma
    torch.testing.assert_close(freq, p.double(), atol=0.02, rtol=0)


def test_generate_bad_input():
    lm = _lm()
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(lm, torch.zeros(1, 2, dtype=torch.long), max_new_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        generate(lm, torch.zeros(1, 2, dtype=torch.long), temperature=-1)
