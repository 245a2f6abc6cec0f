"""Readers and actions of the control API (/_emulator) that `Emulator` has: webhooks, endpoints, snapshots."""
from __future__ import annotations

import urllib.parse
from typing import Any, Dict, List, Optional

from .errors import MinipodError


class Control:
    """What `Emulator` answers besides its life and its clock; it gives them `_call`."""

    def _call(self, method: str, path: str, body: Any = None, timeout: float = 60.0) -> Any:
        raise NotImplementedError

    def webhooks(self, job_id: Optional[str] = None) -> List[Dict[str, Any]]:
        """Every webhook attempt (of one job, or all), oldest first: `{jobId, endpointId, url, attempt, status?, error?, at}`."""
        query = f"?{urllib.parse.urlencode({'jobId': job_id})}" if job_id is not None else ""
        return self._call("GET", f"/_emulator/webhooks{query}")["deliveries"]

    def endpoints(self) -> List[Dict[str, Any]]:
        """The endpoints served, with their settings, workers and jobs counted by status (GET /_emulator/endpoints)."""
        return self._call("GET", "/_emulator/endpoints")["endpoints"]

    # -- snapshots ------------------------------------------------------------------------------

    def snapshot(self, name: str) -> Dict[str, Any]:
        """Saves the whole state (jobs, endpoints, resources, journal, clock) under `name`, in memory: `{name, at, bytes}`."""
        return self._call("POST", f"/_emulator/snapshots/{_quote(name)}", {})

    def restore(self, name: str) -> Dict[str, Any]:
        """Puts a snapshot back, clock included (jobs that were running go back to the queue)."""
        return self._call("POST", f"/_emulator/snapshots/{_quote(name)}/restore", {})

    def delete_snapshot(self, name: str) -> bool:
        """Deletes a snapshot, freeing its memory; False when there is none of that name."""
        try:
            self._call("DELETE", f"/_emulator/snapshots/{_quote(name)}")
        except MinipodError as e:
            if e.status == 404:
                return False
            raise
        return True

    def snapshots(self) -> List[Dict[str, Any]]:
        """The snapshots held: `{name, at, bytes}` each."""
        return self._call("GET", "/_emulator/snapshots")["snapshots"]


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")
