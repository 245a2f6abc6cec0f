"""ASGI app factories of the SDK 2.x's @app.api, served by minipod's api runtime (minipod.runtimes.sdk_asgi) over HTTP/1.1."""
import http.client
import json
import socket
import textwrap
import threading
from typing import Any, Dict

import pytest

from api_server import api_server
from minipod.runtimes import api

# What `rp flash dev` syncs: a module whose @app.api is a function returning an ASGI app (here a bare one).
MODULE = textwrap.dedent(
    """
    import asyncio
    import json

    class Spec:  # stands for the SDK's ResourceSpec
        name = "web"
        routes = []

    RELEASE = asyncio.Event()

    async def answer(send, status, value, headers=()):
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json"), *headers]})
        await send({"type": "http.response.body", "body": json.dumps(value).encode()})

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            await receive()
            scope["state"]["model"] = "loaded at startup"
            await send({"type": "lifespan.startup.complete"})
            await receive()
            return
        path = scope["path"]
        if path == "/echo":
            body = (await receive())["body"]
            await send({"type": "http.response.start", "status": 201, "headers": [(b"x-query", scope["query_string"]), (b"x-method", scope["method"].encode())]})
            await send({"type": "http.response.body", "body": body})
        elif path == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            for i in range(3):
                await send({"type": "http.response.body", "body": f"part {i}\\n".encode(), "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        elif path == "/state":
            await answer(send, 200, {"model": scope["state"].get("model"), "path": path, "raw": scope["raw_path"].decode()})
        elif path == "/wait":
            await RELEASE.wait()  # only a request served beside this one sets it
            await answer(send, 200, {"waited": True})
        elif path == "/release":
            RELEASE.set()
            await answer(send, 200, {"released": True})
        elif path == "/boom":
            raise RuntimeError("no luck")
        else:
            await answer(send, 404, {"detail": "Not Found"})

    class Handle:  # stands for the SDK's ApiHandle of a function: no class, a factory
        spec = Spec()
        _cls = None
        _asgi_factory = staticmethod(lambda: app)

    web = Handle()
    """
)


def setup_module() -> None:
    api.start_loop()


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(api, "_SERVED", api._Served())
    with api_server(api._dispatch) as port:
        yield port
    if api._SERVED.asgi is not None:
        api._SERVED.asgi.stop()


def ask(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None, headers: Dict[str, str] = {}) -> http.client.HTTPResponse:  # noqa: B006
    conn.request(method, path, body=body, headers=headers, encode_chunked="transfer-encoding" in headers)
    return conn.getresponse()


def test_a_synced_factory_s_app_answers_every_path_on_a_kept_connection(live: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", live, timeout=30)
    synced = ask(conn, "POST", "/_runpod/sync", json.dumps({"source": MODULE, "resource": "web"}))
    assert synced.status == 200 and json.loads(synced.read())["status"] == "synced"
    first = conn.sock
    # The lifespan ran before the first request; the path is decoded, the raw path kept.
    state = ask(conn, "GET", "/state")
    assert json.loads(state.read()) == {"model": "loaded at startup", "path": "/state", "raw": "/state"}
    echoed = ask(conn, "PUT", "/echo?a=1&b=2", b"\x00binary body", {"content-type": "application/octet-stream"})
    assert (echoed.status, echoed.read(), echoed.getheader("x-query"), echoed.getheader("x-method")) == (201, b"\x00binary body", "a=1&b=2", "PUT")
    chunked = ask(conn, "POST", "/echo", iter([b"sent ", b"in chunks"]), {"transfer-encoding": "chunked"})
    assert chunked.read() == b"sent in chunks"
    streamed = ask(conn, "GET", "/stream")
    assert streamed.getheader("transfer-encoding") == "chunked" and streamed.read() == b"part 0\npart 1\npart 2\n"
    missing = ask(conn, "GET", "/nowhere")
    assert (missing.status, json.loads(missing.read())) == (404, {"detail": "Not Found"})
    assert conn.sock is first  # one connection throughout: HTTP/1.1 keep-alive
    # An HTTP/1.0 client gets a streamed answer ended by the end of the connection, not in chunks.
    with socket.create_connection(("127.0.0.1", live), timeout=30) as old:
        old.sendall(b"GET /stream HTTP/1.0\r\n\r\n")
        answer = b"".join(iter(lambda: old.recv(65536), b""))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].endswith(b" 200 OK") and b"chunked" not in head.lower() and body == b"part 0\npart 1\npart 2\n"
    # The runtime's /ping is its own, whatever the app answers.
    assert json.loads(ask(conn, "GET", "/ping").read()) == {"status": "healthy"}
    head = ask(conn, "HEAD", "/echo")
    assert (head.status, head.getheader("x-method"), head.read()) == (201, "HEAD", b"")
    failed = ask(conn, "GET", "/boom")
    assert (failed.status, failed.read()) == (500, b"Internal Server Error")
    conn.close()


def test_the_app_s_requests_run_at_once(live: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", live, timeout=30)
    ask(conn, "POST", "/_runpod/sync", json.dumps({"source": MODULE, "resource": "web"})).read()
    waited: Dict[str, Any] = {}

    def wait() -> None:
        other = http.client.HTTPConnection("127.0.0.1", live, timeout=30)
        waited["answer"] = json.loads(ask(other, "GET", "/wait").read())
        other.close()

    thread = threading.Thread(target=wait)
    thread.start()
    assert json.loads(ask(conn, "GET", "/release").read()) == {"released": True}
    thread.join(30)
    assert waited == {"answer": {"waited": True}}
    conn.close()


def test_a_fastapi_app_from_a_factory_with_its_path_parameters_and_a_streaming_response(live: int) -> None:
    pytest.importorskip("fastapi", reason="this example's app is a FastAPI one (pip install fastapi)")
    source = textwrap.dedent(
        """
        from fastapi import FastAPI
        from fastapi.responses import StreamingResponse

        class Spec:
            name = "shop"
            routes = []

        def make():
            server = FastAPI()

            @server.get("/items/{item_id}")
            async def item(item_id: int, q: str = ""):
                return {"item_id": item_id, "q": q}

            @server.post("/items")
            def create(body: dict):
                return {"created": body}

            @server.get("/count")
            def count():
                return StreamingResponse((f"{i}," for i in range(4)), media_type="text/plain")

            return server

        class Handle:
            spec = Spec()
            _cls = None
            _asgi_factory = staticmethod(make)

        shop = Handle()
        """
    )
    conn = http.client.HTTPConnection("127.0.0.1", live, timeout=30)
    synced = ask(conn, "POST", "/_runpod/sync", json.dumps({"source": source, "resource": "shop"}))
    assert synced.status == 200 and synced.read()
    assert json.loads(ask(conn, "GET", "/items/7?q=red").read()) == {"item_id": 7, "q": "red"}
    created = ask(conn, "POST", "/items", json.dumps({"name": "lamp"}), {"content-type": "application/json"})
    assert json.loads(created.read()) == {"created": {"name": "lamp"}}
    refused = ask(conn, "GET", "/items/seven")
    assert refused.status == 422 and refused.read()
    assert ask(conn, "GET", "/count").read() == b"0,1,2,3,"
    conn.close()


DEPLOYED = '''
class Spec:
    name = "web"
    routes = []

class AsgiHandle:  # stands for the SDK's ApiHandle of a function
    spec = Spec()
    _cls = None

    @staticmethod
    def _asgi_factory():
        async def app(scope, receive, send):
            if scope["type"] != "http":
                return
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": f"{scope['method']} {scope['path']}".encode()})
        return app

web = AsgiHandle()
'''


def test_a_deployed_factory_s_app_is_served_by_uvicorn_when_the_worker_s_interpreter_has_it(tmp_path) -> None:
    pytest.importorskip("uvicorn", reason="this path needs uvicorn in the worker's interpreter (pip install uvicorn)")
    import os
    import queue
    import re
    import subprocess
    import sys
    from pathlib import Path

    import minipod

    (tmp_path / "main.py").write_text(DEPLOYED)
    (tmp_path / "runpod_manifest.json").write_text(json.dumps({"version": 1, "resources": [{"kind": "api", "name": "web", "module": "main"}]}))
    env = {**os.environ, "PYTHONPATH": str(Path(minipod.__file__).parents[1]), "FLASH_RESOURCE_NAME": "web", "RUNPOD_PREBUILT_APP_DIR": str(tmp_path), "PORT": "0"}
    process = subprocess.Popen([sys.executable, "-m", "minipod.runtimes.api"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    lines: "queue.SimpleQueue[str]" = queue.SimpleQueue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr], daemon=True).start()  # type: ignore[union-attr]
    try:
        port = None
        while port is None:  # uvicorn says the port it was given (PORT=0: a free one)
            found = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", lines.get(timeout=30))
            port = int(found.group(1)) if found else None
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        answer = ask(conn, "PATCH", "/some/path")
        assert (answer.status, answer.read(), answer.getheader("server")) == (200, b"PATCH /some/path", "uvicorn")
        ping = ask(conn, "GET", "/ping")
        assert json.loads(ping.read()) == {"status": "healthy"}
        conn.close()
    finally:
        process.terminate()
        process.wait(30)
