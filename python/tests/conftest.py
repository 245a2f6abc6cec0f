"""The package's own tests: the fixture's config, one minipod for the session."""
from typing import Any, Dict

import pytest


@pytest.fixture(scope="session")
def minipod_config() -> Dict[str, Any]:
    return {
        "endpoints": [
            {"id": "echo", "handler": "echo", "workersMin": 1, "coldStartMs": 0},
            {"id": "work", "handler": "scripted", "workersMin": 1, "coldStartMs": 0},
            {"id": "parked", "handler": "echo", "workersMin": 0, "workersMax": 0},
            {"id": "py", "handler": "external"},
            {"id": "py-stream", "handler": "external"},
            {"id": "py-kept", "handler": "external"},
            {"id": "py-concurrent", "handler": "external"},
        ],
        "externalWorkers": {"pingIntervalMs": 1000},
    }
