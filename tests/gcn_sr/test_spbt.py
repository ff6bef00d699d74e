"""Chapter 18: the SPBT scaffold, validity, the tree/fill bijection, sympy conversion."""

import pytest
import sympy as sp
import torch

from icml26_lit.gcn_sr.spbt import (
    SPBT,
    TOKEN_ID,
    VAR_SYMBOLS,
    VOCAB,
    X1,
    Library,
    check_fill,
    count_trees,
    decode,
    encode,
    from_tree,
    is_valid,
    random_tree,
    to_tree,
)


def test_heap_layout_and_adjacency():
    T = SPBT(4)
    assert T.n_slots == 15
    for i in range(1, 15):
        p = int(T.parent[i])
        assert i in (2 * p + 1, 2 * p + 2)
    A = T.adjacency(torch.float64)
    torch.testing.assert_close(A, A.T)
    # D^-1/2 (A+I) D^-1/2 has largest eigenvalue exactly 1 (eigenvector D^1/2 1)
    assert abs(torch.linalg.eigvalsh(A).max().item() - 1.0) < 1e-12


@pytest.mark.parametrize("depth", [0, -1, 1.5, True, "3"])
def test_bad_depth(depth):
    with pytest.raises(ValueError, match="depth must be an integer >= 1"):
        SPBT(depth)


@pytest.mark.parametrize(
    "lib,depth",
    [
        (Library(binary=("add",), unary=("sin",)), 3),
        (Library(binary=("add", "mul"), unary=(), n_vars=2), 3),
        (Library(binary=("sub",), unary=("exp", "log"), const=True), 3),
        (Library(binary=("add",), unary=("cos",)), 2),
    ],
)
def test_valid_fill_count_matches_brute_force(lib, depth):
    ids = torch.tensor([TOKEN_ID[n] for n in lib.names])
    S = 2**depth - 1
    grid = torch.cartesian_prod(*[ids] * S).reshape(-1, S)
    assert int(is_valid(grid, lib).sum()) == count_trees(depth, lib)


def test_round_trip_random_trees(fresh_seed):
    g = torch.Generator().manual_seed(fresh_seed)
    lib = Library(n_vars=2)
    for depth in (1, 3, 5):
        for _ in range(40):
            t = random_tree(depth, lib, g)
            assert bool(is_valid(t, lib))
            assert torch.equal(from_tree(to_tree(t), depth), t)
            assert torch.equal(encode(decode(t, evaluate=False), depth), t)


def test_encode_sympy_expressions():
    x, y = VAR_SYMBOLS[:2]
    for e in (
        x**3 + x**2 + x,
        sp.sin(x**2) * sp.cos(x) - 1,
        sp.log(x + 1) + sp.log(x**2 + 1),
        2 * sp.sin(x) * sp.cos(y),
    ):
        t, c = encode(e, 6, return_constants=True)
        assert sp.simplify(decode(t, c, round_digits=6) - e) == 0


def test_invalid_fills_have_clear_errors():
    good = from_tree(("add", ("x1",), ("sin", ("x1",))), 3)
    bad = good.clone()
    bad[6] = X1
    with pytest.raises(ValueError, match="unary node has a non-empty right child"):
        check_fill(bad)
    bad = good.clone()
    bad[0] = 0
    with pytest.raises(ValueError, match="the root is empty"):
        check_fill(bad)
    bad = good.clone()
    bad[5] = TOKEN_ID["exp"]
    with pytest.raises(ValueError, match="last level"):
        check_fill(bad)
    with pytest.raises(ValueError, match="unknown token id"):
        check_fill(torch.tensor([len(VOCAB), 0, 0]))
    with pytest.raises(ValueError, match="2\\*\\*D - 1 slots"):
        check_fill(torch.tensor([X1, 0]))
    with pytest.raises(ValueError, match="not in the library"):
        check_fill(from_tree(("x2",), 1), Library(n_vars=1))
    with pytest.raises(TypeError, match="integer token ids"):
        check_fill(torch.zeros(3))
    with pytest.raises(ValueError, match="unknown token 'tan'"):
        from_tree(("tan", ("x1",)), 3)
    with pytest.raises(ValueError, match="deeper than depth=2"):
        encode(VAR_SYMBOLS[0] ** 3, 2)
    with pytest.raises(ValueError, match="cannot encode"):
        encode(sp.sqrt(VAR_SYMBOLS[0]), 4)
    with pytest.raises(ValueError, match="unary: unknown token"):
        Library(unary=("tanh",))
