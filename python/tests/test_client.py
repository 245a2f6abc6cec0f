"""The fixture with the service's own client, runpod.Endpoint, unchanged."""
import os

import pytest
import requests

import minipod as minipod_package

runpod = pytest.importorskip("runpod", reason="the service's library runpod is not installed: pip install runpod")

SESSION = {}


def test_points_the_library_at_the_session_minipod(minipod):
    assert runpod.endpoint_url_base == minipod.v2_url == os.environ["RUNPOD_ENDPOINT_BASE_URL"]
    assert os.environ["RUNPOD_API_BASE_URL"] == minipod.url
    assert minipod.url.startswith("http://127.0.0.1:")


def test_run_then_status_and_output(minipod):
    job = runpod.Endpoint("echo").run({"prompt": "hello"})
    assert minipod.wait_for_job("echo", job.job_id)["output"] == {"prompt": "hello"}
    assert job.status() == "COMPLETED"
    assert job.output() == {"prompt": "hello"}


def test_run_sync(minipod):
    assert runpod.Endpoint("echo").run_sync({"n": 1}, timeout=30) == {"n": 1}


def test_the_fixtures_clock_skips_ahead_while_a_client_waits(minipod):
    assert minipod.clock()["mode"] == "auto"
    before = minipod.now()
    # A virtual minute of sleep, and no one moves the clock: run_sync's /runsync is held on virtual time.
    assert runpod.Endpoint("work").run_sync({"sleepMs": 60_000, "output": "done"}, timeout=30) == "done"
    assert minipod.now() - before >= 60_000


def test_stream(minipod):
    job = runpod.Endpoint("work").run({"stream": ["a", "b", "c"], "streamIntervalMs": 10})
    assert list(job.stream()) == ["a", "b", "c"]


def test_cancel(minipod):
    job = runpod.Endpoint("work").run({"sleepMs": 600_000})
    minipod.wait_for_job("work", job.job_id, "IN_PROGRESS")
    assert job.cancel() == {"id": job.job_id, "status": "CANCELLED"}
    assert job.status() == "CANCELLED"


def test_a_ttl_expires_on_the_virtual_clock(minipod):
    job = runpod.Endpoint("parked").run({"input": {"x": 1}, "policy": {"ttl": 10_000}})
    assert job.status() == "IN_QUEUE"
    minipod.advance(10_001)
    with pytest.raises(requests.HTTPError) as gone:
        runpod.Endpoint("parked").rp_client.get(f"parked/status/{job.job_id}")
    assert gone.value.response.status_code == 404
    submitted, expired = minipod.events(job.job_id)
    assert expired["cause"] == "ttl expired" and 10_000 <= expired["at"] - submitted["at"] < 11_000


def test_a_429_on_status_is_retried_by_the_client(minipod):
    job = runpod.Endpoint("echo").run({"n": 2})
    minipod.wait_for_job("echo", job.job_id)
    minipod.faults.add({"type": "http", "status": 429, "retryAfter": 1}, endpoint="echo", operation="status", times=1)
    assert job.status() == "COMPLETED"
    assert [r["status"] for r in minipod.requests(endpoint="echo", operation="status")["requests"]] == [429, 200]


def test_a_429_on_run_reaches_the_caller(minipod):
    minipod.faults.add({"type": "http", "status": 429}, operation="run", times=1)
    with pytest.raises(requests.HTTPError) as refused:
        runpod.Endpoint("echo").run({"n": 3})
    assert refused.value.response.status_code == 429
    assert runpod.Endpoint("echo").run_sync({"n": 3}, timeout=30) == {"n": 3}


def test_an_unknown_fault_operation_is_refused_by_name(minipod):
    with pytest.raises(minipod_package.MinipodError, match='did you mean "run"'):
        minipod.faults.add({"type": "http", "status": 500}, operation="runn")


def test_reset_isolation_first_leaves_state_behind(minipod):
    SESSION["url"] = minipod.url
    minipod.faults.add({"type": "http", "status": 503}, endpoint="echo", operation="health")
    runpod.Endpoint("parked").run({"left": "behind"})
    assert len(minipod.faults.list()) == 1


def test_reset_isolation_second_sees_none_of_it(minipod):
    assert minipod.url == SESSION["url"]  # the same process: reset, not restarted
    assert minipod.faults.list() == []
    assert minipod.requests()["count"] == 0
    assert runpod.Endpoint("parked").health()["jobs"]["inQueue"] == 0
