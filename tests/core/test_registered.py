"""Each chapter's registered kernels compile for T4 and Hopper; its configs run one step."""

import importlib
import pkgutil

import pytest

import icml26_lit
from icml26_lit.bench import load_chapter_kernels
from icml26_lit.core import HAS_TRITON, KERNELS, SCALE_NAMES
from icml26_lit.core.kernels import compile_registered

load_chapter_kernels()


@pytest.fixture(scope="module")
def compiled():
    "Every registered kernel compiled for sm_75 and sm_90 in one clean process."
    return compile_registered()


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton")
@pytest.mark.parametrize("key", sorted(KERNELS))
def test_registered_kernel_compiles(key, compiled):
    result = compiled[key]
    assert not isinstance(result, str), result
    assert [r.target for r in result] == [(7, 5), (9, 0)]


def _experiment_modules():
    out = []
    for m in pkgutil.iter_modules(icml26_lit.__path__):
        name = f"icml26_lit.{m.name}.experiments"
        if m.ispkg and importlib.util.find_spec(name) is not None:
            out.append(name)
    return out


def test_some_experiments_exist():
    assert "icml26_lit.example.experiments" in _experiment_modules()


@pytest.mark.parametrize("modname", _experiment_modules())
@pytest.mark.parametrize("scale", SCALE_NAMES)
def test_chapter_config_runs_one_step(modname, scale):
    mod = importlib.import_module(modname)
    assert hasattr(mod, "CONFIG") and hasattr(mod, "smoke_step"), (
        f"{modname} needs CONFIG and smoke_step"
    )
    if scale not in mod.CONFIG.scales:  # only the cpu preset is optional
        assert scale == "cpu", f"{modname} has no {scale} preset"
        with pytest.raises(ValueError, match="no cpu preset"):
            mod.CONFIG.smoke(scale)
        return
    mod.smoke_step(mod.CONFIG.smoke(scale))
