"""Chapter 16: the exercises' checker accepts the references and the solutions shown, and rejects
every curated wrong answer."""

import re

import torch

import icml26_lit.ecg_r1  # noqa: F401  (registers the exercises)
from icml26_lit.core.exercises import EXERCISES, check

NAMES = sorted(n for n in EXERCISES if n.startswith("16."))


def test_three_exercises_registered():
    # the reference, stub and curated wrong answers of every exercise are checked in
    # tests/core/test_exercises.py; the chapter asks for at least two wrong answers each
    assert NAMES == ["16.1", "16.2", "16.3"]
    assert all(len(EXERCISES[n].wrong) >= 2 for n in NAMES)


def _diagnosis(completion, labels):  # the solution shown under exercise 16.1
    m = re.search(r"<answer>(.*?)</answer>", completion, flags=re.S)
    if m is None:
        return 0.0
    text = m.group(1).strip().lower()
    pred = {x.strip() for x in text.split(";") if x.strip()}
    labels = (labels,) if isinstance(labels, str) else labels
    true = {str(x).strip().lower() for x in labels}
    if not pred and not true:
        return 1.0
    if not pred or not true:
        return 0.0
    return len(pred & true) / len(pred | true)


def _advantages(rewards):  # the solution shown under exercise 16.3
    r = rewards.sum(-1)
    std = r.std(1, keepdim=True)
    adv = (r - r.mean(1, keepdim=True)) / (std + 1e-4)
    return adv, std[:, 0] > 1e-6


def test_the_solutions_shown_are_correct():
    assert check("16.1", _diagnosis, quiet=True).status == "correct"
    assert check("16.3", _advantages, quiet=True).status == "correct"


def test_the_str_label_case_is_what_rejects_the_iterated_string():
    ex = EXERCISES["16.1"]
    wrong = ex.wrong[0]
    assert ex.reference("<answer> sinus </answer>", "sinus") == 1.0
    assert wrong("<answer> sinus </answer>", "sinus") == 0.0
    assert wrong("<answer> sinus </answer>", ["sinus"]) == 1.0  # right on a list


def test_a_group_without_spread_is_dropped():
    r = torch.zeros(2, 3, 4, dtype=torch.float64)
    r[1, :, 0] = torch.tensor([0.0, 0.5, 1.0])
    adv, keep = EXERCISES["16.3"].reference(r)
    assert keep.tolist() == [False, True] and adv.dtype == torch.float64
    want = torch.tensor([-0.5, 0.0, 0.5], dtype=torch.float64) / (0.5 + 1e-4)  # std 0.5
    torch.testing.assert_close(adv[1], want)
