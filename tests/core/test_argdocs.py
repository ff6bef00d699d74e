"""Argument docs in `help()`: the docments of the notebooks reach the generated docstrings, and
every callable of `core` and the substrates, and each chapter's main entry points, documents
every argument; every exported `nn.Module` there documents `forward`."""

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import argdocs  # noqa: E402

# `core` and the substrates: every public callable (a class: its constructor and public methods)
SUBSTRATES = ["core", "sphere", "sim", "md", "flows", "physio", "lm"]

# Each chapter's main entry points: its models, losses, estimators and training function (a
# class: its constructor and its own `forward`).
ENTRY_POINTS = {
    "afr_net": [
        "AFRNet",
        "GraphormerEncoder",
        "EdgeGate",
        "edge_energy",
        "simulate_connectome_cohort",
        "pathway_auroc",
    ],
    "antic": ["NeuralField", "fit_field", "PATSSelector", "KdVActivitySelector", "compress_stream"],
    "dkmp": ["DKMP", "SchNetArm", "DKMPArm", "star_message", "train_dkmp_arm"],
    "ecg_r1": [
        "ECGR1Model",
        "SignalEncoder",
        "ImageEncoder",
        "diagnosis_reward",
        "train_sft",
        "train_grpo",
        "grpo_step",
        "evaluate_reports",
    ],
    "emformer": [
        "EMFormer",
        "MultiScaleConv",
        "composite_loss",
        "weighted_rmse",
        "pretrain_emformer",
        "finetune_emformer",
        "forecast",
    ],
    "example": ["fourier_features", "fit_mlp"],
    "flashschnet": ["SchNet", "force_call_cost"],
    "ftrl": [
        "DiscountedVAW",
        "DiscountEnsemble",
        "DiscountedONS",
        "FTRLAdam",
        "O2NCAdam",
        "dynamic_regret",
    ],
    "functional_kl": ["FunctionalFlowMatching", "VelocityMLP", "functional_kl", "gaussian_kl"],
    "gcn_sr": [
        "GCNGenerator",
        "SequenceGenerator",
        "GCNSR",
        "swpg_loss",
        "spbt_fitness",
        "gp_refine",
    ],
    "geopt": ["Transolver", "PhysicsAttention", "lift", "slice_tokens"],
    "ldr": [
        "log_dispersion_loss",
        "nll_loss",
        "reverse_kl_loss",
        "fit",
        "ZukoNSF",
        "make_flow",
        "estimate_log_Z",
        "effective_sample_size",
    ],
    "prime_attention": [
        "PrimeAttentionLayer",
        "PrimeITransformer",
        "PrimeFilters",
        "RevIN",
        "prime_attention",
        "granger_scores",
    ],
    "ro_hnn": [
        "ROHNN",
        "LatentHNN",
        "LatentNODE",
        "MLPHNN",
        "BiorthogonalAutoencoder",
        "window_loss",
        "train_model",
    ],
    "sh2rfssm": ["SH2RFSSM", "HRFLayer", "KernelRegressor"],
    "sleep_eeg": [
        "VectorQuantizer",
        "SpectrogramTokenizer",
        "fit_tokenizer",
        "RespirationToEEG",
        "fit_translator",
        "energy_score",
        "fit_stager",
    ],
    "slepian": [
        "SlepianEncoder",
        "SphericalHarmonicsEncoder",
        "HybridEncoder",
        "SirenHead",
        "LocationModel",
        "make_head",
    ],
    "tfmpe": [
        "TFMPE",
        "VelocityTransformer",
        "TokenEmbedding",
        "fit_direct",
        "fit_posterior_factorised",
        "c2st",
    ],
    "triforces": [
        "TriForces",
        "CompositionStream",
        "StructuralStream",
        "InteractionStream",
        "SSLHeads",
        "sigreg",
        "pretrain_ssl",
        "finetune_triforces",
    ],
    "verbalized_persuasion": [
        "PersuasionGame",
        "solve_obedience_lp",
        "psro",
        "prompt_psro",
        "LetterSender",
        "ReceiverLM",
    ],
}


def scope_modules(pkg: str) -> list[str]:
    "The public modules of `icml26_lit.<pkg>` (the package itself included)."
    root = importlib.import_module(f"icml26_lit.{pkg}")
    names = [root.__name__]
    if hasattr(root, "__path__"):
        for m in pkgutil.iter_modules(root.__path__, root.__name__ + "."):
            if not m.name.rsplit(".", 1)[-1].startswith("_"):
                names.append(m.name)
    return names


def defined_callables(modname: str) -> dict[str, object]:
    "The functions and classes a module exports (`__all__`) and defines itself."
    mod = importlib.import_module(modname)
    out = {}
    for name in getattr(mod, "__all__", []):
        obj = getattr(mod, name, None)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == modname:
            out[f"{modname}.{name}"] = obj
    return out


def methods(cls) -> dict[str, object]:
    "The public methods a class defines itself (not inherited, not properties)."
    out = {}
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if inspect.isfunction(attr):
            out[name] = attr
    return out


def _signature(obj):
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def missing_args(obj) -> list[str]:
    "The parameters of `obj` (a class: its constructor) that its `help()` text leaves undocumented."
    sig = _signature(obj)
    if sig is None:
        return []
    doc = inspect.getdoc(obj) or ""
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    out = []
    for p in sig.parameters.values():
        if p.kind in skip or p.name in ("self", "cls") or p.name.startswith("_"):
            continue
        if not re.search(rf"^\s*{re.escape(p.name)}: \S", doc, re.M):
            out.append(p.name)
    return out


def undocumented(obj, name: str, with_methods: bool = True) -> list[str]:
    "`name(arg)` for every undocumented argument of `obj` and, for a class, of its methods."
    out = [f"{name}({a})" for a in missing_args(obj)]
    if inspect.isclass(obj) and with_methods:
        for m, fn in methods(obj).items():
            out += [f"{name}.{m}({a})" for a in missing_args(fn)]
    return out


def forward_undocumented(obj, name: str) -> list[str]:
    "`name` when `obj` is an `nn.Module` whose own `forward` has no summary line."
    if not (inspect.isclass(obj) and issubclass(obj, torch.nn.Module)):
        return []
    fwd = vars(obj).get("forward")
    if fwd is None:
        return []
    doc = inspect.getdoc(fwd) or ""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    return [] if first and not first.startswith(("Args:", "Returns:")) else [name]


def scope_callables(pkgs=SUBSTRATES) -> dict[str, object]:
    out = {}
    for pkg in pkgs:
        for modname in scope_modules(pkg):
            out.update(defined_callables(modname))
    return out


def _resolve(slug: str, name: str):
    "`icml26_lit.<slug>.<name>`; a name that moved still resolves (its warning is not the point)."
    mod = importlib.import_module(f"icml26_lit.{slug}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(mod, name, None)


def entry_points(slugs=None) -> dict[str, object]:
    out = {}
    for slug in slugs or ENTRY_POINTS:
        for name in ENTRY_POINTS[slug]:
            out[f"icml26_lit.{slug}.{name}"] = _resolve(slug, name)
    return out


# --- (a) the package is current -------------------------------------------------------------


def test_generated_docstrings_are_current():
    p = subprocess.run(
        [sys.executable, str(ROOT / "book" / "argdocs.py"), "check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr


# --- (b) every argument documented, (c) every forward documented ------------------------------


@pytest.mark.parametrize("pkg", SUBSTRATES)
def test_core_and_substrates_document_every_argument(pkg):
    bad = [b for name, obj in scope_callables([pkg]).items() for b in undocumented(obj, name)]
    assert not bad, f"{len(bad)} undocumented arguments:\n" + "\n".join(bad)


@pytest.mark.parametrize("slug", sorted(ENTRY_POINTS))
def test_chapter_entry_points_document_every_argument(slug):
    bad = []
    for name, obj in entry_points([slug]).items():
        bad += undocumented(obj, name, with_methods=False)
        fwd = vars(obj).get("forward") if inspect.isclass(obj) else None
        bad += [f"{name}.forward({a})" for a in (missing_args(fwd) if fwd else [])]
    assert not bad, f"{len(bad)} undocumented arguments:\n" + "\n".join(bad)


def exported_callables() -> dict[str, object]:
    "What every package of the book exports: core, the substrates and the chapters."
    root = importlib.import_module("icml26_lit")
    pkgs = [m.name for m in pkgutil.iter_modules(root.__path__) if m.ispkg and m.name[0] != "_"]
    return scope_callables(pkgs)


def test_every_module_documents_forward():
    "Book-wide: every exported nn.Module with a forward of its own gives it a summary line."
    objs = {**exported_callables(), **entry_points()}
    bad = [b for name, obj in objs.items() for b in forward_undocumented(obj, name)]
    assert not bad, "nn.Module without a forward docstring:\n" + "\n".join(bad)


def test_entry_points_exist():
    for slug, names in ENTRY_POINTS.items():
        assert names, slug
        for name in names:
            assert callable(_resolve(slug, name)), f"icml26_lit.{slug}.{name}"


# --- (d) the export step itself -----------------------------------------------------------------

SOURCE = """# %% ../nbs/x.ipynb #abc
def f(
    x,  # (N, 3) positions, Å
    n: int = 1 << 3,  # steps
    *args,
    scale: str = "ci",  # a scale name
    **kwargs,
) -> float:  # the energy, eV
    "Summary of f."
    return 0.0


def plain(x, y=2):
    "No docments here."
    return x


class Model:
    "A model."

    def __init__(
        self,
        width: int = 8,  # hidden width
    ):
        self.width = width

    def forward(
        self,
        x,  # (N, F) features
    ):
        return x


@dataclass
class Record:
    "A record."

    name: str  # what it is called
    size: int = 3  # how many
"""


def test_rewrite_documents_arguments_defaults_and_return():
    out = argdocs.rewrite(SOURCE)
    ns = {"dataclass": __import__("dataclasses").dataclass}
    exec(compile(out, "<argdocs>", "exec"), ns)
    doc = inspect.getdoc(ns["f"])
    assert doc.splitlines()[0] == "Summary of f."
    assert "    x: (N, 3) positions, Å" in doc
    assert "    n: steps (default: 1 << 3)" in doc
    assert '    scale: a scale name (default: "ci")' in doc
    assert "Returns:\n    the energy, eV" in doc
    assert "    width: hidden width (default: 8)" in inspect.getdoc(ns["Model"])
    assert "    size: how many (default: 3)" in inspect.getdoc(ns["Record"])
    assert inspect.getdoc(ns["Model"].forward) == "Args:\n    x: (N, F) features"  # no summary
    assert inspect.getdoc(ns["plain"]) == "No docments here."  # no docments: left alone
    assert 'def plain(x, y=2):\n    "No docments here."\n' in out
    assert out.startswith("# %% ../nbs/x.ipynb #abc\n")  # the cell marker is kept exactly
    assert argdocs.rewrite(out) == out  # idempotent


def test_rewrite_regenerates_from_the_comments():
    out = argdocs.rewrite(SOURCE)
    changed = argdocs.rewrite(out.replace("# steps", "# integration steps"))
    assert "    n: integration steps (default: 1 << 3)" in changed
    assert "    n: steps (default" not in changed


def test_missing_argument_is_reported():
    "The help() check names an argument whose comment was removed."
    src = argdocs.rewrite(SOURCE.replace("  # hidden width", ""))
    ns = {"dataclass": __import__("dataclasses").dataclass}
    exec(compile(src, "<argdocs>", "exec"), ns)
    assert missing_args(ns["Model"]) == ["width"]
    assert missing_args(ns["f"]) == []
