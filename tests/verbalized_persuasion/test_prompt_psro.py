"Chapter 19: prompt-space PSRO with an exact Bayesian reader lands on the LP value."

import numpy as np
import pytest
import torch

from icml26_lit.verbalized_persuasion.classic import recommendation_letter, solve_leak_lp
from icml26_lit.verbalized_persuasion.letters import Prompt, leak_likelihood
from icml26_lit.verbalized_persuasion.prompt_psro import (
    Rollouts,
    hire_decisions,
    prompt_psro,
    rule_payoffs,
)

LEAK = 0.2112  # calibrate_leak(0.5), tested in test_letters


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_reader_reaches_lp_value(seed):
    n = 256
    res = prompt_psro(None, Rollouts(n, torch.Generator().manual_seed(seed)), n_iters=8,
                      generator=torch.Generator().manual_seed(100 + seed))  # fmt: skip
    se = (2 / 3) * np.sqrt(0.25 / n)  # (1 - mu0) sqrt(q (1 - q) / n) at q = 1/2
    assert abs(res.value - 2 / 3) < 3 * se
    assert res.best_prompt().p_strong == 1.0  # every strong candidate recommended


def test_exact_reader_leaky_letters_reach_the_leak_lp():
    n = 256
    res = prompt_psro(None, Rollouts(n, torch.Generator().manual_seed(3)), obfuscate=False,
                      leak=LEAK, generator=torch.Generator().manual_seed(4))  # fmt: skip
    lp = solve_leak_lp(recommendation_letter(), leak_likelihood(LEAK)).value
    # value = 1/3 + 2/3 q 1[no reveal]: SE <= (2/3) sqrt(1/4 / n)
    assert abs(res.value - lp) < 3 * (2 / 3) * np.sqrt(0.25 / n)


def test_rule_payoffs_by_hand():
    hires = np.array([[1, 1, 1, 0], [1, 0, 1, 1], [0, 0, 0, 0]], dtype=bool)  # n = 2 per state
    u_s, u_r = rule_payoffs(hires, 2, 1 / 3, 0.5)
    np.testing.assert_allclose(u_s, [1 / 3 + 2 / 3 * 0.5, 1 / 3 * 0.5 + 2 / 3 * 1, 0])
    np.testing.assert_allclose(u_r, [0, 1 / 12 - 1 / 3, 0], atol=1e-15)  # a few roundings


def test_common_random_numbers_make_hires_monotone_in_q():
    ro = Rollouts(64, torch.Generator().manual_seed(5))
    follow = [hire_decisions(Prompt(1.0, q), ro, None, LEAK, 0.5)[1].sum() for q in (0.1, 0.3, 0.6)]
    assert follow[0] <= follow[1] <= follow[2]


@pytest.mark.parametrize(
    "call,msg",
    [
        (lambda: Rollouts(0), "n must"),
        (lambda: prompt_psro(None, Rollouts(4), n_iters=0), "n_iters"),
    ],
)
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()
