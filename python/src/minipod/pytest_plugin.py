"""
The pytest plugin (registered on install): the fixture `minipod`.

One minipod process per pytest session, reset before each test; for the test's duration the
service's Python library points at it (`runpod.endpoint_url_base`, `RUNPOD_ENDPOINT_BASE_URL`,
`RUNPOD_API_BASE_URL`, and `runpod.api_key` when unset), and workers the test starts with
`minipod.worker(...)` stop when it ends. Configure it in pytest's ini file::

    [pytest]
    minipod_config = emulator.config.json   # default: ./emulator.config.json, else the demo endpoints
    minipod_clock = manual                  # default: auto

or by overriding the session fixtures `minipod_config` / `minipod_clock` in a conftest.py (a dict
config there needs no file).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Union

import pytest

from .emulator import Emulator


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("minipod_config", "emulator.config.json for the minipod fixture (relative to the ini file)", default=None)
    parser.addini("minipod_clock", 'clock of the minipod fixture: "auto" (default), "real" or "manual"', default="auto")


@pytest.fixture(scope="session")
def minipod_config(pytestconfig: pytest.Config) -> Union[Mapping[str, Any], str, None]:
    """The config of the session's minipod: the ini's `minipod_config`, else None (see Emulator)."""
    value = pytestconfig.getini("minipod_config")
    if not value:
        return None
    base = Path(str(pytestconfig.inipath)).parent if pytestconfig.inipath else Path.cwd()
    return str((base / str(value)).resolve())


@pytest.fixture(scope="session")
def minipod_clock(pytestconfig: pytest.Config) -> str:
    """The clock of the session's minipod: the ini's `minipod_clock` ("auto" unless set)."""
    return str(pytestconfig.getini("minipod_clock") or "auto")


@pytest.fixture(scope="session")
def minipod_session(minipod_config: Union[Mapping[str, Any], str, None], minipod_clock: str) -> Iterator[Emulator]:
    """The one minipod of the session (not reset between tests: use `minipod`)."""
    with Emulator(config=minipod_config, clock=minipod_clock) as emulator:
        yield emulator


@pytest.fixture
def minipod(minipod_session: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The session's minipod, reset, with the service's library pointed at it for this test."""
    emulator = minipod_session
    emulator.reset()
    monkeypatch.setenv("RUNPOD_ENDPOINT_BASE_URL", emulator.v2_url)
    monkeypatch.setenv("RUNPOD_API_BASE_URL", emulator.url)
    runpod = _runpod()
    if runpod is not None:
        monkeypatch.setattr(runpod, "endpoint_url_base", emulator.v2_url)
        if not getattr(runpod, "api_key", None):
            monkeypatch.setattr(runpod, "api_key", "minipod-test-key")
    before = len(emulator._workers)
    yield emulator
    started = emulator._workers[before:]
    del emulator._workers[before:]
    for worker in started:
        worker.stop()


def _runpod() -> Optional[Any]:
    """The service's library when it can be imported (the fixture serves other clients too)."""
    if "runpod" in sys.modules:
        return sys.modules["runpod"]
    try:
        import runpod  # noqa: F401  (imported here so it reads RUNPOD_ENDPOINT_BASE_URL once set)

        return runpod
    except ImportError:
        return None
