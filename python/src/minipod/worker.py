"""Worker processes: a user's handler under the service's worker runtime, started by `minipod worker`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Optional, Sequence, Union

from .errors import MinipodError

if TYPE_CHECKING:
    from .emulator import Emulator

#: A handler: a function (defined at the top level of an importable module) or "module:function".
Handler = Union[Callable[..., Any], str, None]


class Worker:
    """
    A `minipod worker -- python ...` process of one endpoint (`worker_id` is None when it follows a
    load-balancing endpoint's scaler, which names each process it starts).

    `output` is the list of every line it wrote, in order, as they come: what the handler printed
    and logged, the worker runtime's lines, and minipod's own (`[worker id] minipod: started ...`),
    each prefixed with `[worker id] `. Under the pytest fixture, a failing test's report shows the
    lines written during that test. `kept` is True for a worker started with `keep=True`.
    """

    def __init__(self, process: "subprocess.Popen[str]", endpoint: str, worker_id: Optional[str], relaunch: Optional[Callable[[], "subprocess.Popen[str]"]] = None) -> None:
        self.process = process
        self.endpoint = endpoint
        self.worker_id = worker_id
        self.output: List[str] = []
        self.kept = False
        self._relaunch = relaunch
        #: Whether minipod sees it polling for jobs (idle: holding none).
        self._ready: Callable[..., bool] = lambda idle=False: True
        self._timeout = 30.0
        threading.Thread(target=self._read, args=(process,), daemon=True).start()

    def _read(self, process: "subprocess.Popen[str]") -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.output.append(line.rstrip("\n"))

    def restart(self) -> "Worker":
        """Ends the process at once (a job it runs is dropped) and starts a fresh one of the same command, with the same worker id; answers once it polls for jobs, idle."""
        self._end(at_once=True)
        return self._start_again()

    def _start_again(self) -> "Worker":
        if self._relaunch is None:
            raise MinipodError("this worker cannot be restarted")
        self.process = self._relaunch()
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()
        return self._wait_until(self._idle, self._timeout)

    def _polling(self) -> bool:
        """Whether the worker is up now: its process runs and it polls for jobs."""
        return self.running and self._ready()

    def _idle(self) -> bool:
        return self._ready(True)

    @property
    def running(self) -> bool:
        """Whether the process is still running."""
        return self.process.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        """Stops the worker as the platform does (SIGTERM; SIGKILL when it lingers); a kept one is kept no more. Safe to call twice."""
        self.kept = False
        self._end(timeout)

    def _end(self, timeout: float = 15.0, at_once: bool = False) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            if at_once:
                # A second SIGTERM: `minipod worker` kills its processes rather than letting a job finish.
                time.sleep(0.2)
                if self.process.poll() is None:
                    self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.process.stdin is not None:
            self.process.stdin.close()

    def _wait_until(self, ready: Callable[[], bool], timeout: float) -> "Worker":
        """This worker once `ready()` holds; raises MinipodError with its last lines when it exits or `timeout` s pass first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                time.sleep(0.1)
                raise MinipodError("the worker exited before it took jobs:\n" + "\n".join(self.output[-30:]))
            if ready():
                return self
            time.sleep(0.05)
        self.stop()
        raise MinipodError(f"the worker did not start within {timeout} s:\n" + "\n".join(self.output[-30:]))


def handler_reference(handler: Handler) -> str:
    """ "module:function" for a handler; raises MinipodError when a new process could not import it."""
    if isinstance(handler, str):
        if ":" not in handler:
            raise MinipodError(f'handler {handler!r} must be "module:function", e.g. "my_worker.handler:handler"')
        return handler
    if not callable(handler):
        raise MinipodError(f"handler must be a function or a 'module:function' string, got {handler!r}")
    module = getattr(handler, "__module__", None)
    qualname = getattr(handler, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        raise MinipodError(
            f"handler {qualname or handler!r} cannot be imported by the worker process: define it at the top level of a module "
            f"(not in a function or in __main__), or pass script= a file that calls runpod.serverless.start"
        )
    return f"{module}:{qualname}"


def _python_path(extra: Optional[str]) -> str:
    """This process's import path, so the worker imports what the test does (its modules, runpod)."""
    entries = [p for p in sys.path if p and Path(p).exists()]
    if extra:
        entries = extra.split(os.pathsep) + entries
    return os.pathsep.join(dict.fromkeys(entries))


def start_worker(
    emulator: "Emulator",
    *,
    handler: Handler,
    script: Optional[Union[str, "os.PathLike[str]"]],
    endpoint: Optional[str],
    options: Optional[Mapping[str, Any]],
    env: Optional[Mapping[str, str]],
    python: Optional[str],
    worker_id: Optional[str],
    timeout: float,
) -> Worker:
    """Starts `minipod worker` for one process and waits until the runtime polls for jobs."""
    if (handler is None) == (script is None):
        raise MinipodError("give the worker either handler= (a function or 'module:function') or script= (a file), not both or neither")
    if script is not None:
        child = _script_command(script, python)
    else:
        child = [python or sys.executable, "-u", "-m", "minipod._serve", handler_reference(handler)]
    served = emulator._call("GET", "/_emulator/workers")["endpoints"]
    endpoint = _choose_endpoint(endpoint, served, 'endpoints with "handler": "external"', 'is not served by worker processes; give it "handler": "external" in the config')
    worker_id = worker_id or f"py-{uuid.uuid4().hex[:10]}"
    worker = _launch(emulator, endpoint, ["--worker-id", worker_id], child, env, {"MINIPOD_HANDLER_OPTIONS": json.dumps(dict(options or {}))}, worker_id)

    def polling(idle: bool = False) -> bool:
        seen = [w for w in emulator.workers(endpoint) if w["id"] == worker_id]
        if idle:
            return bool(seen) and seen[0]["state"] == "idle" and seen[0]["openPolls"] > 0
        return bool(seen) and seen[0]["state"] not in ("lost", "stopped") and (seen[0]["openPolls"] > 0 or bool(seen[0]["jobIds"]))

    worker._ready = polling
    worker._timeout = timeout
    return worker._wait_until(polling, timeout)


def start_scaled_workers(
    emulator: "Emulator",
    *,
    command: Optional[Sequence[str]],
    script: Optional[Union[str, "os.PathLike[str]"]],
    endpoint: Optional[str],
    env: Optional[Mapping[str, str]],
    python: Optional[str],
    timeout: float,
) -> Worker:
    """Starts `minipod worker` following a load-balancing endpoint's scaler; answers once it does."""
    if (command is None) == (script is None):
        raise MinipodError("give scale_workers either a command (a list: the HTTP server to run) or script= (a Python file), not both or neither")
    if script is not None:
        command = _script_command(script, python)
    balanced = emulator._call("GET", "/_emulator/workers").get("loadBalancers", [])
    endpoint = _choose_endpoint(
        endpoint,
        balanced,
        'load-balancing endpoints with "handler": "external"',
        'is not a load-balancing endpoint served by worker processes; give it "type": "LOAD_BALANCER" and "handler": "external" in the config',
    )
    worker = _launch(emulator, endpoint, [], list(command or []), env, {}, None)
    return worker._wait_until(lambda: any("started and stopped as its scaler asks" in line for line in worker.output), timeout)


def _script_command(script: Union[str, "os.PathLike[str]"], python: Optional[str]) -> List[str]:
    path = Path(script).resolve()
    if not path.is_file():
        raise MinipodError(f"worker script {path} does not exist")
    return [python or sys.executable, "-u", str(path)]


def _choose_endpoint(given: Optional[str], served: List[str], which: str, refused: str) -> str:
    """`given`, when it is one of `served`; else the only one served; else MinipodError saying which there are."""
    if given is None:
        if len(served) != 1:
            raise MinipodError(f"choose the endpoint with endpoint=; {which}: {', '.join(served) or 'none'}")
        return served[0]
    if given not in served:
        raise MinipodError(f"endpoint {given!r} {refused} (those that are: {', '.join(served) or 'none'})")
    return given


def _launch(emulator: "Emulator", endpoint: str, flags: List[str], child: List[str], env: Optional[Mapping[str, str]], extra: Mapping[str, str], worker_id: Optional[str]) -> Worker:
    """`minipod worker` for `child`, with this process's import path, ended with this process (--exit-on-stdin-close)."""
    run_env = {**os.environ, **(env or {}), **extra}
    run_env["PYTHONPATH"] = _python_path(run_env.get("PYTHONPATH"))
    run_env["PYTHONUNBUFFERED"] = "1"
    cmd = [*emulator._launcher, "worker", "--url", emulator.url, "--endpoint", endpoint, "--exit-on-stdin-close", *flags, "--", *child]

    def popen() -> "subprocess.Popen[str]":
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=run_env)

    return Worker(popen(), endpoint, worker_id, popen)
