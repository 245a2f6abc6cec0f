"""minipod's own job loop (minipod.runtimes.job_loop): the worker protocol without the service's library."""
import json
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from minipod import MinipodError
from minipod.runtimes.job_loop import Worker, error_of, result_of

from jobs import AUTH, submit

SCRIPT = Path(__file__).with_name("loop_script.py")


def test_results_errors_and_exceptions_are_sent_as_the_worker_library_sends_them(minipod) -> None:
    worker = minipod.worker(script=SCRIPT, endpoint="py")
    done = minipod.wait_for_job("py", submit(minipod, "py", {"text": "hi"}), within_ms=60_000)
    assert done["output"] == {"echo": "hi"}
    with pytest.raises(MinipodError, match="it went wrong"):
        minipod.wait_for_job("py", submit(minipod, "py", {"do": "fail"}), within_ms=60_000)
    with pytest.raises(MinipodError, match="no luck"):
        minipod.wait_for_job("py", submit(minipod, "py", {"do": "raise"}), within_ms=60_000)
    dones = minipod.requests(endpoint="py", operation="job-done")["requests"]
    assert dones[-1]["path"].startswith(f"/v2/py/job-done/{worker.worker_id}/")
    pings = minipod.requests(endpoint="py", operation="ping")["requests"]
    assert pings and all(r["status"] == 200 for r in pings)
    worker.stop()
    assert worker.process.returncode == 0


def test_a_cancelled_job_is_stopped_and_the_next_one_runs(minipod) -> None:
    worker = minipod.worker(script=SCRIPT, endpoint="py")
    held = submit(minipod, "py", {"do": "hold"})
    minipod.wait_for_job("py", held, status="IN_PROGRESS", within_ms=60_000)
    req = urllib.request.Request(f"{minipod.url}/v2/py/cancel/{held}", data=b"", method="POST", headers=AUTH)
    urllib.request.urlopen(req, timeout=30).close()
    assert minipod.wait_for_job("py", submit(minipod, "py", {"text": "after"}), within_ms=60_000)["output"] == {"echo": "after"}
    assert any(r["path"].startswith("/v2/py/job-stop/") for r in minipod.requests(endpoint="py", worker="only")["requests"])
    worker.stop()


def test_a_handler_result_becomes_the_job_done_body() -> None:
    assert result_of({"success": False, "error": "bad", "stdout": ""}) == {"output": {"success": False, "stdout": ""}, "error": "bad"}
    assert result_of({"error": "only"}) == {"error": "only"}
    assert result_of({"a": 1, "refresh_worker": True}) == {"output": {"a": 1}, "stopPod": True}
    assert result_of([1, 2]) == {"output": [1, 2]}
    report = json.loads(error_of(ValueError("no luck"))["error"])
    assert report["error_type"] == "<class 'ValueError'>" and report["error_message"] == "no luck"


class Recorded:
    """Stands for the connection to minipod: answers job-takes from a list, records every request."""

    def __init__(self, worker: Worker, jobs: List[Dict[str, Any]]) -> None:
        self.worker, self.jobs, self.calls = worker, jobs, []  # type: ignore[var-annotated]

    def request(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes] = None) -> Tuple[int, bytes]:
        self.calls.append((method, url.split("?")[0].rsplit("/", 2)[-2] if "job-done" in url else url.split("/")[-2], body))
        if "/job-take/" in url:
            if not self.jobs:
                self.worker.stopping.set()
                return 204, b""
            return 200, json.dumps(self.jobs.pop(0)).encode()
        return 200, b""

    def close(self) -> None:
        pass


def test_the_next_job_is_asked_for_the_moment_a_result_is_sent() -> None:
    env = {"RUNPOD_WEBHOOK_GET_JOB": "http://m/v2/e/job-take/$ID?gpu=x", "RUNPOD_WEBHOOK_POST_OUTPUT": "http://m/v2/e/job-done/$RUNPOD_POD_ID/$ID?gpu=x", "RUNPOD_POD_ID": "w1"}
    worker = Worker(lambda job: {"n": job["input"]["n"]}, env)
    conn = Recorded(worker, [{"id": "a", "input": {"n": 1}}, {"id": "b", "input": {"n": 2}}])
    waits: List[float] = []
    worker.stopping.wait = lambda timeout=None: waits.append(timeout) or False  # type: ignore[method-assign]
    worker.serve(conn)  # type: ignore[arg-type]
    assert [c[1] for c in conn.calls] == ["job-take", "w1", "job-take", "w1", "job-take"]
    assert [json.loads(c[2]) for c in conn.calls if c[2]] == [{"output": {"n": 1}}, {"output": {"n": 2}}]
    assert waits == []  # no pause between a result and the next job-take


def test_the_connection_reads_chunked_answers_and_opens_again_after_the_server_closed_it() -> None:
    import socket
    import threading

    from minipod.runtimes.job_loop import _Connection

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
    ]
    seen: List[bytes] = []

    def serve() -> None:
        for answers_on_this_connection in (answers[:2], answers[2:]):  # the first kept connection is then closed
            conn, _ = server.accept()
            reader = conn.makefile("rb")
            for answer in answers_on_this_connection:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    head += reader.readline()
                seen.append(head.split(b"\r\n")[0])
                conn.sendall(answer)
            reader.close()
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = _Connection(timeout=10)
    base = f"http://127.0.0.1:{port}"
    assert client.request("GET", f"{base}/a?x=1", {}) == (200, b"ok")
    assert client.request("GET", f"{base}/b", {}) == (200, b"abcde")
    assert client.request("GET", f"{base}/c", {}) == (204, b"")  # sent again on a new connection
    thread.join(10)
    server.close()
    assert seen == [b"GET /a?x=1 HTTP/1.1", b"GET /b HTTP/1.1", b"GET /c HTTP/1.1"]


def test_sigterm_during_a_job_lets_it_finish_and_send_its_result_then_ends_the_loop() -> None:
    env = {"RUNPOD_WEBHOOK_GET_JOB": "http://m/v2/e/job-take/$ID?gpu=x", "RUNPOD_WEBHOOK_POST_OUTPUT": "http://m/v2/e/job-done/$RUNPOD_POD_ID/$ID?gpu=x", "RUNPOD_POD_ID": "w1"}

    def handler(job: Dict[str, Any]) -> Dict[str, Any]:
        worker.on_signal(15, None)  # SIGTERM arrives while the job runs
        return {"n": job["input"]["n"]}

    worker = Worker(handler, env)
    conn = Recorded(worker, [{"id": "a", "input": {"n": 1}}, {"id": "b", "input": {"n": 2}}])
    worker.serve(conn)  # type: ignore[arg-type]
    assert [c[1] for c in conn.calls] == ["job-take", "w1"]
    assert json.loads(conn.calls[1][2]) == {"output": {"n": 1}}


def test_sigterm_while_waiting_for_a_job_leaves_the_held_job_take_at_once() -> None:
    env = {"RUNPOD_WEBHOOK_GET_JOB": "http://m/v2/e/job-take/$ID?gpu=x", "RUNPOD_WEBHOOK_POST_OUTPUT": "http://m/v2/e/job-done/$RUNPOD_POD_ID/$ID?gpu=x"}
    worker = Worker(lambda job: job, env)

    class Held(Recorded):
        def request(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes] = None) -> Tuple[int, bytes]:
            worker.on_signal(15, None)  # arrives while the job-take is held
            raise AssertionError("the signal leaves the held request")

    conn = Held(worker, [])
    worker.serve(conn)  # type: ignore[arg-type]
    assert worker.stopping.is_set()


def test_a_generator_handler_streams_each_item_then_ends_the_job_with_their_list() -> None:
    env = {
        "RUNPOD_WEBHOOK_GET_JOB": "http://m/v2/e/job-take/$ID?gpu=x",
        "RUNPOD_WEBHOOK_POST_OUTPUT": "http://m/v2/e/job-done/$RUNPOD_POD_ID/$ID?gpu=x",
        "RUNPOD_WEBHOOK_POST_STREAM": "http://m/v2/e/job-stream/$RUNPOD_POD_ID/$ID?gpu=x",
        "RUNPOD_POD_ID": "w1",
    }

    async def count(job: Dict[str, Any]) -> Any:
        for i in range(job["input"]["n"]):
            yield {"i": i}
        if job["input"].get("fail"):
            raise RuntimeError("no luck")

    urls: List[str] = []
    worker = Worker(count, env, aggregate_stream=True)
    conn = Recorded(worker, [{"id": "a", "input": {"n": 2}}, {"id": "b", "input": {"n": 1, "fail": True}}])
    worker.stream_conn = conn  # type: ignore[assignment]
    original = conn.request

    def request(method: str, url: str, headers: Dict[str, str], body: Optional[bytes] = None) -> Tuple[int, bytes]:
        urls.append(url.split("/v2/e/")[1])
        return original(method, url, headers, body)

    conn.request = request  # type: ignore[method-assign]
    worker.serve(conn)  # type: ignore[arg-type]
    posted = [(u, json.loads(c[2])) for u, c in zip(urls, conn.calls) if c[2]]
    assert posted[:3] == [
        ("job-stream/w1/a?gpu=x&isStream=false", {"output": {"i": 0}}),
        ("job-stream/w1/a?gpu=x&isStream=false", {"output": {"i": 1}}),
        ("job-done/w1/a?gpu=x&isStream=true", {"output": [{"i": 0}, {"i": 1}]}),
    ]
    assert posted[3] == ("job-stream/w1/b?gpu=x&isStream=false", {"output": {"i": 0}})
    assert posted[4][0] == "job-done/w1/b?gpu=x&isStream=true" and "no luck" in posted[4][1]["error"]
