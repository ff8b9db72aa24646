"""The evaluation's scenario data files (``v2_memory/evaluation/cases/*.json``): shipped, and refused
with a clear error when malformed.

The pollution benchmark's templates are Python; the stories that fill them are JSON
(``pollution_scope.json``, ``pollution_meaning.json``). A broken file must say which file and
which case, never build a half-scenario or fail with a bare ``KeyError``.
"""
from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

import pytest

from v2_memory.evaluation import pollution_cases, pollution_cases_meaning
from v2_memory.evaluation.pollution_script import load_scenarios

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "v2_memory" / "evaluation" / "cases"


def test_every_case_file_is_in_the_package_data():
    """pyproject's package-data globs ship every JSON file under cases/ in the wheel."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    globs = re.search(r"^v2_memory = \[(.*)\]$", pyproject, re.M).group(1)
    patterns = [glob.strip().strip('"') for glob in globs.split(",")]
    files = [path.relative_to(REPO / "v2_memory").as_posix() for path in CASES.rglob("*.json")]
    assert {"evaluation/cases/pollution_scope.json", "evaluation/cases/pollution_meaning.json"} <= set(files)
    for name in files:
        assert any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns), name


def test_the_two_files_build_every_kind_once_per_template():
    """Scope file: noise, other users, erasure, wrong scope; meaning file: the other four kinds."""
    scope = {scenario.kind for scenario in pollution_cases.SCOPE_SCENARIOS}
    meaning = {scenario.kind for scenario in pollution_cases_meaning.MEANING_SCENARIOS}
    assert scope == set(pollution_cases.TEMPLATES) and meaning == set(pollution_cases_meaning.TEMPLATES)
    assert len(pollution_cases.SCENARIOS) == len(pollution_cases.SCOPE_SCENARIOS) + len(pollution_cases_meaning.MEANING_SCENARIOS)


def _broken(tmp_path: Path, change) -> Path:
    """A copy of pollution_scope.json with ``change(data)`` applied."""
    data = json.loads(pollution_cases.CASES.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "broken_scope.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _case(data: dict, kind: str, name: str) -> dict:
    return next(case for case in data["templates"][kind] if case["name"] == name)


@pytest.mark.parametrize("change, says", [
    (lambda d: _case(d, "noise", "noise-zh-trip")["slots"].pop("echo"), "case 'noise-zh-trip': missing slot 'echo'"),
    (lambda d: _case(d, "erased", "erased-en-account")["slots"].update(keeper="alice"),
     "case 'erased-en-account': malformed slots"),
    (lambda d: _case(d, "wrong_scope", "scope-en-idle")["slots"]["questions"].pop("task_b"),
     "case 'scope-en-idle': missing slot 'task_b'"),
    (lambda d: _case(d, "other_user", "other-en-tenants").update(lang="fr"), "case 'other-en-tenants': needs"),
    (lambda d: d["templates"]["noise"].append(dict(_case(d, "noise", "noise-en-marathon"))),
     "case 'noise-en-marathon': the name is used twice"),
    (lambda d: d["templates"].pop("erased"), '"templates" must map each of'),
    (lambda d: d.update(version=2), "unsupported version 2"),
    (lambda d: d.update(format="v2_memory.realistic_scenarios"), "not a v2_memory.pollution_cases file"),
])
def test_a_malformed_case_file_names_the_file_and_the_case(tmp_path, change, says):
    path = _broken(tmp_path, change)
    with pytest.raises(ValueError) as raised:
        load_scenarios(path, pollution_cases.TEMPLATES)
    assert str(raised.value).startswith(f"{path}: ") and says in str(raised.value), str(raised.value)


def test_a_file_that_is_not_json_names_the_file(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(pollution_cases.CASES.read_text(encoding="utf-8")[:500], encoding="utf-8")
    with pytest.raises(ValueError, match=r"cut\.json: not JSON"):
        load_scenarios(path, pollution_cases.TEMPLATES)

