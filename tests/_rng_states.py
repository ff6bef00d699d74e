"""The global random generators of torch, NumPy and Python's `random`: a snapshot, and which moved.

Imports nothing of the package, so that a fresh interpreter can snapshot the generators before it
imports any module of the book.
"""

import random

import numpy as np
import torch


def states() -> tuple:
    "A snapshot of the three global generators (copies: later draws leave it as it was)."
    n = np.random.get_state()
    return torch.get_rng_state().clone(), (n[0], n[1].copy(), *n[2:]), random.getstate()


def moved(a, b) -> list[str]:
    "The global generators whose state differs between two `states()`."
    out = []
    if not torch.equal(a[0], b[0]):
        out.append("torch")
    if not (a[1][0] == b[1][0] and np.array_equal(a[1][1], b[1][1]) and a[1][2:] == b[1][2:]):
        out.append("numpy")
    if a[2] != b[2]:
        out.append("random")
    return out
