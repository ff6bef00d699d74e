"""geopt.geometry: signed distance against shapely, the NACA sections, the airfoil files."""

import math

import pytest
import torch
from shapely.geometry import Point, Polygon

from icml26_lit.geopt.geometry import (
    load_airfoils,
    naca4,
    rounded_polygon,
    signed_distance,
    superellipse,
    validate_contour,
)


def test_sdf_equals_shapely(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    coords = naca4("4412", 50)
    pts = torch.rand(300, 2, generator=g, dtype=torch.float64) * torch.tensor(
        [3.0, 2.0]
    ) - torch.tensor([1.0, 1.0])
    sdf, direction = signed_distance(coords, pts)
    poly = Polygon(coords.tolist())
    sign = torch.tensor(
        [-1.0 if poly.contains(Point(*p)) else 1.0 for p in pts.tolist()], dtype=torch.float64
    )
    ref = sign * torch.tensor(
        [poly.exterior.distance(Point(*p)) for p in pts.tolist()], dtype=torch.float64
    )
    # float64 distances computed two ways: rounding ~1e-16, so 1e-9 is generous
    torch.testing.assert_close(sdf, ref, atol=1e-9, rtol=0)
    torch.testing.assert_close(direction.norm(dim=1), torch.ones(300, dtype=torch.float64))
    # the closest surface point is p + |sdf| direction, and it lies on the contour
    q = pts + sdf.abs()[:, None] * direction
    on = torch.tensor([poly.exterior.distance(Point(*p)) for p in q.tolist()])
    assert on.max() < 1e-9


def test_naca_thickness_and_symmetry():
    c = naca4("0012", 200)
    assert abs(c[:, 1].max().item() * 2 - 0.12) < 2e-4  # 12% thick
    torch.testing.assert_close(c[:, 1], -c.flip(0)[:, 1])


def test_load_airfoils_split_and_validity():
    names_p, shapes_p = load_airfoils("pretrain", limit=10)
    names_l, shapes_l = load_airfoils("labelled", limit=10)
    assert not set(names_p) & set(names_l)
    for s in shapes_p + shapes_l:
        assert s.shape == (121, 2)
        assert Polygon(s.tolist()).is_valid
        assert abs(s[:, 0].max() - 1) < 1e-12 and abs(s[:, 0].min()) < 1e-12


def test_synthetic_shapes_valid(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    for _ in range(5):
        validate_contour(rounded_polygon(int(torch.randint(3, 8, (1,), generator=g)), 0.3, g))
    area = Polygon(superellipse(1.0, 1.0, 2.0, 4001).tolist()).area
    assert abs(area - math.pi / 4) < 1e-6


def test_bad_input():
    with pytest.raises(ValueError, match="code"):
        naca4("24a2")
    with pytest.raises(ValueError, match="points"):
        signed_distance(naca4("0012"), torch.zeros(3))
    with pytest.raises(ValueError, match="coords"):
        signed_distance(torch.zeros(2, 2), torch.zeros(3, 2))
    with pytest.raises(ValueError, match="split"):
        load_airfoils("train")
