"""minipod's load-balanced runtimes, called in-process: the SDK 2.x's api worker (minipod.runtimes.api)
with a module source as `rp flash dev` syncs it, and the Flash load-balanced worker's /execute
(minipod.runtimes.flash_lb)."""
import textwrap

from minipod.runtimes import api, flash_lb

MODULE = textwrap.dedent(
    """
    from collections import namedtuple

    Route = namedtuple("Route", "method path handler_name")

    class Spec:  # stands for the SDK's ResourceSpec of an @app.api resource
        def __init__(self, name, routes):
            self.name, self.routes = name, routes

    class Inference:
        def setup(self):
            self.calls = 0

        async def generate(self, body):
            self.calls += 1
            return {"text": body["prompt"].upper(), "calls": self.calls}

        def item(self, item):
            return {"item": item}

        def fail(self, body):
            raise ValueError("no luck")

    class Handle:  # stands for the SDK's ApiHandle
        spec = Spec("inference", [Route("POST", "/generate", "generate"), Route("GET", "/items/{item}", "item"), Route("POST", "/fail", "fail")])
        _cls = Inference
        _init_name = "setup"

    inference = Handle()
    """
)


def setup_module() -> None:
    api.start_loop()


def test_sync_serves_the_class_its_init_run_its_state_kept() -> None:
    assert api.call("POST", "/generate", {"prompt": "x"})[0] == 503
    synced = api.sync({"source": MODULE, "resource": "inference"})
    assert synced["status"] == "synced" and len(synced["hash"]) == 64
    assert api.call("POST", "/generate", {"prompt": "hi"}) == (200, {"text": "HI", "calls": 1})
    assert api.call("POST", "/generate", {"prompt": "again"}) == (200, {"text": "AGAIN", "calls": 2})
    # As the service's api worker calls a route: the body alone; a path's {item} is matched, never passed.
    status, unpassed = api.call("GET", "/items/7", None)
    assert status == 500 and "missing 1 required positional argument: 'item'" in unpassed["error"]
    # A route taking a body called without one is called without it, as the service does.
    assert api.call("POST", "/generate", None)[0] == 500
    status, failed = api.call("POST", "/fail", {})
    assert status == 500 and failed["error"] == "ValueError: no luck" and 'raise ValueError("no luck")' in failed["traceback"]
    assert api.call("GET", "/generate", None)[0] == 404


def test_a_sync_naming_no_class_or_a_missing_dependency_fails_saying_so() -> None:
    try:
        api.sync({"source": MODULE, "resource": "other"})
        raise AssertionError("expected a LookupError")
    except LookupError as e:
        assert "no @app.api class or ASGI app factory named 'other'" in str(e)
    try:
        api.sync({"source": MODULE, "resource": "inference", "dependencies": ["surely-not-installed-pkg"]})
        raise AssertionError("expected a RuntimeError")
    except RuntimeError as e:
        assert "surely-not-installed-pkg" in str(e)


def test_flash_lb_execute_runs_a_function_request() -> None:
    request = {"function_name": "add", "function_code": "def add(a, b):\n    return a + b\n", "args": [1, 2], "kwargs": {}, "serialization_format": "json"}
    assert flash_lb.dispatch("POST", "/execute", request) == (200, {"success": True, "json_result": 3, "stdout": ""})
    assert flash_lb.dispatch("POST", "/execute", {"input": request})[1]["json_result"] == 3
    assert flash_lb.dispatch("POST", "/execute", [1])[0] == 400
    assert flash_lb.dispatch("GET", "/other", None)[0] == 404


def test_a_sync_notes_a_system_dependency_not_on_path_in_the_worker_s_log(capsys) -> None:
    api.sync({"source": MODULE, "resource": "inference", "system_dependencies": ["surely-not-a-system-tool", "sh"]})
    err = capsys.readouterr().err
    assert "system dependency 'surely-not-a-system-tool' is not on PATH" in err and "sudo apt-get install -y surely-not-a-system-tool" in err
    assert "'sh'" not in err


def test_the_server_refuses_head_and_options_for_a_class_s_routes() -> None:
    import http.client

    from api_server import api_server

    api.sync({"source": MODULE, "resource": "inference"})
    with api_server(api._dispatch) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for method in ("HEAD", "OPTIONS"):
            conn.request(method, "/generate")
            answer = conn.getresponse()
            answer.read()
            assert answer.status == 501
        conn.close()
