"""The experiment's data: sparse charges, separate trajectories, the force split, AdK counts."""

import pytest
import torch

from icml26_lit.dkmp.experiments import (
    CONFIG,
    calibrate_q,
    charged_polymer,
    far_force_share,
    message_counts,
    run_seed,
    trivial_maes,
)
from icml26_lit.dkmp.model import DKMP, region_hubs


def test_sparse_alternating_bulky_charges():
    d = charged_polymer(40, 0, 2.0, n_frames=2, burn_in=2, every=1)
    q = d["charges"]
    charged = (q != 0).nonzero().flatten().tolist()
    assert charged == list(range(2, 40, 4))  # one bead in four
    assert q[charged].tolist() == [2.0, -2.0] * 5  # +q and -q in turn along the chain
    assert torch.equal(d["types"], torch.where(q > 0, 1, torch.where(q < 0, 2, 3)))
    ff = d["field"]
    assert float(ff.sigma_ij[2, 6]) == 7.0 and float(ff.sigma_ij[0, 1]) == 4.0  # bulky charges
    assert float(ff.qq[2, 6]) == pytest.approx(-332.0637 * 4.0)  # epsilon_r = 1: unscreened


def test_trajectories_share_the_field_but_not_the_noise():
    a = charged_polymer(24, 3, 2.0, n_frames=3, burn_in=5, every=2)
    b = charged_polymer(24, 3, 2.0, n_frames=3, burn_in=5, every=2, trajectory=1)
    again = charged_polymer(24, 3, 2.0, n_frames=3, burn_in=5, every=2)
    assert torch.equal(a["pos"], again["pos"])  # a seed and a trajectory fix the frames
    assert torch.equal(a["charges"], b["charges"]) and torch.equal(a["types"], b["types"])
    assert not torch.allclose(a["pos"], b["pos"])  # independent thermal noise
    e, f = b["field"].energy_and_forces(b["pos"][1])
    torch.testing.assert_close(f, b["forces"][1], rtol=0, atol=0)  # exact labels, same call
    with pytest.raises(ValueError, match="trajectory"):
        charged_polymer(24, 3, 2.0, trajectory=-1)
    with pytest.raises(ValueError, match="charge_every"):
        charged_polymer(24, 3, 2.0, charge_every=0)
    with pytest.raises(ValueError, match="sigma_charged must be a positive number"):
        charged_polymer(24, 3, 2.0, sigma_charged=-7.0)
    with pytest.raises(ValueError, match="epsilon_r must be a positive number"):
        charged_polymer(24, 3, 2.0, epsilon_r=0.0)


def test_far_share_grows_with_q_and_vanishes_without_charges():
    # at q = 0 only Lennard-Jones tails beyond 5 A are left; the Coulomb share grows with q
    s = [
        far_force_share(d["field"], d["pos"], 5.0)
        for d in (charged_polymer(48, 1, q, n_frames=4, burn_in=50, every=5) for q in (0, 3.0))
    ]
    assert s[0] < 0.05 < s[1]


def test_calibrate_q_picks_the_q_nearest_the_band_middle():
    cfg = type(CONFIG.get("ci"))(
        dict(
            CONFIG.get("ci"),
            n_beads=32,
            n_frames=3,
            n_train=3,
            burn_in=20,
            every=2,
            q_grid=[0.0, 3.0],
            pilot_seeds=[100, 101],
        )  # fmt: skip
    )
    cal = calibrate_q(cfg)
    assert set(cal["split_by_q"]) == {"0.0", "3.0"}
    assert all(len(v) == 2 for v in cal["split_by_q"].values())  # one split per pilot seed
    mid = sum(cfg.split_band) / 2
    m = {float(k): v for k, v in cal["mean_share5_by_q"].items()}
    assert cal["q"] == min(m, key=lambda q: abs(m[q] - mid))
    assert cal["split_in_band"] == (cfg.split_band[0] <= m[cal["q"]] <= cfg.split_band[1])


def test_run_seed_tests_on_the_second_trajectory():
    cfg = type(CONFIG.get("ci"))(
        dict(
            CONFIG.get("ci"), width=8, n_rbf=4, n_levels=1, n_train=2, n_frames=2, steps=2, batch=1
        )
    )
    data = charged_polymer(16, 0, 3.0, n_frames=2, burn_in=2, every=1)
    data["test"] = charged_polymer(16, 0, 3.0, n_frames=3, burn_in=2, every=1, trajectory=1)
    out = run_seed(data, cfg, 0, torch.device("cpu"), n_points=1)
    test = data["test"]
    assert out["zero_force_mae"] == pytest.approx(float(test["forces"].abs().mean()))
    want = trivial_maes(data, torch.arange(2), torch.arange(3), test)
    assert out["mean"] == want
    mean_force = data["forces"][:2].mean(0)  # fitted on training frames, scored on the test ones
    assert want["force_mae"] == pytest.approx(float((test["forces"] - mean_force).abs().mean()))


@pytest.fixture(scope="module")
def adk0():
    from icml26_lit.dkmp.adk import load_adk

    return load_adk(slice(0, 1)).positions[0]


def test_message_counts_on_adk_match_a_brute_force_count(adk0):
    got = message_counts(adk0, 3)
    n = adk0.shape[0]
    d = torch.cdist(adk0, adk0)
    assert got["cutoff"] == pytest.approx((int((d < 5.0).sum()) - n) / n, rel=1e-12)
    m = DKMP(n_levels=3).freeze_regions(adk0)
    for level, count in enumerate(got["star"], start=1):
        hub, _ = region_hubs(adk0, m.labels[level - 1], m.n_regions[level - 1])
        r = torch.cdist(adk0, hub)
        inner, outer = 5.0 * 2 ** (level - 1), 5.0 * 2**level
        keep = (r < outer) & (r > inner - 1.0)  # the window is non-zero from inner - ramp
        assert count == pytest.approx(float(keep.sum()) / n, rel=1e-12), level
    assert got["dkmp"] == pytest.approx(got["cutoff"] + sum(got["star"]))
    assert got["all_pairs"] == n - 1 == 3340
    assert got["cutoff"] < got["dkmp"] < got["all_pairs"] / 10  # far fewer than all pairs
