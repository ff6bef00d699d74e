"""Build the HTML book from executed notebooks: a table of contents for the chosen chapters, the
executed copies prepared for reading (no bootstrap or nbdev lines), and Jupyter Book with warnings
as errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from layout import BOOTSTRAP_MARK, BUILD, EXEC, HTML, PY, ROOT, chapter_dirs, exec_path, sha


def toc_files(toc: Path) -> list[str]:
    return re.findall(r"(?:root|file):\s*(\S+)", toc.read_text())


def filtered_toc(chapters: list[str] | None) -> Path:
    "The book's _toc.yml, or one written by make_toc for the chosen chapters only."
    if not chapters:
        return ROOT / "_toc.yml"
    from make_toc import make_toc  # book/make_toc.py

    path = BUILD / "_toc.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(make_toc(only=[d.name[:2] for d in chapter_dirs(chapters)]))
    return path


DIRECTIVE = re.compile(r"#\|\s*([\w-]+)")


def prepare_executed(nb_out: Path) -> None:
    "Hide bootstrap, nbdev and injected cells in an executed copy; drop `#|` lines from the rest."
    data = json.loads(nb_out.read_text())
    for c in data["cells"]:
        src = "".join(c.get("source", ""))
        tags = c.setdefault("metadata", {}).setdefault("tags", [])
        lines = src.splitlines(keepends=True)
        n_dir = next(
            (i for i, line in enumerate(lines) if not line.lstrip().startswith("#|")), len(lines)
        )
        names = {m.group(1) for line in lines[:n_dir] if (m := DIRECTIVE.match(line.lstrip()))}
        code = c["cell_type"] == "code"
        hide = (
            BOOTSTRAP_MARK in src
            or "injected-parameters" in tags
            or (code and names & {"default_exp", "hide"})
        )
        if hide and "remove-cell" not in tags:
            tags.append("remove-cell")
        if code and "remove-input" in names and "remove-input" not in tags:
            tags.append("remove-input")
        if code and n_dir and not hide:  # the book shows code, not nbdev's directives
            c["source"] = "".join(lines[n_dir:])
    nb_out.write_text(json.dumps(data, indent=1))


def build(chapters: list[str] | None, warnings_as_errors: bool = True) -> int:
    "Build the HTML book from executed copies, refusing stale or missing ones."
    from vendor import vendor_assets  # book/vendor.py

    toc = filtered_toc(chapters)
    stale = []
    for f in toc_files(toc):
        src = ROOT / f
        if src.with_suffix(".md").exists():
            dst = EXEC / f"{f}.md"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src.with_suffix(".md"), dst)
            continue
        nb = src.with_suffix(".ipynb")
        out = exec_path(nb)
        if not nb.exists():
            stale.append(
                f"{f}: listed in the table of contents but {nb.relative_to(ROOT)} does not exist"
            )
        elif not out.exists():
            stale.append(f"{f}: no executed copy; run `make book`")
        else:
            meta = json.loads(out.read_text())["metadata"].get("icml26", {})
            if meta.get("source_sha") != sha(nb) or out.stat().st_mtime < nb.stat().st_mtime:
                stale.append(
                    f"{f}: the executed copy is older than its source notebook; run `make book`"
                )
            else:
                prepare_executed(out)
    if stale:
        print("refusing to build the book from stale or missing executed notebooks:")
        print("\n".join("  " + s for s in stale))
        return 1
    # Jupyter Book adds every script under every static folder to every page when the source has
    # a `_static` folder, so ours is called `_assets` and the vendored libraries (MathJax has
    # hundreds of lazily loaded components) live in `_vendor`.
    shutil.copytree(ROOT / "book" / "_static", EXEC / "_assets", dirs_exist_ok=True)
    shutil.copytree(
        vendor_assets(BUILD / "vendor"), EXEC / "_vendor" / "vendor", dirs_exist_ok=True
    )
    shutil.copy2(ROOT / "book" / "references.bib", EXEC / "references.bib")
    if HTML.exists():
        shutil.rmtree(HTML)
    cmd = [
        str(Path(PY).parent / "jupyter-book"),
        "build",
        str(EXEC),
        "--config",
        str(ROOT / "book" / "_config.yml"),
        "--toc",
        str(toc),
        "--path-output",
        str(ROOT / "book"),
    ]
    if warnings_as_errors:
        cmd += ["-W", "-n", "--keep-going"]
    p = subprocess.run(cmd, text=True, capture_output=True)
    print(p.stdout[-6000:] if p.returncode else p.stdout[-600:])
    if p.returncode:
        print(p.stderr[-6000:])
        print("the book build failed (warnings are errors)")
        return 1
    n = point_colab_at_copies(HTML)
    print(f"the Colab buttons of {n} pages open the Colab-ready copies (book/colab/)")
    print(f"the book is at {HTML / 'index.html'}  (open file://{HTML / 'index.html'})")
    return 0


COLAB_LINK = re.compile(
    r"(colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/[\w.-]+/+)nbs/([\w./-]+\.ipynb)"
)


def _to_copy(m: re.Match) -> str:
    "The link to the notebook's copy in book/colab/, where one is written (book pages have none)."
    has_copy = (ROOT / "book" / "colab" / m.group(2)).exists()
    return f"{m.group(1)}book/colab/{m.group(2)}" if has_copy else m.group(0)


def point_colab_at_copies(html: Path) -> int:
    "Jupyter Book's Colab button opens the source notebook; ours opens its copy in book/colab/."
    n = 0
    for page in html.rglob("*.html"):
        text = page.read_text()
        new = COLAB_LINK.sub(_to_copy, text)
        if new != text:
            page.write_text(new)
            n += 1
    return n
