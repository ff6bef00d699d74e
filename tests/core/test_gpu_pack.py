"book/gpu_pack.py: which wheels a GPU image lacks (Platform F, item 3); no network here."

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gpu_pack", ROOT / "book" / "gpu_pack.py")
gp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gp)


def test_wheel_names_give_their_distribution():
    name = "ipython_pygments_lexers-1.1.1-py3-none-any.whl"
    assert gp.wheel_dist(name) == "ipython-pygments-lexers"
    assert gp.wheel_dist("POT-0.9.7.post1-cp312-cp312-manylinux_2_28_x86_64.whl") == "pot"
    with pytest.raises(ValueError, match="wheel"):
        gp.wheel_dist("plotly-7.1.0.tar.gz")


def test_groups_are_the_core_and_every_chapter_extra():
    groups = gp.requirement_groups()
    assert {"torch", "plotly", "fastcore"} <= set(groups["core"])
    slugs = {p.name[3:] for p in (ROOT / "nbs").glob("[0-1][0-9]_*") if p.name[:2] != "00"}
    assert slugs <= set(groups), slugs - set(groups)
    assert not {"dev", "test", "triton"} & set(groups)


def test_the_image_list_holds_the_stack_it_brings():
    image = gp.image_dists()
    assert {"torch", "triton", "numpy", "scipy", "torch-geometric", "scikit-learn"} <= image
    assert "plotly" not in image and "fastcore" not in image


def test_only_what_neither_the_image_nor_an_earlier_group_holds_is_kept():
    names = ["numpy-2.3.5-cp312-cp312-x.whl", "plotly-7.1.0-py3-none-any.whl"]
    wheels = [pathlib.Path(n) for n in [*names, "nashpy-0.0.43-py3-none-any.whl"]]
    kept = gp.select(wheels, {"numpy"}, {"nashpy"})
    assert [w.name for w in kept] == ["plotly-7.1.0-py3-none-any.whl"]


def test_install_takes_only_the_missing_distributions():
    present = pathlib.Path("pytest-9.2.0-py3-none-any.whl")
    absent = pathlib.Path("icml26_no_such_dist-1.0-py3-none-any.whl")
    assert gp.missing([present, absent]) == [absent]
