#!/usr/bin/env python
"""Open every page of the built book in headless Chromium and check what a reader would see.

A page fails, naming itself, when
- fewer plotly figures were drawn (a `plotly-graph-div` holding a `main-svg`) than it has
  plotly divs,
- a saved widget view did not render,
- raw `$$`, `\\(` or `\\[` is left in its text (math that MathJax did not typeset),
- it loads a script from http(s) (the book must render with no internet).

The front page must also fit a 1280 px window: neither the page nor its headline table may scroll
horizontally. Screenshots of the front page and of chapter 0 go to book/_build/screenshots/.

    python book/browser_check.py [PAGE.html ...]
"""

from __future__ import annotations

import concurrent.futures as cf
import html as htmllib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "book" / "_build" / "html"
SHOTS = ROOT / "book" / "_build" / "screenshots"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]
SCREENSHOT_PAGES = {
    "front-page.png": "nbs/index.html",
    "chapter-0.png": "nbs/00_core/00_how_this_book_works.html",
    "chapter-0-example.png": "nbs/00_core/10_example_features.html",
}


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit(
        "the browser check needs Chromium: apt-get install chromium "
        "(Debian/Ubuntu; .ci/run installs it), then run `make test` again"
    )


def dump_dom(page: Path, budget_ms: int = 20000, flags: tuple = ()) -> str:
    with tempfile.TemporaryDirectory() as profile:
        p = subprocess.run(
            [
                chromium(),
                *FLAGS,
                *flags,
                f"--user-data-dir={profile}",
                f"--virtual-time-budget={budget_ms}",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    return p.stdout


def screenshot(page: Path, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium(),
                *FLAGS,
                f"--user-data-dir={profile}",
                "--virtual-time-budget=20000",
                "--window-size=1280,4800",
                f"--screenshot={out}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )


def drawn_figures(dom: str) -> tuple[int, int]:
    "(plotly divs, of which drawn) in a rendered DOM."
    starts = [m.start() for m in re.finditer(r'class="[^"]*\bplotly-graph-div\b', dom)]
    drawn = 0
    for i, s in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(dom)
        if 'class="main-svg"' in dom[s:end]:
            drawn += 1
    return len(starts), drawn


def widget_views(dom: str) -> tuple[int, int]:
    "(saved widget views, of which rendered): a view renders just before its script tag."
    views = [
        m.start()
        for m in re.finditer(r'<script type="application/vnd\.jupyter\.widget-view\+json">', dom)
    ]
    rendered = 0
    for p in views:
        cell = dom.rfind("cell_output", 0, p)
        if "jupyter-widgets" in dom[max(cell, 0) : p]:
            rendered += 1
    return len(views), rendered


def raw_math(dom: str) -> list[str]:
    "Snippets of visible text that still hold TeX delimiters."
    text = re.sub(
        r"(?is)<(script|style|pre|code|textarea|mjx-container|mjx-assistive-mml)\b.*?</\1>",
        " ",
        dom,
    )
    text = re.sub(r"(?s)<[^>]+>", " ", text)
    text = htmllib.unescape(text)
    hits = []
    for m in re.finditer(r"\$\$|\\\(|\\\[", text):
        hits.append(re.sub(r"\s+", " ", text[max(0, m.start() - 40) : m.end() + 40]).strip())
    return hits


def git_url() -> str:
    import configparser

    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    return cfg["DEFAULT"]["git_url"].rstrip("/")


def launch_links(rel_html: str, branch: str = "main") -> dict:
    "The Colab and Binder links a notebook page must carry, built from settings.ini's git_url."
    repo = git_url().split("github.com/")[1]
    nb = rel_html[: -len(".html")] + ".ipynb"
    copy = "book/colab/" + nb.removeprefix("nbs/")  # the Colab-ready copy, where one is written
    colab_nb = copy if (ROOT / copy).exists() else nb
    return {
        "colab": f"https://colab.research.google.com/github/{repo}/blob/{branch}/{colab_nb}",
        "binder": f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=tree/{nb}",
    }


def remote_scripts(raw_html: str) -> list[str]:
    return re.findall(r'<script[^>]+src="(https?://[^"]+)"', raw_html)


# measured in the page after load, written into the DOM for --dump-dom to carry out
MEASURE = """<script>window.addEventListener("load", () => setTimeout(() => {
  const t = document.querySelector("table.icml26-headlines"), d = document.documentElement;
  const m = document.createElement("pre"); m.id = "icml26-layout";
  m.textContent = JSON.stringify({page: [d.scrollWidth, d.clientWidth],
    table: t ? [t.scrollWidth, t.parentElement.clientWidth] : null});
  document.body.appendChild(m);
}, 500));</script>"""


def front_page_layout(page: Path, width: int = 1280) -> dict | None:
    "scrollWidth against clientWidth of the page and of the headline table, in a `width` window."
    raw = page.read_text(errors="replace")
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=page.parent, delete=False) as f:
        f.write(raw.replace("</body>", MEASURE + "</body>", 1))
        probe = Path(f.name)
    try:
        dom = dump_dom(probe, flags=(f"--window-size={width},900",))
    finally:
        probe.unlink()
    m = re.search(r'<pre id="icml26-layout">(.*?)</pre>', dom, re.S)
    return json.loads(htmllib.unescape(m.group(1))) if m else None


def layout_problems(name: str, layout: dict | None) -> list[str]:
    "What a 1280 px reader of the front page would have to scroll sideways for."
    if layout is None:
        return [f"{name}: the layout could not be measured"]
    out = []
    (pw, pc), table = layout["page"], layout.get("table")
    if pw > pc:
        out.append(f"{name}: scrolls horizontally at 1280 px ({pw} px wide in {pc} px)")
    if table is None:
        out.append(f"{name}: no headline table")
    elif table[0] > table[1]:
        out.append(f"{name}: the headline table is {table[0]} px wide in {table[1]} px at 1280 px")
    return out


def check_page(page: Path, root: Path = HTML) -> list[str]:
    "Problems a reader would see on `page`; empty when it renders."
    name = str(page.relative_to(root)) if page.is_relative_to(root) else page.name
    raw = page.read_text(errors="replace")
    problems = [f"{name}: loads a script from the internet: {u}" for u in remote_scripts(raw)]
    if root == HTML and (ROOT / name).with_suffix(".ipynb").exists():
        for kind, url in launch_links(name).items():
            if f'href="{url}"' not in raw:
                problems.append(f"{name}: no {kind} launch link to {url}")
    dom = dump_dom(page)
    if not dom.strip():
        return problems + [f"{name}: Chromium returned no DOM"]
    n, drawn = drawn_figures(dom)
    if drawn < n:
        problems.append(f"{name}: {n - drawn} of {n} plotly figures were not drawn")
    v, rendered = widget_views(dom)
    if rendered < v:
        problems.append(f"{name}: {v - rendered} of {v} saved widget views did not render")
    for snippet in raw_math(dom)[:3]:
        problems.append(f"{name}: untypeset math left in the text: ...{snippet}...")
    return problems


def pages(root: Path = HTML) -> list[Path]:
    skip = {"genindex.html", "search.html"}
    return sorted(
        p
        for p in root.rglob("*.html")
        if p.name not in skip
        and "_static" not in p.parts
        and "_sources" not in p.parts
        and not (p.parent == root and p.name == "index.html")
    )  # the top index only redirects


def main(argv: list[str]) -> int:
    chromium()
    if not HTML.exists():
        print(f"no built book at {HTML}: run `make book` first")
        return 1
    todo = [Path(a).resolve() for a in argv] or pages()
    problems = []
    with cf.ThreadPoolExecutor(2) as pool:
        for page, probs in zip(todo, pool.map(check_page, todo)):
            status = "ok" if not probs else "FAILED"
            print(
                f"  {status:6s} {page.relative_to(HTML) if page.is_relative_to(HTML) else page}",
                flush=True,
            )
            problems += probs
    front = HTML / SCREENSHOT_PAGES["front-page.png"]
    if front.exists() and (not argv or front in todo):
        layout = front_page_layout(front)
        problems += layout_problems("nbs/index.html", layout)
        print(f"  layout at 1280 px: {layout}", flush=True)
    for out, rel in SCREENSHOT_PAGES.items():
        if (HTML / rel).exists():
            screenshot(HTML / rel, SHOTS / out)
            print(f"  screenshot {SHOTS / out}")
    if problems:
        print("\nthe browser check found pages that do not render:")
        print("\n".join("  " + p for p in problems))
        return 1
    print(
        f"browser check: {len(todo)} pages render (figures drawn, widgets shown, math typeset, "
        f"no remote scripts)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
