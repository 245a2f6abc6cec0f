"""minipod.contract: the target the environment names, and the service's checks."""
import json

import pytest

from minipod import MinipodError
from minipod.contract import contract_target, emulator_only_reason, error_problems, handler_error, job_problems, target_from_env


def test_the_environment_names_a_target_and_maps_endpoint_names():
    target = target_from_env({"MINIPOD_TARGET_URL": "https://api.example.test/v2/", "MINIPOD_TARGET_KEY": "k", "MINIPOD_TARGET_ENDPOINTS": "worker=abc123, echo = def456"})
    assert (target.remote, target.base_url, target.api_key, target.emulator) == (True, "https://api.example.test/v2", "k", None)
    assert [target.endpoint("worker"), target.endpoint("echo")] == ["abc123", "def456"]
    with pytest.raises(MinipodError, match="names no endpoint 'other' \\(it has worker, echo\\)"):
        target.endpoint("other")
    assert target_from_env({}) is None


@pytest.mark.parametrize(
    "env, said",
    [
        ({"MINIPOD_TARGET_URL": "https://x/v2"}, "MINIPOD_TARGET_KEY must hold"),
        ({"MINIPOD_TARGET_URL": "x/v2", "MINIPOD_TARGET_KEY": "k"}, "must be an http"),
        ({"MINIPOD_TARGET_URL": "https://x/v2", "MINIPOD_TARGET_KEY": "k", "MINIPOD_TARGET_ENDPOINTS": "worker"}, "is not name=id"),
    ],
)
def test_a_target_half_given_is_refused_saying_what_is_missing(env, said):
    with pytest.raises(MinipodError, match=said):
        target_from_env(env)


def test_emulator_only_tests_are_skipped_with_a_reason_against_a_named_target():
    assert emulator_only_reason(env={}) is None
    assert emulator_only_reason("fault injection", env={"MINIPOD_TARGET_URL": "https://x/v2"}) == "needs fault injection, which https://x/v2 has not (MINIPOD_TARGET_URL)"


def test_job_problems_hold_a_job_to_the_service_envelope():
    assert job_problems({"id": "j", "status": "COMPLETED", "delayTime": 0, "executionTime": 3}, "COMPLETED") == []
    assert job_problems({"id": "j", "status": "TIMED_OUT"}, "TIMED_OUT") == []
    assert job_problems({"id": "j", "status": "FAILED", "error": {"m": 1}, "delayTime": True}, "FAILED") == [
        "delayTime: expected an integer of ms, got True",
        "error: a FAILED job carries its error as a string, got {'m': 1}",
    ]


def test_handler_error_reads_the_worker_runtime_json_and_a_plain_message():
    text = json.dumps({"error_type": "<class 'ValueError'>", "error_message": "model not loaded", "error_traceback": "Traceback"})
    assert handler_error({"error": text}) == {"message": "model not loaded", "type": "<class 'ValueError'>", "traceback": "Traceback"}
    assert handler_error({"error": "model not loaded"}) == {"message": "model not loaded"}


def test_error_problems_check_the_status_on_the_queue_and_problem_json_on_rest():
    assert error_problems(404, "anything", 404, "queue") == []
    assert error_problems(400, {"title": "Bad Request", "status": 400, "detail": "d", "errors": ["$.x: y"]}, 400, "rest") == []
    assert error_problems(400, {"status": 500}, 400, "rest") == ["title: expected a string", "status: the body's (500) is not the answer's (400)", "detail: expected a string"]


def test_contract_target_starts_a_minipod_when_nothing_is_named_and_calls_it_with_the_key():
    target = contract_target(config={"endpoints": [{"id": "echo", "handler": "echo"}]}, env={})
    try:
        assert target.remote is False and target.base_url == target.emulator.v2_url
        status, job = target.call("POST", "/echo/runsync", {"input": {"n": 1}})
        assert status == 200 and job["status"] == "COMPLETED" and job["output"] == {"n": 1}
        assert target.call("GET", "/echo/status/no-such-job")[0] == 404
    finally:
        target.close()
