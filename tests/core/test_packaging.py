"""The package as users install it: the sdist builds and installs, its metadata names the Python
versions and the extras as pip wants them, and its bounds admit what Colab ships."""

import configparser
import email
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import colab_check  # noqa: E402


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    "The source distribution, built as `python -m build --sdist` builds it (no network)."
    out = tmp_path_factory.mktemp("sdist")
    cmd = [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(out), str(ROOT)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return next(out.glob("icml26_lit-*.tar.gz"))


def pkg_info(sdist: Path) -> email.message.Message:
    with tarfile.open(sdist) as t:
        member = next(
            m for m in t.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
        )
        return email.message_from_bytes(t.extractfile(member).read())


def test_sdist_carries_what_setup_py_reads(sdist):
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for f in ("settings.ini", "README.md", "setup.py", "LICENSE", "icml26_lit/core/claims.py"):
        assert f in names, f"the sdist lacks {f} (MANIFEST.in)"


def test_sdist_installs_and_imports(sdist, tmp_path):
    "pip builds the wheel from the sdist and the installed package imports outside the checkout."
    site = tmp_path / "site"
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
           "--target", str(site), str(sdist)]  # fmt: skip
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    code = "import icml26_lit, icml26_lit.core as c; print(icml26_lit.__file__, c.SCALE_NAMES)"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith(str(site)), (
        f"imported from the checkout, not the install: {p.stdout}"
    )


def test_metadata_names_python_versions_and_hyphenated_extras(sdist):
    info = pkg_info(sdist)
    classifiers = info.get_all("Classifier")
    for minor in range(10, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    extras = info.get_all("Provides-Extra")
    assert "functional-kl" in extras and "sleep-eeg" in extras, extras
    assert not [e for e in extras if "_" in e], f"extras spelled with underscores: {extras}"


def runtime_requirements() -> list[Requirement]:
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    return [Requirement(r) for r in cfg["DEFAULT"]["requirements"].split()]


def test_runtime_bounds_admit_what_colab_ships():
    "Installing the package on Colab changes none of its core packages (torch kept as it is)."
    pins, keep = colab_check.colab_pins()
    colab = {**pins, **{colab_check.canon(k): v for k, v in keep.items()}}
    for req in runtime_requirements():
        have = colab.get(colab_check.canon(req.name))
        assert have is not None, f"{req.name} is not in Colab's list: refresh the constraints"
        assert req.specifier.contains(have), f"{req} would replace Colab's {req.name} {have}"


def test_colab_constraints_strip_local_tags_and_keep_torch_apart():
    text = (ROOT / "requirements" / "colab-constraints.txt").read_text()
    pins, keep = colab_check.colab_pins(text)
    assert set(keep) == {"torch", "triton"}
    assert "torch" not in pins and "triton" not in pins
    assert not [v for v in pins.values() if "+" in v], "a +cuXXX local tag is left"
    assert re.search(r"commit [0-9a-f]{12}, \d{4}-\d\d-\d\d", text), "the source's commit and date"


def test_colab_check_verdicts():
    "The rule `make colab-check` applies to pip's report (the resolution itself needs PyPI)."
    ok, text = colab_check.verdict({"pot": (None, "0.9.5")})
    assert ok and "keeps every package" in text
    assert not colab_check.verdict({"fastcore": ("2.2.12", "1.14.5")})[0]  # a downgrade
    assert not colab_check.verdict({"ipywidgets": ("7.7.1", "8.1.9")})[0]  # frontend runs 7
    assert not colab_check.verdict({"scipy": ("1.16.3", "1.10.0")})[0]  # any downgrade
    ok, text = colab_check.verdict({"scikit-learn": ("1.6.1", "1.9.1")})
    assert ok and "upgrades scikit-learn" in text


def test_setup_cell_installs_the_books_tag_with_a_hyphenated_extra():
    import bootstrap

    text = bootstrap.source(ROOT / "nbs" / "11_functional_kl" / "01_noise.ipynb")
    tag = f"@v{bootstrap.version()}"
    assert (
        f'"icml26_lit[functional-kl] @ git+https://github.com/icml26-lit/icml26-lit{tag}"' in text
    )
    assert "restart the runtime" in text  # printed when the extra upgraded numpy
    compile(text, "setup cell", "exec")


def test_alone_finds_each_chapter_and_its_experiments_notebook():
    "`make alone` names chapters by number or slug; each chapter has one experiments notebook."
    import alone

    assert alone.chapter_dir("17") == alone.chapter_dir("afr_net") == ROOT / "nbs" / "17_afr_net"
    with pytest.raises(SystemExit, match="no chapter folder"):
        alone.chapter_dir("99")
    for ch in sorted((ROOT / "nbs").glob("[01][0-9]_*")):
        assert alone.experiments_notebook(ch).name.endswith("_experiments.ipynb")
