"""GPU facts come from one file: `core.bench.gpu_table` renders the committed bench rows, and no
kernels notebook states GPU timings (or their absence) by hand in its markdown."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from icml26_lit.core import bench
from icml26_lit.core.bench import GpuTable, bench_rows, code_status, gpu_table, kernel_code

ROOT = Path(__file__).resolve().parents[2]

# --- the detector of hand-written GPU facts ---------------------------------------------------

CARD = r"\b(?:GPUs?|H100|H200|A100|A10G|L40S|L4|T4|V100|CUDA|card)\b"
GPU = r"(?:a |an |any |the |one )?(?:CUDA )?(?:GPUs?|card|H100|H200|A100|A10G|L40S|L4|T4|V100)\b"
ABSENCE = [  # a GPU timing said to be missing
    r"\bno GPU (?:timings?|numbers?|measurements?|results?|benchmarks?)\b",
    r"\bnone (?:were|was|have been|has been) (?:measured|timed|benchmarked)\b",
    rf"\bnot (?:yet )?(?:been )?(?:measured|timed|benchmarked) on {GPU}",
    rf"\bno (?:timings?|measurements?) (?:exists?\b|yet\b|on {GPU})",
]
NUMBER = r"\d(?:[\d.,]*\d)?"
TIMING = [  # a GPU number, in a sentence that names a card or a GPU
    rf"{NUMBER}\s*(?:ms|µs|us|ns|milliseconds?|microseconds?)\b",
    rf"{NUMBER}\s*(?:x|×)\s+(?:faster|slower|speed-?up)",
    r"\b(?:x|×|times) (?:faster|slower) (?:on|than)\b",
    rf"\bspeed-?ups? of (?:about )?{NUMBER}",
    rf"\b(?:measured|achieved|reached|reaches|sustained|ran at|runs at) (?:about )?{NUMBER}\s*"
    r"(?:GB/s|TB/s|[GT]FLOP/s)",
]


def _sentences(markdown: str) -> list[str]:
    "The sentences of a markdown cell: headings and paragraphs apart, the lines of each joined."
    text = re.sub(r"^(#+ .*)$", r"\1\n", markdown, flags=re.M)
    out = []
    for para in re.split(r"\n\s*\n", text):  # a decimal point does not end a sentence
        out += [s for s in re.split(r"(?<=[.!?])\s+", " ".join(para.split())) if s]
    return out


def gpu_fact(sentence: str) -> str | None:
    "What makes `sentence` a hand-written GPU fact (the matched words), or None."
    for pat in ABSENCE:
        if m := re.search(pat, sentence, re.I):
            return m.group(0)
    if re.search(CARD, sentence):
        for pat in TIMING:
            if m := re.search(pat, sentence, re.I):
                return m.group(0)
    return None


def kernels_notebooks(root: Path) -> dict[Path, str]:
    "{kernels notebook: its chapter number}: each chapter's *kernels notebook and the example's."
    out = {p: p.parent.name[:2] for p in sorted((root / "nbs").glob("[0-9][0-9]_*/*kernels.ipynb"))}
    out = {p: ch for p, ch in out.items() if ch != "00"}
    example = root / "nbs" / "00_core" / "11_example_kernels.ipynb"
    if example.exists():
        out[example] = "00"
    return dict(sorted(out.items()))


def _cells(nb: Path, kind: str) -> list[tuple[int, str]]:
    "(index, source) of the notebook's cells of one kind."
    cells = json.loads(nb.read_text())["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == kind]


def gpu_fact_problems(root: Path) -> list[str]:
    "One line per markdown sentence of a kernels notebook that states a GPU fact by hand."
    out = []
    for nb, _ in kernels_notebooks(root).items():
        for i, md in _cells(nb, "markdown"):
            for s in _sentences(md):
                if hit := gpu_fact(s):
                    out.append(f"{nb.relative_to(root)}, cell {i}: {hit!r} in {s[:160]!r}")
    return out


def missing_gpu_table(root: Path) -> list[str]:
    "Kernels notebooks with no code cell calling gpu_table with their chapter number."
    out = []
    for nb, ch in kernels_notebooks(root).items():
        code = "\n".join(src for _, src in _cells(nb, "code"))
        if not re.search(rf"""\bgpu_table\(\s*["']{ch}["']""", code):
            out.append(f"{nb.relative_to(root)}: no gpu_table({ch!r}) call")
    return out


PLANTED = [  # hand-written GPU facts: each must be caught
    "No GPU timing appears in this chapter unless measured on one.",
    "(No GPU numbers are in this chapter yet: none were measured.)",
    "The kernels have not yet been measured on a GPU.",
    "It ran in 0.37-1.66 ms on the H200.",
    "The fused kernel is 3.6x faster on the H200 than PyTorch.",
    "On a T4 it is 2 times slower than the reference.",
    "The kernel achieved 1,200 GB/s on an H100.",
    "A speed-up of 4.8 on the card.",
]
INTERPRETING = [  # prose that interprets without stating a timing: none may be caught
    "The kernel moves 3x fewer bytes than the reference, so on a GPU it is memory-bound.",
    "On a CPU the benchmark prints the analytic model: 12.9 GFLOP and 132 MB per call.",
    "Why can the kernel lose on a card? PyTorch's cuBLAS call uses tensor cores.",
    "The T4 has no bf16 tensor cores, so the kernel picks fp16 there.",
    "The H200's ceiling is 4800 GB/s; the table below says how close each variant came.",
    "The reference takes 120 ms per call on one CPU thread.",
    "The kernel is timed on a GPU with do_bench; see the table below.",
    "The counts are analytic, not measured on the CPU.",
    "There are no measurements on the CPU path: it is the reference.",
]


@pytest.mark.parametrize("line", PLANTED)
def test_detector_catches_a_planted_gpu_fact(line):
    assert gpu_fact(line) is not None
    assert any(gpu_fact(s) for s in _sentences("# A heading\nSome prose.\n" + line + "\nMore."))


@pytest.mark.parametrize("line", INTERPRETING)
def test_detector_leaves_interpreting_prose_alone(line):
    assert gpu_fact(line) is None


def test_checks_name_a_planted_notebook(tmp_path):
    d = tmp_path / "nbs" / "07_demo"
    d.mkdir(parents=True)
    cells = [
        dict(cell_type="markdown", metadata={}, source="# Kernels\nIt ran in 2 ms on the H200."),
        dict(cell_type="code", metadata={}, source='gpu_table("07")', outputs=[]),
    ]
    (d / "05_kernels.ipynb").write_text(json.dumps(dict(cells=cells)))
    assert gpu_fact_problems(tmp_path) == [
        "nbs/07_demo/05_kernels.ipynb, cell 0: '2 ms' in 'It ran in 2 ms on the H200.'"
    ]
    assert missing_gpu_table(tmp_path) == []
    cells[1]["source"] = 'gpu_table("08")'  # another chapter's table does not count
    (d / "05_kernels.ipynb").write_text(json.dumps(dict(cells=cells)))
    assert missing_gpu_table(tmp_path) == ["nbs/07_demo/05_kernels.ipynb: no gpu_table('07') call"]


# --- this repository: fails until every kernels notebook is reworded ---------------------------


def test_no_kernels_notebook_states_gpu_facts_by_hand():
    found = gpu_fact_problems(ROOT)
    assert not found, "GPU facts written by hand (show them with gpu_table):\n" + "\n".join(found)


def test_every_kernels_notebook_calls_gpu_table():
    found = missing_gpu_table(ROOT)
    assert not found, "\n".join(found)


# --- gpu_table ---------------------------------------------------------------------------------


def _bench_file(folder: Path, rows: list[dict], commit="0" * 40, note="the note") -> Path:
    (folder / "bench").mkdir(parents=True, exist_ok=True)
    prov = dict(commit=commit, date="2026-01-02T03:04:05+00:00", torch="2.11", triton="3.6")
    path = folder / "bench" / "Some-GPU-2026-01-02.json"
    path.write_text(json.dumps(dict(card="Some GPU", provenance=prov, benchmarks=rows, note=note)))
    return path


ROW = dict(
    chapter="42",
    name="double",
    timings_ms={"triton": 2.0, "torch": 1.0, "sdpa": 4.0},
    agreement={"triton": dict(rel_diff=1.5e-7, reference_repeat=0.0)},
    gbps={"triton": 500.0, "torch": 1000.0, "sdpa": 250.0},
    fraction_of_peak_bandwidth={"triton": 0.1, "torch": 0.2},
)


def test_gpu_table_reads_the_results_folder_named_by_the_environment(tmp_path, monkeypatch):
    _bench_file(tmp_path, [ROW, dict(ROW, chapter="43")])
    monkeypatch.setenv("ICML26_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(bench, "code_status", lambda ch, name, commit: ("same", ""))
    t = gpu_table("42")
    md, page = t._repr_markdown_(), t._repr_html_()
    assert "**Some GPU, 2026-01-02, commit 0000000000 (torch 2.11, triton 3.6;" in md
    assert "| double |  | triton | 2 ms, 500 GB/s (10% of the card's) | 0.5x against torch, " in md
    assert ", 2x against sdpa | 1.5e-07 |" in md and "| sdpa | 4 ms, 250 GB/s |  |  |" in md
    assert "Where Triton lost, double: triton lost to torch (0.5x)." in md
    assert "replaced" not in md and md.count("| double |") == 1  # chapter 43's row left out
    assert "<td>0.5x against torch, 2x against sdpa</td>" in page
    assert gpu_table("44").message() == "Chapter 44's kernels are not yet measured on a GPU."
    with pytest.raises(ValueError, match="two-digit"):
        gpu_table("7")


def test_gpu_table_outside_a_checkout_says_where_to_run(monkeypatch):
    monkeypatch.setattr(bench, "results_dir", lambda: None)
    t = gpu_table("42")
    assert bench_rows("42") is None and t.files is None
    assert t._repr_markdown_() == "Run inside the repository to see the committed results."


def test_replaced_rows_carry_the_bench_note(tmp_path):
    _bench_file(tmp_path, [ROW, dict(chapter="42", name="triple", error="RuntimeError: boom")])
    files = bench_rows("42", tmp_path)
    t = GpuTable("42", files, status=lambda ch, name, commit: ("replaced", "its kernel changed"))
    md = t._repr_markdown_()
    assert "| double (timed on replaced code) |" in md and "RuntimeError: boom" in md
    assert (
        "Timed on replaced code: double, triple (its kernel changed). The bench note: the note"
        in md
    )
    t = GpuTable("42", files, status=lambda ch, name, commit: ("unknown", "cannot be checked"))
    assert "- double: cannot be checked." in t._repr_markdown_()


def test_agreement_not_checked_and_a_reference_with_state():
    files = [
        dict(
            file="f.json",
            card="C",
            date="d",
            commit=None,
            torch="t",
            triton="t",
            note="",
            rows=[
                dict(
                    chapter="42",
                    name="adam",
                    timings_ms={"torch": 1.0, "triton": 0.5},
                    agreement={"triton": dict(rel_diff=0.13, reference_repeat=0.24)},
                ),
                dict(chapter="42", name="scan", timings_ms={"torch N=4": 1.0, "triton N=4": 0.5}),
            ],
        )
    ]
    md = GpuTable("42", files, status=lambda *a: ("same", ""))._repr_markdown_()
    assert "1.3e-01 (the reference itself differs by 2.4e-01 between two calls)" in md
    assert "| scan | N=4 | torch | 1 ms |  |  |" in md
    assert "| N=4 | triton | 0.5 ms | 2x against torch | not checked on the card |" in md
    assert "unknown commit" in md and "lost" not in md


# --- timed on replaced code: the kernel's syntax tree at the bench's commit against now --------

MODULE = """
import triton

_BLOCK = 64


@triton.jit
def _kernel(x, BLOCK: tl.constexpr):
    y = x + 1  # one


def _other_kernel_user(x):
    return _other[(1,)](x)


@triton.jit
def _other(x):
    pass


def double(x):
    "Docstring."
    return _kernel[(1,)](x, _BLOCK)


register_benchmark("42", "double", lambda device: {"triton": lambda: double(1)}, lambda: {})
register_benchmark("42", "other", lambda device: {"triton": lambda: _other_kernel_user(1)}, dict)
"""


def _git(cwd, *args):
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_kernel_code_follows_the_registration_to_its_kernels():
    assert sorted(kernel_code(MODULE, "42", "double")) == ["_BLOCK", "_kernel"]
    assert sorted(kernel_code(MODULE, "42", "other")) == ["_other"]
    assert kernel_code(MODULE, "42", "absent") is None
    by_keyword = (
        'register_benchmark(chapter="42", name="kw", fn=lambda d: _other(d), bytes_model=dict)'
    )
    assert sorted(kernel_code(MODULE + by_keyword, "42", "kw")) == ["_other"]


def test_code_status_compares_the_kernel_at_the_commit_with_now(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "demo").mkdir(parents=True)
    module = pkg / "demo" / "kernels.py"
    module.write_text(MODULE)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "bench")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    assert code_status("42", "double", commit, pkg) == ("same", "")
    # comments, the wrapper's docstring and formatting are not the kernel
    module.write_text(MODULE.replace("# one", "# two").replace("Docstring.", "Other."))
    assert code_status("42", "double", commit, pkg) == ("same", "")
    module.write_text(MODULE.replace("x + 1", "x + 2"))
    state, why = code_status("42", "double", commit, pkg)
    assert state == "replaced" and "pkg/demo/kernels.py changed after commit" in why
    assert code_status("42", "other", commit, pkg) == ("same", "")  # its own kernel is unchanged
    module.write_text(MODULE.replace("_BLOCK = 64", "_BLOCK = 32"))
    assert code_status("42", "double", commit, pkg)[0] == "replaced"
    assert code_status("42", "double", "f" * 40, pkg)[0] == "unknown"  # not in this clone
    assert code_status("42", "nowhere", commit, pkg) == (
        "unknown",
        "no module registers this benchmark now (renamed or removed)",
    )


WHOLE_CALL = 'register_benchmark("42", "whole", lambda device: {"triton": lambda: 1}, dict)\n'


def test_a_benchmark_moved_to_a_module_without_kernels_keeps_its_kernels(tmp_path):
    "Registered beside the model that imports the kernels: the kernels compared are still theirs."
    pkg = tmp_path / "pkg"
    (pkg / "demo").mkdir(parents=True)
    kernels, model = pkg / "demo" / "kernels.py", pkg / "demo" / "model.py"
    kernels.write_text(MODULE + WHOLE_CALL)  # registered in the kernels module, reaching no kernel
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "bench")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    then = kernel_code(kernels.read_text(), "42", "whole")
    assert sorted(then) == ["_kernel", "_other"]  # it reaches no kernel: every kernel of the module
    kernels.write_text(MODULE)  # then the registration moves beside a model importing the kernels
    model.write_text("from .kernels import double\n\n" + WHOLE_CALL)
    assert kernel_code(model.read_text(), "42", "whole") == {}  # alone, it sees no kernel
    sibling = lambda m: (pkg / "demo" / f"{m}.py").read_text()
    assert kernel_code(model.read_text(), "42", "whole", sibling) == then
    assert code_status("42", "whole", commit, pkg) == ("same", "")  # found at the commit, moved
    kernels.write_text(MODULE.replace("x + 1", "x + 2"))
    state, why = code_status("42", "whole", commit, pkg)
    assert state == "replaced" and "pkg/demo/model.py" in why


def test_code_status_outside_a_git_checkout(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "kernels.py").write_text(MODULE)
    state, why = code_status("42", "double", "0" * 40, tmp_path)
    assert state == "unknown" and "outside a git checkout" in why
