"Chapter 19: the template sender: commitments, phrasings, obfuscation, common random numbers."

import numpy as np
import pytest
import torch

from icml26_lit.lm import WordTokenizer
from icml26_lit.verbalized_persuasion.classic import recommendation_letter, solve_leak_lp
from icml26_lit.verbalized_persuasion.letters import (
    HELD_OUT,
    STRONG,
    TRAIN,
    WEAK,
    LetterDraws,
    LetterSender,
    Prompt,
    calibrate_leak,
    commitment_sentence,
    leak_likelihood,
    phrase,
    vocabulary,
)


def _batch(n, seed):
    g = torch.Generator().manual_seed(seed)
    draws = LetterDraws.sample(n, g)
    return draws, (torch.rand(n, generator=g) < 1 / 3).long().numpy()


def test_signal_frequencies_follow_the_prompt():
    draws, states = _batch(4000, 1)
    sig = LetterSender(Prompt(0.75, 0.45)).signals(states, draws)
    # 4,000 letters, ~1,330 strong: binomial standard errors ~0.012 and ~0.01; 4 SE
    assert abs(sig[states == 1].mean() - 0.75) < 0.05
    assert abs(sig[states == 0].mean() - 0.45) < 0.04


def test_common_random_numbers_are_monotone_in_q():
    draws, states = _batch(500, 2)
    prev = None
    for k in range(21):
        sig = LetterSender(Prompt(1.0, k / 20)).signals(states, draws)
        if prev is not None:
            assert np.all(sig >= prev)
        prev = sig
    assert np.all(prev == 1)


def test_obfuscation_makes_body_independent_of_state():
    draws, states = _batch(3000, 3)
    letters, sig = LetterSender(Prompt(1.0, 1.0)).write(states, draws)
    # with q = p = 1 and obfuscation, the letter's distribution does not depend on the state:
    # the same draws give the same letter for either state
    flipped, _ = LetterSender(Prompt(1.0, 1.0)).write(1 - states, draws)
    assert letters == flipped and np.all(sig == 1)
    assert not any(s in t for t in letters for s in STRONG + WEAK)


def test_leak_reveals_the_true_state_only():
    draws, states = _batch(3000, 4)
    letters, _ = LetterSender(Prompt(1.0, 0.5, obfuscate=False), leak=0.3).write(states, draws)
    strong = np.array([any(s in t for s in STRONG) for t in letters])
    weak = np.array([any(s in t for s in WEAK) for t in letters])
    assert not np.any(strong & (states == 0)) and not np.any(weak & (states == 1))
    expect = 1 - np.mean([0.7**n for n in (2, 3, 4)])  # P(at least one revealing sentence)
    assert abs((strong | weak).mean() - expect) < 0.04  # 3,000 letters: SE ~0.009


def test_held_out_phrasings_are_new_combinations_of_known_words():
    train = {phrase(r, p) for r in (True, False) for p in TRAIN}
    held = {phrase(r, p) for r in (True, False) for p in HELD_OUT}
    assert len(train) == 24 and len(held) == 8 and not train & held
    draws, states = _batch(200, 5)
    letters, _ = LetterSender(Prompt(1.0, 0.5)).write(states, draws, held_out=True)
    assert all(any(h in t for h in held) for t in letters)
    assert not any(h in t for t in letters for h in train)


def test_every_word_tokenizes_and_letters_fit_48_tokens():
    tok = WordTokenizer(vocabulary())
    draws, states = _batch(300, 6)
    for prompt in (Prompt(0.5, 0.0, False), Prompt(1.0, 1.0, True), Prompt(0.75, 0.35, False)):
        for held in (False, True):
            letters, _ = LetterSender(prompt, leak=1.0).write(states, draws, held)
            assert max(len(tok.encode(t)) for t in letters) <= 48
        for c in LetterSender(prompt).commitment(draws):
            tok.encode(c)


def test_commitment_states_the_numbers():
    assert "45 percent" in commitment_sentence(Prompt(1.0, 0.45), 1)
    assert "all of my strong" in commitment_sentence(Prompt(1.0, 0.45), 0)
    assert "same neutral template" in commitment_sentence(Prompt(1.0, 0.0, True))


def test_calibrated_leak_makes_the_leak_lp_worth_one_half():
    leak = calibrate_leak(0.5)
    g = recommendation_letter()
    assert abs(solve_leak_lp(g, leak_likelihood(leak)).value - 0.5) < 1e-6
    assert abs(solve_leak_lp(g, leak_likelihood(0.0)).value - 2 / 3) < 1e-9
    assert abs(solve_leak_lp(g, leak_likelihood(1.0)).value - 1 / 3) < 1e-9


@pytest.mark.parametrize(
    "call,msg",
    [
        (lambda: Prompt(1.0, 0.44), "21-point grid"),
        (lambda: Prompt(1.0, 1.05), "21-point grid"),
        (lambda: Prompt(0.9, 0.5), "p_strong"),
        (lambda: LetterSender(Prompt(), leak=1.5), "leak"),
        (lambda: LetterDraws.sample(0), "n must"),
        (lambda: LetterSender(Prompt()).signals([0, 2], LetterDraws.sample(2)), "states"),
        (lambda: calibrate_leak(0.9), "target"),
    ],
)
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()
