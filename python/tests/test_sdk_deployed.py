"""minipod's SDK 2.x workers on the deployed path (minipod.runtimes.sdk_deployed, and the api runtime's
deployed mode): the build of `rp flash deploy` unpacked, its manifest read, the resource's function
or class served with plain JSON."""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from artifacts import artifact
from api_server import api_server
from minipod.runtimes import api, sdk_deployed

# What the SDK's decorators leave in a module, as far as a worker reads it: a handle with the
# resource's spec (its name, an api class's routes), the function or class, and its @init hook.
HANDLES = '''
class Spec:
    def __init__(self, name, routes=()):
        self.name = name
        self.routes = list(routes)

class Route:
    def __init__(self, method, path, handler_name):
        self.method, self.path, self.handler_name = method, path, handler_name

class FunctionHandle:
    def __init__(self, name, fn, init=None):
        self.spec, self._fn, self._init_fn = Spec(name), fn, init

class ApiHandle:
    def __init__(self, name, cls, routes, init_name=None):
        self.spec, self._cls, self._init_name = Spec(name, routes), cls, init_name

class AsgiHandle:  # an @app.api function: an ASGI app factory
    def __init__(self, name, factory):
        self.spec, self._cls, self._asgi_factory, self._init_name = Spec(name), None, factory, None
'''

MAIN = '''
import os
from handles import FunctionHandle, ApiHandle, AsgiHandle, Route
import vendored_only

STATE = {"ready": False}

def _init():
    STATE["ready"] = True

def _hello(name, punctuation="!"):
    print(f"greeting {name}")
    return {"text": f"hello {name}{punctuation}", "ready": STATE["ready"], "cwd": os.getcwd(), "vendored": vendored_only.VALUE}

def _count(n):
    for i in range(n):
        yield i

async def _acount(n):
    for i in range(n):
        yield {"i": i}

async def _later(x):
    return x * 2

def _nothing():
    return "called with nothing"

def _broken(x):
    raise ValueError(f"no luck with {x}")

hello = FunctionHandle("hello", _hello, init=_init)
count = FunctionHandle("count", _count)
acount = FunctionHandle("acount", _acount)
later = FunctionHandle("later", _later)
nothing = FunctionHandle("nothing", _nothing)
broken = FunctionHandle("broken", _broken)

class Inference:
    def setup(self):
        self.calls = 0
    def generate(self, body):
        self.calls += 1
        return {"text": body["prompt"].upper(), "calls": self.calls}
    def count(self):
        return {"calls": self.calls}
    def fail(self, body):
        raise ValueError(f"no luck with {body['x']}")

def _web():
    async def app(scope, receive, send):
        if scope["type"] != "http":
            raise RuntimeError("no lifespan here")  # served without one, as uvicorn's auto mode does
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": f"{scope['method']} {scope['path']} from the build".encode()})
    return app

web = AsgiHandle("web", _web)

inference = ApiHandle("inference", Inference, [Route("post", "/generate", "generate"), Route("get", "/calls", "count"), Route("post", "/fail", "fail")], init_name="setup")
'''



def manifest(*resources: Dict[str, Any], **extra: Any) -> str:
    return json.dumps({"version": 1, "app": "shop", "pythonVersion": "3.11", "resources": list(resources), **extra})


def entry(name: str, kind: str = "queue", **extra: Any) -> Dict[str, Any]:
    return {"kind": kind, "name": name, "module": "main", "qualname": name, **extra}


RESOURCES = [entry(n) for n in ("hello", "count", "acount", "later", "nothing", "broken")] + [entry("inference", "api"), entry("web", "api")]

# A build as `rp flash deploy` packs it: the project's files, the vendored packages under env/, the manifest.
BUILD = {"runpod_manifest.json": manifest(*RESOURCES), "main.py": MAIN, "handles.py": HANDLES, "env/vendored_only.py": "VALUE = 'from env'\n"}


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Gives the build to a worker of `resource`: the artifact file, its own folder, a clean import state."""

    def given(resource: str, files: Dict[str, str] = BUILD) -> Path:
        path = tmp_path / "artifact.tar.gz"
        path.write_bytes(artifact(files))
        monkeypatch.setenv("FLASH_BUILD_ARTIFACT_PATH", str(path))
        monkeypatch.setenv("FLASH_APP_DIR", str(tmp_path / "app"))
        monkeypatch.setenv("FLASH_RESOURCE_NAME", resource)
        for located_by in ("RUNPOD_APP_DIR", "RUNPOD_PREBUILT_APP_DIR"):  # the worker names its folder in RUNPOD_APP_DIR
            monkeypatch.setenv(located_by, "")
            monkeypatch.delenv(located_by)
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(sys, "path", list(sys.path))
        for name in ("main", "handles", "vendored_only"):
            monkeypatch.delitem(sys.modules, name, raising=False)
        return tmp_path / "app"

    return given


def run(handler: Any, job_input: Any) -> Any:
    async def go() -> Any:
        result = handler({"id": "job-1", "input": job_input})
        if hasattr(result, "__aiter__"):
            return [item async for item in result]
        return await result

    return asyncio.run(go())


def queue_handler() -> Any:
    handle = sdk_deployed.loaded("queue")
    sdk_deployed.run_init(getattr(handle, "_init_fn", None))
    return sdk_deployed.queue_handler(handle)


def test_the_function_is_called_with_the_input_as_keywords_in_the_unpacked_folder_after_its_init(deployed) -> None:
    app = deployed("hello")
    out = run(queue_handler(), {"name": "world"})
    assert out == {"text": "hello world!", "ready": True, "cwd": str(app.resolve()), "vendored": "from env"}
    # The project's folder leads the path; the vendored packages come after the interpreter's own.
    assert sys.path[0] == str(app) and sys.path[-1] == str(app / "env")


def test_a_call_without_arguments_sends_empty_which_is_dropped(deployed) -> None:
    deployed("nothing")
    assert run(queue_handler(), {"__empty": True}) == "called with nothing"


def test_generators_stream_their_items_and_a_coroutine_is_awaited(deployed) -> None:
    deployed("count")
    assert run(queue_handler(), {"n": 3}) == [0, 1, 2]
    deployed("acount")
    assert run(queue_handler(), {"n": 2}) == [{"i": 0}, {"i": 1}]
    deployed("later")
    assert run(queue_handler(), {"x": 21}) == 42


def test_the_function_s_errors_and_a_bad_input_fail_the_job(deployed) -> None:
    deployed("broken")
    handler = queue_handler()
    with pytest.raises(ValueError, match="no luck with 7"):
        run(handler, {"x": 7})
    with pytest.raises(TypeError, match="keyword arguments, not list"):
        run(handler, [7])


@pytest.mark.parametrize(
    "files, reason",
    [
        ({"main.py": MAIN}, "the build artifact has no runpod_manifest.json"),
        ({**BUILD, "runpod_manifest.json": manifest(entry("other"))}, "the build's manifest has no resource 'hello' (it has: other)"),
        ({**BUILD, "runpod_manifest.json": manifest(entry("hello", dependencies=["surely-not-installed-pkg>=1"]))}, "surely-not-installed-pkg"),
        ({**BUILD, "runpod_manifest.json": manifest(entry("hello"), excludedPackages=["surely-not-installed-torch"])}, "surely-not-installed-torch"),
        ({**BUILD, "main.py": "import surely_not_installed_mod\n"}, "module 'main' imports 'surely_not_installed_mod'"),
        ({**BUILD, "main.py": MAIN.replace('FunctionHandle("hello"', 'FunctionHandle("hola"')}, "module 'main' has no @app.queue function named 'hello'"),
    ],
)
def test_what_cannot_be_served_says_why(deployed, files: Dict[str, str], reason: str) -> None:
    deployed("hello", files)
    with pytest.raises(RuntimeError) as failed:
        sdk_deployed.loaded("queue")
    message = str(failed.value)
    assert message.startswith("minipod's SDK 2.x queue worker cannot serve the deployed resource 'hello': ")
    assert reason in message
    if "surely" in reason:
        assert "minipod installs nothing from the network" in message


def test_a_failing_init_hook_is_every_job_s_error_and_every_request_s(deployed, monkeypatch: pytest.MonkeyPatch, api_state) -> None:
    failing = MAIN.replace('    STATE["ready"] = True', '    raise OSError("no model file")').replace("    def setup(self):\n        self.calls = 0", "    def setup(self):\n        raise OSError('no weights')")
    deployed("hello", {**BUILD, "main.py": failing})
    with pytest.raises(RuntimeError, match=r"^the @init hook of the deployed resource 'hello' failed: OSError: no model file$"):
        queue_handler()
    deployed("inference", {**BUILD, "main.py": failing})
    api.load_deployed()
    assert api.dispatch_deployed("GET", "/calls", None) == (500, {"error": "the @init hook of the deployed resource 'inference' failed: OSError: no weights"})


def test_without_a_build_deployed_the_worker_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLASH_RESOURCE_NAME", "hello")
    monkeypatch.setenv("FLASH_APP_DIR", str(tmp_path / "app"))
    monkeypatch.delenv("FLASH_BUILD_ARTIFACT_PATH", raising=False)
    monkeypatch.delenv("MINIPOD_FLASH_ARTIFACT", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError, match="has no build deployed"):
        sdk_deployed.loaded("queue")


@pytest.fixture
def api_state(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(api, "_SERVED", api._Served())
    unserved: List[str] = []
    monkeypatch.setattr(api, "_UNSERVED", unserved)
    return unserved


def test_the_api_worker_serves_the_build_s_class_with_its_init_run_and_no_sync_route(deployed, api_state) -> None:
    deployed("inference")
    api.load_deployed()
    assert api_state == []
    assert api.dispatch_deployed("POST", "/generate", {"prompt": "hi"}) == (200, {"text": "HI", "calls": 1})
    assert api.dispatch_deployed("GET", "/calls", None) == (200, {"calls": 1})
    status, failed = api.dispatch_deployed("POST", "/fail", {"x": 7})
    assert (status, failed["error"]) == (500, "ValueError: no luck with 7")
    assert api.dispatch_deployed("POST", "/_runpod/sync", {"source": "", "resource": "inference"}) == (404, {"error": "no route POST /_runpod/sync"})


def test_an_api_worker_that_cannot_serve_answers_why_on_every_path(deployed, api_state) -> None:
    deployed("hello")
    api.load_deployed()
    status, answer = api.dispatch_deployed("GET", "/anything", None)
    assert status == 500
    assert answer["error"] == "minipod's SDK 2.x api worker cannot serve the deployed resource 'hello': module 'main' has no @app.api class or ASGI app factory named 'hello'"


def test_the_queue_worker_serves_the_deployed_function_when_a_resource_is_named(deployed, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("cloudpickle", reason="minipod.runtimes.queue needs cloudpickle (pip install cloudpickle)")
    from minipod.runtimes import job_loop, queue

    served: List[Any] = []
    monkeypatch.setattr(job_loop, "serve", lambda handler, aggregate_stream=False: served.append((handler, aggregate_stream)))
    deployed("count")
    queue.main()
    [(handler, aggregate)] = served
    # A generator's items are gathered as the job's output, as the service's runtime does.
    assert aggregate is True and run(handler, {"n": 2}) == [0, 1]
    served.clear()
    deployed("nowhere")
    queue.main()
    [(handler, _)] = served
    assert handler({"id": "job-2", "input": {}}) == {"error": "minipod's SDK 2.x queue worker cannot serve the deployed resource 'nowhere': the build's manifest has no resource 'nowhere' (it has: acount, broken, count, hello, inference, later, nothing, web)"}


def write_build(folder: Path, files: Dict[str, str] = BUILD) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def located(deployed, monkeypatch: pytest.MonkeyPatch):
    """A worker of `hello` whose build is only where the env says: no artifact, no FLASH_APP_DIR."""
    deployed("hello")
    for name in ("FLASH_BUILD_ARTIFACT_PATH", "FLASH_APP_DIR", "MINIPOD_FLASH_ARTIFACT", "RUNPOD_APP_DIR", "RUNPOD_PREBUILT_APP_DIR"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_prebuilt_app_folder_is_used_as_it_is(located, tmp_path: Path) -> None:
    prebuilt = write_build(tmp_path / "prebuilt")
    located.setenv("RUNPOD_PREBUILT_APP_DIR", str(prebuilt))
    located.setenv("RUNPOD_APP_DIR", str(tmp_path / "elsewhere"))
    out = run(queue_handler(), {"name": "world"})
    assert out["cwd"] == str(prebuilt.resolve()) and out["vendored"] == "from env"
    assert not (prebuilt / ".rp-unpacked").exists() and not (tmp_path / "elsewhere").exists()
    import os

    assert os.environ["RUNPOD_APP_DIR"] == str(prebuilt.resolve())


def test_an_app_folder_unpacked_before_is_reused_else_the_build_is_unpacked_there(located, tmp_path: Path) -> None:
    # Unpacked before (its marker there): no artifact needed.
    before = write_build(tmp_path / "before")
    (before / ".rp-unpacked").write_text("1")
    located.setenv("RUNPOD_APP_DIR", str(before))
    located.setenv("RUNPOD_PREBUILT_APP_DIR", str(tmp_path / "not-a-folder"))
    assert run(queue_handler(), {"name": "world"})["cwd"] == str(before.resolve())
    # A folder without the marker: the build is unpacked into it, and the marker left.
    for name in ("main", "handles", "vendored_only"):
        located.delitem(sys.modules, name, raising=False)
    artifact_file = tmp_path / "artifact.tar.gz"
    located.setenv("FLASH_BUILD_ARTIFACT_PATH", str(artifact_file))
    fresh = tmp_path / "fresh"
    located.setenv("RUNPOD_APP_DIR", str(fresh))
    assert run(queue_handler(), {"name": "world"})["cwd"] == str(fresh.resolve())
    assert (fresh / ".rp-unpacked").is_file() and (fresh / "runpod_manifest.json").is_file()


def test_an_app_folder_without_a_build_and_no_artifact_says_so(located, tmp_path: Path) -> None:
    located.setenv("RUNPOD_APP_DIR", str(tmp_path / "empty"))
    with pytest.raises(RuntimeError, match="has no build deployed"):
        sdk_deployed.loaded("queue")


def test_the_resource_s_system_dependencies_are_noted_in_the_worker_s_log_never_installed(deployed, capsys) -> None:
    deployed("hello", {**BUILD, "runpod_manifest.json": manifest(entry("hello", systemDependencies=["surely-not-a-system-tool", "sh"]))})
    assert run(queue_handler(), {"name": "world"})["text"] == "hello world!"
    err = capsys.readouterr().err
    assert "minipod: system dependency 'surely-not-a-system-tool' is not on PATH, and minipod installs nothing; install it on this machine, e.g. with: sudo apt-get install -y surely-not-a-system-tool" in err
    assert "'sh'" not in err


def test_without_uvicorn_the_api_worker_serves_the_app_of_the_build_s_asgi_factory_on_its_own_server(deployed, api_state, monkeypatch: pytest.MonkeyPatch) -> None:
    import http.client

    # What the worker does when its interpreter lacks uvicorn: its own server, the app served on it.
    deployed("web")
    monkeypatch.setattr(api, "uvicorn_available", lambda: False)
    prepared: List[Any] = []
    monkeypatch.setattr(api, "serve", lambda name, dispatch, prepare=None: prepared.append((dispatch, prepare)))
    api.main()
    [(dispatch, prepare)] = prepared
    assert dispatch is api.dispatch_deployed

    api.start_loop()
    prepare()
    assert api_state == []
    with api_server(api.dispatch_deployed) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("DELETE", "/anything/at/all")
        answer = conn.getresponse()
        assert (answer.status, answer.read()) == (200, b"DELETE /anything/at/all from the build")
        conn.request("GET", "/ping")  # the app has no /ping route of its own: the runtime's answers
        assert json.loads(conn.getresponse().read()) == {"status": "healthy"}
        conn.close()


def test_a_failing_asgi_factory_is_every_request_s_error(deployed, api_state) -> None:
    api.start_loop()
    deployed("web", {**BUILD, "main.py": MAIN.replace("def _web():\n", "def _web():\n    raise OSError('no config')\n")})
    api.load_deployed()
    assert api.dispatch_deployed("GET", "/", None) == (500, {"error": "the ASGI app factory of the deployed resource 'web' failed: OSError: no config"})
