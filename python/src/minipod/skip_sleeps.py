"""
The test's own sleeps on minipod's clock: the pytest fixture `minipod_skip_sleeps`, and
`clock_sleep` under it.

A client that polls (`/status`, then `time.sleep(1)`, again) waits in real time while the jobs it
polls run on minipod's virtual clock. Asked for by a test, `minipod_skip_sleeps` routes the test's
`time.sleep` and `asyncio.sleep` through that clock for the test's duration: a sleep returns once
that much virtual time has passed, at once on the auto clock while nothing runs on real time (the
jobs' timers on the way fire in order), and in step with the work while a real worker is busy.
The service's own client (`runpod.Endpoint(...).run(...).output()` and `stream()`, which sleep a
second a poll) then completes in milliseconds.
"""
from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Iterator, List

import pytest

from .emulator import Emulator


def clock_sleep(emulator: Emulator, seconds: float) -> int:
    """Sleeps `seconds` of minipod's virtual time (`POST /_emulator/clock/sleep`); answers the virtual time then, epoch ms."""
    ms = max(0, round(seconds * 1000))
    # On the auto clock this answers at once unless real work runs: then in step with it, so the
    # wall wait is at most about the sleep itself.
    return int(emulator._call("POST", "/_emulator/clock/sleep", {"ms": ms}, timeout=seconds + 60.0)["now"])


class SkippedSleeps:
    """What `minipod_skip_sleeps` did: the sleeps it put on minipod's clock, and those it left to the wall."""

    def __init__(self) -> None:
        #: The seconds of each sleep taken on minipod's clock, in order.
        self.virtual: List[float] = []
        #: Sleeps left to real time: of zero or less (a yield), or made by another thread than the test's.
        self.real = 0


@pytest.fixture
def minipod_skip_sleeps(minipod: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[SkippedSleeps]:
    """
    For this test: `time.sleep` (in the test's thread) and `asyncio.sleep` (of more than 0 s) wait
    on the clock of the `minipod` fixture's emulator instead of the wall. A module that imported
    the function itself (`from time import sleep`) keeps the real one.
    """
    record = SkippedSleeps()
    real_sleep = time.sleep
    real_async_sleep = asyncio.sleep
    test_thread = threading.get_ident()

    def sleep(seconds: float) -> None:
        if seconds <= 0 or threading.get_ident() != test_thread:
            record.real += 1
            return real_sleep(seconds)
        record.virtual.append(seconds)
        clock_sleep(minipod, seconds)
        return None

    async def async_sleep(delay: float, result: Any = None) -> Any:
        if delay <= 0:
            record.real += 1
            return await real_async_sleep(delay, result)
        record.virtual.append(delay)
        await asyncio.get_running_loop().run_in_executor(None, clock_sleep, minipod, delay)
        return result

    monkeypatch.setattr(time, "sleep", sleep)
    monkeypatch.setattr(asyncio, "sleep", async_sleep)
    yield record
