"""`Emulator`: one minipod process on a free port of 127.0.0.1, driven through its control API."""
from __future__ import annotations

import atexit
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence, Union

from ._launch import find_cli, find_node
from ._control import Control
from ._faults import Faults
from .errors import MinipodError
from .worker import Handler, Worker, handler_reference, start_scaled_workers, start_worker

Config = Union[Mapping[str, Any], str, "os.PathLike[str]", None]

#: The first line minipod writes on stdout once it listens (see docs/python.md).
_READY = re.compile(r"^minipod \S+ listening on (http://\S+)")
#: The banner's line naming the certificate of minipod's local authority (TLS on its port).
_TLS_LINE = re.compile(r"^\s+TLS\s+https:// on the same port; trust (.+?) \(")
#: The banner's line after the TLS one: once read, a banner without that line has none.
_ENDPOINTS_LINE = re.compile(r"^\s+endpoints\b")
#: The clocks minipod has (`--clock`).
CLOCKS = ("auto", "real", "manual")
#: What a job's final statuses are (a wait for another one ends when the job reaches one of these).
FINAL_STATUSES = ("COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT")


class Emulator(Control):
    """
    minipod in a child process, on a free port of 127.0.0.1, for tests and scripts::

        with Emulator(config={"endpoints": [{"id": "echo", "handler": "echo"}]}) as emu:
            runpod.endpoint_url_base = emu.v2_url
            ...

    `config` is a dict (the content of an emulator.config.json; relative handler paths are read
    from the current directory), a path to such a file, or None (./emulator.config.json when there
    is one, else minipod's demo endpoints). `clock` is "auto" (the default: time follows the wall
    clock, and skips to the next timer whenever a client waits and nothing runs on real time),
    "real" (time follows the wall clock, `speed` times faster) or "manual" (time moves only on
    `advance`). It needs Node.js 20 or later and minipod's command line (found as `find_cli` says;
    `cli=` or MINIPOD_CLI name it).
    """

    def __init__(
        self,
        config: Config = None,
        clock: str = "auto",
        *,
        speed: Optional[float] = None,
        cli: Optional[str] = None,
        node: Optional[str] = None,
        log_level: str = "warn",
        start_timeout: float = 60.0,
    ) -> None:
        if clock not in CLOCKS:
            raise MinipodError(f"clock must be one of {', '.join(CLOCKS)}; got {clock!r}")
        self._config = config
        self._clock = clock
        self._speed = speed
        self._cli = cli
        self._node = node
        self._log_level = log_level
        self._start_timeout = start_timeout
        self._process: Optional[subprocess.Popen[str]] = None
        self._url: Optional[str] = None
        self._launcher: List[str] = []
        self._stderr: Deque[str] = collections.deque(maxlen=200)
        self._tmp: Optional[tempfile.TemporaryDirectory[str]] = None
        self._ca_file: Optional[str] = None
        self._banner_read = threading.Event()
        self._workers: List[Worker] = []
        #: Workers started with keep=True, by their arguments.
        self._kept: Dict[str, Worker] = {}
        self.faults = Faults(self)

    # -- life ---------------------------------------------------------------------------------

    def start(self) -> "Emulator":
        """Starts minipod and waits until it listens; raises MinipodError saying what is missing."""
        if self._process is not None:
            return self
        node = find_node(self._node)
        self._launcher = find_cli(node, self._cli)
        # --exit-on-stdin-close: minipod ends when this process does, however it ends (the pipe of
        # its stdin, held here, closes then), so a test run killed with SIGKILL leaves no server.
        cmd = [*self._launcher, "--port", "0", "--host", "127.0.0.1", "--clock", self._clock, "--log-level", self._log_level, "--exit-on-stdin-close"]
        if self._speed is not None:
            cmd += ["--speed", str(self._speed)]
        config_file = self._config_file()
        if config_file is not None:
            cmd += ["--config", config_file]
        try:
            # The worker processes minipod starts for an image (`images`: the Flash and SDK 2.x
            # runtimes) run this interpreter, unless told otherwise: the caller's pickles cross to them.
            env = dict(os.environ)
            env["MINIPOD_PYTHON"] = env.get("MINIPOD_PYTHON") or sys.executable
            self._process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        except OSError as e:
            self._remove_tmp()
            raise MinipodError(f"cannot run {' '.join(cmd[:2])}: {e}") from e
        try:
            self._url = self._wait_ready(cmd)
        finally:
            # minipod has read its config once it listens (or has stopped): the file is not needed
            # any more, and nothing is left in the temp folder should this process be killed.
            self._remove_tmp()
        atexit.register(self.stop)
        return self

    def _wait_ready(self, cmd: List[str]) -> str:
        """minipod's URL once it listens; raises MinipodError with what it said when it stops first."""
        assert self._process is not None
        ready = threading.Event()
        found: List[str] = []

        def read_stdout(stream: Any) -> None:
            for line in stream:
                match = _READY.match(line)
                if match and not found:
                    found.append(match.group(1))
                    ready.set()
                tls = _TLS_LINE.match(line)
                if tls:
                    self._ca_file = tls.group(1)
                if tls or _ENDPOINTS_LINE.match(line):
                    self._banner_read.set()
            ready.set()  # the process closed its output: it exited
            self._banner_read.set()

        def read_stderr(stream: Any) -> None:
            for line in stream:
                self._stderr.append(line.rstrip("\n"))

        threading.Thread(target=read_stdout, args=(self._process.stdout,), daemon=True).start()
        threading.Thread(target=read_stderr, args=(self._process.stderr,), daemon=True).start()
        if not ready.wait(self._start_timeout) or not found:
            self._kill()
            time.sleep(0.05)  # lets the reader keep the last lines minipod wrote
            tail = "\n".join(list(self._stderr)[-20:]) or "(nothing on stderr)"
            raise MinipodError(f"minipod did not start ({' '.join(cmd)}):\n{tail}")
        return found[0]

    def stop(self) -> None:
        """Stops the workers started here, then minipod (SIGTERM, then SIGKILL after 10 s). Safe to call twice."""
        for worker in self._workers:
            worker.stop()
        self._workers.clear()
        self._kept.clear()
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        _close_stdin(process)
        self._remove_tmp()

    def __enter__(self) -> "Emulator":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Where minipod listens, e.g. http://127.0.0.1:40123."""
        if self._url is None or self._process is None:
            raise MinipodError("minipod is not running: use `with Emulator(...) as emu:` or call start() first")
        return self._url

    @property
    def host(self) -> str:
        """The host of minipod's URL (127.0.0.1): load-balancing endpoints are `https://{endpoint_id}.{host}:{port}` too."""
        return urllib.parse.urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def ca_file(self) -> Optional[str]:
        """
        The certificate file of minipod's local authority, which signs what its port answers over
        TLS (None with TLS off): what `minipod.tls.reach` trusts for the SDKs' https calls.
        """
        self.url  # raises when not running
        self._banner_read.wait(10)
        return self._ca_file

    @property
    def pid(self) -> int:
        """The process id of minipod's process."""
        if self._process is None:
            raise MinipodError("minipod is not running: use `with Emulator(...) as emu:` or call start() first")
        return self._process.pid

    @property
    def v2_url(self) -> str:
        """The queue API's base, as the service's clients take it (`runpod.endpoint_url_base`)."""
        return f"{self.url}/v2"

    # -- the control API ------------------------------------------------------------------------

    def reset(self) -> None:
        """Empties jobs, journal and timelines; endpoints and fault rules back to the config; the clock keeps its time."""
        self._call("POST", "/_emulator/reset", {})

    def clock(self) -> Dict[str, Any]:
        """The virtual clock: `{now, iso, mode, speed, pendingTimers}`."""
        return self._call("GET", "/_emulator/clock")

    def now(self) -> int:
        """Virtual now, epoch ms."""
        return int(self.clock()["now"])

    def advance(self, ms: int) -> Dict[str, Any]:
        """Moves virtual time by exactly `ms`, running what falls due; answers once that work has settled."""
        return self._call("POST", "/_emulator/clock/advance", {"ms": ms})

    def run_until_idle(self) -> Dict[str, Any]:
        """
        Advances timer by timer until no job waits or runs (at most 7 virtual days); a job on a
        worker process is waited for, never moved past.
        """
        return self._call("POST", "/_emulator/run-until-idle", {})

    def wait_for_job(self, endpoint: str, job_id: str, status: str = "COMPLETED", within_ms: int = 3_600_000) -> Dict[str, Any]:
        """
        The job (as /status shows it) once it reaches `status`. On the auto clock time skips ahead
        while it waits, on the manual clock minipod advances it timer by timer, on the real clock it
        waits; never past a job that a worker process runs, whose end it waits for instead. Raises
        MinipodError when the job ends otherwise, is unknown, or `within_ms` virtual ms pass first.
        """
        # A worker process's job takes wall time on every clock: up to `within_ms` of it.
        wall = 60.0 + within_ms / 1000.0
        path = f"/_emulator/endpoints/{urllib.parse.quote(endpoint, safe='')}/jobs/{urllib.parse.quote(job_id, safe='')}/wait"
        return self._call("POST", path, {"status": status, "withinMs": within_ms}, timeout=wall)

    def requests(
        self,
        endpoint: Optional[str] = None,
        operation: Optional[str] = None,
        status: Optional[int] = None,
        limit: Optional[int] = None,
        worker: Optional[str] = None,
    ) -> Dict[str, Any]:
        """
        The request journal, `{requests, count}`, newest last; filtered as GET /_emulator/requests
        is (`worker="exclude"` leaves out the worker protocol's requests, `"only"` keeps them alone).
        """
        query = {k: v for k, v in (("endpoint", endpoint), ("operation", operation), ("status", status), ("limit", limit), ("worker", worker)) if v is not None}
        return self._call("GET", "/_emulator/requests" + (f"?{urllib.parse.urlencode(query)}" if query else ""))

    def events(self, job_id: str) -> List[Dict[str, Any]]:
        """A job's timeline: each transition with its virtual time and cause."""
        return self._call("GET", f"/_emulator/jobs/{urllib.parse.quote(job_id, safe='')}/events")["events"]

    def workers(self, endpoint: Optional[str] = None) -> List[Dict[str, Any]]:
        """Worker processes minipod has heard from (GET /_emulator/workers)."""
        query = f"?{urllib.parse.urlencode({'endpoint': endpoint})}" if endpoint else ""
        return self._call("GET", f"/_emulator/workers{query}")["workers"]


    # -- workers --------------------------------------------------------------------------------

    def worker(
        self,
        handler: Handler = None,
        *,
        script: Optional[Union[str, "os.PathLike[str]"]] = None,
        endpoint: Optional[str] = None,
        options: Optional[Mapping[str, Any]] = None,
        env: Optional[Mapping[str, str]] = None,
        python: Optional[str] = None,
        worker_id: Optional[str] = None,
        timeout: float = 30.0,
        keep: bool = False,
    ) -> Worker:
        """
        Runs a handler under the service's real worker runtime (`runpod.serverless.start`), as
        `minipod worker` does, on an endpoint with `"handler": "external"`; answers once it polls
        for jobs. Give `handler` (a function defined at the top level of an importable module, or
        "module:function") or `script` (a file that calls runpod.serverless.start itself).
        `options` are added to what start() gets (`{"return_aggregate_stream": True}`). The worker
        stops with `stop()`, with the Emulator, or (under the pytest fixture) at the test's end.

        `keep=True`: the worker outlives the test that started it, under the pytest fixture, and
        lives as long as this Emulator; a later call with the same arguments and `keep=True`
        answers the same worker, still running, at no cost. Between tests the fixture restarts it
        if it still holds a job (or its process ended), and waits until it polls again after the
        reset.
        """
        key = json.dumps([handler_reference(handler) if handler is not None else None, str(script), endpoint, options, env, python, worker_id], sort_keys=True, default=str)
        if keep:
            kept = self._kept.get(key)
            if kept is not None and kept.kept and kept in self._workers:
                return kept if kept._polling() else kept.restart()
        worker = start_worker(self, handler=handler, script=script, endpoint=endpoint, options=options, env=env, python=python, worker_id=worker_id, timeout=timeout)
        self._workers.append(worker)
        if keep:
            worker.kept = True
            self._kept[key] = worker
        return worker

    def scale_workers(
        self,
        command: Optional[Sequence[str]] = None,
        *,
        script: Optional[Union[str, "os.PathLike[str]"]] = None,
        endpoint: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        python: Optional[str] = None,
        timeout: float = 30.0,
    ) -> Worker:
        """
        Worker processes of a load-balancing endpoint (`"type": "LOAD_BALANCER"`, `"handler":
        "external"`), started and stopped as its pool scales (workersMin..workersMax on
        REQUEST_COUNT, an idle one stopped after idleTimeout), as `scaleWorkers` does in JavaScript:
        each runs `command` (or `python script`), an HTTP server on the port given in `PORT`.
        Answers once minipod's scaler drives them; `stop()` ends them, as the Emulator's stop does.
        """
        worker = start_scaled_workers(self, command=command, script=script, endpoint=endpoint, env=env, python=python, timeout=timeout)
        self._workers.append(worker)
        return worker

    # -- internals ------------------------------------------------------------------------------

    def _config_file(self) -> Optional[str]:
        config = self._config
        if config is None:
            return None
        if isinstance(config, (str, os.PathLike)):
            path = Path(config).expanduser().resolve()
            if not path.is_file():
                raise MinipodError(f"config file {path} does not exist")
            return str(path)
        self._tmp = tempfile.TemporaryDirectory(prefix="minipod-py-")
        path = Path(self._tmp.name) / "emulator.config.json"
        path.write_text(json.dumps(_absolute_handlers(dict(config))))
        return str(path)

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(5)
        _close_stdin(process)

    def _remove_tmp(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _call(self, method: str, path: str, body: Any = None, timeout: float = 60.0) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"} if data is not None else {}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                text = res.read().decode()
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")
            try:
                detail = json.loads(detail).get("detail", detail)
            except ValueError:
                pass
            raise MinipodError(f"{method} {path}: {e.code} {detail}", status=e.code) from None
        except (urllib.error.URLError, OSError) as e:
            exited = self._process is None or self._process.poll() is not None
            why = "minipod has exited:\n" + "\n".join(list(self._stderr)[-20:]) if exited else str(e)
            raise MinipodError(f"{method} {path}: {why}") from None
        return json.loads(text) if text else None


def _close_stdin(process: "Optional[subprocess.Popen[str]]") -> None:
    if process is not None and process.stdin is not None:
        try:
            process.stdin.close()
        except OSError:
            pass


def _absolute_handlers(config: Dict[str, Any]) -> Dict[str, Any]:
    """Handler module paths of a config given as a dict are relative to the current directory."""
    endpoints = config.get("endpoints")
    if isinstance(endpoints, list):
        fixed = []
        for endpoint in endpoints:
            handler = endpoint.get("handler") if isinstance(endpoint, dict) else None
            if isinstance(handler, str) and handler.startswith(("./", "../")):
                endpoint = {**endpoint, "handler": str(Path(handler).resolve())}
            fixed.append(endpoint)
        config = {**config, "endpoints": fixed}
    return config
