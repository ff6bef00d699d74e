"""geopt.lifting and geopt.model: walks against shapely, equivariance, the checkpoint loader."""

import pytest
import torch
from shapely.geometry import Point, Polygon

from icml26_lit.geopt.geometry import naca4, rounded_polygon
from icml26_lit.geopt.lifting import lift
from icml26_lit.geopt.model import Transolver, load_pretrained


@pytest.mark.parametrize("shape", ["airfoil", "polygon"])
def test_walks_stay_outside_and_within_step(shape, fresh_seed):
    coords = (
        naca4("4412", 40)
        if shape == "airfoil"
        else rounded_polygon(5, 0.2, torch.Generator().manual_seed(fresh_seed))
    )
    nv = 200
    rec = lift(
        coords, n_volume=nv, n_surface=30, n_walks=4, n_base=2, step_max=1.0, seed=fresh_seed
    )
    poly = Polygon(coords.tolist())
    for p in rec.positions[:, :, :nv].reshape(-1, 2).tolist():
        assert not poly.contains(Point(*p))  # never inside (shapely, an independent test)
    for j in range(4):
        d, step = rec.condition[j, :nv, :2], rec.condition[j, :nv, 2]
        for t in range(2):
            moved = (rec.positions[j, t + 1, :nv] - rec.positions[j, t, :nv]).norm(dim=1)
            assert (moved <= step + 1e-12).all()  # never beyond the step (float64 rounding)
            free = (moved - step).abs() < 1e-12
            # a shortened move is 0.99 of a hit: the full step from there would cross the surface
            short = ~free
            if short.any():
                end = rec.positions[j, t, :nv][short] + d[short] * step[short, None]
                start = rec.positions[j, t, :nv][short]
                for a, b in zip(start.tolist(), end.tolist()):
                    from shapely.geometry import LineString

                    assert LineString([a, b]).intersects(poly.exterior)
    assert (rec.positions[:, :, nv:] == rec.x[None, None, nv:, :2]).all()  # surface points fixed
    assert (rec.condition[:, nv:, 2] == 0).all()
    # Delta_0 = -sdf * direction
    torch.testing.assert_close(
        rec.supervise[:, :nv, :2], (-rec.x[:nv, 2:3] * rec.x[:nv, 3:5]).expand(4, nv, 2)
    )


def test_perturbed_walks_follow_their_base():
    rec = lift(
        naca4("0012", 40), n_volume=100, n_surface=10, n_walks=6, n_base=2, sigma=0.05, seed=0
    )
    torch.testing.assert_close(rec.condition[4, :, 2], rec.condition[0, :, 2])  # same steps
    cos = (rec.condition[4, :100, :2] * rec.condition[0, :100, :2]).sum(1)
    assert cos.mean() > 0.99 and (rec.condition[4, :, :2] != rec.condition[0, :, :2]).any()


def test_lift_bad_input():
    with pytest.raises(ValueError, match="step_max"):
        lift(naca4("0012", 20), step_max=0.0)
    with pytest.raises(ValueError, match="n_base"):
        lift(naca4("0012", 20), n_walks=3, n_base=5)


def test_transolver_permutation_equivariant(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    m = Transolver(
        8, 3, hidden=16, layers=2, heads=2, slices=4, backend="torch", generator=g
    ).double()
    x = torch.randn(2, 41, 8, generator=g, dtype=torch.float64)
    perm = torch.randperm(41, generator=g)
    torch.testing.assert_close(m(x)[:, perm], m(x[:, perm]), atol=1e-12, rtol=1e-10)


def test_loader_skips_exactly_head():
    g = torch.Generator().manual_seed(0)
    pre = Transolver(8, 6, hidden=16, layers=3, heads=2, slices=4, generator=g)
    fine = Transolver(8, 3, hidden=16, layers=3, heads=2, slices=4, generator=g)
    head = fine.blocks[2].mlp2.weight.clone()
    skipped = load_pretrained(fine, pre.state_dict())
    assert {k.split(".")[2] for k in skipped} == {"mlp2", "ln_3"} and len(skipped) == 4
    for k, v in fine.state_dict().items():
        if k not in skipped:
            torch.testing.assert_close(v, pre.state_dict()[k], atol=0, rtol=0)
    torch.testing.assert_close(fine.blocks[2].mlp2.weight, head, atol=0, rtol=0)


def test_transolver_checks_its_input():
    m = Transolver(3, 2, hidden=8, layers=1, heads=2, slices=4)
    with pytest.raises(ValueError, match=r"x must be \(batch, points, 3\), got \(10, 3\)"):
        m(torch.randn(10, 3))  # no batch axis: it used to fail with "not enough values to unpack"
    with pytest.raises(ValueError, match=r"x must be \(batch, points, 3\), got \(1, 10, 4\)"):
        m(torch.randn(1, 10, 4))
    with pytest.raises(ValueError, match="x must be"):
        m([[0.0, 0.0, 0.0]])
    assert m(torch.randn(1, 10, 3)).shape == (1, 10, 2)


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(heads=0), "heads"),  # used to raise ZeroDivisionError
        (dict(hidden=0), "hidden"),
        (dict(slices=0), "slices"),
        (dict(mlp_ratio=1.5), "mlp_ratio"),
        (dict(heads=True), "heads"),
    ],
)
def test_transolver_names_a_bad_size(kw, name):
    with pytest.raises(ValueError, match=f"{name} must be a positive int"):
        Transolver(3, 2, **kw)


def test_transolver_hidden_must_split_into_heads():
    with pytest.raises(ValueError, match=r"hidden \(10\) must be a multiple of heads \(4\)"):
        Transolver(3, 2, hidden=10, heads=4)


def test_lift_follows_the_official_step_scale():
    import inspect

    # the official generator steps U(0, 2) around a shape of length 5: 0.4 lengths at most
    assert inspect.signature(lift).parameters["step_max"].default == 2 / 5
    rec = lift(naca4("0012", 21), n_volume=200, n_surface=8, n_walks=2, n_base=2, seed=3)
    assert rec.condition[..., 2].max() <= 0.4 and rec.condition[:, :200, 2].max() > 0.3
