"""Local copies of the scripts the book's pages need, so they render with no internet:
MathJax 3 and the Jupyter widgets HTML manager (from the npm registry, cached under _build/npm)
and plotly.js (shipped inside the plotly wheel), each with its licence."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / "npm"
NPM = {"mathjax": "mathjax@3.2.2", "html-manager": "@jupyter-widgets/html-manager@1.0.15"}

WIDGETS_LICENSE = """BSD 3-Clause License (@jupyter-widgets/html-manager, https://github.com/jupyter-widgets/ipywidgets)

Copyright (c) 2015 Project Jupyter Contributors
All rights reserved.

Redistribution and use in source and binary forms, with or without modification, are permitted
provided that the following conditions are met:
1. Redistributions of source code must retain the above copyright notice, this list of conditions
   and the following disclaimer.
2. Redistributions in binary form must reproduce the above copyright notice, this list of
   conditions and the following disclaimer in the documentation and/or other materials provided
   with the distribution.
3. Neither the name of the copyright holder nor the names of its contributors may be used to
   endorse or promote products derived from this software without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER
IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF
THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""


def _npm_package(spec: str) -> Path:
    "Unpack the npm tarball of `spec` (downloaded once into the cache) and return its folder."
    CACHE.mkdir(parents=True, exist_ok=True)
    name = spec.lstrip("@").replace("/", "-").replace("@", "-")
    tgz = CACHE / f"{name}.tgz"
    if not tgz.exists():
        if shutil.which("npm") is None:
            sys.exit(
                "the book needs npm to fetch MathJax and the widget manager once: "
                "apt-get install npm (or nodejs), then run the build again"
            )
        out = subprocess.run(
            ["npm", "pack", spec, "--pack-destination", str(CACHE), "--silent"],
            capture_output=True,
            text=True,
        )
        if out.returncode:
            sys.exit(f"npm pack {spec} failed: {out.stderr}")
        made = CACHE / out.stdout.strip().splitlines()[-1]
        made.rename(tgz)
    dest = CACHE / name
    if not dest.exists():
        with tarfile.open(tgz) as t:
            t.extractall(dest, filter="data")
    return dest / "package"


def vendor_assets(dest: Path) -> Path:
    "Fill `dest` with mathjax/, html-manager/ and plotly.min.js (each with its licence)."
    dest = Path(dest)
    done = dest / ".complete"
    if done.exists():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    mj = _npm_package(NPM["mathjax"])
    shutil.copytree(mj / "es5", dest / "mathjax", dirs_exist_ok=True)
    shutil.copy2(mj / "LICENSE", dest / "mathjax" / "LICENSE")
    hm = _npm_package(NPM["html-manager"])
    (dest / "html-manager").mkdir(exist_ok=True)
    for f in (hm / "dist").iterdir():
        if f.suffix in (
            ".js",
            ".woff",
            ".woff2",
            ".ttf",
            ".eot",
            ".svg",
            ".txt",
        ) and not f.name.startswith("lib"):
            if f.name != "embed-amd.js":
                shutil.copy2(f, dest / "html-manager" / f.name)
    (dest / "html-manager" / "LICENSE").write_text(WIDGETS_LICENSE)
    import plotly

    pkg = Path(plotly.__file__).parent
    shutil.copy2(pkg / "package_data" / "plotly.min.js", dest / "plotly.min.js")
    lic = next(
        iter(Path(plotly.__file__).parents[1].glob("plotly-*.dist-info/licenses/LICENSE*")), None
    ) or next(iter(Path(plotly.__file__).parents[1].glob("plotly-*.dist-info/LICENSE*")), None)
    (dest / "plotly.LICENSE.txt").write_text(
        lic.read_text()
        if lic
        else "plotly.js is released under the MIT licence (https://github.com/plotly/plotly.js)\n"
    )
    done.write_text("ok\n")
    return dest


if __name__ == "__main__":
    print(vendor_assets(ROOT / "_build" / "vendor"))
