"""The pytest side of `minipod.contract`: the fixture `minipod_target` and the marker `minipod_emulator_only`."""
from __future__ import annotations

from typing import Iterator

import pytest

from .contract import Target, emulator_only_reason, target_from_env, target_on

MARKER = "minipod_emulator_only"
MARKER_LINE = f"{MARKER}(needs=...): a test of what only minipod has (faults, clock, journal): skipped, saying why, against a target MINIPOD_TARGET_URL names"


@pytest.fixture(scope="session")
def minipod_target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The contract suite's target: the one MINIPOD_TARGET_URL names, else the session's minipod (`minipod_config`, `minipod_clock`)."""
    named = target_from_env()
    if named is not None:
        yield named
        return
    yield target_on(request.getfixturevalue("minipod_session"))


def skip_emulator_only(item: pytest.Item) -> None:
    """Skips a test marked `minipod_emulator_only` when the target is not a minipod of the suite's own."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return
    reason = emulator_only_reason(*marker.args, **marker.kwargs)
    if reason is not None:
        pytest.skip(f"emulator only: {reason}")
