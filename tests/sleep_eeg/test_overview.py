"The overview's *What each scale runs* table says what the presets run (Chapter 15)."

import pytest

from icml26_lit.sleep_eeg.experiments import CONFIG
from tests._overview import first_number, scale_table


@pytest.mark.parametrize("scale", ["ci", "cpu", "colab", "full"])
def test_seeds_and_steps_match_the_presets(scale):
    row, cfg = scale_table("15_sleep_eeg")[scale], CONFIG.get(scale)
    assert first_number(row[0]) == cfg.n_seeds and first_number(row[1]) == cfg.steps


def test_the_sizes_each_scale_names_run():
    t = scale_table("15_sleep_eeg")
    ci, cpu, colab, full = (CONFIG.get(s) for s in ("ci", "cpu", "colab", "full"))
    assert (
        f"{ci.n_translator} translator, {ci.n_labelled} labelled and {ci.n_test} test" in t["ci"][2]
    )
    assert f"K = {ci.n_codes}, {ci.tok_steps} steps" in t["ci"][2] and not ci.run_pilot
    assert f"d = {ci.d}, {ci.n_layers} layers" in t["ci"][2]
    assert f"breathing network ({ci.net_steps} steps)" in t["ci"][2] and ci.hours == 2.0
    assert f"{cpu.n_translator} translator subjects" in t["cpu"][2] and cpu.run_pilot
    assert f"tokenizer at {cpu.tok_steps} steps" in t["cpu"][2]
    assert f"breathing network at {cpu.net_steps} steps" in t["cpu"][2]
    assert f"seed {cpu.pilot_seed}" in t["cpu"][2] and cpu.pilot_seed >= cpu.n_seeds
    assert (cpu.d, cpu.n_codes, cpu.n_labelled, cpu.k_sweep) == (ci.d, ci.n_codes, 12, ())
    c = colab
    assert (
        f"{c.n_translator} translator, {c.n_labelled} labelled and {c.n_test} test" in t["colab"][2]
    )
    assert f"K = {c.n_codes}, d = {c.d}, {c.n_layers} layers" in t["colab"][2] and c.hours == 8
    assert f"breathing network at {c.net_steps} steps" in t["colab"][2] and c.run_pilot
    f = full
    assert (
        f"{f.n_translator} translator, {f.n_labelled} labelled and {f.n_test} test" in t["full"][2]
    )
    assert f"K = {f.n_codes}, d = {f.d}, {f.n_layers} layers" in t["full"][2]
    assert f"EEG at {f.fs_eeg} Hz" in t["full"][2]
