"""minipod_skip_sleeps: the test's own sleeps on minipod's clock. Counted in sleeps and virtual time, never wall time."""
import asyncio
import json
import time
import urllib.request

import pytest


def _call(minipod, method, path, body=None):
    req = urllib.request.Request(minipod.v2_url + path, data=None if body is None else json.dumps(body).encode(), method=method, headers={"authorization": "k"})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read())


def test_a_polling_client_with_a_1_s_sleep_follows_a_10_s_job_in_virtual_time(minipod, minipod_skip_sleeps):
    start = minipod.now()
    job_id = _call(minipod, "POST", "/work/run", {"input": {"sleepMs": 10_000, "output": "done"}})["id"]
    while True:
        job = _call(minipod, "GET", f"/work/status/{job_id}")
        if job["status"] not in ("IN_QUEUE", "IN_PROGRESS"):
            break
        time.sleep(1)
    assert job["status"] == "COMPLETED" and job["executionTime"] == 10_000
    assert minipod_skip_sleeps.virtual == [1] * 10
    assert minipod_skip_sleeps.real == 0
    assert 10_000 <= minipod.now() - start < 11_000


def test_asyncio_sleep_waits_on_the_virtual_clock(minipod, minipod_skip_sleeps):
    start = minipod.now()

    async def wait():
        await asyncio.sleep(0)  # a yield: left to the event loop
        return await asyncio.sleep(120, "woke")

    assert asyncio.run(wait()) == "woke"
    assert minipod_skip_sleeps.virtual == [120]
    assert minipod_skip_sleeps.real == 1
    assert minipod.now() - start >= 120_000


def test_sleeps_are_real_again_after_the_test(minipod):
    assert time.sleep.__module__ == "time" and asyncio.sleep.__module__ == "asyncio.tasks"


def test_the_service_client_output_and_stream_complete_on_the_virtual_clock(minipod, minipod_skip_sleeps):
    runpod = pytest.importorskip("runpod", reason="the service's library (runpod) cannot be imported here")
    endpoint = runpod.Endpoint("work")
    job = endpoint.run({"sleepMs": 30_000, "output": {"answer": 42}})
    assert job.output(timeout=60) == {"answer": 42}
    polls = len(minipod_skip_sleeps.virtual)
    assert 30 <= polls <= 32
    streamed = endpoint.run({"stream": ["a", "b", "c"], "streamIntervalMs": 2_000, "sleepMs": 5_000})
    assert list(streamed.stream()) == ["a", "b", "c"]
    assert len(minipod_skip_sleeps.virtual) > polls
    assert minipod_skip_sleeps.real == 0
