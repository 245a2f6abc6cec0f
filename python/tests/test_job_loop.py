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

    def exchange(self, request: Any) -> Tuple[int, bytes]:
        return self.request(request.method, request.url, request.headers, request.body)

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


PIPELINED_ENV = {
    "RUNPOD_WEBHOOK_GET_JOB": "http://m/v2/e/job-take/$ID?gpu=x",
    "RUNPOD_WEBHOOK_POST_OUTPUT": "http://m/v2/e/job-done/$RUNPOD_POD_ID/$ID?gpu=x",
    "RUNPOD_POD_ID": "w1",
    "MINIPOD_WORKER_PIPELINING": "1",
}


class Pipelined:
    """Stands for the connection in a process of minipod's: answers from a script, records every request as it is sent."""

    def __init__(self, worker: Worker, script: List[Any]) -> None:
        self.worker, self.script, self.sent, self.closed = worker, script, [], 0  # type: ignore[var-annotated]

    @staticmethod
    def _name(url: str, body: Optional[bytes]) -> str:
        path, _, query = url.partition("?")
        kind = path.split("/")[5]
        if kind == "job-take":
            return f"job-take {query.split('&')[-1]}"
        return f"{kind} {path.rsplit('/', 1)[-1]} {json.loads(body or b'null')}"

    def _next(self) -> Tuple[int, bytes]:
        if not self.script:
            self.worker.stopping.set()
            return 204, b""
        step = self.script.pop(0)
        if isinstance(step, BaseException):
            raise step
        status, job = step
        return status, json.dumps(job).encode() if job is not None else b""

    def request(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes] = None) -> Tuple[int, bytes]:
        self.sent.append([self._name(url, body)])
        return self._next()

    def exchange(self, request: Any) -> Tuple[int, bytes]:
        return self.request(request.method, request.url, request.headers, request.body)

    def pipelined(self, first: Tuple[str, str, Dict[str, str], Optional[bytes]], then: Tuple[str, str, Dict[str, str], Optional[bytes]]) -> Tuple[int, bytes]:
        self.sent.append([self._name(first[1], first[3]), self._name(then[1], then[3])])
        return self._next()

    def answer(self) -> Tuple[int, bytes]:
        return self._next()

    def close(self) -> None:
        self.closed += 1


def job(name: str, n: int) -> Tuple[int, Dict[str, Any]]:
    return 200, {"id": name, "input": {"n": n}}


def test_in_a_process_of_minipods_a_result_and_the_next_job_take_go_in_one_write() -> None:
    worker = Worker(lambda job: {"n": job["input"]["n"]}, PIPELINED_ENV)
    conn = Pipelined(worker, [job("a", 1), (200, {"id": "a", "status": "COMPLETED"}), job("b", 2), (200, {"id": "b", "status": "COMPLETED"})])
    worker.serve(conn)  # type: ignore[arg-type]
    assert conn.sent == [
        ["job-take job_in_progress=0"],
        ["job-done a {'output': {'n': 1}}", "job-take job_in_progress=1"],
        ["job-done b {'output': {'n': 2}}", "job-take job_in_progress=1"],
    ]


def test_a_result_refused_is_not_sent_again_and_the_job_take_behind_it_is_left_for_one_saying_no_job_is_held() -> None:
    worker = Worker(lambda job: {"n": job["input"]["n"]}, PIPELINED_ENV)
    # job-done answered 500 (a fault rule): the job-take sent behind it is never read.
    conn = Pipelined(worker, [job("a", 1), (500, {"error": "injected"}), job("b", 2), (200, {"id": "b", "status": "COMPLETED"})])
    worker.serve(conn)  # type: ignore[arg-type]
    assert conn.sent == [
        ["job-take job_in_progress=0"],
        ["job-done a {'output': {'n': 1}}", "job-take job_in_progress=1"],
        ["job-take job_in_progress=0"],
        ["job-done b {'output': {'n': 2}}", "job-take job_in_progress=1"],
    ]
    assert conn.closed >= 2  # the connection left after the refusal (and at the end)


def test_a_connection_closed_before_the_result_was_acknowledged_sends_it_again_alone() -> None:
    from minipod.runtimes.job_loop import _Closed

    worker = Worker(lambda job: {"n": job["input"]["n"]}, PIPELINED_ENV)
    conn = Pipelined(worker, [job("a", 1), _Closed(), (200, {"id": "a", "status": "COMPLETED"})])
    worker.serve(conn)  # type: ignore[arg-type]
    assert conn.sent == [
        ["job-take job_in_progress=0"],
        ["job-done a {'output': {'n': 1}}", "job-take job_in_progress=1"],
        ["job-done a {'output': {'n': 1}}"],
        ["job-take job_in_progress=0"],
    ]


def test_outside_minipods_processes_each_request_waits_for_the_answer_before_it() -> None:
    env = {k: v for k, v in PIPELINED_ENV.items() if k != "MINIPOD_WORKER_PIPELINING"}
    worker = Worker(lambda job: {"n": job["input"]["n"]}, env)
    conn = Pipelined(worker, [job("a", 1), (200, {"id": "a", "status": "COMPLETED"})])
    worker.serve(conn)  # type: ignore[arg-type]
    assert conn.sent == [["job-take job_in_progress=0"], ["job-done a {'output': {'n': 1}}"], ["job-take job_in_progress=0"]]


def test_the_connection_sends_two_requests_in_one_write_and_reads_their_answers_in_order() -> None:
    import socket
    import threading

    from minipod.runtimes.job_loop import _Connection

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)
    port = server.getsockname()[1]
    heads: List[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        conn.settimeout(10)
        data = b""
        # Both requests arrive before anything is answered: a client waiting for the first answer would hang here.
        while data.count(b"\r\n\r\n") < 2 or not data.endswith(b"\r\n\r\n"):
            data += conn.recv(65536)
        heads.extend(line.replace(b"{}", b"") for line in data.split(b"\r\n") if b"HTTP/1.1" in line)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndoneHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ntake")
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = _Connection(timeout=10)
    base = f"http://127.0.0.1:{port}"
    assert client.pipelined(("POST", f"{base}/done", {}, b"{}"), ("GET", f"{base}/take?job_in_progress=1", {}, None)) == (200, b"done")
    assert client.answer() == (200, b"take")
    thread.join(10)
    server.close()
    client.close()
    assert heads == [b"POST /done HTTP/1.1", b"GET /take?job_in_progress=1 HTTP/1.1"]


def test_job_done_names_the_job_in_its_url_percent_encoded_where_the_url_needs_it() -> None:
    from minipod.runtimes.job_loop import _request

    env = {**PIPELINED_ENV, "RUNPOD_AI_API_KEY": "key"}
    worker = Worker(lambda job: job, env)
    head = b"Host: m\r\nAuthorization: key\r\nUser-Agent: "
    for job_id, in_url in [("sync-1a2b-u1", "sync-1a2b-u1"), ("a b/c?d#e%", "a%20b%2Fc%3Fd%23e%25"), ("é", "%C3%A9")]:
        for body in ({"output": 1}, {"output": "a longer one"}):
            post = worker._post({"id": job_id}, body)
            sent = json.dumps(body).encode()
            assert post.url == f"http://m/v2/e/job-done/w1/{in_url}?gpu=x&isStream=false"
            assert post.data.startswith(f"POST /v2/e/job-done/w1/{in_url}?gpu=x&isStream=false HTTP/1.1\r\n".encode() + head)
            assert post.data.endswith(f"Content-Type: application/json\r\nContent-Length: {len(sent)}\r\n\r\n".encode() + sent)
            # The same bytes as the request made whole from its URL.
            assert post.data == _request("POST", post.url, post.headers, post.body).data
    take = worker._take_request("1")
    assert take.data.startswith(b"GET /v2/e/job-take/w1?gpu=x&job_in_progress=1 HTTP/1.1\r\n" + head) and take.data.endswith(b"\r\n\r\n")
    assert worker._take_request("1") is take and worker._take_request("0").url.endswith("?gpu=x&job_in_progress=0")
