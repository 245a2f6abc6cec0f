"""RUNPOD_MAX_CONCURRENCY on minipod's SDK 2.x queue workers (minipod.runtimes.sdk_concurrency): up to N jobs held and run at once."""
import json
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

import pytest

from minipod.runtimes.sdk_concurrency import max_concurrency

from jobs import AUTH, submit, status

SCRIPT = Path(__file__).with_name("concurrent_script.py")


def held_by(minipod: Any, endpoint: str, count: int) -> List[str]:
    """The jobs the endpoint's worker holds, once it holds `count` of them (bounded: 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        workers = minipod.workers(endpoint)
        if workers and len(workers[0]["jobIds"]) == count:
            return sorted(workers[0]["jobIds"])
        assert time.monotonic() < deadline, f"the worker never held {count} jobs: {workers}"
        time.sleep(0.05)  # polling minipod's state, not waiting for the jobs


@pytest.mark.parametrize("value, limit", [(None, 1), ("2", 2), ("0", 1), ("many", 1), ("8", 8)])
def test_the_limit_is_read_from_the_env_and_is_at_least_one(value: Any, limit: int) -> None:
    assert max_concurrency({} if value is None else {"RUNPOD_MAX_CONCURRENCY": value}) == limit


def test_two_jobs_run_at_once_the_stop_channel_stops_one_and_the_other_runs_on(minipod) -> None:
    worker = minipod.worker(script=SCRIPT, endpoint="py-concurrent", env={"RUNPOD_MAX_CONCURRENCY": "2"})
    # The first job waits for an event only the second sets: with one job at a time it never ends.
    first = submit(minipod, "py-concurrent", {"wait": "a"})
    minipod.wait_for_job("py-concurrent", first, status="IN_PROGRESS", within_ms=60_000)
    second = submit(minipod, "py-concurrent", {"set": "a"})
    assert minipod.wait_for_job("py-concurrent", second, within_ms=60_000)["output"] == {"set": "a"}
    assert minipod.wait_for_job("py-concurrent", first, within_ms=60_000)["output"] == {"waited": "a"}

    # Two jobs held: the endpoint's worker shows both in progress, and a third waits in the queue.
    b, c = submit(minipod, "py-concurrent", {"wait": "b"}), submit(minipod, "py-concurrent", {"wait": "c"})
    assert held_by(minipod, "py-concurrent", 2) == sorted([b, c])
    # The heartbeat names both (bounded: the worker beats every second here).
    deadline = time.monotonic() + 30
    while not any(b in (r.get("query") or "") and c in (r.get("query") or "") for r in minipod.requests(endpoint="py-concurrent", operation="ping")["requests"]):
        assert time.monotonic() < deadline, "no heartbeat named both jobs"
        time.sleep(0.1)  # polling minipod's journal for the next heartbeat
    third = submit(minipod, "py-concurrent", {"set": "c"})
    assert status(minipod, "py-concurrent", third) == "IN_QUEUE"
    # Cancelling one stops that job alone; the third takes its place and frees the other.
    urllib.request.urlopen(urllib.request.Request(f"{minipod.url}/v2/py-concurrent/cancel/{b}", data=b"", method="POST", headers=AUTH), timeout=30).close()
    assert minipod.wait_for_job("py-concurrent", third, within_ms=60_000)["output"] == {"set": "c"}
    assert minipod.wait_for_job("py-concurrent", c, within_ms=60_000)["output"] == {"waited": "c"}
    assert status(minipod, "py-concurrent", b) == "CANCELLED"
    # Taken on job-take-batch while two places were free, with job_in_progress=1 while it held a job.
    batches = [r.get("query") or "" for r in minipod.requests(endpoint="py-concurrent", operation="job-take-batch")["requests"]]
    assert batches and all("batch_size=2" in q for q in batches)
    assert any("job_in_progress=1" in (r.get("query") or "") for r in minipod.requests(endpoint="py-concurrent", operation="job-take")["requests"])
    worker.stop()
    assert worker.process.returncode == 0
