"""`Faults`: the fault rules of a running minipod."""
from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

if TYPE_CHECKING:
    from .emulator import Emulator


class Faults:
    """The fault rules of a running minipod (`/_emulator/faults`): see docs/control-api.md#fault-injection."""

    def __init__(self, emulator: "Emulator") -> None:
        self._emulator = emulator

    def add(
        self,
        fault: Mapping[str, Any],
        *,
        endpoint: Optional[str] = None,
        operation: Optional[str] = None,
        times: Optional[int] = None,
        probability: Optional[float] = None,
        after: Optional[int] = None,
    ) -> Dict[str, Any]:
        """
        Adds a rule and answers it with its `id`: e.g. `add({"type": "http", "status": 429, "retryAfter": 1},
        operation="run", times=1)`. An unknown operation or fault type raises MinipodError naming the
        nearest valid one.
        """
        rule: Dict[str, Any] = {"fault": dict(fault)}
        for key, value in (("endpoint", endpoint), ("operation", operation), ("times", times), ("probability", probability), ("after", after)):
            if value is not None:
                rule[key] = value
        return self._emulator._call("POST", "/_emulator/faults", rule)

    def list(self) -> List[Dict[str, Any]]:
        """Every rule, with how often it matched and fired."""
        return self._emulator._call("GET", "/_emulator/faults")["faults"]

    def remove(self, rule_id: str) -> None:
        """Removes one rule by its id."""
        self._emulator._call("DELETE", f"/_emulator/faults/{urllib.parse.quote(rule_id, safe='')}")

    def clear(self) -> int:
        """Removes every rule; answers how many there were."""
        return int(self._emulator._call("DELETE", "/_emulator/faults")["removed"])
