"""What a failing test's report shows of minipod: the workers' output during the test, and its jobs' timelines."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .emulator import Emulator

#: At most this many of a worker's lines, and of the test's jobs, go into a report (the last ones).
LINES_MAX = 200
JOBS_MAX = 20


def report_sections(emulator: Emulator, marks: Dict[int, int]) -> List[Tuple[str, str]]:
    """
    The sections pytest adds to a failing test's report: one per worker running during the test
    (the lines it wrote since the test began; `marks` holds, by id(worker), how many it had then),
    and one with the timeline of each job of the test (every job minipod holds: it was reset).
    """
    sections: List[Tuple[str, str]] = []
    for worker in emulator._workers:
        written = worker.output[marks.get(id(worker), 0):]
        # The runtime's debug lines (every poll for work) would push the handler's out of view.
        lines = [line for line in written if '"level": "DEBUG"' not in line]
        if not lines:
            continue
        notes = []
        if len(lines) > LINES_MAX:
            notes.append(f"{len(lines) - LINES_MAX} earlier lines left out")
        if len(written) > len(lines):
            notes.append(f"{len(written) - len(lines)} debug lines of the worker runtime left out: see the Worker's output")
        cut = "".join(f"({note})\n" for note in notes)
        name = worker.worker_id or f"of endpoint {worker.endpoint}"
        sections.append((f"minipod worker {name}{' (kept)' if worker.kept else ''}", cut + "\n".join(lines[-LINES_MAX:])))
    try:
        sections += _timelines(emulator)
    except Exception as e:  # noqa: BLE001  (a report must not fail for what it adds)
        sections.append(("minipod jobs", f"could not read the jobs from minipod: {e}"))
    return sections


def _timelines(emulator: Emulator) -> List[Tuple[str, str]]:
    if emulator._process is None or emulator._process.poll() is not None:
        return []
    page: Dict[str, Any] = emulator._call("GET", f"/_emulator/jobs?limit={JOBS_MAX}", timeout=5)
    jobs = list(reversed(page["jobs"]))  # oldest first
    if not jobs:
        return []
    out: List[str] = []
    if page["count"] > len(jobs):
        out.append(f"({page['count'] - len(jobs)} earlier jobs left out)")
    for job in jobs:
        worker = f" (worker {job['workerId']})" if job.get("workerId") else ""
        out.append(f"{job['id']} on {job['endpointId']}: {job['status']}{worker}")
        for event in emulator.events(job["id"]):
            at = f"+{event['at'] - job['createdAt']} ms"
            out.append(f"  {at:>12}  {event.get('from') or '-'} -> {event.get('to') or 'deleted'}: {event.get('cause', '')}")
    return [("minipod jobs of the test (their timelines, virtual time since submission)", "\n".join(out))]
