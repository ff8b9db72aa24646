"""Shared fixtures: a fake clock and store factories for every backend."""
from __future__ import annotations

import os
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent

# CI tries the same examples of every property test on each run, so a red CI means a change broke
# something, not that a new random example turned up (.ci/run sets V2_MEMORY_HYPOTHESIS=ci). Local
# runs keep drawing new examples: that is how they find what the rules missed.
settings.register_profile("ci", derandomize=True)
if os.environ.get("V2_MEMORY_HYPOTHESIS") == "ci":
    settings.load_profile("ci")


class FakeClock:
    """A clock that only moves when told to: ``clock.advance(hours=1)``."""

    def __init__(self, start: datetime = datetime(2026, 1, 1, tzinfo=timezone.utc)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory) -> Path:
    """The demo's output folder (store, ledger, logs, trace), written once per test module."""
    from v2_memory.main import run_demo

    out = tmp_path_factory.mktemp("demo")
    run_demo(out_dir=out)
    return out


# -- PostgreSQL: a real server when one is reachable -------------------------------------------------
# V2_MEMORY_PG_URL names a database the tests may create schemas in (default: the local socket);
# without a server the postgres tests skip, unless V2_MEMORY_REQUIRE_POSTGRES=1 (CI) makes that a failure.
PG_URL = os.environ.get("V2_MEMORY_PG_URL", "postgresql:///v2_memory_test")
_pg_problem: list[str] = []  # why the server cannot be used, once known ("" for: it can)


def postgres_url() -> str:
    """The test server's URL, or skip (fail, when required) saying why there is none."""
    if not _pg_problem:
        try:
            import psycopg

            psycopg.connect(PG_URL, connect_timeout=3).close()
            _pg_problem.append("")
        except Exception as exc:  # ImportError, or any connection failure: the reason is the message
            _pg_problem.append(f"no PostgreSQL server for the tests at V2_MEMORY_PG_URL ({exc.__class__.__name__}: "
                               f"{str(exc).strip()[:200]}); set V2_MEMORY_PG_URL, or pip install '.[postgres]'")
    if _pg_problem[0]:
        if os.environ.get("V2_MEMORY_REQUIRE_POSTGRES") == "1":
            pytest.fail(_pg_problem[0] + " (required: V2_MEMORY_REQUIRE_POSTGRES=1)")
        pytest.skip(_pg_problem[0])
    return PG_URL


class PostgresSchema:
    """A fresh schema on the test server; ``url`` opens a store in it, ``reset()`` empties it."""

    def __init__(self) -> None:
        base = postgres_url()  # first: without the driver or a server this skips, saying why
        import psycopg

        self.name = f"v2m_test_{uuid.uuid4().hex[:12]}"
        self.url = f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{self.name}"
        self._admin = psycopg.connect(base, autocommit=True)
        self._admin.execute(f"CREATE SCHEMA {self.name}")

    def reset(self) -> None:
        self._admin.execute(f"DROP SCHEMA {self.name} CASCADE")
        self._admin.execute(f"CREATE SCHEMA {self.name}")

    def dump(self) -> bytes:
        """Every row of every table in the schema, as text: what "on disk" means on a server."""
        tables = [row[0] for row in self._admin.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (self.name,))]
        return b"".join(str(row[0]).encode("utf-8") for table in tables
                        for row in self._admin.execute(f'SELECT t::text FROM {self.name}."{table}" t'))

    def execute(self, sql: str, args: tuple = ()) -> None:
        self._admin.execute(sql.replace("{schema}", self.name), args)

    def drop(self) -> None:
        self._admin.execute(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")
        self._admin.close()


@pytest.fixture
def pg_schema():
    schema = PostgresSchema()
    yield schema
    schema.drop()


# -- what the README's quick run leaves to CI --------------------------------------------------------
# `python -m pytest` runs the fast suite in a few minutes; `python -m pytest --full` (CI's second
# stage) adds three kinds of tests, each marked: `slow` trials (kill -9, many processes, 1 MB
# inputs, a wheel build, benchmarks), `browser` (the page in headless Chromium) and `server` (a
# real PostgreSQL). `-m` still selects by hand: `python -m pytest -m server`.
HEAVY = ("slow", "browser", "server")


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true",
                     help="also run the slow, browser and server tests (CI's second stage does)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name == "test_page.py":
            item.add_marker(pytest.mark.browser)
        if item.path.name == "test_postgres.py" or "pg_schema" in getattr(item, "fixturenames", ()) or any(
                value in ("postgres", "postgresql")  # a backend parameter naming the server
                for value in getattr(getattr(item, "callspec", None), "params", {}).values()):
            item.add_marker(pytest.mark.server)
    if config.getoption("--full") or config.getoption("-m"):
        return
    kept, left = [], []
    for item in items:
        (left if any(item.get_closest_marker(name) for name in HEAVY) else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
        config._v2_memory_left = len(left)


def pytest_terminal_summary(terminalreporter, config):
    left = getattr(config, "_v2_memory_left", 0)
    if left:
        terminalreporter.write_line(f"left for CI: {left} slow, browser and server tests "
                                    "(python -m pytest --full runs them too)")
