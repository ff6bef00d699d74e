"""Write environment.yml (Binder) from requirements/pins.txt: python requirements/make_environment.py"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "requirements"))
import pins as pinfile  # noqa: E402

pins = [f"{n}=={v}" for n, v in pinfile.regular()]
env = ["# Binder (and conda) environment: a CPU build of torch, the book's pinned tools, and the",
       "# package with every chapter's extras. The pins are those of requirements/pins.txt",
       "# (written by requirements/make_environment.py; tests/core/test_dependencies.py checks them);",
       "# the no-deps block is installed by postBuild with --no-deps.",
       "name: icml26-lit", "channels:", "  - conda-forge", "dependencies:", "  - python=3.11", "  - pip",
       "  - nodejs", "  - pip:", "      - --extra-index-url https://download.pytorch.org/whl/cpu"]
env += [f"      - {p}" for p in pins] + ["      - -e .[all]"]
(ROOT / "environment.yml").write_text("\n".join(env) + "\n")
post = ["#!/usr/bin/env bash", "# Binder runs this after environment.yml: the no-deps block of requirements/pins.txt",
        "# (written by requirements/make_environment.py).", "set -euo pipefail",
        'nodeps=$(python requirements/pins.py nodeps)',
        'if [ -n "$nodeps" ]; then pip install -q --no-deps -c requirements/pins.txt $nodeps; fi']
(ROOT / "postBuild").write_text("\n".join(post) + "\n")
(ROOT / "postBuild").chmod(0o755)
