"""Seed isolation, book-wide: importing any package of the book, or calling any exported function,
class or method that takes `seed=`, `generator=` or `rng=`, leaves the global random number
generators of torch, NumPy and Python's `random` as they were; and such a call returns the same bits
whatever those global generators hold.

Each seeded callable is either called here (`CALLS`: its qualified name -> a function that calls it
twice-over cheaply, with tiny inputs) or excused (`EXCUSED`: its qualified name -> the reason).
`test_every_seeded_callable_is_called_or_excused` fails when a new one appears in neither, so the
two lists stay complete. A call runs twice, under global states seeded 1 and 2; the outputs are
compared bit for bit (tensors, arrays, numbers, recursively through dicts, sequences, dataclasses,
modules' state dicts and plain objects' attributes).
"""

import dataclasses
import functools
import importlib
import inspect
import json
import os
import pkgutil
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import icml26_lit
from tests._rng_states import moved, states

try:  # rich (which scikit-learn imports) draws from Python's `random` once, when it is imported
    import rich.style  # noqa: F401
except ImportError:
    pass

ROOT = Path(__file__).resolve().parents[2]
SEED_ARGS = ("seed", "generator", "rng")


def _private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


@functools.cache
def module_names() -> tuple[str, ...]:
    "Every public module of the package (no `_solutions`, no `_modidx`)."
    mods = pkgutil.walk_packages(icml26_lit.__path__, "icml26_lit.")
    return ("icml26_lit", *sorted(m.name for m in mods if not _private(m.name)))


def _takes_seed(obj) -> bool:
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False
    return any(p in params for p in SEED_ARGS)


def _exported(mod) -> list:
    "The objects `mod` exports: its `__all__`; an experiments module's public functions too."
    objs = [getattr(mod, n) for n in getattr(mod, "__all__", []) if hasattr(mod, n)]
    if mod.__name__.endswith(".experiments"):
        objs += [
            o
            for n, o in vars(mod).items()
            if not n.startswith("_")
            and (inspect.isfunction(o) or inspect.isclass(o))
            and o.__module__ == mod.__name__
        ]
    return objs


@functools.cache
def seeded_callables() -> dict[str, object]:
    "Qualified name -> each exported function, class or public method that takes a seed argument."
    out: dict[str, object] = {}
    for name in module_names():
        for obj in _exported(importlib.import_module(name)):
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not obj.__module__.startswith("icml26_lit."):
                continue
            qual = f"{obj.__module__}.{obj.__qualname__}"
            if _takes_seed(obj):
                out[qual] = obj
            if inspect.isclass(obj):
                for k, v in vars(obj).items():
                    if not k.startswith("_") and inspect.isfunction(v) and _takes_seed(v):
                        out[f"{qual}.{k}"] = v
    return out


# ---------------------------------------------------------------------------------------------
# Importing: a fresh interpreter imports every module one at a time and reports any that moved a
# global generator. The generators are seeded and drawn from first, so that even a reseed with the
# default seed shows.

IMPORT_PROBE = """
import importlib, json, random, sys
import numpy as np
import torch

from tests._rng_states import moved, states

torch.manual_seed(12345); np.random.seed(12345); random.seed(12345)
torch.rand(1); np.random.rand(); random.random()


report = {}
for name in json.loads(sys.argv[1]):
    before = states()
    importlib.import_module(name)
    m = moved(before, states())
    if m:
        report[name] = m
        torch.manual_seed(12345); np.random.seed(12345); random.seed(12345)
print(json.dumps(report))
"""


def test_importing_any_module_leaves_the_global_generators_alone():
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_INTERPRET="1", OMP_NUM_THREADS="1")
    p = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, json.dumps(module_names())],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report == {}, f"importing these moved the global generators: {report}"


# ---------------------------------------------------------------------------------------------
# Calling. Comparison of two outputs, bit for bit.


def _same_float(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def difference(a, b, path: str = "out", depth: int = 0) -> str | None:
    "Where `a` and `b` first differ (a path such as `out['model'].weight`), or None."
    if depth > 12:
        return None
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
        if a.is_floating_point() or a.is_complex():
            same = torch.equal(a.isnan(), b.isnan()) and torch.equal(
                a.nan_to_num(0.0, 0.0, 0.0), b.nan_to_num(0.0, 0.0, 0.0)
            )
        else:
            same = torch.equal(a, b)
        return None if same else f"{path}: tensors differ"
    if isinstance(a, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
        nan = a.dtype.kind in "fc"
        return None if np.array_equal(a, b, equal_nan=nan) else f"{path}: arrays differ"
    if isinstance(a, (float, np.floating)):
        return None if _same_float(float(a), float(b)) else f"{path}: {a} vs {b}"
    if isinstance(a, (bool, int, str, bytes, type(None), np.integer, np.bool_, torch.dtype)):
        return None if a == b else f"{path}: {a!r} vs {b!r}"
    if isinstance(a, torch.Generator):
        return difference(a.get_state(), b.get_state(), f"{path}.get_state()", depth + 1)
    if isinstance(a, np.random.Generator):
        return difference(a.bit_generator.state, b.bit_generator.state, path, depth + 1)
    if isinstance(a, torch.nn.Module):
        return difference(a.state_dict(), b.state_dict(), f"{path}.state_dict()", depth + 1)
    if isinstance(a, torch.optim.Optimizer):
        return difference(a.state_dict(), b.state_dict(), f"{path}.state_dict()", depth + 1)
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} vs {list(b)}"
        for k in a:
            d = difference(a[k], b[k], f"{path}[{k!r}]", depth + 1)
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: lengths {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = difference(x, y, f"{path}[{i}]", depth + 1)
            if d:
                return d
        return None
    if dataclasses.is_dataclass(a):
        fields = {f.name: getattr(a, f.name) for f in dataclasses.fields(a)}
        other = {f.name: getattr(b, f.name) for f in dataclasses.fields(b)}
        return difference(fields, other, path, depth + 1)
    if callable(a) and not hasattr(a, "__dict__"):
        return None  # builtins and the like: not data
    if inspect.isfunction(a) or inspect.ismethod(a) or inspect.isclass(a):
        return None
    if hasattr(a, "__dict__"):
        return difference(vars(a), vars(b), path, depth + 1)
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def _seed_globally(s: int) -> None:
    torch.manual_seed(s)
    np.random.seed(s)
    random.seed(s)


# ---------------------------------------------------------------------------------------------
# Tiny inputs


def G(seed: int = 0) -> torch.Generator:
    "A fresh CPU generator."
    return torch.Generator().manual_seed(seed)


def R(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def drop(d: dict, *keys) -> dict:
    "`d` without `keys` (wall-clock timings, which differ from call to call)."
    return {k: v for k, v in d.items() if k not in keys}


def untimed(x, keys=("seconds",)):
    "`x` with the dict entries named in `keys` dropped at every depth (wall-clock timings)."
    if isinstance(x, dict):
        return {k: untimed(v, keys) for k, v in x.items() if k not in keys}
    if isinstance(x, (list, tuple)):
        return type(x)(untimed(v, keys) for v in x)
    return x


def _plain_module() -> torch.nn.Module:
    "A module for the initialisers to redraw (its own default init kept off the global RNG)."
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Linear(3, 4), torch.nn.LayerNorm(4), torch.nn.Embedding(5, 4)
        )


def _init(fn, **kw) -> torch.nn.Module:
    "An initialiser `fn(module, generator=...)` applied to a fresh plain module."
    m = _plain_module()
    fn(m, generator=G(), **kw)
    return m


# ---------------------------------------------------------------------------------------------
# The registry: qualified name -> a zero-argument call with tiny inputs; its return is compared.


# Chapter 17 afr_net


@functools.cache
def _afr():
    from icml26_lit.afr_net.experiments import CONFIG, make_data

    cfg = CONFIG.get("ci")
    cfg.update(batch=2, epochs=1, d=8, heads=2, gnn_hidden=8, n_subjects=10)
    return cfg, make_data(cfg, 0, 1.0)


def _afr_run_seed():
    from icml26_lit.afr_net.experiments import run_seed

    cfg = type(_afr()[0])(_afr()[0], gnn_baselines=False)
    r = run_seed(cfg, 0, 1e-3, 1.0)
    return dict(r, afr=drop(r["afr"], "seconds"))


def _afr_calls():
    from icml26_lit.afr_net import data as d
    from icml26_lit.afr_net import experiments as e
    from icml26_lit.afr_net import graphormer, kernels, model

    group = d._sparsify(d.load_template("hcp"), 0.3)
    cfg = lambda: _afr()[0]  # noqa: E731
    data = lambda: _afr()[1]  # noqa: E731
    return {
        "experiments.run_seed": lambda: _afr_run_seed(),
        "data.plant_pathways": lambda: d.plant_pathways(group, 2, R()),
        "data.Cohort": lambda: d.Cohort(*[np.zeros(2)] * 6, seed=3),
        "data.simulate_cohort": lambda: d.simulate_cohort(4, 0.5, seed=0, n_steps=20),
        "data.cortical_coordinates": lambda: d.cortical_coordinates(8, seed=0),
        "data.distance_rule_connectome": lambda: d.distance_rule_connectome(8, seed=0),
        "experiments.split_indices": lambda: e.split_indices(20, 1),
        "experiments.make_data": lambda: drop(e.make_data(cfg(), 1, 1.0, n_subjects=4), "cohort"),
        "experiments.train_afrnet": lambda: drop(
            e.train_afrnet(data(), cfg(), 0, 1e-3, steps=2, backend="torch"), "seconds"
        ),
        "experiments.logistic_baseline": lambda: e.logistic_baseline(data(), (1.0,), 0),
        "experiments.train_gnn": lambda: drop(
            e.train_gnn(data(), cfg(), 0, 1e-3, "gat", steps=2), "seconds"
        ),
        "graphormer.init_from_generator": lambda: _init(graphormer.init_from_generator),
        "graphormer.GraphormerEncoder": lambda: graphormer.GraphormerEncoder(
            6, d=8, n_heads=2, generator=G()
        ),
        "kernels.make_mask_inputs": lambda: kernels.make_mask_inputs((2, 5, 6), torch.float64, G()),
        "model.AFRNet": lambda: model.AFRNet(8, d=8, n_heads=2, generator=G()),
    }


# Chapter 04 antic


def _antic_cfg():
    from icml26_lit.antic.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n=16, n_steps=3, first_steps=2, steps=2, hidden=8, n_layers=2, n_freq=4)
    return cfg.update(batch_size=64, n_seeds=1) or cfg


def _antic_record(seed: int = 0) -> dict:
    from icml26_lit.antic.experiments import record_run

    r = record_run(_antic_cfg(), seed)
    return dict(
        ref=r["ref"], antic=r["antic"], kept=r["kept_official"], records=r["artefact"].records
    )


def _antic_calls():
    from icml26_lit.antic import experiments as e
    from icml26_lit.antic import kernels, stream
    from icml26_lit.antic import neural_field as nf

    cfg = _antic_cfg
    xy = torch.linspace(0, 6, 32).reshape(16, 2)
    target = torch.linspace(-1, 1, 16)

    def lora():
        f = nf.NeuralField(hidden=8, n_layers=2, n_freq=4, seed=0, backend="torch")
        f.add_lora(2, seed=1)
        return f

    def fit():
        f = nf.NeuralField(hidden=8, n_layers=2, n_freq=4, seed=0, backend="torch")
        return f, nf.fit_field(f, xy, target, 2, batch_size=4, seed=3)

    return {
        "experiments.run_experiment": lambda: e.run_experiment(cfg(), 0)["runs"][0]["antic"],
        "experiments.record_run": _antic_record,
        "experiments.compress_seed": lambda: e.compress_seed(cfg(), _antic_record()["ref"], 0),
        "experiments.recorded_frames": lambda: e.recorded_frames(cfg(), 1),
        "experiments.experiment_units": lambda: e.experiment_units(cfg(), 0),
        "kernels.random_packed": lambda: kernels.random_packed(8, 8, 2, rank=2, seed=1),
        "neural_field.NeuralField": lambda: nf.NeuralField(hidden=8, n_layers=2, n_freq=4, seed=1),
        "neural_field.NeuralField.add_lora": lora,
        "neural_field.fit_field": fit,
        "stream.ANTICConfig": lambda: stream.ANTICConfig(seed=2),
    }


# Chapter 0 core and Chapter 07 dkmp


def _core_calls():
    from icml26_lit.core import kernels

    def make(size, dtype, generator):
        return (torch.randn(size, dtype=dtype, generator=generator),)

    return {
        "kernels.check_kernel": lambda: kernels.check_kernel(
            torch.sin, torch.sin, make, [(3,), (4,)], seed=5
        ),
    }


@functools.cache
def _dkmp():
    from icml26_lit.dkmp.experiments import CONFIG, charged_polymer

    cfg = CONFIG.get("ci")
    cfg.update(width=8, n_rbf=4, n_levels=1, n_train=2, test_from=2, n_frames=3, steps=2, batch=1)
    return cfg, charged_polymer(16, 0, 1.0, n_frames=3, burn_in=2, every=1)


def _dkmp_calls():
    from icml26_lit.dkmp import experiments as e
    from icml26_lit.dkmp import model

    cfg = lambda: _dkmp()[0]  # noqa: E731
    data = lambda: _dkmp()[1]  # noqa: E731
    cpu = torch.device("cpu")

    def train(kind):
        arm = e.make_arm(kind, data(), cfg(), 0, cpu)
        e.train_arm(arm, data(), cfg(), 0, 1e-3, 2, torch.arange(2), cpu)
        return arm

    return {
        "experiments.run_seed": lambda: e.run_seed(data(), cfg(), 0, cpu, n_points=1),
        "experiments.charged_polymer": lambda: e.charged_polymer(
            16, 1, 1.0, n_frames=2, burn_in=2, every=1
        ),
        "experiments.SchNetArm": lambda: e.SchNetArm(data()["types"], 8, 4, 1, 5.0, seed=1),
        "experiments.DKMPArm": lambda: e.DKMPArm(data()["types"], data()["pos"][0], 8, 4, 1, 1),
        "experiments.make_arm": lambda: e.make_arm("schnet", data(), cfg(), 1, cpu),
        "experiments.train_arm": lambda: train("dkmp"),
        "model.DKMP": lambda: model.DKMP(width=8, n_rbf=4, n_levels=1, generator=G()),
        "model.init_parameters": lambda: _init(model.init_parameters),
    }


# Chapter 16 ecg_r1


@functools.cache
def _ecg():
    from icml26_lit.ecg_r1.experiments import CONFIG, build_encoders, new_model, seed_data
    from icml26_lit.ecg_r1.protocol import vocabulary
    from icml26_lit.lm import WordTokenizer

    ci = CONFIG.get("ci")
    base = dict(ci, n_sft=4, n_rl=2, n_test=2, n_encoder=8, encoder_steps=1, sft_steps=1)
    cfg = type(ci)(dict(base, rl_steps=1, n_prompts=2, max_new_tokens=4, G=2, batch=2, cache_len=4))
    cfg.update(d_model=16, n_layers=1, n_heads=2)
    enc = build_encoders(cfg)
    tok = WordTokenizer(vocabulary(cfg.style))
    return cfg, tok, enc, seed_data(cfg, 0, new_model(cfg, tok, enc, 0))


def _ecg_calls():
    from icml26_lit.ecg_r1 import experiments as e
    from icml26_lit.ecg_r1 import model, train

    def setup():
        return _ecg()

    def fresh():
        cfg, tok, enc, _ = setup()
        return e.new_model(cfg, tok, enc, 0)

    def gen():
        m = fresh()
        sig, img = setup()[3]["test"]["sig"], setup()[3]["test"]["img"]
        return m.generate(model.make_examples(sig, img), 4, temperature=1.0, generator=G())

    def grpo_step():
        m, data = fresh(), setup()[3]["rl"]
        opt = torch.optim.Adam([p for p in m.parameters() if p.requires_grad], lr=1e-4)
        return m, train.grpo_step(
            m, data, opt, torch.arange(2), G=2, max_new_tokens=4, cache_len=4, generator=G()
        )

    def sft():
        m = fresh()
        return m, train.train_sft(m, setup()[3]["sft"], 1, batch=2, generator=G())

    def grpo():
        m = fresh()
        return m, train.train_grpo(
            m, setup()[3]["rl"], 1, 2, generator=G(), G=2, max_new_tokens=4, cache_len=4
        )

    example = dict(signal=torch.zeros(3), image=torch.ones(3), order=("ecg", "image"))
    return {
        "experiments.run_seed": _ecg_run_seed,
        "experiments.new_model": fresh,
        "experiments.seed_data": lambda: e.seed_data(setup()[0], 1, fresh()),
        "experiments.train_arm": lambda: e.train_arm(*setup(), "imd", 1e-3, 0, steps=1),
        "experiments.post_train": lambda: e.post_train(
            setup()[0], fresh(), setup()[3], "grpo", 1e-4, 0, steps=1
        ),
        "experiments.logistic_jaccard": lambda: e.logistic_jaccard(
            setup()[3]["sft"], setup()[3]["test"], Cs=(1.0,), seed=0
        ),
        "experiments.colab_numbers": _ecg_colab_numbers,
        "model.ECGR1Model": fresh,
        "model.ECGR1Model.generate": gen,
        "model.interleaved_modality_dropout": lambda: model.interleaved_modality_dropout(
            example, generator=G()
        ),
        "model.pretrain_encoders": lambda: model.pretrain_encoders(
            model.simulate_set(4, 0), steps=1, batch=2, d=8, generator=G()
        ),
        "model.reinit": lambda: model.reinit(_plain_module(), generator=G()),
        "model.simulate_ecg": lambda: model.simulate_ecg(("sinus",), seed=1),
        "model.simulate_set": lambda: model.simulate_set(2, 3),
        "train.grpo_step": grpo_step,
        "train.train_grpo": grpo,
        "train.train_sft": sft,
    }


def _ecg_run_seed():
    from icml26_lit.ecg_r1.experiments import run_seed

    cfg, tok, enc, _ = _ecg()
    return drop(run_seed(cfg, tok, enc, 0), "seconds")


@functools.cache
def _ecg_colab():
    "The colab-claims preset, its data, and every arm's model and scores (tiny)."
    from icml26_lit.ecg_r1 import experiments as e

    cfg, tok, enc, _ = _ecg()
    cc = type(cfg)(dict(cfg, colab_claims=True))
    data = e.seed_data(cc, 0, e.new_model(cc, tok, enc, 0))
    models = {a: e.train_arm(cc, tok, enc, data, a, 1e-3, 0, steps=1)[0] for a in e.ARMS}
    models.update(
        {m: e.post_train(cc, models["imd"], data, m, 1e-4, 0, steps=1)[0] for m in e.POST}
    )
    sc = {k: e.score(cc, m, data["test"]) for k, m in models.items()}
    return cc, tok, enc, data, models, sc


def _ecg_colab_numbers():
    import copy

    from icml26_lit.ecg_r1.experiments import colab_numbers

    cc, tok, enc, data, models, sc = _ecg_colab()
    lrs = {"noimd": 1e-3, "answer_only": 1e-3}
    models, sc = dict(models), copy.deepcopy(sc)
    return colab_numbers(cc, tok, enc, data, models, sc, lrs, 0), models


# Chapter 05 emformer and Chapter 0's example


def _emf_cfg():
    from icml26_lit.emformer.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_train=2, n_test=1, train_len=3, test_len=3, starts=[0], leads=[1], ny=8, nx=16)
    cfg.update(model_dt=0.04, pretrain_steps=1, rollouts=1, rollout_len=2, K=2, batch=1)
    cfg.update(dim=16, heads=2, depth=(1, (1, 2, 1), 1), window=[(2, 2)], patch=2)
    cfg.update(arms=["detach", "accumulative-sin"])
    return cfg


def _emf_calls():
    from icml26_lit.emformer import experiments as e
    from icml26_lit.emformer import kernels, multiscale

    finetune = importlib.import_module("icml26_lit.emformer.finetune")  # not the function

    def cfg():
        c = _emf_cfg()
        return c

    def tiny():
        return e.new_model(cfg(), 0, backend="torch")

    def pre():
        m = tiny()
        return m, finetune.pretrain(m, _emf_train(), 1, batch=1, generator=G())

    def fine():
        m = tiny()
        return m, finetune.finetune(
            m, _emf_train(), "accumulative", K=2, rollouts=1, rollout_len=2, batch=1, generator=G()
        )

    return {
        "experiments.run_seed": lambda: drop(e.run_seed(cfg(), 0), "seconds", "seconds_pretrain"),
        "experiments.make_data": lambda: e.make_data(cfg(), 1),
        "experiments.persistence_acc": lambda: e.persistence_acc(cfg(), 1, lead=1),
        "experiments.calibrate_step": lambda: e.calibrate_step(
            e.Config_with(cfg(), test_len=13), 1, band=(-1.0, 1.0)
        ),
        "experiments.new_model": tiny,
        "experiments.check_budget": lambda: e.check_budget(
            e.Config_with(cfg(), leads=[1, 2]), 1, every=1
        ),
        "finetune.pretrain": pre,
        "finetune.finetune": fine,
        "kernels.make_conv_inputs": lambda: kernels.make_conv_inputs(
            (1, 4, 4, 6), torch.float32, G()
        ),
        "model.EMFormer": tiny,
        "multiscale.MultiScaleConv": lambda: multiscale.MultiScaleConv(6, generator=G()),
    }


@functools.cache
def _emf_train():
    from icml26_lit.emformer.experiments import make_data

    return make_data(_emf_cfg(), 0)["train"]


def _example_calls():
    from icml26_lit.example import experiments as e
    from icml26_lit.example import features

    cfg = e.CONFIG.get("ci")
    cfg.update(n_train=8, n_test=8, n_steps=2, width=8, n_features=4, n_seeds=1)
    data = e.make_data(8, 8, 0)
    return {
        "experiments.run_seed": lambda: e.run_seed(cfg, 0, device="cpu"),
        "experiments.run_experiment": lambda: e.run_experiment(cfg, 0, device="cpu"),
        "experiments.make_data": lambda: e.make_data(4, 4, 1),
        "experiments.fit_mlp": lambda: e.fit_mlp(data, cfg, True, 0, device="cpu"),
        "experiments.fit_sklearn": lambda: e.fit_sklearn(data, cfg, 0),
        "features.gaussian_frequencies": lambda: features.gaussian_frequencies(2, 3, 1.0, G()),
    }


# Chapter 06 flashschnet


def _fs_cfg():
    from icml26_lit.flashschnet.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_beads=8, n_replicas=2, fold_steps=5, hidden=8, filters=8, gaussians=4)
    cfg.update(interactions=1, cutoff=9.0, n_seeds=1, md_beads=4, md_replicas=1, md_burn=2)
    cfg.update(md_steps=8, md_every=1, null_pairs=1, ladder_replicas=[1], ladder_steps=2)
    return cfg.update(timing_repeats=1) or cfg


def _fs_calls():
    from icml26_lit.flashschnet import experiments as e

    cpu = torch.device("cpu")

    def system():
        return e.make_system(_fs_cfg(), 0)

    return {
        "experiments.make_system": lambda: e.make_system(_fs_cfg(), 1),
        "experiments.make_model": lambda: e.make_model(_fs_cfg(), 1, backend="torch"),
        "experiments.force_agreement": lambda: e.force_agreement(
            _fs_cfg(), 0, *system(), backend="torch"
        ),
        "experiments.force_rounding": lambda: e.force_rounding(
            _fs_cfg(), 0, *system(), backend="torch"
        ),
        "experiments.pyg_schnet": lambda: e.pyg_schnet(_fs_cfg(), 1),
        "experiments.md_samples": lambda: drop(
            e.md_samples(_fs_cfg(), 0, "plain", *system(), noise_seed=3, backend="torch"),
            "wall_s",
            "steps_mol_per_s",
        ),
        "experiments.ladder_benchmark": lambda: [
            drop(r, "rates", "timesteps_mol_per_s", "ns_per_day")
            for r in e.ladder_benchmark(_fs_cfg(), 0, cpu, backend="torch")
        ],
        "experiments.experiment_units": lambda: e.experiment_units(_fs_cfg(), 0),
        "experiments.md_pilot": lambda: drop(
            e.md_pilot(_fs_cfg(), 3, n_replicas=1), "ms_per_replica_step"
        ),
    }


# The flows substrate and Chapter 12 ftrl


def _flow():
    from icml26_lit.flows.coupling import CouplingFlow

    with torch.random.fork_rng(devices=[]):  # its constructor takes no generator
        torch.manual_seed(0)
        return CouplingFlow(2, n_layers=2, hidden=8)


def _flows_calls():
    from icml26_lit.flows import coupling, estimators, matching

    x1 = torch.linspace(-1, 1, 8).reshape(4, 2)
    return {
        "coupling.check_generator": lambda: coupling.check_generator(G()),
        "coupling.CouplingFlow.sample": lambda: _flow().sample(4, G()),
        "coupling.CouplingFlow.sample_and_log_prob": lambda: _flow().sample_and_log_prob(4, G()),
        "estimators.importance_log_weights": lambda: estimators.importance_log_weights(
            _flow(), lambda x: (x**2).sum(-1), 4, G()
        ),
        "matching.cfm_loss": lambda: matching.cfm_loss(lambda x, t: x * 0.5, x1, generator=G()),
    }


def _ftrl_cfg():
    from icml26_lit.ftrl.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(T_max=16, n_T=2, n_seeds=1, P_sweep=[2.0], log_T_max=16, log_n_T=2, d=3)
    cfg.update(adam_steps=2, adam_batch=4, adam_hidden=4, n_probe=2, betas=[[0.9, 0.999]])
    return cfg.update(river_lr_grid=[0.1], ridge_every=4, eta_sweep=[0.5]) or cfg


def _ftrl_calls():
    from icml26_lit.ftrl import adam, linear, logistic
    from icml26_lit.ftrl import experiments as e

    def o2nc():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            net = torch.nn.Linear(3, 1)
        opt = adam.O2NCAdam(net.parameters(), lr=0.1, generator=G(), backend="torch")
        net(torch.ones(2, 3)).sum().backward()
        opt.step()
        return net, opt

    def net():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            return torch.nn.Linear(3, 1)

    X, y = torch.linspace(-1, 1, 12).reshape(4, 3), torch.ones(4, 1)
    secs = ("seconds", "seconds_ours", "seconds_baselines")
    return {
        "experiments.run_experiment": lambda: _ftrl_run(e.run_experiment(_ftrl_cfg(), 0, "cpu")),
        "adam.O2NCAdam": o2nc,
        "experiments.stream_batch": lambda: e.stream_batch([8], [1.0], 1, 3, 8, seed=1),
        "experiments.tune_river_lr": lambda: e.tune_river_lr(_ftrl_cfg(), 1),
        "experiments.run_linear": lambda: drop(e.run_linear(_ftrl_cfg(), 1), *secs),
        "experiments.run_logistic": lambda: drop(e.run_logistic(_ftrl_cfg(), 1), *secs),
        "experiments.l1_regression_task": lambda: e.l1_regression_task(8, 3, seed=1),
        "experiments.goldstein_proxy": lambda: e.goldstein_proxy(net(), X, y, 0.1, 2, G()),
        "experiments.run_adam_one": lambda: drop(
            e.run_adam_one(_ftrl_cfg(), "o2nc_clip", (0.9, 0.999), seed=1), "seconds"
        ),
        "experiments.experiment_units": lambda: e.experiment_units(_ftrl_cfg(), 0),
        "linear.drifting_comparator": lambda: linear.drifting_comparator(8, 3, 1.0, rng=R()),
        "linear.unit_features": lambda: linear.unit_features(4, 3, R()),
        "linear.drifting_linear_stream": lambda: linear.drifting_linear_stream(8, 3, 1.0, seed=1),
        "logistic.drifting_logistic_stream": lambda: logistic.drifting_logistic_stream(
            8, 3, 1.0, seed=1
        ),
    }


def _ftrl_run(r: dict) -> dict:
    "`run_experiment`'s results without their timings."
    secs = ("seconds", "seconds_ours", "seconds_baselines")
    out = {
        k: drop(v, *secs) if k in ("linear", "logistic", "logistic_theory") else v
        for k, v in r.items()
    }
    out["adam"] = {k: [drop(x, "seconds") for x in v] for k, v in r["adam"].items()}
    return out


# Chapter 11 functional_kl


def _fkl_cfg():
    from icml26_lit.functional_kl.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(M=8, N=2, n_cells=4, n_fill=1, n_eval=4, steps=2, batch=4, checkpoints=2)
    return cfg.update(width=8, n_t=2, gauss_paths=4, gauss_steps=1, n_ref=4) or cfg


def _fkl_calls():
    from icml26_lit.functional_kl import (
        estimator,
        ffm,
        ground_truths,
        kernels,
        noise,
    )
    from icml26_lit.functional_kl import (
        experiments as e,
    )
    from icml26_lit.functional_kl import (
        trajectory as tr,
    )

    nz = noise.GaussianNoise(8, 2)
    snaps = [torch.linspace(-1, 1, 8).reshape(4, 2) + k for k in range(3)]
    paths = [nz.sample(4, 2, G(1)), nz.sample(4, 2, G(2))]

    def fm():
        return ffm.FunctionalFlowMatching(nz, 2, 2, width=8, generator=G())

    def step():
        f = fm()
        return f, f.step(paths, 4, G(3))

    def fit():
        f = fm()
        return f, f.fit(paths, 2, 4, G(3))

    def fkl():
        f = fm()
        return estimator.functional_kl(
            f.velocity(0), f.velocity(1), paths[0], nz, n_t=2, schedule="importance", generator=G()
        )

    return {
        "estimator.sample_importance_times": lambda: estimator.sample_importance_times(4, 0.9, G()),
        "estimator.functional_kl": fkl,
        "experiments.ti_data": lambda: e.ti_data(1, _fkl_cfg()),
        "experiments.run_ti_seed": lambda: e.run_ti_seed(1, _fkl_cfg()),
        "experiments.knot_kl_gap": lambda: e.knot_kl_gap(1, _fkl_cfg()),
        "experiments.ou_pair": lambda: e.ou_pair(nz, 2, G()),
        "experiments.run_ou_seed": lambda: e.run_ou_seed(1, _fkl_cfg()),
        "experiments.run_gauss_seed": lambda: e.run_gauss_seed(1, _fkl_cfg()),
        "experiments.marginal_check": lambda: e.marginal_check(1, _fkl_cfg()),
        "ffm.VelocityMLP": lambda: ffm.VelocityMLP(8, 2, 2, width=8, depth=2, generator=G()),
        "ffm.logit_normal": lambda: ffm.logit_normal(4, G()),
        "ffm.FunctionalFlowMatching": fm,
        "ffm.FunctionalFlowMatching.step": step,
        "ffm.FunctionalFlowMatching.fit": fit,
        "ground_truths.OUProcess.sample": lambda: ground_truths.OUProcess(1.0, 1.0).sample(
            2, torch.linspace(0, 1, 4, dtype=torch.float64), G()
        ),
        "kernels.make_cm_inputs": lambda: kernels.make_cm_inputs((2, 8, 2, 2), torch.float64, G()),
        "noise.GaussianNoise.sample": lambda: nz.sample(2, 2, G()),
        "trajectory.double_well_paths": lambda: tr.double_well_paths(2, 8, 0.9, G()),
        "trajectory.couple_chains": lambda: tr.couple_chains(snaps, "random", G()),
        "trajectory.bridge_fill": lambda: tr.bridge_fill(
            torch.stack(snaps, 1), [0, 3, 7], 8, 0.9, generator=G()
        ),
        "trajectory.coupled_bridge_paths": lambda: tr.coupled_bridge_paths(
            snaps, [0, 3, 7], 8, 0.9, "ot", G()
        ),
    }


# Chapter 18 gcn_sr


def _sr_cfg():
    from icml26_lit.gcn_sr.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(budget=40, batch_size=10, gp_offspring=10, gp_generations=1, n_test=20, depth=3)
    return cfg.update(gplearn_population=20, n_seeds=1, methods=["gcn_sr", "deap"]) or cfg


def _sr_calls():
    from icml26_lit.gcn_sr import experiments as e
    from icml26_lit.gcn_sr import fitness, kernels, spbt, swpg
    from icml26_lit.gcn_sr import generator as gen

    tree = spbt.SPBT(3)
    index = swpg.SubtreeIndex(tree)
    lib = tree.library
    a, b = (spbt.random_tree(3, lib, G(k)).numpy() for k in (1, 2))
    X, y, _ = fitness.nguyen(1, n_points=8)

    def gcn():
        return gen.GCNGenerator(tree, width=8, generator=G())

    def seq():
        return gen.SequenceGenerator(tree, width=8, generator=G())

    def reset(make):
        m = make()
        m.reset_parameters(G(5))
        return m

    def refine():
        pop = torch.stack([spbt.random_tree(3, lib, G(k)) for k in range(4)])
        return swpg.gp_refine(
            pop,
            torch.rand(4, generator=G()),
            lambda t: kernels.score(t, X, y),
            index,
            n_offspring=4,
            tournament=2,
            rng=R(),
        )

    def gcnsr():
        m = swpg.GCNSR(depth=3, budget=20, batch_size=10, width=8, gp_offspring=5, seed=1)
        m.fit(X, y)
        return drop(vars(m), "seconds", "history_seconds")

    return {
        "experiments.run_experiment": lambda: {
            k: [drop(r, "seconds") for r in v] for k, v in e.run_experiment(_sr_cfg(), 0).items()
        },
        "experiments.run_gcnsr": lambda: drop(e.run_gcnsr(1, 0, _sr_cfg()), "seconds"),
        "experiments.run_gplearn": lambda: drop(e.run_gplearn(1, 0, _sr_cfg()), "seconds"),
        "experiments.run_pyoperon": lambda: drop(e.run_pyoperon(1, 0, _sr_cfg()), "seconds"),
        "experiments.run_deap": lambda: drop(e.run_deap(1, 0, _sr_cfg()), "seconds"),
        "experiments.run_method": lambda: drop(e.run_method("pg", 1, 0, _sr_cfg()), "seconds"),
        "experiments.experiment_units": lambda: e.experiment_units(_sr_cfg(), 0),
        "fitness.nguyen": lambda: fitness.nguyen(3, n_points=4, seed=1),
        "generator.GCNGenerator": gcn,
        "generator.GCNGenerator.decode": lambda: gcn().decode(n=2, generator=G(1)),
        "generator.GCNGenerator.reset_parameters": lambda: reset(gcn),
        "generator.GCNGenerator.sample": lambda: gcn().sample(2, G(1)),
        "generator.SequenceGenerator": seq,
        "generator.SequenceGenerator.decode": lambda: seq().decode(n=2, generator=G(1)),
        "generator.SequenceGenerator.reset_parameters": lambda: reset(seq),
        "generator.SequenceGenerator.sample": lambda: seq().sample(2, G(1)),
        "generator.decode_one": lambda: gen.decode_one(tree, seed=1, width=8),
        "kernels.make_fitness_inputs": lambda: kernels.make_fitness_inputs(
            (2, 3, 4, 1), torch.float64, G()
        ),
        "spbt.random_tree": lambda: spbt.random_tree(3, lib, G()),
        "swpg.GCNSR": gcnsr,
        "swpg.crossover": lambda: swpg.crossover(a, b, index, R()),
        "swpg.gp_refine": refine,
        "swpg.mutate": lambda: swpg.mutate(a, index, R()),
    }


# Chapter 02 geopt


def _geo_cfg():
    from icml26_lit.geopt.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(hidden=8, layers=1, heads=2, slices=4, mlp_ratio=1, labels=[2], n_volume=16)
    cfg.update(steps=2, n_surface=8, batch=2, n_pre_airfoils=1, n_pre_shapes=2, n_walks=2)
    return cfg.update(n_base=2, pre_steps=2, n_val=1, n_test=1, eval_every=1) or cfg


@functools.cache
def _geo_pool() -> list:
    from icml26_lit.geopt.geometry import load_airfoils

    return load_airfoils("labelled", limit=4, n_points=21)[1]


def _geo_calls():
    from icml26_lit.geopt import experiments as e
    from icml26_lit.geopt import geometry, lifting, model

    def data():
        return e.labelled_data(_geo_cfg(), 0, _geo_pool())

    def train():
        m = e.make_model(_geo_cfg(), 3, 0, backend="torch")
        d = data()
        return m, e.train(m, d["x"], d["y"], 2, 2, G(), val=(d["x_val"], d["y_val"]), eval_every=1)

    coords = geometry.naca4("2412", 21)
    return {
        "experiments.run_seed": lambda: e.run_seed(
            _geo_cfg(), 1, e.pretrain(_geo_cfg(), 0)[0], _geo_pool()
        ),
        "experiments.pretrain_data": lambda: e.pretrain_data(_geo_cfg(), 1),
        "experiments.labelled_data": lambda: e.labelled_data(_geo_cfg(), 1, _geo_pool()),
        "experiments.train": train,
        "experiments.make_model": lambda: e.make_model(_geo_cfg(), 3, 1),
        "experiments.pretrain": lambda: e.pretrain(_geo_cfg(), 1),
        "experiments.run_arm": lambda: e.run_arm(_geo_cfg(), data(), 2, 1, curve=True),
        "geometry.rounded_polygon": lambda: geometry.rounded_polygon(5, 0.2, G(), 21),
        "lifting.lift": lambda: lifting.lift(coords, 16, 8, 2, 2, seed=1),
        "lifting.sample_surface": lambda: lifting.sample_surface(coords, 8, G()),
        "lifting.sample_volume": lambda: lifting.sample_volume(coords, 8, G()),
        "model.Transolver": lambda: model.Transolver(8, 3, 8, 1, 2, 4, 1, generator=G()),
    }


# Chapter 09 ldr; the lm, md and physio substrates; Chapter 14 prime_attention


def _ldr_cfg():
    from icml26_lit.ldr.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_data=[8, 16], n_seeds=1, headline_seeds=1, steps=2, batch=8, n_layers=2)
    return cfg.update(hidden=8, n_biased=8, n_eval=16, n_test=16, zuko=False) or cfg


def _ldr_calls():
    from icml26_lit.ldr import experiments as e
    from icml26_lit.ldr import kernels, targets
    from icml26_lit.ldr import objectives as o

    target = targets.DoubleWell2D()
    x = target.sample(16, G(3))

    def zuko():
        with torch.random.fork_rng(devices=[]):  # its constructor takes no generator
            torch.manual_seed(0)
            return e.ZukoNSF(2, 2, 8, 4)

    def buffer():
        b = o.ReplayBuffer(8)
        b.add(x, target.energy(x))
        return b.sample(4, G())

    def fit():
        flow = _flow()
        return flow, o.fit(
            flow, "nll+ldr", x=x, u=target.energy(x), steps=2, batch=8, generator=G()
        )

    args = ("nll+ldr", x, target.energy(x), None, 1.0, "var", "batch", None, 2, 8, 1e-3, 0.0)
    return {
        "experiments.run_experiment": lambda: untimed(e.run_experiment(_ldr_cfg(), 0, "cpu")),
        "experiments.ZukoNSF.sample_and_log_prob": lambda: zuko().sample_and_log_prob(4, G()),
        "experiments.experiment_units": lambda: e.experiment_units(_ldr_cfg(), 0),
        "experiments.training_data": lambda: e.training_data(target, 4, 1),
        "kernels.make_spline_inputs": lambda: kernels.make_spline_inputs(
            (4, 3), torch.float64, G()
        ),
        "objectives.ReplayBuffer.sample": buffer,
        "objectives.check_fit_args": lambda: o.check_fit_args(_flow(), *args, G()),
        "objectives.evaluate": lambda: o.evaluate(_flow(), target, 16, G(), x_test=x, x_data=x),
        "objectives.fit": fit,
        "objectives.reverse_kl_loss": lambda: o.reverse_kl_loss(_flow(), target.energy, 4, G()),
        "targets.ManyWell.sample": lambda: targets.ManyWell(2).sample(4, G()),
    }


def _lm_calls():
    from icml26_lit.lm import model

    def lm():
        return model.TinyLM(12, d_model=8, n_layers=1, n_heads=2, max_len=16, generator=G())

    return {
        "model.TinyLM": lm,
        "model.generate": lambda: model.generate(
            lm(), ids=torch.ones(2, 3, dtype=torch.long), max_new_tokens=3, generator=G(1)
        ),
    }


def _md_calls():
    from icml26_lit.md import chain, langevin

    def baoab():
        md = langevin.BAOAB(lambda p: (-(p**2).sum(), -2 * p), generator=G())
        s = md.init(torch.ones(3, 3))
        return md.step(s)

    return {
        "chain.bead_chain": lambda: chain.bead_chain(6, 2, seed=1, fold_steps=5),
        "langevin.BAOAB": baoab,
    }


def _physio_calls():
    from icml26_lit.physio import ecg, noise

    labels = ("sinus", "LVH")
    return {
        "ecg.draw_beats": lambda: ecg.draw_beats(ecg.draw_parameters(labels, R(5)), 3.0, R()),
        "ecg.draw_in_region": lambda: ecg.draw_in_region(0.1, 0.3, (0.12, 0.2), 0.3, R()),
        "ecg.draw_parameters": lambda: ecg.draw_parameters(labels, R()),
        "ecg.random_labels": lambda: ecg.random_labels(R(), 0.5),
        "ecg.rasterise_ecg": lambda: ecg.rasterise_ecg(
            torch.zeros(12, 200), 100.0, 24, 32, rng=R()
        ),
        "ecg.simulate_record": lambda: ecg.simulate_record(labels, R(), duration=2.5),
        "noise.ar1_noise": lambda: noise.ar1_noise((2, 8), 0.5, generator=G()),
        "noise.pink_noise": lambda: noise.pink_noise((2, 8), generator=G()),
    }


def _pa_cfg():
    from icml26_lit.prime_attention.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(steps=2, batch=4, curve_every=1, curve_windows=8, eval_batch=64, n_steps=400)
    return cfg.update(arms=["prime_48", "standard_30"]) or cfg


@functools.cache
def _pa_data():
    from icml26_lit.prime_attention.experiments import load_data

    return load_data(400, 0.1, 0)


def _pa_calls():
    from icml26_lit.prime_attention import data, filters, kernels, model
    from icml26_lit.prime_attention import experiments as e

    lr = {"prime_48": 1e-3, "standard_30": 1e-3}
    secs = ("seconds", "cpu_seconds")
    return {
        "experiments.run_seed": lambda: {
            k: drop(v, *secs) if isinstance(v, dict) else v
            for k, v in e.run_seed(_pa_cfg(), 0, lr, 0.1).items()
        },
        "data.simulate_pair_laws": lambda: data.simulate_pair_laws(64, seed=1),
        "data.simulate_var2": lambda: data.simulate_var2(64, seed=1),
        "experiments.load_data": lambda: e.load_data(400, 0.1, 1),
        "experiments.train_arm": lambda: drop(
            e.train_arm(_pa_data(), "prime_48", _pa_cfg(), 0, 1e-3, backend="torch"), *secs
        ),
        "filters.PrimeFilters": lambda: filters.PrimeFilters(2, 3, 4, generator=G()),
        "kernels.make_attention_inputs": lambda: kernels.make_attention_inputs(
            (1, 2, 3, 4, True), torch.float32, G()
        ),
        "model.PrimeAttentionLayer": lambda: model.PrimeAttentionLayer(3, 8, 2, generator=G()),
        "model.PrimeITransformer": lambda: model.PrimeITransformer(
            3, 8, 2, d_model=8, n_layers=1, n_heads=2, d_ff=8, generator=G()
        ),
    }


# Chapter 03 ro_hnn and the sim substrate


def _ro_cfg():
    from icml26_lit.ro_hnn.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_pendula=4, dims=[4, 3, 2], n_train=2, train_steps=6, n_test=1, test_steps=8)
    return cfg.update(horizon=2, batch=4, steps=2) or cfg


def _ro_calls():
    from icml26_lit.ro_hnn import (
        autoencoder as ae,
    )
    from icml26_lit.ro_hnn import (
        biorthogonal as bo,
    )
    from icml26_lit.ro_hnn import (
        experiments as e,
    )
    from icml26_lit.ro_hnn import (
        latent_hnn,
        model,
    )
    from icml26_lit.ro_hnn import (
        pendulum_chain as pc,
    )

    chain = pc.PendulumChain(3)

    def train():
        m = e.new_model(_ro_cfg(), "rohnn", 0)
        w = e.seed_data(_ro_cfg(), 0)["windows"]
        return m, model.train_model(m, w, 2, batch=4, generator=G())

    return {
        "experiments.run_seed": lambda: drop(e.run_seed(_ro_cfg(), 1), "cpu_s"),
        "autoencoder.BiorthogonalAutoencoder": lambda: ae.BiorthogonalAutoencoder(
            [4, 2], generator=G()
        ),
        "autoencoder.SymplecticAutoencoder": lambda: ae.SymplecticAutoencoder(
            [4, 2], generator=G()
        ),
        "biorthogonal.Biorthogonal.random": lambda: bo.Biorthogonal().random(4, 2, G()),
        "biorthogonal.BiorthogonalLayer": lambda: bo.BiorthogonalLayer(4, 2, G()),
        "experiments.new_model": lambda: [e.new_model(_ro_cfg(), a, 1) for a in e.ARMS],
        "experiments.seed_data": lambda: e.seed_data(_ro_cfg(), 1),
        "latent_hnn.LatentHNN": lambda: latent_hnn.LatentHNN(2, width=8, generator=G()),
        "model.LatentNODE": lambda: model.LatentNODE(8, hidden=4, latent=2, width=8, generator=G()),
        "model.MLPHNN": lambda: model.MLPHNN(8, 2, hidden=4, width=8, generator=G()),
        "model.ROHNN": lambda: model.ROHNN([8, 4, 2], width=8, generator=G()),
        "model.train_model": train,
        "pendulum_chain.PendulumChain.initial_states": lambda: chain.initial_states(2, G()),
        "pendulum_chain.PendulumChain.trajectories": lambda: chain.trajectories(
            2, 3, 0.05, 0.01, generator=G()
        ),
    }


def _sim_calls():
    from icml26_lit.sim import beta_plane, integrators, navier_stokes

    return {
        "beta_plane.BetaPlane.random_field": lambda: beta_plane.BetaPlane(8, 16).random_field(
            2, G()
        ),
        "integrators.euler_maruyama": lambda: integrators.euler_maruyama(
            lambda t, y: -y, lambda t, y: 0.5, torch.ones(3, 2), 0.0, 1.0, 4, generator=G()
        ),
        "navier_stokes.NavierStokes2D.random_field": lambda: navier_stokes.NavierStokes2D(
            8, 0.01
        ).random_field(1),
    }


# Chapter 13 sh2rfssm


def _sh_cfg():
    from icml26_lit.sh2rfssm.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(hidden=4, n_layers=1, bm_epochs=1, jv_epochs=1, jv_batch=32, n_seeds=1)
    cfg.update(tone_seeds=1, tone_length=32, tone_train=4, tone_test=4, tone_epochs=1)
    cfg.update(tone_batch=4, tone_burst=8, tone_hidden=4, reg_length=16, reg_train=4)
    return cfg.update(reg_epochs=1, tone_arms=("sh2rfssm", "lru", "lif")) or cfg


def _sh_calls():
    from icml26_lit.sh2rfssm import experiments as e
    from icml26_lit.sh2rfssm import layer

    series = [np.linspace(0, 1, 24).reshape(12, 2) + k for k in range(6)]
    labels = np.array([0, 1, 0, 1, 0, 1])
    data = lambda: e.tone_data(_sh_cfg(), 0)  # noqa: E731
    secs = ("seconds",)

    def local():
        with e.local_seed(3):
            return torch.rand(2)

    def train():
        m = e.LRUNet(1, 4, hidden=4, n_layers=1, seed=0)
        X, y = e.make_tone_bursts(4, 16, burst=8, seed=0)
        return m, e.train_classifier(m, X, y, 1, 1e-2, seed=1)

    return {
        "experiments.LRULayer": lambda: e.LRULayer(2, 4, generator=G()),
        "experiments.LRUNet": lambda: e.LRUNet(2, 3, hidden=4, n_layers=1, seed=1),
        "experiments.experiment_units": lambda: e.experiment_units(_sh_cfg(), 0),
        "experiments.local_seed": local,
        "experiments.make_pulse_rate": lambda: e.make_pulse_rate(2, 16, seed=1),
        "experiments.make_sh2rfssm": lambda: e.make_sh2rfssm(_sh_cfg(), 2, 3, 1),
        "experiments.make_tone_bursts": lambda: e.make_tone_bursts(2, 16, burst=8, seed=1),
        "experiments.resplit_japanese_vowels": lambda: e.resplit_japanese_vowels(
            series, labels, 4, 1, length=2
        ),
        "experiments.run_lif": lambda: drop(e.run_lif(_sh_cfg(), data(), 0, 1, 1e-2), *secs),
        "experiments.run_lru": lambda: drop(e.run_lru(_sh_cfg(), data(), 0, 1, 1e-2), *secs),
        "experiments.run_regression": lambda: e.run_regression(_sh_cfg(), 1),
        "experiments.run_sh2rfssm": lambda: drop(
            e.run_sh2rfssm(_sh_cfg(), data(), 0, 1, 1e-2), *secs
        ),
        "experiments.run_tone": lambda: drop(e.run_tone(_sh_cfg(), "lru", 0, 1e-2, 1.0), *secs),
        "experiments.tone_data": lambda: e.tone_data(_sh_cfg(), 1),
        "experiments.train_classifier": train,
        "layer.HRFLayer": lambda: layer.HRFLayer(2, 4, generator=G()),
        "layer.KernelRegressor": lambda: layer.KernelRegressor(4, generator=G()),
        "layer.SH2RFSSM": lambda: layer.SH2RFSSM(2, 3, hidden=4, n_layers=1, seed=1),
    }


# Chapter 15 sleep_eeg


def _se_cfg():
    from icml26_lit.sleep_eeg.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_translator=1, n_labelled=3, n_test=1, hours=2 / 3, tok_steps=2, tok_batch=16)
    cfg.update(n_codes=8, code_dim=4, d=8, n_layers=1, n_heads=2, steps=2, batch=2, n_samples=2)
    return cfg.update(decode_steps=2, net_lrs=(1e-3,), net_steps=2, net_batch=4) or cfg


@functools.cache
def _se_data():
    from icml26_lit.sleep_eeg import experiments as e

    d = e.seed_data(_se_cfg(), 0)
    return d, *e._chunks(d, "translator")


def _se_calls():
    from icml26_lit.sleep_eeg import (
        downstream as ds,
    )
    from icml26_lit.sleep_eeg import (
        experiments as e,
    )
    from icml26_lit.sleep_eeg import (
        generator as gen,
    )
    from icml26_lit.sleep_eeg import (
        simulator as sim,
    )
    from icml26_lit.sleep_eeg import (
        tokenizer as tk,
    )

    cfg = _se_cfg
    data = lambda: _se_data()[0]  # noqa: E731
    win = lambda: _se_data()[1]  # noqa: E731
    spec = lambda: _se_data()[2]  # noqa: E731
    x = np.linspace(0, 1, 3 * 4 * 2).reshape(3, 4, 2) + np.arange(3)[:, None, None]
    y = np.array([[0, 1, 2, 0], [1, 2, 0, 1], [2, 0, 1, 2]])

    def r2e():
        return gen.RespirationToEEG(8, win().shape[-1], 8, 1, 2, generator=G())

    def lap():
        return gen.LaplaceControl(160, win().shape[-1], 8, 1, 2, generator=G())

    def tok_fit():
        t = tk.SpectrogramTokenizer(8, 4, hidden=8, generator=G())
        return t, tk.fit_tokenizer(t, spec().reshape(-1, 5, 32), 2, 16, generator=G(1))

    def translator_fit():
        m = lap()
        return m, gen.fit_translator(m, win(), spec().flatten(-2), 2, 2, generator=G(1))

    tokens = lambda: torch.zeros(len(win()), 80, dtype=torch.long)  # noqa: E731
    return {
        "downstream.BreathingNet": lambda: ds.BreathingNet(2, 4, generator=G()),
        "downstream.fit_breathing_net": lambda: ds.fit_breathing_net(
            np.random.default_rng(0).normal(size=(3, 2, 40)).astype(np.float32),
            y[:, :2],
            lrs=(1e-3,),
            steps=2,
            batch=2,
            seed=1,
        ),
        "downstream.fit_stager": lambda: ds.fit_stager(x, y, Cs=(1.0,), seed=1),
        "experiments.breathing_net": lambda: e.breathing_net(cfg(), data(), 1),
        "experiments.climatology_energy_score": lambda: e.climatology_energy_score(
            spec(), spec(), 2, G()
        ),
        "experiments.fit_laplace": lambda: e.fit_laplace(cfg(), win(), spec(), 1e-3, 1),
        "experiments.fit_token_side": lambda: e.fit_token_side(cfg(), win(), spec(), 8, 1e-3, 1),
        "experiments.seed_data": lambda: e.seed_data(cfg(), 1),
        "experiments.translate": lambda: e.translate(cfg(), lap(), win(), 1),
        "generator.LaplaceControl": lap,
        "generator.LaplaceControl.loss": lambda: lap().loss(win(), spec().flatten(-2), G()),
        "generator.LaplaceControl.sample": lambda: lap().sample(win(), 2, G()),
        "generator.RespirationToEEG": r2e,
        "generator.RespirationToEEG.loss": lambda: r2e().loss(win(), tokens(), G()),
        "generator.fit_translator": translator_fit,
        "generator.generate_tokens": lambda: gen.generate_tokens(
            r2e(), win(), 2, greedy=False, generator=G(1)
        ),
        "simulator.mixed_stages": lambda: sim.mixed_stages(torch.tensor([0, 1, 2]), 4, G()),
        "simulator.simulate_cohort": lambda: sim.simulate_cohort(1, 1 / 6, seed=1),
        "simulator.simulate_eeg": lambda: sim.simulate_eeg(
            torch.tensor([0, 2, 4]), 30.0, True, 1.0, generator=G()
        ),
        "simulator.simulate_hypnogram": lambda: sim.simulate_hypnogram(6, generator=G()),
        "simulator.simulate_respiration": lambda: sim.simulate_respiration(
            torch.tensor([0, 2, 4]), 30.0, False, generator=G()
        ),
        "tokenizer.SpectrogramTokenizer": lambda: tk.SpectrogramTokenizer(
            8, 4, hidden=8, generator=G()
        ),
        "tokenizer.VectorQuantizer": lambda: tk.VectorQuantizer(8, 4, generator=G()),
        "tokenizer.fit_tokenizer": tok_fit,
    }


# Chapter 01 slepian


def _sl_cfg():
    from icml26_lit.slepian.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_train=32, n_test=16, epochs=1, batch_size=16, n_seeds=1, L_global=2)
    cfg.update(L_slepian=4, L_sh_high=4, knn_k=2, encoders="sh,slepian,cartesian", n_class=32)
    return cfg.update(pilot_seed=5, max_epochs=2) or cfg


def _sl_calls():
    from icml26_lit.slepian import data
    from icml26_lit.slepian import experiments as e

    cpu = torch.device("cpu")
    f = torch.linspace(-1, 1, 24).reshape(8, 3)
    y = torch.linspace(0, 1, 8)
    evals = {"cap": (f[:4], y[:4])}

    def pref(c):
        return e.run_prefecture_experiment(c, cpu, 1, verbose=False)

    return {
        "experiments.run_experiment": lambda: untimed(e.run_experiment(_sl_cfg(), 0, "cpu")),
        "data.make_density_task": lambda: data.make_density_task(8, 4, seed=1),
        "data.make_prefecture_task": lambda: data.make_prefecture_task(8, seed=1),
        "data.sample_cap": lambda: data.sample_cap(4, 10.0, (36.0, 138.0), G()),
        "data.sample_sphere": lambda: data.sample_sphere(4, G()),
        "experiments.experiment_units": lambda: e.experiment_units(_sl_cfg(), 0),
        "experiments.run_density_experiment": lambda: untimed(
            e.run_density_experiment(_sl_cfg(), cpu, 1, verbose=False)
        ),
        "experiments.run_pilot": lambda: untimed(e.run_pilot(_sl_cfg(), cpu, 1)),
        "experiments.run_prefecture_experiment": lambda: untimed(pref(_sl_cfg())),
        "experiments.train_head": lambda: e.train_head(f, y, evals, epochs=2, batch_size=4, seed=1),
    }


# Chapter 10 tfmpe


def _tf_cfg():
    from icml26_lit.tfmpe.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_steps=2, npe_epochs=1, n_test=2, n_post=10, n_c2st=1, n_sbc=2, sbc_samples=4)
    cfg.update(sample_steps=2, batch_size=16, latent_dim=8, n_encoder=1, n_heads=2, n_seeds=1)
    return cfg.update(budgets=[60], sites=[2]) or cfg


_TF_MODEL = dict(latent_dim=8, n_encoder=1, n_heads=2, label_dim=4, pos_dim=4)
_TF_FIT = dict(n_steps=2, batch_size=16)


def _tf_direct():
    from icml26_lit.tfmpe.pipelines import fit_direct
    from icml26_lit.tfmpe.tasks import HierarchicalGaussian, SimulationBudget

    task = HierarchicalGaussian(n_sites=2)
    post = fit_direct(
        task, SimulationBudget(60), 2, model_kwargs=_TF_MODEL, fit_kwargs=_TF_FIT, generator=G()
    )
    return task, post


def _tf_calls():
    from icml26_lit.tfmpe import experiments as e
    from icml26_lit.tfmpe import model, tasks
    from icml26_lit.tfmpe import pipelines as pl

    hg, sir = tasks.HierarchicalGaussian(n_sites=2), tasks.HierarchicalSIR(n_sites=2, n_steps=20)
    obs = lambda: {"y": hg.simulate(hg.sample_prior(2, generator=G(1)), generator=G(2))["y"]}  # noqa: E731
    budget = lambda: tasks.SimulationBudget(60)  # noqa: E731

    def fit_tf():
        task, post = _tf_direct()
        return post

    def tf_loss():
        task, post = _tf_direct()
        p = task.sample_prior(4, generator=G(3))
        cond, targ = post._split(p, task.simulate(p, generator=G(4)))
        return post.loss(post._tokens(cond, targ), G(5))

    def sbi(method):
        return e.fit_sbi(hg, budget(), 2, method, epochs=1, batch_size=16, generator=G())

    def pf():
        return pl.fit_posterior_factorised(
            hg, budget(), 2, model_kwargs=_TF_MODEL, fit_kwargs=_TF_FIT, generator=G()
        )

    def tf_of(method):
        return e.fit_method(method, hg, 2, 60, _tf_cfg(), seed=1)[0]

    def sample(post):
        return post.sample(obs(), 3, n_steps=2, generator=G(6))

    return {
        "experiments.PriorPosterior": lambda: e.PriorPosterior(hg, 2, seed=1).sample(obs(), 3),
        "experiments.SbiPosterior.sample": lambda: sample(sbi("npe")),
        "experiments.evaluate": lambda: e.evaluate(e.PriorPosterior(hg, 2), hg, 2, _tf_cfg(), 1),
        "experiments.experiment_units": lambda: e.experiment_units(_tf_cfg(), 0),
        "experiments.fit_method": lambda: sample(tf_of("LF-TFMPE")),
        "experiments.fit_sbi": lambda: sample(sbi("fmpe")),
        "model.TFMPE": lambda: model.TFMPE({"mu": 0, "theta": 1, "y": 2}, **_TF_MODEL, seed=1),
        "model.TFMPE.fit": fit_tf,
        "model.TFMPE.loss": tf_loss,
        "model.TFMPE.sample": lambda: sample(fit_tf()),
        "model.VelocityTransformer": lambda: model.VelocityTransformer(
            3, 8, 1, 2, label_dim=4, pos_dim=4, generator=G()
        ),
        "model.init_parameters": lambda: _init(model.init_parameters),
        "pipelines.PFPosterior.sample": lambda: sample(pf()),
        "pipelines.c2st": lambda: pl.c2st(
            torch.randn(20, 2, generator=G(1)),
            torch.randn(20, 2, generator=G(2)),
            seed=1,
            n_folds=2,
        ),
        "pipelines.fit_direct": lambda: sample(_tf_direct()[1]),
        "pipelines.fit_likelihood_factorised": lambda: sample(
            pl.fit_likelihood_factorised(
                hg,
                budget(),
                2,
                model_kwargs=_TF_MODEL,
                surrogate_kwargs=_TF_MODEL,
                fit_kwargs=_TF_FIT,
                surrogate_fit_kwargs=_TF_FIT,
                sample_steps=2,
                generator=G(),
            )[0]
        ),
        "pipelines.fit_posterior_factorised": lambda: sample(pf()),
        "pipelines.sbc_ranks": lambda: pl.sbc_ranks(
            lambda o, f, m, n: e.PriorPosterior(hg, 2).sample(o, n), hg, 2, 2, 4, generator=G()
        ),
        "pipelines.stick_breaking_sizes": lambda: pl.stick_breaking_sizes(10, 3, G()),
        "tasks.HierarchicalGaussian.sample_functional_inputs": lambda: tasks.HierarchicalGaussian(
            2, functional=True
        ).sample_functional_inputs(2, generator=G()),
        "tasks.HierarchicalGaussian.sample_local": lambda: hg.sample_local(
            hg.sample_prior(2, generator=G(1)), 2, G()
        ),
        "tasks.HierarchicalGaussian.sample_posterior": lambda: hg.sample_posterior(
            obs()["y"][0], 3, generator=G()
        ),
        "tasks.HierarchicalGaussian.sample_prior": lambda: hg.sample_prior(2, generator=G()),
        "tasks.HierarchicalGaussian.simulate": lambda: hg.simulate(
            hg.sample_prior(2, generator=G(1)), generator=G()
        ),
        "tasks.HierarchicalSIR.sample_functional_inputs": lambda: sir.sample_functional_inputs(
            2, generator=G()
        ),
        "tasks.HierarchicalSIR.sample_local": lambda: sir.sample_local(
            sir.sample_prior(2, generator=G(1)), 2, G()
        ),
        "tasks.HierarchicalSIR.sample_prior": lambda: sir.sample_prior(2, generator=G()),
        "tasks.HierarchicalSIR.simulate": lambda: sir.simulate(
            sir.sample_prior(2, generator=G(1)),
            sir.sample_functional_inputs(2, generator=G(2)),
            generator=G(),
        ),
    }


# Chapter 08 triforces and Chapter 19 verbalized_persuasion


def _tri_cfg():
    from icml26_lit.triforces.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_unlabelled=4, n_labels=[3], n_test=2, ssl_steps=1, steps=1, batch=2, d=8)
    return cfg.update(arms_big=["A", "B", "A_pyg"], arms_small=["A"], max_atoms=4) or cfg


@functools.cache
def _tri_data():
    from icml26_lit.triforces.alloys import make_alloy_dataset

    return make_alloy_dataset(4, 0, max_atoms=4)


def _tri_calls():
    from icml26_lit.triforces import alloys, composition, model, ssl, structure
    from icml26_lit.triforces import experiments as e

    ft = importlib.import_module("icml26_lit.triforces.finetune")  # not the function
    tri = lambda: model.TriForces(8, backend="torch", generator=G())  # noqa: E731
    x = torch.linspace(-1, 1, 24).reshape(6, 4)

    def ssl_loss():
        m = tri()
        return ssl.ssl_loss(m, ssl.SSLHeads(8, generator=G()), _tri_data()[:2], G(1))

    def pre():
        m = tri()
        return m, ssl.pretrain(m, _tri_data(), 1, 2, generator=G(1))

    def fine():
        m = tri()
        return m, ft.finetune(m, _tri_data(), 1, 2, generator=G(1))

    return {
        "experiments.run_seed": lambda: drop(e.run_seed(1, _tri_cfg()), "ssl_s"),
        "alloys.make_alloy_dataset": lambda: alloys.make_alloy_dataset(2, 1, max_atoms=4),
        "alloys.random_alloy": lambda: alloys.random_alloy(R(), 4),
        "composition.CompositionStream": lambda: composition.CompositionStream(8, 2, 1, G()),
        "composition.init_parameters": lambda: _init(composition.init_parameters),
        "experiments.fit_arm": lambda: e.fit_arm(
            e.make_arm("A", 0, _tri_cfg()), _tri_data()[:3], _tri_data()[3:], 1e-3, 1, _tri_cfg()
        ),
        "experiments.make_arm": lambda: e.make_arm("B", 1, _tri_cfg()),
        "experiments.make_seed_data": lambda: e.make_seed_data(1, _tri_cfg()),
        "experiments.make_unlabelled": lambda: e.make_unlabelled(2, 1, max_atoms=4),
        "experiments.pretrained": lambda: e.pretrained(1, _tri_data(), _tri_cfg()),
        "finetune.finetune": fine,
        "model.InteractionStream": lambda: model.InteractionStream(8, 4, n_layers=1, generator=G()),
        "model.PygSchNetStream": lambda: model.PygSchNetStream(8, 4, n_layers=1, generator=G()),
        "model.TriForces": tri,
        "ssl.SSLHeads": lambda: ssl.SSLHeads(8, generator=G()),
        "ssl.make_view": lambda: ssl.make_view(_tri_data()[:2], G()),
        "ssl.pretrain": pre,
        "ssl.random_rotation": lambda: ssl.random_rotation(G()),
        "ssl.sigreg": lambda: ssl.sigreg(x, n_slices=8, generator=G()),
        "ssl.ssl_loss": ssl_loss,
        "structure.StructuralStream": lambda: structure.StructuralStream(
            8, 2, 2, n_layers=1, backend="torch", generator=G()
        ),
    }


def _vp_cfg():
    from icml26_lit.verbalized_persuasion.experiments import CONFIG

    cfg = CONFIG.get("ci")
    cfg.update(n_letters=16, d_model=8, n_layers=1, n_heads=2, steps=2, batch=4, n_iters=1)
    return cfg.update(n_rollouts=4, n_starts=1, n_final=4, n_test=4) or cfg


def _vp_calls():
    from icml26_lit.verbalized_persuasion import experiments as e
    from icml26_lit.verbalized_persuasion import receiver

    pp = importlib.import_module("icml26_lit.verbalized_persuasion.prompt_psro")  # not the function

    rx = lambda: receiver.ReceiverLM(8, 1, 2, generator=G())  # noqa: E731

    def fit():
        m = rx()
        return m, m.fit(receiver.make_corpus(8, 0.2, G(1)), 2, 4, 1e-3, G(2))

    return {
        "experiments.run_seed": lambda: drop(
            e.run_seed(_vp_cfg(), 1, 1e-3, 0.2), "cpu_s", "seconds"
        ),
        "experiments.receiver_error": lambda: e.receiver_error(rx(), 4, 0.2, G(1)),
        "experiments.train_receiver": lambda: e.train_receiver(_vp_cfg(), 1, 1e-3, 0.2),
        "prompt_psro.Rollouts": lambda: pp.Rollouts(3, G()),
        "prompt_psro.prompt_psro": lambda: pp.prompt_psro(
            None, pp.Rollouts(3, G(1)), n_iters=1, n_starts=1, generator=G()
        ),
        "prompt_psro.two_stage_psro": lambda: pp.two_stage_psro(
            pp.Rollouts(3, G(1)), n_iters=1, n_starts=1, generator=G()
        ),
        "receiver.ReceiverLM": rx,
        "receiver.ReceiverLM.fit": fit,
        "receiver.make_corpus": lambda: receiver.make_corpus(4, 0.2, G()),
    }


CALLS: dict = {}
for _slug, _calls in [
    ("afr_net", _afr_calls),
    ("antic", _antic_calls),
    ("core", _core_calls),
    ("dkmp", _dkmp_calls),
    ("ecg_r1", _ecg_calls),
    ("emformer", _emf_calls),
    ("example", _example_calls),
    ("flashschnet", _fs_calls),
    ("flows", _flows_calls),
    ("ftrl", _ftrl_calls),
    ("functional_kl", _fkl_calls),
    ("gcn_sr", _sr_calls),
    ("geopt", _geo_calls),
    ("ldr", _ldr_calls),
    ("lm", _lm_calls),
    ("md", _md_calls),
    ("physio", _physio_calls),
    ("prime_attention", _pa_calls),
    ("ro_hnn", _ro_calls),
    ("sim", _sim_calls),
    ("sh2rfssm", _sh_calls),
    ("sleep_eeg", _se_calls),
    ("slepian", _sl_calls),
    ("tfmpe", _tf_calls),
    ("triforces", _tri_calls),
    ("verbalized_persuasion", _vp_calls),
]:
    CALLS.update({f"icml26_lit.{_slug}.{k}": v for k, v in _calls().items()})

# Qualified name -> why it is not called here.
EXCUSED: dict[str, str] = {
    "icml26_lit.core.scale.seed_everything": "seeding the global generators is its purpose",
    "icml26_lit.core.claims.record_curve": "writes a results file; its seed is the run's label, "
    "stored as given, nothing is drawn",
    # whole runs, seconds each even at the smallest sizes; the functions they compose are called
    "icml26_lit.tfmpe.experiments.run_experiment": "every method fitted and scored, a C2ST "
    "random forest per score (~5 s at the smallest sizes); fit_method, evaluate and "
    "PriorPosterior are called here",
    "icml26_lit.flashschnet.experiments.run_experiment": "calls memory_table per seed and the "
    "Langevin runs (~4 s at the smallest sizes); its parts are called here",
    "icml26_lit.flashschnet.experiments.memory_table": "a measurement: a full gc.collect around "
    "each rung's force call (~2 s per call in a loaded process); its weights come from "
    "make_model and pyg_schnet, both called here",
    "icml26_lit.sleep_eeg.experiments.run_seed": "one seed's whole run, stagers' cross-validation "
    "included (~3 s at the smallest sizes); seed_data, breathing_net, fit_laplace, "
    "fit_token_side, translate and climatology_energy_score are called here",
    "icml26_lit.sh2rfssm.experiments.run_minirocket": "aeon's MiniRocket compiles its numba "
    "kernels on first use (~20 s in a fresh environment); it restores NumPy's global state, "
    "which MiniRocket reseeds, around fit and predict",
    "icml26_lit.sh2rfssm.experiments.run_experiment": "reads BasicMotions and JapaneseVowels and "
    "runs MiniRocket (see run_minirocket); run_sh2rfssm, run_tone and run_regression are called "
    "here",
}


def test_every_seeded_callable_is_called_or_excused():
    found = set(seeded_callables())
    listed = set(CALLS) | set(EXCUSED)
    assert not set(CALLS) & set(EXCUSED), f"both called and excused: {set(CALLS) & set(EXCUSED)}"
    assert not found - listed, (
        "seeded callables neither in CALLS nor in EXCUSED (add a tiny call, or an excuse with its "
        f"reason): {sorted(found - listed)}"
    )
    assert not listed - found, f"listed but no longer exported or seeded: {sorted(listed - found)}"
    assert all(isinstance(r, str) and len(r) > 20 for r in EXCUSED.values())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_seeded_call_leaves_the_global_generators_alone_and_ignores_them(name):
    outs = []
    for s in (1, 2):
        _seed_globally(s)
        before = states()
        outs.append(CALLS[name]())
        m = moved(before, states())
        assert not m, f"{name} moved the global {' and '.join(m)} generator(s)"
    d = difference(*outs)
    assert d is None, f"{name} gave different outputs under two global generator states: {d}"
