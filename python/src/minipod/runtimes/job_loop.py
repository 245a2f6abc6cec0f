"""
The job loop of minipod's queue workers: the worker protocol a process speaks to take jobs from
minipod, run them and answer them, in the standard library alone (no worker runtime to install).

    from minipod.runtimes.job_loop import serve
    serve(handler)        # handler(job) -> result (a coroutine is awaited); runs until SIGTERM

It reads what minipod (or the service) gives a worker process in its environment:
`RUNPOD_WEBHOOK_GET_JOB` (the job-take URL, `$ID` the worker id), `RUNPOD_WEBHOOK_POST_OUTPUT`
(job-done, `$RUNPOD_POD_ID` the worker id and `$ID` the job's, percent-encoded where a URL needs
it), `RUNPOD_WEBHOOK_PING` (the heartbeat) every `RUNPOD_PING_INTERVAL` ms, `RUNPOD_POD_ID` and
`RUNPOD_AI_API_KEY` (sent as `Authorization`). Jobs run one at a time, each the moment it is taken: the job-take is asked again
as soon as the previous result is posted, and held by minipod while its queue is empty, so no sleep
of the loop's own sits between a job being queued and its handler running. In the processes minipod
starts (`MINIPOD_WORKER_PIPELINING=1` in their environment), a result and the next job-take go in one
write on the kept connection (HTTP/1.1 pipelining; the job-take says `job_in_progress=1`, since
minipod may read it before the result); elsewhere (the service, a proxy) each request waits for the
answer before it.

A result is sent as the worker library sends it: a handler's dict is the job's `output`, with its
`error` field (if true) lifted out to fail the job and `refresh_worker` to `stopPod`; an exception
fails the job with the library's error report (`error_type`, `error_message`, `error_traceback`,
...). The stop channel (the job-take URL with `/job-stop/`) is long-polled beside the loop: a job it
names is cancelled (an async handler sees `asyncio.CancelledError`) and nothing is sent for it.
SIGTERM (or SIGINT) ends the loop: at once when idle, after the running job's result otherwise.
"""
from __future__ import annotations

import asyncio
import contextlib
import http.client
import inspect
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import traceback
import urllib.parse
import uuid
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from .. import __version__

Handler = Callable[[Dict[str, Any]], Any]

#: What the heartbeat and error reports give as the worker library's version.
VERSION = f"minipod-{__version__}"


class _Connection:
    """
    One keep-alive HTTP/1.1 connection to minipod, opened again when it is closed. Its own few lines
    rather than http.client's, whose header parsing costs more than the handler of a small call; a
    request on a reused connection the server has meanwhile closed is sent again on a new one.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.sock: Optional[socket.socket] = None
        self.reader: Any = None
        self.netloc = ""

    def _open(self, parts: urllib.parse.SplitResult) -> None:
        self.close()
        https = parts.scheme == "https"
        host = parts.hostname or "127.0.0.1"
        sock = socket.create_connection((host, parts.port or (443 if https else 80)), timeout=self.timeout)
        if https:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock, self.reader, self.netloc = sock, sock.makefile("rb"), parts.netloc

    @staticmethod
    def _bytes(method: str, parts: urllib.parse.SplitResult, headers: Dict[str, str], body: Optional[bytes]) -> bytes:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        head = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
        if body is not None or method == "POST":
            head.append(f"Content-Length: {len(body or b'')}")
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b"")

    def request(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes] = None) -> Tuple[int, bytes]:
        return self.exchange(_request(method, url, headers, body))

    def exchange(self, request: "_Request") -> Tuple[int, bytes]:
        """Sends a request made beforehand (`_request`) and reads its answer; sent again on a new connection when a kept one was closed."""
        parts, data = request.parts, request.data
        for attempt in (0, 1):
            reused = self.sock is not None and self.netloc == parts.netloc
            if not reused:
                self._open(parts)
            try:
                assert self.sock is not None
                self.sock.sendall(data)
                return self._answer()
            except _Closed:
                self.close()
                if not reused or attempt == 1:
                    raise ConnectionError("minipod closed the connection") from None
            except BaseException:
                self.close()
                raise
        raise ConnectionError("unreachable")

    def _line(self) -> bytes:
        line = self.reader.readline(65537)
        if len(line) > 65536:
            raise http.client.HTTPException("an answer's header line is too long")
        return line

    def _answer(self) -> Tuple[int, bytes]:
        try:
            status_line = self._line()
        except ConnectionError:
            raise _Closed() from None
        if not status_line:
            raise _Closed()
        fields = status_line.split(None, 2)
        if len(fields) < 2 or not fields[0].startswith(b"HTTP/"):
            raise http.client.HTTPException(f"not an HTTP answer: {status_line[:80]!r}")
        status, length, chunked, close = int(fields[1]), None, False, fields[0] == b"HTTP/1.0"
        while True:
            line = self._line()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value
            elif name == b"connection":
                close = value == b"close"
        if status == 204 or status == 304 or status < 200:
            body = b""
        elif chunked:
            body = self._chunks()
        elif length is not None:
            body = self._exactly(length)
        else:
            body, close = self.reader.read(), True
        if close:
            self.close()
        return status, body

    def _exactly(self, n: int) -> bytes:
        data = self.reader.read(n)
        if len(data) != n:
            raise ConnectionError("minipod closed the connection in an answer")
        return data

    def _chunks(self) -> bytes:
        parts = []
        while True:
            size = int(self._line().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self._line() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(self._exactly(size))
            self._line()

    def pipelined(self, first: Tuple[Any, ...], then: Tuple[Any, ...]) -> Tuple[int, bytes]:
        """
        Sends two requests to the same host in one write (HTTP/1.1 pipelining on the kept
        connection) and reads the first's answer: the second's follows, read with `answer()`.
        Each is a `_Request` or `(method, url, headers, body)`.
        Raises `_Closed` when the connection was closed before the first answer (it may or may
        not have been received), ConnectionError when it could not be opened.
        """
        made, then_made = (r if isinstance(r, _Request) else _request(*r) for r in (first, then))
        parts = made.parts
        if then_made.parts.netloc != parts.netloc:
            raise ValueError("pipelined requests go to one host")
        data = made.data + then_made.data
        if self.sock is None or self.netloc != parts.netloc:
            self._open(parts)
        try:
            assert self.sock is not None
            self.sock.sendall(data)
            return self._answer()
        except (_Closed, OSError):
            self.close()
            raise _Closed() from None
        except BaseException:
            self.close()
            raise

    def answer(self) -> Tuple[int, bytes]:
        """The answer of a request sent before (the second of `pipelined`)."""
        if self.sock is None:
            raise _Closed()
        try:
            return self._answer()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.reader.close()
                self.sock.close()
            self.sock = self.reader = None


class _Closed(Exception):
    """The server closed a kept connection before answering."""


class _Request(NamedTuple):
    """A request with its bytes made (`_request`): what `_Connection.exchange` sends, as often as asked."""

    method: str
    url: str
    headers: Dict[str, str]
    body: Optional[bytes]
    parts: urllib.parse.SplitResult
    data: bytes


def _request(method: str, url: str, headers: Dict[str, str], body: Optional[bytes] = None) -> _Request:
    parts = urllib.parse.urlsplit(url)
    return _Request(method, url, headers, body, parts, _Connection._bytes(method, parts, headers, body))


def _with_query(url: str, **params: str) -> str:
    return url + ("&" if "?" in url else "?") + urllib.parse.urlencode(params)


#: A job id as it goes in a URL unchanged; any other is percent-encoded (`/`, `?`, `#`, spaces...).
_PLAIN_ID = re.compile(r"[A-Za-z0-9._~-]+")


def _in_url(job_id: str) -> str:
    return job_id if _PLAIN_ID.fullmatch(job_id) else urllib.parse.quote(job_id, safe="")


class _Posts:
    """
    The POSTs of a job's results to one URL (job-done or job-stream, `$ID` the job's id), made
    from bytes prepared once: all but the job id and the body are the same for every job.
    """

    def __init__(self, url: str, headers: Dict[str, str]) -> None:
        self.url, self.headers = url, headers
        parts = urllib.parse.urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        # The job id goes in the request's target only (anywhere else, each request is made whole).
        self.target = target if "$ID" in target and "$ID" not in parts.netloc else None
        rest = [" HTTP/1.1", f"Host: {parts.netloc}", *(f"{k}: {v}" for k, v in headers.items()), "Content-Length: "]
        self.rest = "\r\n".join(rest).encode("latin-1")
        self.parts = parts

    def of(self, job_id: str, body: bytes) -> _Request:
        quoted = _in_url(job_id)
        url = self.url.replace("$ID", quoted)
        if self.target is None:
            return _request("POST", url, self.headers, body)
        head = b"POST " + self.target.replace("$ID", quoted).encode("latin-1") + self.rest
        return _Request("POST", url, self.headers, body, self.parts, b"%s%d\r\n\r\n%s" % (head, len(body), body))


def result_of(output: Any) -> Dict[str, Any]:
    """The body job-done is sent for a handler's return value."""
    result: Dict[str, Any] = {}
    if isinstance(output, dict):
        output = dict(output)
        error = output.pop("error", None)
        refresh = output.pop("refresh_worker", None)
        if output != {}:
            result["output"] = output
        if error:
            result["error"] = error
        if refresh:
            result["stopPod"] = True
    else:
        result["output"] = output
    return result


def error_of(e: BaseException) -> Dict[str, Any]:
    """The body job-done is sent for a handler that raised: the library's report, as a JSON string."""
    report = {
        "error_type": str(type(e)),
        "error_message": str(e),
        "error_traceback": "".join(traceback.format_exception(type(e), e, e.__traceback__)),
        "hostname": os.environ.get("RUNPOD_POD_HOSTNAME", "unknown"),
        "worker_id": os.environ.get("RUNPOD_POD_ID", "unknown"),
        "runpod_version": VERSION,
    }
    return {"error": json.dumps(report)}


class Worker:
    """The loop of one worker process: take a job, run it, send its result, again."""

    def __init__(self, handler: Handler, env: Optional[Dict[str, str]] = None, aggregate_stream: bool = False) -> None:
        env = dict(os.environ if env is None else env)
        self.handler = handler
        self.streams = inspect.isgeneratorfunction(handler) or inspect.isasyncgenfunction(handler)
        self.aggregate_stream = aggregate_stream
        self.worker_id = env.get("RUNPOD_POD_ID") or str(uuid.uuid4())
        take = env.get("RUNPOD_WEBHOOK_GET_JOB")
        done = env.get("RUNPOD_WEBHOOK_POST_OUTPUT")
        if not take or not done:
            raise SystemExit("minipod's worker needs RUNPOD_WEBHOOK_GET_JOB and RUNPOD_WEBHOOK_POST_OUTPUT (minipod sets them for the workers it starts)")
        self.take_url = take.replace("$ID", self.worker_id)
        self.done_url = done.replace("$RUNPOD_POD_ID", self.worker_id)
        stream = env.get("RUNPOD_WEBHOOK_POST_STREAM")
        self.stream_url = stream.replace("$RUNPOD_POD_ID", self.worker_id) if stream else None
        self.stream_conn = _Connection(timeout=120)
        self.stop_url = self.take_url.replace("/job-take/", "/job-stop/") if "/job-take/" in self.take_url else None
        ping = env.get("RUNPOD_WEBHOOK_PING")
        self.ping_url = ping.replace("$RUNPOD_POD_ID", self.worker_id) if ping else None
        self.ping_interval = max(int(env.get("RUNPOD_PING_INTERVAL") or 10000), 100) / 1000
        self.headers = {"Authorization": env.get("RUNPOD_AI_API_KEY", ""), "User-Agent": f"minipod-worker/{__version__}"}
        # minipod's own worker processes: the result and the next job-take go in one write.
        self.pipelining = env.get("MINIPOD_WORKER_PIPELINING") == "1"
        self.stopping = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.current: Optional[Tuple[str, "asyncio.Task[Any]"]] = None
        self.lock = threading.Lock()
        self.idle = True
        # The requests of every job, their bytes made on first use: the job-takes, job-done's and job-stream's posts.
        self._takes: Dict[str, _Request] = {}
        self._posts: Dict[Tuple[str, bool], _Posts] = {}

    def _take_request(self, in_progress: str) -> _Request:
        made = self._takes.get(in_progress)
        if made is None:
            made = self._takes[in_progress] = _request("GET", _with_query(self.take_url, job_in_progress=in_progress), self.headers)
        return made

    # --- the loop ---

    def take(self, conn: _Connection) -> Optional[Dict[str, Any]]:
        """One job-take (held by minipod while its queue is empty); the job, or None."""
        status, body = conn.exchange(self._take_request("0"))
        return self._job_of(status, body)

    def _job_of(self, status: int, body: bytes) -> Optional[Dict[str, Any]]:
        """The job a job-take's answer gives, or None."""
        if status == 200 and body:
            job = json.loads(body)
            if isinstance(job, list):  # the batch form: this worker asks for one
                job = job[0] if job else None
            return job if isinstance(job, dict) and "id" in job else None
        if status not in (204, 400):
            self.stopping.wait(1)  # an error answer: ask again, not in a tight loop
        return None

    def run(self, job: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """Runs the job's handler on the loop; its job-done body, or None when the job was stopped."""

        async def call() -> Any:
            output = self.handler(job)
            return result_of(await output if inspect.isawaitable(output) else output)

        task = self.loop.create_task(self._stream(job) if self.streams else call())
        with self.lock:
            self.current = (job["id"], task)
        try:
            return self.loop.run_until_complete(task)
        except asyncio.CancelledError:
            print(f"minipod worker: job {job['id']} stopped", file=sys.stderr, flush=True)
            return None
        except Exception as e:  # the handler raised: the job fails with its report
            return error_of(e)
        finally:
            with self.lock:
                self.current = None

    async def _stream(self, job: Dict[str, Any]) -> Dict[str, Any]:
        """A generator handler: each item sent to job-stream as it comes; the job-done body at its end."""
        gathered: List[Any] = []
        try:
            output = self.handler(job)
            items = output if inspect.isasyncgen(output) else _async_items(output)
            async for item in items:
                if isinstance(item, dict) and item.get("error"):
                    return {"error": str(item["error"])}
                if self.aggregate_stream:
                    gathered.append(item)
                if self.stream_url:
                    self.send(self.stream_conn, job, {"output": item}, self.stream_url)
        except Exception as e:  # the generator raised: the job fails, its chunks stay sent
            return {"error": f"handler: {e} \ntraceback: {traceback.format_exc()}"}
        return {"output": gathered}

    def _post(self, job: Dict[str, Any], result: Dict[str, Any], to: Optional[str] = None) -> _Request:
        """The request posting a result to job-done (or a chunk to job-stream, `to`); the job id percent-encoded where the URL needs it."""
        url = to or self.done_url
        done = to is None and self.streams
        posts = self._posts.get((url, done))
        if posts is None:
            posts = _Posts(_with_query(url, isStream="true" if done else "false"), {**self.headers, "Content-Type": "application/json"})
            self._posts[(url, done)] = posts
        return posts.of(job["id"], json.dumps(result, ensure_ascii=False).encode("utf-8"))

    def send(self, conn: _Connection, job: Dict[str, Any], result: Dict[str, Any], to: Optional[str] = None) -> None:
        """Posts a result to job-done (or a chunk to job-stream, `to`)."""
        post = self._post(job, result, to)
        for attempt in range(3):
            try:
                status, answer = conn.exchange(post)
                if status >= 400:
                    print(f"minipod worker: the result of job {job['id']} was refused ({status}): {answer[:500]!r}", file=sys.stderr, flush=True)
                return
            except OSError as e:
                if attempt == 2:
                    print(f"minipod worker: the result of job {job['id']} could not be sent: {e}", file=sys.stderr, flush=True)
                else:
                    self.stopping.wait(0.2 * (attempt + 1))

    def send_and_take(self, conn: _Connection, job: Dict[str, Any], result: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """
        Posts a result and asks for the next job in one write (pipelined on the kept connection);
        the next job, or None when the loop is to ask again itself. The job-take says
        `job_in_progress=1`: minipod may read it before it has handled the result, and a worker
        saying it holds no job gets the jobs minipod still counts on it sent back to the queue.

        The result is acknowledged (2xx): the job-take's answer is the next job (held while there
        is none). It is refused or failed (any other status, a fault rule's too): it is not sent
        again (as `send`), and the connection is left with the job-take behind it, so that the next
        job-take, on a new connection, says `job_in_progress=0` as it did after a lone job-done
        (a job minipod had handed to the job-take meanwhile goes back to the queue, never run).
        The connection closed before the acknowledgement: the result is sent again alone (`send`).
        """
        try:
            status, answer = conn.pipelined(self._post(job, result), self._take_request("1"))
        except (_Closed, OSError, http.client.HTTPException, ValueError):
            self.send(conn, job, result)
            return None
        if not 200 <= status < 300:
            print(f"minipod worker: the result of job {job['id']} was refused ({status}): {answer[:500]!r}", file=sys.stderr, flush=True)
            conn.close()
            return None
        self.idle = True
        try:
            if self.stopping.is_set():  # SIGTERM while the result was sent: the held job-take is left
                conn.close()
                return None
            status, body = conn.answer()
        except (OSError, http.client.HTTPException, ValueError, _Closed):
            return None
        finally:
            self.idle = False
        return self._job_of(status, body)

    def serve(self, conn: Optional[_Connection] = None) -> None:
        """Takes and runs jobs until stopped; with the heartbeat and the stop channel beside it, unless given its connection."""
        if conn is None:
            conn = _Connection(timeout=120)
            for side in (self._heartbeat, self._stops):
                threading.Thread(target=side, daemon=True).start()
        job: Optional[Dict[str, Any]] = None
        try:
            while not self.stopping.is_set():
                if job is None:
                    try:
                        self.idle = True
                        job = self.take(conn)
                    except (OSError, http.client.HTTPException, ValueError):
                        self.stopping.wait(1)
                        continue
                    finally:
                        self.idle = False
                    if job is None:
                        continue
                result = self.run(job)
                if result is None:
                    job = None
                elif self.pipelining and not result.get("stopPod") and not self.stopping.is_set():
                    job = self.send_and_take(conn, job, result)
                else:
                    self.send(conn, job, result)
                    job = None
                    if result.get("stopPod"):
                        break
        except KeyboardInterrupt:
            pass
        finally:
            self.stopping.set()
            conn.close()

    # --- beside the loop ---

    def _held(self) -> List[Tuple[str, "asyncio.Task[Any]"]]:
        """The jobs the worker holds, each with its task (called with `self.lock` held)."""
        return [self.current] if self.current else []

    def _heartbeat(self) -> None:
        if not self.ping_url:
            return
        conn = _Connection(timeout=max(self.ping_interval * 2, 5))
        while not self.stopping.is_set():
            with self.lock:
                ids = [job_id for job_id, _ in self._held()]
            held = {"job_id": ",".join(ids)} if ids else {}  # no ids: the heartbeat says "no jobs"
            try:
                conn.request("GET", _with_query(self.ping_url, **held, runpod_version=VERSION), self.headers)
            except (OSError, http.client.HTTPException):
                pass
            self.stopping.wait(self.ping_interval)

    def _stops(self) -> None:
        if not self.stop_url:
            return
        conn = _Connection(timeout=120)
        while not self.stopping.is_set():
            try:
                status, body = conn.request("GET", self.stop_url, self.headers)
            except (OSError, http.client.HTTPException):
                self.stopping.wait(1)
                continue
            if status == 204:
                continue
            if status != 200:
                self.stopping.wait(1)
                continue
            try:
                ids = json.loads(body).get("jobsToStop") or []
            except (ValueError, AttributeError):
                continue
            with self.lock:
                stopped = [task for job_id, task in self._held() if job_id in ids]
            for task in stopped:
                self.loop.call_soon_threadsafe(task.cancel)

    def on_signal(self, signum: int, frame: Any) -> None:
        """SIGTERM or SIGINT: stop taking jobs; a held job-take is left at once, a running job finishes."""
        self.stopping.set()
        if self.idle:
            raise KeyboardInterrupt


async def _async_items(items: Any) -> Any:
    for item in items:
        yield item


def serve(handler: Handler, aggregate_stream: bool = False) -> None:
    """
    Runs the job loop of this process with `handler` until SIGTERM or SIGINT. A generator handler
    streams its items; with `aggregate_stream` the job's output is the list of them, else `[]`.
    """
    worker = Worker(handler, aggregate_stream=aggregate_stream)
    signal.signal(signal.SIGTERM, worker.on_signal)
    signal.signal(signal.SIGINT, worker.on_signal)
    worker.serve()


__all__ = ["Worker", "error_of", "result_of", "serve"]
