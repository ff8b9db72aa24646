"""The package as users install it: a built wheel holds every module, the page and the evaluation's case
files, and runs."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # builds a wheel and installs it
def test_the_wheel_holds_every_module_and_the_demo_runs_from_it(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("v2_memory-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {p.relative_to(REPO).as_posix() for p in (REPO / "v2_memory").rglob("*.py") if "__pycache__" not in p.parts}
    expected |= {p.relative_to(REPO).as_posix() for p in (REPO / "v2_memory" / "evaluation" / "cases").glob("*.json")}
    # py.typed: type checkers read the package's annotations (PEP 561)
    assert expected | {"v2_memory/visualization.html", "v2_memory/py.typed"} <= names
    # Unpacked somewhere else, with the repository nowhere on the path, it imports and runs.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    done = subprocess.run([sys.executable, "-m", "v2_memory", "demo", "--out", str(tmp_path / "out")],
                          cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": ""}, capture_output=True,
                          text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "visualization.html").exists()
