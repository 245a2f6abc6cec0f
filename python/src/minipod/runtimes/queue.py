"""
The worker of the SDK 2.x's queue images (`runpod/queue`, `runpod/queue-gpu`) in live mode (what
`rp flash dev` starts), minipod's own: a queue worker of minipod's job loop
(`minipod.runtimes.job_loop`) whose jobs are FunctionRequests carrying the source of the
function's whole module, with JSON arguments.

    python -m minipod.runtimes.queue

The module is executed afresh for every job (its imports, its `App(...)`, its decorators), the
function taken from it by name (the function itself, not the SDK's handle around it) and called
with the job's arguments; a coroutine is awaited. The job's output is the list the SDK reads: one
FunctionResponse (`success`, `json_result`, `error` with the traceback, `stdout`), or for a
generator function one `{"success": true, "__stream__": true, "json_result": chunk}` per item,
each also sent as a stream chunk. Dependencies follow the Flash worker's offline rule: used when
importable, else the call fails naming them and the command that installs them; a system
dependency not on PATH is noted in the call's output (and the worker's log), never installed.

A worker of a deployed app's endpoint (`FLASH_RESOURCE_NAME` set, by `rp flash deploy`) serves its
build's function instead, taking plain JSON: see `minipod.runtimes.sdk_deployed`.
"""
from __future__ import annotations

import inspect
import io
import json
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple

from .flash import _Captured, _arguments, _call, _namespace, _traceback, missing_dependencies, missing_error, system_notes

_ONE_AT_A_TIME: Optional[Any] = None


def _chunk(item: Any) -> Dict[str, Any]:
    json.dumps(item)  # a chunk must be JSON, as the SDK sends it on
    return {"success": True, "__stream__": True, "json_result": item}


def _resolved(request: Dict[str, Any]) -> Tuple[Any, List[Any], Dict[str, Any]]:
    """The function the request names, from its module executed afresh (the function, not the SDK's handle), and its arguments."""
    name = request.get("function_name")
    namespace = _namespace(request.get("function_code") or "", f"<module of {name}>", "__runpod_live__")
    fn = namespace.get(name) if isinstance(name, str) else None
    if fn is None:
        raise NameError(f"function {name!r} is not defined by the module source sent")
    args, kwargs = _arguments(request, "args", "kwargs")
    return getattr(fn, "_fn", fn), args, kwargs


async def handler(job: Dict[str, Any]) -> AsyncIterator[Dict[str, Any]]:
    """
    The worker runtime's generator handler: one FunctionResponse, or one envelope per item. As the
    service's runtime does, a plain function's call holds the worker (one at a time, whatever
    RUNPOD_MAX_CONCURRENCY), while a generator's items are made on the worker's event loop beside
    the other jobs, its prints going to the worker's output rather than a captured `stdout`.
    """
    global _ONE_AT_A_TIME
    import asyncio

    request = job.get("input")
    if not isinstance(request, dict):
        yield {"success": False, "error": "the job's input is not a FunctionRequest object"}
        return
    missing = missing_dependencies(request.get("dependencies"))
    if missing:
        yield {"success": False, "error": missing_error(missing), "stdout": ""}
        return
    if _ONE_AT_A_TIME is None:
        _ONE_AT_A_TIME = asyncio.Lock()
    capture = io.StringIO()
    try:
        async with _ONE_AT_A_TIME:
            with _Captured(capture):
                for note in system_notes(request.get("system_dependencies")):
                    print(note)
                fn, args, kwargs = _resolved(request)
                streams = inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn)
                if not streams:
                    result = await _call(fn, args, kwargs)
                    try:
                        json.dumps(result)
                    except (TypeError, ValueError) as e:
                        raise TypeError(f"return value must be json-serializable: {e}") from e
                    response = {"success": True, "json_result": result, "stdout": capture.getvalue()}
        if not streams:
            yield response
        elif inspect.isasyncgenfunction(fn):
            async for item in fn(*args, **kwargs):
                yield _chunk(item)
        else:
            for item in fn(*args, **kwargs):
                yield _chunk(item)
    except Exception as e:  # the user's code failed
        yield {"success": False, "error": _traceback(e, (__file__,)), "stdout": capture.getvalue()}


def main() -> None:
    from .sdk_concurrency import serve
    from .sdk_deployed import resource_name, serve_queue

    # A deployed app's worker (FLASH_RESOURCE_NAME, from `rp flash deploy`) serves its build's function.
    if resource_name():
        return serve_queue()
    # Minipod's job loop, taking up to RUNPOD_MAX_CONCURRENCY jobs; a call holds the worker while it runs
    # (the service's runtime runs a live call's function without letting the other jobs in).
    serve(handler, aggregate_stream=True)


if __name__ == "__main__":
    main()
