"""A worker kept over tests (keep=True): started once, then every test gets it as a fresh one."""
import time

import pytest

import handlers

runpod = pytest.importorskip("runpod", reason="the service's library runpod is not installed: pip install runpod")

KEPT = {}


def test_a_kept_worker_starts_once(minipod):
    worker = minipod.worker(handlers.greet, endpoint="py-kept", keep=True)
    KEPT["worker"], KEPT["pid"] = worker, worker.process.pid
    assert runpod.Endpoint("py-kept").run_sync({"name": "one"}, timeout=60)["greeting"] == "hello, one"


def test_the_next_test_gets_it_running_at_no_cost_after_the_reset(minipod):
    began = time.monotonic()
    worker = minipod.worker(handlers.greet, endpoint="py-kept", keep=True)
    assert time.monotonic() - began < 1.0
    assert worker is KEPT["worker"] and worker.process.pid == KEPT["pid"]
    # minipod was reset (no job of the previous test), and the worker polls it again.
    assert minipod.requests(endpoint="py-kept", operation="run")["requests"] == []
    [seen] = minipod.workers("py-kept")
    assert seen["state"] == "idle" and seen["openPolls"] > 0
    out = runpod.Endpoint("py-kept").run_sync({"name": "two"}, timeout=60)
    assert out["greeting"] == "hello, two"


def test_a_job_left_running_is_not_carried_into_the_next_test(minipod):
    # Stopped by hand, a kept worker is kept no more: the endpoint is the next one's alone.
    KEPT["worker"].stop()
    worker = minipod.worker("handlers:nap", endpoint="py-kept", keep=True)
    KEPT["napper"], KEPT["napper_pid"] = worker, worker.process.pid
    job = runpod.Endpoint("py-kept").run({"seconds": 30})
    minipod.wait_for_job("py-kept", job.job_id, "IN_PROGRESS", within_ms=60_000)
    # The test ends with the job running on the worker.


def test_the_worker_that_held_it_was_restarted_idle(minipod):
    worker = minipod.worker("handlers:nap", endpoint="py-kept", keep=True)
    assert worker is KEPT["napper"] and worker.process.pid != KEPT["napper_pid"]
    [seen] = [w for w in minipod.workers("py-kept") if w["id"] == worker.worker_id]
    assert seen["state"] == "idle" and seen["jobIds"] == []
    assert runpod.Endpoint("py-kept").run_sync({"seconds": 0}, timeout=60) == {"slept": 0}
    worker.stop()


def test_a_kept_worker_stopped_by_hand_is_not_started_again(minipod):
    assert not KEPT["worker"].running and not KEPT["napper"].running
    assert not KEPT["worker"].kept and not KEPT["napper"].kept


def test_a_worker_of_one_test_left_running_a_job(minipod):
    KEPT["per_test"] = minipod.worker("handlers:nap", endpoint="py-kept")
    job = runpod.Endpoint("py-kept").run({"seconds": 60})
    minipod.wait_for_job("py-kept", job.job_id, "IN_PROGRESS", within_ms=60_000)


def test_is_ended_at_once_at_its_end_not_after_a_grace_period(minipod):
    worker = KEPT["per_test"]
    assert not worker.running
    assert any("again: killing the worker(s)" in line for line in worker.output), worker.output[-20:]
    assert not any("SIGKILL" in line and "after SIGTERM" in line for line in worker.output)
