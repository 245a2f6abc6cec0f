"""
The worker of the SDK 2.x's api images (`runpod/api`, `runpod/api-gpu`) in live mode (what
`rp flash dev` starts for an `@app.api` class), minipod's own: an HTTP server on `PORT` that
serves the user's class.

    python -m minipod.runtimes.api

- `GET /ping` answers 200 `{"status": "healthy"}` (minipod's health check).
- `POST /_runpod/sync` `{"source", "resource", "dependencies", "system_dependencies"}`: the module
  source is executed (its imports, its `App(...)`, its decorators), the `@app.api` class named
  `resource` found, instantiated and its `@init` method run; each of its routes (`@get("/x")`,
  `@post("/y")`...) is served from then on. Answers `{"status": "synced", "hash": <sha256>}`. A
  new source replaces the class and its instance (edit and call again: the new code runs).
- Any other path: the route of that method and path (`{name}` segments matched, never passed),
  called with the request's JSON body as its one argument for POST, PUT, PATCH and DELETE, and
  with none for GET; its return value is the JSON answer. A coroutine is awaited. An exception is
  a 500 `{"error": ..., "traceback": ...}`; no route, a 404.
- An `@app.api` function instead of a class is an ASGI app factory: it is called once per sync
  and the app it returns (FastAPI, Starlette, any ASGI callable) answers every other path, its
  requests run concurrently on the runtime's event loop (`minipod.runtimes.sdk_asgi`).

Dependencies follow the offline rule of minipod's other runtimes: used when importable, else the
sync fails naming them and the command that installs them; a system dependency not on PATH is
noted in the worker's log, never installed. A class's calls run one at a time.

A worker of a deployed app's endpoint (`FLASH_RESOURCE_NAME` set, by `rp flash deploy`) serves its
build's class (or ASGI app: by uvicorn when the interpreter has it, as the service does) from
the start, with no sync route (see `minipod.runtimes.sdk_deployed`): what cannot be served
answers 500 with the reason on every path but `/ping`.
"""
from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

from .flash import _namespace, _traceback, missing_dependencies, missing_error, system_notes
from .sdk_asgi import AsgiServed, serve_with_uvicorn, uvicorn_available

_BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


class _Served:
    """The resource synced last: a class's instance and its routes (method, pattern, handler name), or an ASGI app."""

    def __init__(self) -> None:
        self.instance: Any = None
        self.routes: List[Tuple[str, "re.Pattern[str]", str]] = []
        self.asgi: Optional[AsgiServed] = None
        self.hash: Optional[str] = None


_SERVED = _Served()
_CALLS = threading.Lock()
_LOOP = asyncio.new_event_loop()


def _pattern(path: str) -> "re.Pattern[str]":
    parts = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", path)
    body = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts))
    return re.compile(f"^{body}$")


_LOOP_STARTED = threading.Lock()


def start_loop() -> None:
    """Starts the runtime's event loop (the user's coroutines, an ASGI app's requests) in a thread of its own, once."""
    if _LOOP_STARTED.acquire(blocking=False):
        threading.Thread(target=_LOOP.run_forever, name="minipod-runtime-loop", daemon=True).start()


def run(value: Any) -> Any:
    """The value, awaited on the runtime's event loop when it is awaitable."""
    if inspect.isawaitable(value):
        return asyncio.run_coroutine_threadsafe(_await(value), _LOOP).result()
    return value


async def _await(value: Any) -> Any:
    return await value


def sync(request: Dict[str, Any]) -> Dict[str, Any]:
    """Executes the module source and serves its `@app.api` class named `resource`."""
    missing = missing_dependencies(request.get("dependencies"))
    if missing:
        raise RuntimeError(missing_error(missing))
    for note in system_notes(request.get("system_dependencies")):
        print(note, file=sys.stderr, flush=True)
    source = request.get("source")
    resource = request.get("resource")
    if not isinstance(source, str) or not isinstance(resource, str):
        raise ValueError("a sync needs the module's source and the resource's name (strings)")
    namespace = _namespace(source, f"<module of {resource}>", "__runpod_live__")
    handle = next((v for v in namespace.values() if getattr(getattr(v, "spec", None), "name", None) == resource and hasattr(v, "_cls")), None)
    if getattr(handle, "_cls", None) is None and getattr(handle, "_asgi_factory", None) is None:
        raise LookupError(f"no @app.api class or ASGI app factory named {resource!r} in the module source sent")
    serve_handle(handle)
    digest = hashlib.sha256(source.encode()).hexdigest()
    _SERVED.hash = digest
    return {"status": "synced", "hash": digest}


def serve_handle(handle: Any) -> None:
    """
    Serves an `@app.api` handle from now on: its class instantiated, its `@init` run, its routes
    answered; or the ASGI app its factory returns, its lifespan started, answering every path.
    """
    before = _SERVED.asgi
    if getattr(handle, "_cls", None) is None:
        served = AsgiServed(handle._asgi_factory(), _LOOP)
        served.start()
        _SERVED.instance, _SERVED.routes, _SERVED.asgi = None, [], served
    else:
        instance = handle._cls()
        init_name = getattr(handle, "_init_name", None)
        if init_name:
            run(getattr(instance, init_name)())
        routes = [(r.method.upper(), _pattern(r.path), r.handler_name) for r in getattr(handle.spec, "routes", [])]
        _SERVED.instance, _SERVED.routes, _SERVED.asgi = instance, routes, None
    if before is not None:
        before.stop()


def call(method: str, path: str, body: Any) -> Tuple[int, Any]:
    """The route of `method` and `path` called: (status, JSON answer)."""
    if _SERVED.instance is None:
        return 503, {"error": "no @app.api class is served yet: POST /_runpod/sync its module source first"}
    for route_method, pattern, name in _SERVED.routes:
        match = pattern.match(path)
        if route_method != method or not match:
            continue
        fn = getattr(_SERVED.instance, name)
        # As the service's api worker calls a route: the JSON body alone, for a method that carries
        # one and only when there is one; a path's `{name}` segments are matched, never passed.
        args = [body] if method in _BODY_METHODS and body is not None else []
        try:
            return 200, run(fn(*args))
        except Exception as e:  # the user's code failed
            return 500, {"error": f"{type(e).__name__}: {e}", "traceback": _traceback(e, (__file__,))}
    return 404, {"error": f"no route {method} {path}"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _answer(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw.strip() else None

    def _serve(self) -> None:
        path = self.path.split("?", 1)[0]
        live = self.server.dispatch is _dispatch  # type: ignore[attr-defined]
        asgi = _SERVED.asgi
        # An ASGI app answers every path but the live runtime's own (and /ping, unless it has its own).
        if asgi is not None and not _UNSERVED and not (live and path in ("/ping", "/_runpod/sync")) and (path != "/ping" or asgi.own_ping):
            return asgi.handle(self)
        if self.command in ("HEAD", "OPTIONS"):  # an ASGI app's methods: a class's routes have none of these
            return self.send_error(501, f"Unsupported method ({self.command!r})")
        if path == "/ping":
            return self._answer(200, {"status": "healthy"})
        try:
            body = self._body()
        except ValueError as e:
            return self._answer(400, {"error": f"the body is not JSON: {e}"})
        with _CALLS:
            status, value = self.server.dispatch(self.command, path, body)  # type: ignore[attr-defined]
        try:
            self._answer(status, value)
        except (TypeError, ValueError) as e:
            self._answer(500, {"error": f"the return value is not JSON: {e}"})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve


def _dispatch(method: str, path: str, body: Any) -> Tuple[int, Any]:
    if path == "/_runpod/sync" and method == "POST":
        try:
            return 200, sync(body if isinstance(body, dict) else {})
        except Exception as e:
            return 500, {"error": f"{type(e).__name__}: {e}", "traceback": _traceback(e, (__file__,))}
    return call(method, path, body)


def serve(name: str, dispatch: Callable[[str, str, Any], Tuple[int, Any]], prepare: Optional[Callable[[], None]] = None) -> None:
    """
    Serves `/ping` and, one call at a time, `dispatch(method, path, JSON body)` on 127.0.0.1:$PORT;
    `prepare` first, on the runtime's event loop's side, before the port answers (so not ready before).
    """
    start_loop()
    if prepare is not None:
        prepare()
    port = int(os.environ.get("PORT") or 80)
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.dispatch = dispatch  # type: ignore[attr-defined]
    print(f"minipod {name} runtime: serving on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


#: Why a deployed app's worker cannot serve its build's class, once it tried (then every request's answer).
_UNSERVED: List[str] = []


def _failed(handle: Any, e: Exception) -> RuntimeError:
    what = "@init hook" if getattr(handle, "_cls", None) is not None else "ASGI app factory"
    return RuntimeError(f"the {what} of the deployed resource {handle.spec.name!r} failed: {type(e).__name__}: {e}")


def _unserved(e: Exception) -> None:
    print(str(e), file=sys.stderr, flush=True)  # and answered on every request, so the caller reads why
    _UNSERVED.append(str(e))


def load_deployed(handle: Any = None) -> None:
    """A deployed app's worker: serves its build's `@app.api` class (or factory's app), or keeps why it cannot."""
    from .sdk_deployed import loaded

    if _UNSERVED:
        return
    try:
        handle = handle if handle is not None else loaded("api")
        try:
            serve_handle(handle)
        except Exception as e:  # its constructor or its @init hook, its factory or its app's startup
            raise _failed(handle, e) from e
    except Exception as e:
        _unserved(e)


def _deployed_handle() -> Any:
    """The deployed resource's handle, from the build; None when it cannot be served (why kept, and answered)."""
    from .sdk_deployed import loaded

    try:
        return loaded("api")
    except Exception as e:
        _unserved(e)
        return None


def dispatch_deployed(method: str, path: str, body: Any) -> Tuple[int, Any]:
    """A deployed app's worker: the class's routes (no sync route), or a 500 saying why there are none."""
    if _UNSERVED:
        return 500, {"error": _UNSERVED[0]}
    return call(method, path, body)


def main() -> None:
    from .sdk_deployed import resource_name

    # A deployed app's worker (FLASH_RESOURCE_NAME, from `rp flash deploy`): its build's class from the start;
    # an ASGI app factory's app served by uvicorn when the interpreter has it, as on the service.
    if resource_name():
        handle = _deployed_handle()
        if handle is not None and getattr(handle, "_cls", None) is None and uvicorn_available():
            try:
                app = handle._asgi_factory()
            except Exception as e:
                _unserved(_failed(handle, e))
            else:
                return serve_with_uvicorn(app, int(os.environ.get("PORT") or 80))
        serve("api", dispatch_deployed, prepare=lambda: load_deployed(handle))
    else:
        serve("api", _dispatch)


if __name__ == "__main__":
    main()


__all__ = ["call", "dispatch_deployed", "load_deployed", "main", "run", "serve", "serve_handle", "start_loop", "sync"]
