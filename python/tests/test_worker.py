"""Handlers run by the service's real worker runtime (runpod.serverless.start), started by the fixture."""
from pathlib import Path

import pytest

import handlers
from minipod import MinipodError

runpod = pytest.importorskip("runpod", reason="the service's library runpod is not installed: pip install runpod")

LAST = {}


def reverse(job):
    """A handler written in the test module itself: no script needed."""
    if not job["input"]["text"]:
        raise ValueError("nothing to reverse here")
    return job["input"]["text"][::-1]


def test_a_handler_function_from_a_module(minipod):
    worker = minipod.worker(handlers.greet, endpoint="py")
    LAST["worker"] = worker
    out = runpod.Endpoint("py").run_sync({"name": "minipod"}, timeout=60)
    assert out["greeting"] == "hello, minipod"
    job = minipod.requests(endpoint="py", operation="job-done")["requests"][0]
    assert job["path"].startswith(f"/v2/py/job-done/{worker.worker_id}/")


def test_the_previous_tests_worker_was_stopped_with_it(minipod):
    assert not LAST["worker"].running


def test_a_handler_defined_in_the_test_file_and_its_exception(minipod):
    minipod.worker(reverse, endpoint="py")
    assert runpod.Endpoint("py").run_sync({"text": "abc"}, timeout=60) == "cba"
    job = runpod.Endpoint("py").run({"text": ""})
    with pytest.raises(MinipodError, match="ended FAILED.*nothing to reverse here"):
        minipod.wait_for_job("py", job.job_id, within_ms=60_000)


def test_a_generator_streams_through_the_runtime(minipod):
    minipod.worker("handlers:count", endpoint="py-stream", options={"return_aggregate_stream": True})
    job = runpod.Endpoint("py-stream").run({"n": 3})
    assert list(job.stream()) == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert job.output(timeout=30) == [{"i": 0}, {"i": 1}, {"i": 2}]


def test_a_script_with_its_environment(minipod):
    minipod.worker(script=Path(__file__).with_name("worker_script.py"), endpoint="py", env={"GREETING_MODE": "loud"})
    assert runpod.Endpoint("py").run_sync({"text": "hi"}, timeout=60) == {"shout": "HI", "mode": "loud"}


def test_a_handler_the_worker_cannot_import_is_refused_with_how_to_fix(minipod):
    def local(job):
        return job

    with pytest.raises(MinipodError, match="define it at the top level of a module"):
        minipod.worker(local, endpoint="py")
    with pytest.raises(MinipodError, match='not served by worker processes; give it "handler": "external"'):
        minipod.worker(handlers.greet, endpoint="echo")
