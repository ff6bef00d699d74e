"Chapter 19: the receiver LM (forward and backward on both backends) and the exact posterior."

import math

import numpy as np
import pytest
import torch

from icml26_lit.verbalized_persuasion.letters import LetterDraws, LetterSender, Prompt
from icml26_lit.verbalized_persuasion.receiver import (
    ReceiverLM,
    bayes_posterior,
    lr_at,
    make_corpus,
)


def _tiny(backend, seed=0):
    return ReceiverLM(8, 1, 2, generator=torch.Generator().manual_seed(seed), backend=backend)


def _records(n=3, seed=0):
    corpus = make_corpus(n, 0.5, torch.Generator().manual_seed(seed))
    return [r[0] for r in corpus], [r[1] for r in corpus], [r[2] for r in corpus]


def test_forward_backward_triton_matches_torch(fresh_seed):
    c, s, ltr = _records(2, fresh_seed % 1000)
    outs = []
    for backend in ("triton", "torch"):
        rx = _tiny(backend, fresh_seed)
        rx.double()
        ll = rx.log_likelihood(c, s, ltr)
        ll.sum().backward()
        outs.append((ll.detach(), [p.grad.clone() for p in rx.parameters()]))
    # fp64 through the same network: only the head's summation order differs
    torch.testing.assert_close(outs[0][0], outs[1][0], atol=1e-10, rtol=1e-10, msg=f"{fresh_seed}")
    for a, b in zip(outs[0][1], outs[1][1]):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-8, msg=f"seed={fresh_seed}")


def test_log_likelihood_is_the_substrates_token_sum():
    c, s, ltr = _records(4)
    rx = _tiny("torch")
    ids, att, y, m = rx.batch(c, s, ltr)
    x = rx.lm.embed(ids) + rx.state_embedding(torch.tensor(s))[:, None]
    ref = rx.lm.token_logprobs(torch.where(m, y, -100), embeds=x, attention_mask=att).sum(-1)
    torch.testing.assert_close(rx.log_likelihood(c, s, ltr), ref)
    # the message mask covers the letter and <eos>: its length is the letter's words + 1
    assert m.sum(1).tolist() == [len(x.split()) + 1 for x in ltr]


def test_posterior_is_bayes_over_the_likelihoods():
    c, _, ltr = _records(5)
    rx = _tiny("torch")
    with torch.no_grad():
        ls, lw = rx.log_likelihood(c, [1] * 5, ltr), rx.log_likelihood(c, [0] * 5, ltr)
    odds = (1 / 3) / (2 / 3) * torch.exp(ls - lw).double()
    np.testing.assert_allclose(rx.posterior(c, ltr), (odds / (1 + odds)).numpy(), rtol=1e-6)
    assert np.array_equal(rx.act(c, ltr), (rx.posterior(c, ltr) >= 0.5).astype(int))


def test_padding_does_not_change_a_letter_score():
    c, s, ltr = _records(3)
    rx = _tiny("torch")
    alone = torch.stack([rx.log_likelihood([c[i]], [s[i]], [ltr[i]])[0] for i in range(3)])
    torch.testing.assert_close(rx.log_likelihood(c, s, ltr), alone, atol=1e-5, rtol=1e-5)


def test_bayes_posterior_against_monte_carlo():
    "Empirical P(strong | signal) from 20,000 simulated letters vs the closed form."
    g = torch.Generator().manual_seed(1)
    n, prompt = 20_000, Prompt(0.75, 0.35)
    draws = LetterDraws.sample(n, g)
    states = (torch.rand(n, generator=g) < 1 / 3).long().numpy()
    sig = LetterSender(prompt).signals(states, draws)
    exact = bayes_posterior(prompt, [1, 0], [-1, -1])
    for s in (1, 0):  # ~7,000-13,000 letters per signal: SE < 0.006
        assert abs(states[sig == s].mean() - exact[1 - s]) < 0.025
    assert math.isclose(exact[0], (0.75 / 3) / (0.75 / 3 + 0.35 * 2 / 3))


@pytest.mark.parametrize(
    "call,msg",
    [
        (lambda: ReceiverLM(8, 1, 2, threshold=1.0), "threshold"),
        (lambda: ReceiverLM(8, 1, 2, backend="gpu"), "backend"),
        (lambda: _tiny("torch").batch([], [], []), "non-empty"),
        (lambda: _tiny("torch").fit([], 1), "corpus"),
        (lambda: _tiny("torch").fit(make_corpus(2, 0.5), 1, schedule="linear"), "schedule"),
        (lambda: lr_at(0, 10, 1e-3, "step"), "schedule"),
        (lambda: make_corpus(0, 0.5), "n must"),
        (lambda: bayes_posterior(Prompt(), [1, 0], [1]), "one shape"),
    ],
)
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


@pytest.mark.parametrize("steps", [1, 29, 30, 250, 3000])
def test_cosine_schedule_warms_up_peaks_and_decays_to_zero(steps):
    "Constant: lr at every step; cosine: linear warm-up over steps // 30, then a half cosine."
    lr = 3e-3
    assert all(lr_at(k, steps, lr) == lr for k in range(steps))
    x = np.array([lr_at(k, steps, lr, "cosine") for k in range(steps)])
    warm = max(1, steps // 30)
    assert np.all(x > 0) and x.max() <= lr
    assert np.all(np.diff(x[warm - 1 :]) <= 0)  # non-increasing after the warm-up
    assert np.all(np.diff(x[:warm]) >= 0)  # non-decreasing during it
    # the last step's rate: cos(pi (steps - 1) / steps) ~ -1, so lr (pi / steps)^2 / 4 at most
    assert x[-1] <= lr * (math.pi / steps) ** 2 / 4 + 1e-15 or steps < warm + 2
    if steps >= 30:  # the peak is the cosine at the end of the warm-up, within (pi / 30)^2 of lr
        assert x.max() >= lr * 0.5 * (1 + math.cos(math.pi / 30))


def test_fit_follows_the_schedule(monkeypatch):
    "fit sets the optimiser's rate to lr_at at every step."
    seen = []
    step = torch.optim.AdamW.step

    def spy(self, *a, **k):
        seen.append(self.param_groups[0]["lr"])
        return step(self, *a, **k)

    monkeypatch.setattr(torch.optim.AdamW, "step", spy)
    corpus = make_corpus(8, 0.5, torch.Generator().manual_seed(0))
    _tiny("torch").fit(corpus, 12, 2, 1e-2, torch.Generator().manual_seed(1), schedule="cosine")
    assert seen == [lr_at(k, 12, 1e-2, "cosine") for k in range(12)]
