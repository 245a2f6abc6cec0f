"""
The pytest plugin (registered on install): the fixtures `minipod` and `minipod_factory`, and the
marker `minipod`.

One minipod process per pytest session, reset before each test; for the test's duration the
service's Python library points at it (`runpod.endpoint_url_base`, `RUNPOD_ENDPOINT_BASE_URL`,
`RUNPOD_API_BASE_URL`, and `runpod.api_key` when unset; its https calls to load-balancing endpoints
reach minipod: see minipod.tls), and workers the test starts with
`minipod.worker(...)` stop when it ends. Configure it in pytest's ini file::

    [pytest]
    minipod_config = emulator.config.json   # default: ./emulator.config.json, else the demo endpoints
    minipod_clock = manual                  # default: auto

or by overriding the session fixtures `minipod_config` / `minipod_clock` in a conftest.py (a dict
config there needs no file). A test (or a module, with `pytestmark`) marked
`@pytest.mark.minipod(config={...}, clock="manual")` gets a minipod of that configuration instead,
one per distinct configuration in the session, reset before each test; `minipod_factory(config=...,
clock=...)` starts one for the test alone.
"""
from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Set, Tuple, Union

import pytest

from ._contract_fixtures import MARKER_LINE, minipod_target, skip_emulator_only  # noqa: F401  (the fixture, registered here)
from ._report import report_sections
from .emulator import CLOCKS, Emulator
from .skip_sleeps import minipod_skip_sleeps  # noqa: F401  (the fixture, registered here)
from .errors import MinipodError
from .tls import reach

#: The ini keys of the plugin, with what each holds.
INI_KEYS = {
    "minipod_config": "emulator.config.json for the minipod fixture (relative to the ini file)",
    "minipod_clock": 'clock of the minipod fixture: "auto" (default), "real" or "manual"',
}
#: What the marker and the factory take (the Emulator's settings a test may choose).
MARKER_KEYS = ("config", "clock", "speed")

_ConfigValue = Union[Mapping[str, Any], str, None]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("minipod_config", INI_KEYS["minipod_config"], default=None)
    parser.addini("minipod_clock", INI_KEYS["minipod_clock"], default="auto")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "minipod(config=None, clock=None, speed=None): run the test on a minipod of this configuration (one per distinct configuration, reset before each test)")
    config.addinivalue_line("markers", MARKER_LINE)
    # pytest only warns of an unknown ini key; a misspelt key of minipod's would leave the fixture
    # on its default (a real clock where the test meant manual) and the test failing for no clear reason.
    for key in config.inicfg:
        if key.startswith("minipod") and key not in INI_KEYS:
            raise pytest.UsageError(_unknown("ini key", key, INI_KEYS))
    clock = config.getini("minipod_clock")
    if clock and clock not in CLOCKS:
        raise pytest.UsageError(f"ini key minipod_clock: {clock!r} is not a clock of minipod; use one of {', '.join(CLOCKS)}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    skip_emulator_only(item)


def _unknown(what: str, name: str, valid: Mapping[str, Any]) -> str:
    near = difflib.get_close_matches(name, list(valid), n=1)
    hint = f'did you mean "{near[0]}"? ' if near else ""
    return f"unknown {what} {name!r} of minipod: {hint}the valid ones are {', '.join(valid)}"


@pytest.fixture(scope="session")
def minipod_config(pytestconfig: pytest.Config) -> _ConfigValue:
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
def minipod_session(minipod_config: _ConfigValue, minipod_clock: str) -> Iterator[Emulator]:
    """The one minipod of the session (not reset between tests: use `minipod`)."""
    with Emulator(config=minipod_config, clock=minipod_clock) as emulator:
        yield emulator


@pytest.fixture(scope="session")
def _minipod_by_settings() -> Iterator[Dict[str, Emulator]]:
    """The minipods of marked tests, one per distinct configuration; stopped with the session."""
    started: Dict[str, Emulator] = {}
    yield started
    for emulator in started.values():
        emulator.stop()


def _marker_settings(request: pytest.FixtureRequest, config: _ConfigValue, clock: str) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The settings the closest `minipod` marker gives (the session's for what it leaves out), with their key; None unmarked."""
    marker = request.node.get_closest_marker("minipod")
    if marker is None:
        return None
    if marker.args:
        raise pytest.UsageError(f"@pytest.mark.minipod takes keywords only ({', '.join(MARKER_KEYS)}), got {marker.args!r}")
    for key in marker.kwargs:
        if key not in MARKER_KEYS:
            raise pytest.UsageError(_unknown("marker argument", key, dict.fromkeys(MARKER_KEYS)))
    settings = {"config": config, "clock": clock, **marker.kwargs}
    return json.dumps(settings, sort_keys=True, default=str), settings


@pytest.fixture
def minipod(request: pytest.FixtureRequest, minipod_config: _ConfigValue, minipod_clock: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The session's minipod (or the marker's), reset, with the service's library pointed at it for this test."""
    marked = _marker_settings(request, minipod_config, minipod_clock)
    if marked is None:
        emulator: Emulator = request.getfixturevalue("minipod_session")
    else:
        key, settings = marked
        started = request.getfixturevalue("_minipod_by_settings")
        if key not in started:
            started[key] = Emulator(**settings).start()
        emulator = started[key]
    emulator.reset()
    # Workers kept from earlier tests (keep=True): each polls again after the reset before the test runs.
    for worker in emulator._workers:
        if worker.kept:
            if worker.running:
                worker._wait_until(worker._idle, worker._timeout)
            else:
                worker._start_again()
    _point_runpod_at(emulator, monkeypatch)
    _reach(emulator, request)
    before = len(emulator._workers)
    request.node.stash[_SHOWN] = (emulator, {id(w): len(w.output) for w in emulator._workers})
    yield emulator
    busy = _busy(emulator)
    started_here = emulator._workers[before:]
    del emulator._workers[before:]
    for worker in started_here:
        if worker.kept:
            emulator._workers.append(worker)
        elif worker.worker_id in busy:
            # Its job is the ended test's: not waited for (a handler still running would hold the stop 10 s).
            worker.kept = False
            worker._end(at_once=True)
        else:
            worker.stop()
    _isolate_kept(emulator, busy)


def _busy(emulator: Emulator) -> Set[str]:
    """Ids of the workers that still hold a job, or are stopping one, or that minipod no longer counts as live."""
    if not any(w.running for w in emulator._workers):
        return set()
    return {w["id"] for w in emulator.workers() if w["jobIds"] or w.get("stoppingJobIds") or w["state"] not in ("idle", "running")}


def _isolate_kept(emulator: Emulator, busy: Set[str]) -> None:
    """
    Kept workers go on into the next test only as a fresh one would: idle, their process running.
    One that still holds a job of this test (or is stopping one) is ended now, at once, and started
    again after the reset (as is one whose process ended), so it takes nothing of this test's.
    """
    for worker in emulator._workers:
        if worker.kept and worker.worker_id in busy:
            worker._end(at_once=True)


#: What a failing test's report reads: the test's minipod, and how many lines each worker had when it began.
_SHOWN = pytest.StashKey[Tuple[Emulator, Dict[int, int]]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failing test's report gets the output of its workers and its jobs' timelines, one section each."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    shown = item.stash.get(_SHOWN, None)
    if report.failed and shown is not None and report.when in ("setup", "call"):
        for title, text in report_sections(*shown):
            report.sections.append((title, text))


@pytest.fixture
def minipod_factory(request: pytest.FixtureRequest, minipod_config: _ConfigValue, minipod_clock: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Emulator]]:
    """
    Starts minipods for this test alone: `minipod_factory(config={...}, clock="manual")` (what is
    left out is the session's); the last one started has the service's library pointed at it.
    Each stops when the test ends.
    """
    made: List[Emulator] = []

    def make(**settings: Any) -> Emulator:
        for key in settings:
            if key not in MARKER_KEYS:
                raise MinipodError(_unknown("setting", key, dict.fromkeys(MARKER_KEYS)))
        emulator = Emulator(**{"config": minipod_config, "clock": minipod_clock, **settings}).start()
        made.append(emulator)
        _point_runpod_at(emulator, monkeypatch)
        _reach(emulator, request)
        return emulator

    yield make
    for emulator in made:
        emulator.stop()


def _point_runpod_at(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_ENDPOINT_BASE_URL", emulator.v2_url)
    monkeypatch.setenv("RUNPOD_API_BASE_URL", emulator.url)
    runpod = _runpod()
    if runpod is not None:
        monkeypatch.setattr(runpod, "endpoint_url_base", emulator.v2_url)
        if not getattr(runpod, "api_key", None):
            monkeypatch.setattr(runpod, "api_key", "minipod-test-key")


def _reach(emulator: Emulator, request: pytest.FixtureRequest) -> None:
    """
    For the test: the SDKs' https calls to `{endpoint_id}.{minipod's host}` reach minipod (its
    authority trusted, its names resolved: `minipod.tls.reach`), undone when the test ends.
    """
    if emulator.ca_file is None:
        return
    scope = reach(emulator)
    scope.__enter__()
    request.addfinalizer(lambda: scope.__exit__(None, None, None))


def _runpod() -> Optional[Any]:
    """The service's library when it can be imported (the fixture serves other clients too)."""
    if "runpod" in sys.modules:
        return sys.modules["runpod"]
    try:
        import runpod  # noqa: F401  (imported here so it reads RUNPOD_ENDPOINT_BASE_URL once set)

        return runpod
    except ImportError:
        return None
