"""
ASGI app factories of the SDK 2.x's `@app.api`, served by minipod's api runtime: a zero-argument
function returning an ASGI app (FastAPI, Starlette or any ASGI callable) is called once, the app
it returns served on the runtime's port for every path, as the service's api worker serves it:
on a deployed worker whose interpreter has uvicorn, by uvicorn as there (`serve_with_uvicorn`);
otherwise, and for an app synced to a live worker, through the runtime's own HTTP/1.1 server.

    served = AsgiServed(factory(), loop)     # its lifespan started on `loop`
    served.handle(request_handler)           # one HTTP request, from the runtime's server thread

What the app gets, as from an ASGI server: an `http` scope of ASGI 3.0 (method, path, raw path,
query string, headers, client, server, the lifespan's `state`), the request's body (by
Content-Length, or chunked) in one `http.request` message, then `http.disconnect` once the answer
is sent or the client has gone. Its answer is written as it comes: with its own Content-Length, or
else chunked when it sends its body in several messages (a streaming response), on a kept
HTTP/1.1 connection. The app runs on the runtime's event loop, its requests concurrently. Its
lifespan is started once (`lifespan.startup`), as uvicorn's `auto` mode does: an app that does
not speak the lifespan protocol is served without it; one whose startup fails is not served; an
app replaced by another (a new sync) is sent `lifespan.shutdown`.
"""
from __future__ import annotations

import asyncio
import importlib.util
import queue
import sys
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler
from typing import Any, Dict, List, Optional, Tuple

#: The largest request body the runtime reads (the service's load balancer takes 30 MB).
MAX_BODY = 32 * 1024 * 1024
_DONE = object()
_LIFESPANS: "set[asyncio.Future[Any]]" = set()


class AsgiServed:
    """An ASGI app served by the runtime's HTTP server, its coroutines run on `loop`."""

    def __init__(self, app: Any, loop: asyncio.AbstractEventLoop) -> None:
        if not callable(app):
            raise TypeError(f"the ASGI app factory returned {type(app).__name__}, not an ASGI app")
        self.app = app
        self.loop = loop
        self.state: Dict[str, Any] = {}
        #: A FastAPI or Starlette app with a /ping route of its own answers it (the service adds one only when missing).
        self.own_ping = routes_ping(app)

    # --- the lifespan ---

    def start(self) -> None:
        """Runs the app's lifespan startup; raises when the app says it failed."""
        asyncio.run_coroutine_threadsafe(self._startup(), self.loop).result()

    async def _startup(self) -> None:
        started: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        messages: "asyncio.Queue[Dict[str, Any]]" = asyncio.Queue()
        messages.put_nowait({"type": "lifespan.startup"})

        async def send(message: Dict[str, Any]) -> None:
            if started.done():
                return
            if message.get("type") == "lifespan.startup.complete":
                started.set_result(None)
            elif message.get("type") == "lifespan.startup.failed":
                started.set_exception(RuntimeError(f"the ASGI app's startup failed: {message.get('message') or 'no reason given'}"))

        async def lifespan() -> None:
            scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}
            try:
                await self.app(scope, messages.get, send)
            except BaseException:  # noqa: BLE001 - an app without the lifespan protocol raises on its scope
                pass
            finally:
                if not started.done():
                    started.set_result(None)  # served without a lifespan, as uvicorn's auto mode does

        self.messages = messages
        task = asyncio.ensure_future(lifespan())
        _LIFESPANS.add(task)  # kept until it ends (a task only the loop knows may be collected)
        task.add_done_callback(_LIFESPANS.discard)
        await started

    def stop(self) -> None:
        """Sends the app's lifespan its shutdown (another app replaces it)."""
        messages = getattr(self, "messages", None)
        if messages is not None:
            self.loop.call_soon_threadsafe(messages.put_nowait, {"type": "lifespan.shutdown"})

    # --- a request ---

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        """Answers one request of the runtime's server with the app (called in the server's thread)."""
        try:
            body = _body(request)
        except ValueError as e:
            return _plain(request, 400, f"the request's body cannot be read: {e}")
        path, _, query = request.path.partition("?")
        client = request.client_address
        server = request.server.server_address
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": request.request_version.split("/")[-1],
            "method": request.command,
            "scheme": "http",
            "path": urllib.parse.unquote(path),
            "raw_path": path.encode("latin-1"),
            "query_string": query.encode("latin-1"),
            "root_path": "",
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()],
            "client": (client[0], client[1]) if isinstance(client, tuple) else None,
            "server": (server[0], server[1]) if isinstance(server, tuple) else None,
            "state": dict(self.state),
        }
        out: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        call = _Call(body, out)
        asyncio.run_coroutine_threadsafe(call.run(self.app, scope), self.loop)
        try:
            self._answer(request, out)
        finally:
            self.loop.call_soon_threadsafe(call.ended.set)

    def _answer(self, request: BaseHTTPRequestHandler, out: "queue.SimpleQueue[Any]") -> None:
        start: Optional[Dict[str, Any]] = None
        chunked = written = False
        head = request.command == "HEAD"
        while True:
            message = out.get()
            if message is _DONE or isinstance(message, BaseException):
                if not written:  # the app returned (or raised) before its answer
                    reason = "".join(traceback.format_exception(type(message), message, message.__traceback__)) if isinstance(message, BaseException) else ""
                    _plain(request, 500, "Internal Server Error", reason)
                else:  # its answer was cut short: the connection cannot be reused
                    request.close_connection = True
                return
            kind = message.get("type")
            if kind == "http.response.start" and start is None:
                start = message
                continue
            if kind != "http.response.body" or start is None:
                continue
            data = bytes(message.get("body") or b"")
            more = bool(message.get("more_body"))
            try:
                if not written:
                    headers: List[Tuple[bytes, bytes]] = [tuple(h) for h in start.get("headers") or []]  # type: ignore[misc]
                    names = {bytes(k).lower() for k, _ in headers}
                    request.send_response(int(start.get("status", 200)))
                    for k, v in headers:
                        request.send_header(bytes(k).decode("latin-1"), bytes(v).decode("latin-1"))
                    if b"content-length" not in names and b"transfer-encoding" not in names:
                        if not more:
                            request.send_header("Content-Length", str(len(data)))
                        elif request.request_version == "HTTP/1.0":  # no chunks in HTTP/1.0: the end of the connection ends the body
                            request.close_connection = True
                            request.send_header("Connection", "close")
                        else:
                            chunked = True
                            request.send_header("Transfer-Encoding", "chunked")
                    request.end_headers()
                    written = True
                if not head:
                    if chunked:
                        if data:
                            request.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        if not more:
                            request.wfile.write(b"0\r\n\r\n")
                    elif data:
                        request.wfile.write(data)
                    request.wfile.flush()
            except OSError:  # the client has gone: the app's receive() says so
                request.close_connection = True
                return
            if not more:
                return


def uvicorn_available() -> bool:
    """Whether the worker's interpreter has uvicorn (the server the service's api worker runs)."""
    try:
        return importlib.util.find_spec("uvicorn") is not None
    except (ImportError, ValueError):
        return False


def routes_ping(app: Any) -> bool:
    """Whether a FastAPI or Starlette app routes `/ping` itself."""
    routes = getattr(app, "routes", None)
    return isinstance(routes, list) and any(getattr(r, "path", None) == "/ping" for r in routes)


def with_ping(app: Any) -> Any:
    """The app, `/ping` answered 200 `{"status": "healthy"}` before it unless it routes `/ping` itself, as the service's api worker makes it."""
    if routes_ping(app):
        return app
    body = b'{"status": "healthy"}'

    async def pinged(scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("path") == "/ping":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return pinged


def serve_with_uvicorn(app: Any, port: int) -> None:
    """Serves the app with uvicorn on 127.0.0.1:`port`, as the service's api worker serves a factory's app (its lifespan, its keep-alive)."""
    import uvicorn

    print(f"minipod api runtime: serving the ASGI app with uvicorn on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    uvicorn.run(with_ping(app), host="127.0.0.1", port=port, timeout_keep_alive=600, log_level="info")


class _Call:
    """One request's side on the event loop: its body received once, its answer sent to the server's thread."""

    def __init__(self, body: bytes, out: "queue.SimpleQueue[Any]") -> None:
        self.body: Optional[bytes] = body
        self.out = out
        self.ended = asyncio.Event()

    async def receive(self) -> Dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.ended.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Dict[str, Any]) -> None:
        if not self.ended.is_set():
            self.out.put(message)

    async def run(self, app: Any, scope: Dict[str, Any]) -> None:
        try:
            await app(scope, self.receive, self.send)
            self.out.put(_DONE)
        except BaseException as e:  # noqa: BLE001 - answered as a 500 (or a cut connection)
            self.out.put(e)


def _body(request: BaseHTTPRequestHandler) -> bytes:
    if "chunked" in (request.headers.get("Transfer-Encoding") or "").lower():
        parts, size = [], 0
        while True:
            line = request.rfile.readline(1024)
            try:
                n = int(line.split(b";")[0].strip() or b"x", 16)
            except ValueError:
                raise ValueError("a chunk's size is not a number") from None
            if n == 0:
                while request.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            size += n
            if size > MAX_BODY:
                raise ValueError(f"over {MAX_BODY} bytes")
            parts.append(request.rfile.read(n))
            request.rfile.readline(3)
    try:
        length = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        raise ValueError("its Content-Length is not a number") from None
    if length < 0 or length > MAX_BODY:
        raise ValueError(f"its Content-Length is not between 0 and {MAX_BODY}")
    return request.rfile.read(length) if length else b""


def _plain(request: BaseHTTPRequestHandler, status: int, text: str, log: str = "") -> None:
    if log:
        print(f"minipod api runtime: the ASGI app failed:\n{log}", file=sys.stderr, flush=True)
    data = text.encode()
    request.send_response(status)
    request.send_header("Content-Type", "text/plain; charset=utf-8")
    request.send_header("Content-Length", str(len(data)))
    if status == 400:
        request.send_header("Connection", "close")
    request.end_headers()
    request.wfile.write(data)


__all__ = ["AsgiServed", "MAX_BODY", "routes_ping", "serve_with_uvicorn", "uvicorn_available", "with_ping"]
