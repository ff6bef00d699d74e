"""Comparing nested results (dicts, lists, floats, tensors) from one process and from many ranks."""

import math


def assert_trees_close(a, b, atol: float = 1e-6, path: str = "") -> None:
    "a and b have the same keys, lengths, strings and integers, and floats and tensors within atol."
    if isinstance(a, dict):
        assert sorted(map(str, a)) == sorted(map(str, b)), path
        for k in a:
            assert_trees_close(a[k], b[k], atol, f"{path}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_trees_close(x, y, atol, f"{path}/{i}")
    elif isinstance(a, float):
        if math.isfinite(a):
            assert math.isclose(a, b, rel_tol=0, abs_tol=atol), (path, a, b)
        else:
            assert a == b or (math.isnan(a) and math.isnan(b)), (path, a, b)
    elif hasattr(a, "shape") and hasattr(a, "double"):  # a tensor
        assert a.shape == b.shape and float((a.double() - b.double()).abs().max()) <= atol, path
    else:
        assert a == b, (path, a, b)
