"Chapter 19: numeric PSRO with the commitment meta-solver against the LP (a theorem, tested)."

import numpy as np
import pytest

from icml26_lit.verbalized_persuasion.classic import (
    binary_game,
    courtroom,
    law_enforcement,
    recommendation_letter,
    sender_value,
    solve_obedience_lp,
)
from icml26_lit.verbalized_persuasion.numeric_psro import (
    binary_schemes,
    commitment_lp,
    commitment_values,
    induced_game,
    payoff_tables,
    psro,
)


@pytest.mark.parametrize(
    "game,grid",
    [
        (recommendation_letter(), np.linspace(0, 1, 11)),  # holds q* = 1/2
        (courtroom(), np.arange(8) / 7),  # holds q* = 3/7
        (law_enforcement(), np.arange(10) / 9),  # q* = 0.25 * 0.4 / (0.6 * 0.75) = 2/9
    ],
)
def test_psro_reaches_lp_on_a_grid_holding_the_optimum(game, grid):
    r = psro(game, grid)
    # the LP and the payoff table are exact to a few ulps; 1e-9 leaves room for HiGHS
    assert abs(r.value - solve_obedience_lp(game).value) < 1e-9
    assert r.exploitability < 1e-12
    assert len(r.history) < 50


def test_psro_courtroom_eleven_point_grid():
    r = psro(courtroom(), np.linspace(0, 1, 11))
    assert abs(r.value - 0.58) < 1e-9  # q = 0.4: 0.3 + 0.7 * 0.4
    assert 0 <= 0.6 - r.value <= (1 - 0.3) * 0.1 + 1e-12  # the grid costs at most (1 - mu0) dq
    assert r.exploitability < 1e-12


def test_grid_loss_bound_random_games():
    "On any grid of spacing h holding 0, PSRO's value is within (1 - prior) h of the LP."
    rng = np.random.default_rng()
    seed = int(rng.integers(1 << 31))
    rng = np.random.default_rng(seed)
    for _ in range(10):
        prior, t = rng.uniform(0.05, 0.6), rng.uniform(0.3, 0.9)
        if prior >= t:
            continue
        g, h = binary_game(prior, t), 1 / int(rng.integers(4, 15))
        grid = np.arange(0, 1 + 1e-12, h)
        r = psro(g, grid)
        lp = solve_obedience_lp(g).value
        assert -1e-9 <= lp - r.value <= (1 - prior) * h + 1e-9, seed
        assert r.exploitability < 1e-9, seed


def test_payoff_table_matches_sender_value():
    g = courtroom()
    S = binary_schemes(np.linspace(0, 1, 21), p=0.9)
    us, _ = payoff_tables(g, S, [0.5])
    assert np.allclose(us[:, 0], [sender_value(g, s) for s in S], atol=1e-12)


def test_commitment_lp_brute_force():
    "Against a brute force over the mixture simplex on random 3x3 bimatrices."
    rng = np.random.default_rng(3)
    ticks = np.linspace(0, 1, 41)
    simplex = np.array([(a, b, 1 - a - b) for a in ticks for b in ticks if a + b <= 1 + 1e-12])
    for _ in range(5):
        us, ur = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
        x, j, v = commitment_lp(us, ur)
        rec = simplex @ ur  # receiver payoff of each column
        brj = rec.argmax(1)  # generic: no ties
        brute = (simplex @ us)[np.arange(len(simplex)), brj].max()
        assert brute <= v + 1e-9 and brute >= v - 0.2
        assert abs(x.sum() - 1) < 1e-9 and np.all(x @ ur[:, j] >= x @ ur - 1e-7)


# the induced game is degenerate by design (ties); nashpy warns and still enumerates
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_induced_game_nash_below_commitment():
    g = courtroom()
    S, tau = binary_schemes([0.0, 0.4, 0.5]), [0.0, 0.5, 1.01]
    us, ur = payoff_tables(g, S, tau)
    _, _, v = commitment_lp(us, ur)
    eq = list(induced_game(g, S, tau).support_enumeration())
    assert eq and all(a @ us @ b <= v + 1e-9 for a, b in eq)
    assert np.allclose(commitment_values(us, ur), [0.3, 0.58, 0.0])


@pytest.mark.parametrize(
    "call,msg",
    [
        (lambda: psro(courtroom(), []), "q_grid"),
        (lambda: psro(courtroom(), [0.5, 1.2]), "q_grid"),
        (lambda: psro(courtroom(), [0.5], n_iters=0), "n_iters"),
        (lambda: commitment_lp(np.zeros((0, 2)), np.zeros((0, 2))), "non-empty"),
        (lambda: payoff_tables(courtroom(), np.zeros((1, 2, 2)), [0.5]), "rows must sum"),
        (lambda: payoff_tables(courtroom(), binary_schemes([0.5]), []), "thresholds"),
    ],
)
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()
