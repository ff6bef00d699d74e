"""Write environment.yml (Binder) from requirements/pins.txt: python requirements/make_environment.py"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
pins = [l.strip() for l in (ROOT / "requirements" / "pins.txt").read_text().splitlines()
        if l.strip() and not l.startswith("#")]
env = ["# Binder (and conda) environment: a CPU build of torch, the book's pinned tools, and the",
       "# package with every chapter's extras. The pins are those of requirements/pins.txt",
       "# (written by requirements/make_environment.py; tests/core/test_dependencies.py checks them).",
       "name: icml26-lit", "channels:", "  - conda-forge", "dependencies:", "  - python=3.11", "  - pip",
       "  - nodejs", "  - pip:", "      - --extra-index-url https://download.pytorch.org/whl/cpu"]
env += [f"      - {p}" for p in pins] + ["      - -e .[all]"]
(ROOT / "environment.yml").write_text("\n".join(env) + "\n")
