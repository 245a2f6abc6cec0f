"""
`RUNPOD_MAX_CONCURRENCY` for minipod's SDK 2.x queue workers: a worker that holds up to N jobs at
once, as the service's runtime does when a resource is declared with `max_concurrency=N` (its
deploy and `rp flash dev` put the number in the worker's env; the runtime gives the worker library
a concurrency modifier answering N).

    from minipod.runtimes.sdk_concurrency import serve
    serve(handler, aggregate_stream=True)     # N from RUNPOD_MAX_CONCURRENCY (1 when unset or not a number)

At 1 it is minipod's job loop as it is (`minipod.runtimes.job_loop`). Above 1, as the worker
library does it: a taker asks for as many jobs as there are free places (job-take-batch with
`batch_size` when more than one, `job_in_progress=1` while any is held), and every job taken
runs as a task of the worker's one event loop. The handler is called on that loop, as the
library calls it: a coroutine's awaits let the other jobs run, while code that does not await
(a plain function, a plain generator between its items) holds the loop, and the other jobs wait
for it, as on the service. The heartbeat names every job held; the stop channel stops the one
it names, the others running on. SIGTERM stops taking jobs and ends the worker once the jobs
held have sent their results.
"""
from __future__ import annotations

import asyncio
import http.client
import inspect
import json
import os
import queue
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Tuple

from . import job_loop
from .job_loop import Handler, Worker, _Connection, _with_query, error_of, result_of


def max_concurrency(env: Optional[Dict[str, str]] = None) -> int:
    """Jobs one worker runs at once: RUNPOD_MAX_CONCURRENCY, at least 1 (1 when unset or not a whole number)."""
    value = (os.environ if env is None else env).get("RUNPOD_MAX_CONCURRENCY", "1")
    try:
        return max(1, int(value))
    except ValueError:
        return 1


class ConcurrentWorker(Worker):
    """A worker holding up to `limit` jobs, each a task of its event loop; results sent from a pool of connections."""

    def __init__(self, handler: Handler, limit: int, env: Optional[Dict[str, str]] = None, aggregate_stream: bool = False) -> None:
        super().__init__(handler, env, aggregate_stream)
        self.limit = limit
        self.tasks: Dict[str, "asyncio.Task[Any]"] = {}
        self.free = threading.Condition(self.lock)
        self.connections: "queue.SimpleQueue[_Connection]" = queue.SimpleQueue()
        self.senders = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="minipod-job-done")
        self.ended: Optional[asyncio.Event] = None

    def _held(self) -> List[Tuple[str, "asyncio.Task[Any]"]]:
        return list(self.tasks.items())

    # --- taking jobs (a thread of its own: the job-take is held by minipod while its queue is empty) ---

    def take_many(self, conn: _Connection, n: int, in_progress: bool) -> List[Dict[str, Any]]:
        """Up to `n` jobs (the batch form when more than one), or none."""
        flag = "1" if in_progress else "0"
        if n > 1:
            url = _with_query(self.take_url.replace("/job-take/", "/job-take-batch/"), batch_size=str(n), job_in_progress=flag)
        else:
            url = _with_query(self.take_url, job_in_progress=flag)
        status, body = conn.request("GET", url, self.headers)
        if status == 200 and body:
            jobs = json.loads(body)
            jobs = jobs if isinstance(jobs, list) else [jobs]
            return [j for j in jobs if isinstance(j, dict) and "id" in j]
        if status not in (204, 400):
            self.stopping.wait(1)  # an error answer: ask again, not in a tight loop
        return []

    def _taker(self) -> None:
        conn = _Connection(timeout=120)
        while not self.stopping.is_set():
            with self.free:
                while len(self.tasks) >= self.limit and not self.stopping.is_set():
                    self.free.wait()
                need, held = self.limit - len(self.tasks), len(self.tasks)
            if self.stopping.is_set():
                break
            try:
                jobs = self.take_many(conn, need, held > 0)
            except (OSError, http.client.HTTPException, ValueError):
                self.stopping.wait(1)
                continue
            for job in jobs:
                ready = threading.Event()
                try:
                    self.loop.call_soon_threadsafe(self._start, job, ready)
                except RuntimeError:  # the loop is closed: the worker has ended
                    return
                ready.wait()  # counted before the next job-take asks for the places left
        conn.close()

    def _start(self, job: Dict[str, Any], ready: threading.Event) -> None:
        with self.lock:
            self.tasks[job["id"]] = self.loop.create_task(self._job(job))
        ready.set()

    # --- running them (the event loop, in the main thread) ---

    async def _job(self, job: Dict[str, Any]) -> None:
        try:
            result: Optional[Dict[str, Any]]
            try:
                if self.streams:
                    result = await self._stream(job)
                else:
                    output = self.handler(job)
                    result = result_of(await output if inspect.isawaitable(output) else output)
            except asyncio.CancelledError:
                print(f"minipod worker: job {job['id']} stopped", file=sys.stderr, flush=True)
                result = None
            except Exception as e:  # the handler raised: the job fails with its report
                result = error_of(e)
            if result is not None:
                await asyncio.get_running_loop().run_in_executor(self.senders, self._send_done, job, result)
                if result.get("stopPod"):
                    self.stop()
        finally:
            with self.free:
                self.tasks.pop(job["id"], None)
                self.free.notify_all()

    def _send_done(self, job: Dict[str, Any], result: Dict[str, Any]) -> None:
        try:
            conn = self.connections.get_nowait()
        except queue.Empty:
            conn = _Connection(timeout=120)
        try:
            self.send(conn, job, result)
        finally:
            self.connections.put(conn)

    def stop(self) -> None:
        """Stops taking jobs; the worker ends once the jobs held have sent their results."""
        self.stopping.set()
        with self.free:
            self.free.notify_all()
        if self.ended is not None:
            self.loop.call_soon_threadsafe(self.ended.set)

    async def _main(self) -> None:
        self.ended = asyncio.Event()
        if self.stopping.is_set():
            self.ended.set()
        await self.ended.wait()
        while True:
            with self.lock:
                running = list(self.tasks.values())
            if not running:
                return
            await asyncio.wait(running)

    def serve(self, conn: Optional[_Connection] = None) -> None:
        """Takes and runs up to `limit` jobs at once until stopped, with the heartbeat and the stop channel beside it."""
        for side in (self._taker, self._heartbeat, self._stops):
            threading.Thread(target=side, daemon=True).start()
        asyncio.set_event_loop(self.loop)
        for signum in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(signum, self.stop)
        try:
            self.loop.run_until_complete(self._main())
        finally:
            self.stopping.set()
            self.senders.shutdown(wait=True)
            while not self.connections.empty():
                self.connections.get_nowait().close()


def serve(handler: Handler, aggregate_stream: bool = False) -> None:
    """Runs the job loop of this process with `handler`, up to RUNPOD_MAX_CONCURRENCY jobs at once, until SIGTERM or SIGINT."""
    limit = max_concurrency()
    if limit == 1:
        return job_loop.serve(handler, aggregate_stream=aggregate_stream)
    print(f"minipod worker: up to {limit} jobs at once (RUNPOD_MAX_CONCURRENCY)", file=sys.stderr, flush=True)
    ConcurrentWorker(handler, limit, aggregate_stream=aggregate_stream).serve()


__all__ = ["ConcurrentWorker", "max_concurrency", "serve"]
