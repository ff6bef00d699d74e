"""Each chapter's package exports its method, under names no other chapter binds to another object;
experiment internals stay in `<chapter>.experiments`; names that moved keep working for one release
with a DeprecationWarning that says where they went."""

import importlib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = [d.name[3:] for d in sorted((ROOT / "nbs").glob("[01][0-9]_*")) if d.name != "00_core"]
CHAPTERS.append("example")
INTERNALS = {"CONFIG", "pilot", "run_pilot", "smoke_step", "run_seed", "run_experiment"}

# old package-level name -> (where the object lives now, its name there)
MOVED = {
    "afr_net": {"simulate_cohort": "simulate_connectome_cohort", "Cohort": "ConnectomeCohort"},
    "sleep_eeg": {"simulate_cohort": "simulate_sleep_cohort", "Cohort": "SleepCohort"},
    "ecg_r1": {"vocabulary": "report_vocabulary", "evaluate": "evaluate_reports"},
    "verbalized_persuasion": {"vocabulary": "letter_vocabulary"},
    "ldr": {"evaluate": "evaluate_flow", "METHODS": "LDR_METHODS", "CONFIG": "experiments.CONFIG"},
    "triforces": {
        "evaluate": "evaluate_forces",
        "pretrain": "pretrain_ssl",
        "init_parameters": "init_triforces_parameters",
    },
    "emformer": {"pretrain": "pretrain_emformer"},
    "tfmpe": {
        "fourier_features": "token_fourier_features",
        "init_parameters": "init_tfmpe_parameters",
    },
    "geopt": {"load_pretrained": "load_pretrained_transolver"},
    "prime_attention": {"make_windows": "make_forecast_windows"},
    "ro_hnn": {"make_windows": "make_state_windows"},
    "sh2rfssm": {"METHODS": "HRF_METHODS"},
    "dkmp": {"CONFIG": "experiments.CONFIG", "run_seed": "experiments.run_seed"},
    "example": {"CONFIG": "experiments.CONFIG", "smoke_step": "experiments.smoke_step"},
}
TRAINING = {
    "slepian": "train_head",
    "geopt": "train_transolver",
    "dkmp": "train_dkmp_arm",
    "sh2rfssm": "train_classifier",
    "prime_attention": "train_forecast_arm",
    "afr_net": "train_afrnet",
}


def _resolve(slug: str, path: str):
    obj = importlib.import_module(f"icml26_lit.{slug}")
    for part in path.split("."):
        obj = (
            getattr(obj, part)
            if hasattr(obj, part)
            else importlib.import_module(f"{obj.__name__}.{part}")
        )
    return obj


def test_no_two_chapters_export_one_name_as_different_objects():
    seen: dict[str, tuple[str, object]] = {}
    clashes = []
    for slug in CHAPTERS:
        mod = importlib.import_module(f"icml26_lit.{slug}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if name in seen and seen[name][1] is not obj:
                clashes.append(f"{name}: {seen[name][0]} and {slug}")
            seen.setdefault(name, (slug, obj))
    assert not clashes, clashes


def test_experiment_internals_stay_in_experiments():
    for slug in CHAPTERS:
        exported = set(importlib.import_module(f"icml26_lit.{slug}").__all__)
        assert not exported & INTERNALS, (slug, exported & INTERNALS)


@pytest.mark.parametrize("slug", sorted(TRAINING))
def test_the_training_function_is_exported(slug):
    pkg = importlib.import_module(f"icml26_lit.{slug}")
    assert TRAINING[slug] in pkg.__all__ and callable(getattr(pkg, TRAINING[slug]))


@pytest.mark.parametrize("slug,old", [(s, o) for s, m in sorted(MOVED.items()) for o in m])
def test_an_old_name_still_works_and_says_where_it_went(slug, old):
    pkg = importlib.import_module(f"icml26_lit.{slug}")
    new = MOVED[slug][old]
    assert old not in pkg.__all__
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = getattr(pkg, old)
    assert got is _resolve(slug, new)
    assert len(w) == 1 and w[0].category is DeprecationWarning
    assert f"icml26_lit.{slug}.{old} is deprecated and goes in 0.3.0: use" in str(w[0].message)


@pytest.mark.parametrize(
    "slug,new", [("emformer", "finetune_emformer"), ("triforces", "finetune_triforces")]
)
def test_finetune_also_names_a_submodule_so_its_old_name_is_a_warning_wrapper(slug, new):
    pkg = importlib.import_module(f"icml26_lit.{slug}")
    assert new in pkg.__all__ and "finetune" not in pkg.__all__
    with pytest.warns(DeprecationWarning, match=rf"use icml26_lit\.{slug}\.{new}"):
        with pytest.raises(TypeError):  # no arguments: the new function's own error
            pkg.finetune()
    assert importlib.import_module(f"icml26_lit.{slug}.finetune").__name__.endswith(".finetune")


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        importlib.import_module("icml26_lit.ldr").nothing_here  # noqa: B018
