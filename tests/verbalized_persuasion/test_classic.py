"Chapter 19: the classic persuasion pieces against closed forms and brute force."

import numpy as np
import pytest

from icml26_lit.verbalized_persuasion.classic import (
    PersuasionGame,
    best_response,
    binary_game,
    concavified_value,
    courtroom,
    law_enforcement,
    posteriors,
    recommendation_letter,
    sender_value,
    solve_leak_lp,
    solve_obedience_lp,
    solve_two_stage_lp,
)

BINARY = [(1 / 3, 0.5), (0.3, 0.5), (0.25, 0.6), (0.05, 0.3), (0.45, 0.5), (0.6, 0.5), (0.2, 0.95)]


@pytest.mark.parametrize("prior,t", BINARY)
def test_binary_lp_closed_form(prior, t):
    g = binary_game(prior, t)
    lp = solve_obedience_lp(g)
    # HiGHS solves to ~1e-12 on a 4-variable LP; 1e-9 leaves room
    assert abs(lp.value - min(1.0, prior / t)) < 1e-9
    assert abs(lp.scheme[1, 1] - 1.0) < 1e-9
    if prior < t:  # the receiver is left exactly indifferent after a recommendation
        post, _ = posteriors(g, lp.scheme)
        assert abs(post[1, 1] - t) < 1e-6
    assert np.allclose(lp.scheme.sum(1), 1.0, atol=1e-9)


def test_presets():
    assert abs(solve_obedience_lp(courtroom()).value - 0.6) < 1e-9  # KG's 60% conviction
    assert abs(solve_obedience_lp(recommendation_letter()).value - 2 / 3) < 1e-9
    assert abs(solve_obedience_lp(law_enforcement()).value - 0.25 / 0.6) < 1e-9
    assert abs(solve_obedience_lp(courtroom()).scheme[0, 1] - 3 / 7) < 1e-9


def test_bayes_plausibility_random_schemes():
    rng = np.random.default_rng()
    for _ in range(200):
        S, M = rng.integers(2, 6), rng.integers(1, 7)
        prior = rng.dirichlet(np.ones(S))
        g = PersuasionGame(prior, rng.normal(size=(3, S)), rng.normal(size=(3, S)))
        post, w = posteriors(g, rng.dirichlet(np.ones(M) * 0.5, size=S))
        # a sum of M products of doubles: rounding ~1e-16 each
        assert np.allclose(w @ post, prior, atol=1e-12, rtol=0)


def test_lp_against_brute_force_three_actions():
    "A 3-state, 3-action game: no obedient scheme on a grid beats the LP, and the grid gets close."
    rng = np.random.default_rng(7)
    g = PersuasionGame([0.5, 0.3, 0.2], rng.normal(size=(3, 3)), rng.normal(size=(3, 3)))
    lp = solve_obedience_lp(g)
    assert abs(sender_value(g, lp.scheme) - lp.value) < 1e-7
    ticks = np.linspace(0, 1, 11)
    simplex = np.array([(a, b, 1 - a - b) for a in ticks for b in ticks if a + b <= 1 + 1e-12])
    simplex = np.clip(simplex, 0, 1)
    best = -np.inf
    for r0 in simplex:
        for r1 in simplex:
            for r2 in simplex[::3]:
                best = max(best, sender_value(g, np.stack([r0, r1, r2])))
    assert best <= lp.value + 1e-9
    assert best >= lp.value - 0.25  # a coarse 11-point grid per row (loose lower check)


@pytest.mark.parametrize("g", [recommendation_letter(), courtroom(), law_enforcement()])
def test_concavification_equals_lp(g):
    assert abs(concavified_value(g) - solve_obedience_lp(g).value) < 1e-9


def _brute_leak(prior, t, leak, n=401):
    "Independent brute force: two signals, p and q on a grid, hire iff P(high | s, z) >= t."
    p = np.linspace(0, 1, n)[:, None]  # P(rec | high)
    q = np.linspace(0, 1, n)[None, :]  # P(rec | low)
    best = np.zeros((n, n))
    for z in range(leak.shape[1]):
        lh, ll = prior * leak[1, z], (1 - prior) * leak[0, z]
        for ph, pl in ((p, q), (1 - p, 1 - q)):
            a, b = lh * ph, ll * pl  # P(high, s, z), P(low, s, z)
            hire = a >= t * (a + b) - 1e-12
            best = best + np.where(hire & (a + b > 0), a + b, 0.0)
    return best.max(), 1 / (n - 1)


@pytest.mark.parametrize("strength", [0.0, 0.2, 0.35, 0.5, 0.8, 1.0])
def test_leak_lp_against_brute_force(strength):
    leak = np.array([[1 + strength, 1 - strength], [1 - strength, 1 + strength]]) / 2
    for prior, t in ((1 / 3, 0.5), (0.3, 0.5)):
        v = solve_leak_lp(binary_game(prior, t), leak).value
        brute, step = _brute_leak(prior, t, leak)
        assert brute <= v + 1e-9
        # rounding an optimal (p, q) down to the grid keeps obedience and loses at most one step
        assert brute >= v - step


def test_leak_lp_multi_valued_leak():
    "Three sentences, each pointing to the state with prob 0.65: z = count, brute force agrees."
    from math import comb

    k = np.arange(4)
    hi = np.array([comb(3, i) * 0.65**i * 0.35 ** (3 - i) for i in k])
    leak = np.stack([hi[::-1], hi])
    v = solve_leak_lp(recommendation_letter(), leak).value
    brute, step = _brute_leak(1 / 3, 0.5, leak)
    assert brute - 1e-9 <= v and brute >= v - step


def test_best_response_ties_to_sender():
    g = binary_game(0.3, 0.5)
    assert best_response(g, [0.5, 0.5]) == 1 and best_response(g, [0.5 + 1e-6, 0.5 - 1e-6]) == 0


@pytest.mark.parametrize(
    "call,msg",
    [
        (lambda: binary_game(0.3, 0.0), "threshold"),
        (lambda: binary_game(-0.1, 0.5), "prior_high"),
        (lambda: PersuasionGame([0.2, 0.9], np.zeros((2, 2)), np.zeros((2, 2))), "prior"),
        (lambda: PersuasionGame([0.5, 0.5], np.zeros((2, 3)), np.zeros((2, 3))), "sender_utility"),
        (lambda: PersuasionGame([0.5, 0.5], np.zeros((2, 2)), np.zeros((3, 2))), "must match"),
        (lambda: posteriors(courtroom(), [[0.5, 0.6], [0.0, 1.0]]), "scheme rows"),
        (lambda: solve_leak_lp(courtroom(), np.ones((2, 13)) / 13), "plans"),
    ],
)
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


@pytest.mark.parametrize("prior,t,c", [(1 / 3, 0.5, 0.1), (0.3, 0.5, 0.05), (0.25, 0.6, 0.1),
                                       (0.6, 0.5, 0.2), (0.2, 0.3, 0.0)])  # fmt: skip
def test_two_stage_lp_closed_form(prior, t, c):
    "The one-stage answer at the threshold t + c: recommend every strong type, q* for the weak."
    q = min(1.0, prior * (1 - t - c) / ((1 - prior) * (t + c)))
    lp = solve_two_stage_lp(prior, t, c)
    assert abs(lp.value - (prior + (1 - prior) * q)) < 1e-9  # HiGHS to its 1e-9 tolerances
    np.testing.assert_allclose(lp.scheme.sum(1), 1.0, atol=1e-9)


def test_two_stage_lp_against_brute_force():
    "A grid over (q_hire, q_pass) for the weak type, strong always hired: none beats the LP."
    mu, t, c = 1 / 3, 0.5, 0.1
    best = 0.0
    for qh in np.linspace(0, 1, 201):
        for qp in np.linspace(0, 1 - qh, 21):
            hire_gain = mu * (1 - t) - (1 - mu) * t * qh
            interview = hire_gain - c * (mu + (1 - mu) * (qh + qp))
            reject = (1 - mu) * (1 - qh - qp) * (-t - c)
            if hire_gain >= 0 and interview >= 0 and reject <= 0:
                best = max(best, mu + (1 - mu) * qh)
    lp = solve_two_stage_lp(mu, t, c).value
    assert best <= lp + 1e-9 and lp - best < (1 - mu) / 200 + 1e-9  # the grid's step


@pytest.mark.parametrize(
    "kw,msg",
    [(dict(prior_strong=1.2), "prior_strong"), (dict(threshold=0), "threshold"),
     (dict(cost=-0.1), "cost"), (dict(cost=True), "cost")],
)  # fmt: skip
def test_two_stage_lp_bad_input(kw, msg):
    with pytest.raises(ValueError, match=msg):
        solve_two_stage_lp(**kw)
