"""minipod's Flash worker runtime (minipod.runtimes.flash), called in-process with FunctionRequests as runpod-flash sends them."""
import asyncio
import base64
import sys
import textwrap
from typing import Any, Dict, List

import pytest

cloudpickle = pytest.importorskip("cloudpickle", reason="minipod.runtimes.flash needs cloudpickle (pip install cloudpickle)")

from minipod.runtimes import flash  # noqa: E402


def enc(value: Any) -> str:
    return base64.b64encode(cloudpickle.dumps(value)).decode()


def dec(value: str) -> Any:
    return cloudpickle.loads(base64.b64decode(value))


def run(request: Dict[str, Any]) -> Dict[str, Any]:
    return asyncio.run(flash.handler({"id": "job-1", "input": request}))


def fn(name: str, code: str, *args: Any, **kwargs: Any) -> Dict[str, Any]:
    return {
        "function_name": name,
        "function_code": textwrap.dedent(code),
        "args": [enc(a) for a in args],
        "kwargs": {k: enc(v) for k, v in kwargs.items()},
        "execution_type": "function",
        "serialization_format": "cloudpickle",
        "modules": {},
    }


def test_a_function_runs_with_pickled_arguments_and_answers_a_pickled_result() -> None:
    out = run(fn("add", "def add(a, b, scale=1):\n    return {'sum': (a + b) * scale}\n", 2, 3, scale=10))
    assert out["success"] is True
    assert dec(out["result"]) == {"sum": 50}


def test_json_arguments_and_result() -> None:
    out = run({"function_name": "hello", "function_code": "def hello(name):\n    return f'hello {name}!'\n", "args": ["world"], "serialization_format": "json"})
    assert out == {"success": True, "json_result": "hello world!", "stdout": ""}


def test_a_json_call_whose_result_is_not_json_fails_saying_so() -> None:
    out = run({"function_name": "f", "function_code": "def f():\n    return object()\n", "serialization_format": "json"})
    assert out["success"] is False
    assert "JSON-serializable" in out["error"]


def test_an_async_function_is_awaited() -> None:
    code = """
    import asyncio
    async def slow(x):
        await asyncio.sleep(0)
        return x * 2
    """
    assert dec(run(fn("slow", code, 21))["result"]) == 42


def test_stdout_stderr_and_logging_are_captured() -> None:
    code = """
    import logging, sys
    def noisy():
        print("to stdout")
        print("to stderr", file=sys.stderr)
        logging.getLogger("user").info("a log line")
        return 1
    """
    out = run(fn("noisy", code))
    assert out["success"] is True
    assert "to stdout\n" in out["stdout"] and "to stderr\n" in out["stdout"] and "a log line" in out["stdout"]


def test_an_exception_answers_its_message_and_traceback_with_the_output_so_far() -> None:
    code = """
    def boom(x):
        print("about to fail")
        raise ValueError(f"bad value {x}")
    """
    out = run(fn("boom", code, 7))
    assert out["success"] is False
    assert out["error"].startswith("bad value 7\nTraceback (most recent call last):")
    assert "ValueError: bad value 7" in out["error"] and "in boom" in out["error"]
    # The user's own frames, with their source lines; not the runtime's.
    assert 'raise ValueError(f"bad value {x}")' in out["error"] and "minipod/runtimes" not in out["error"]
    assert out["stdout"] == "about to fail\n"


def test_a_class_keeps_its_state_across_calls_on_one_instance_id() -> None:
    code = textwrap.dedent(
        """
        class Counter:
            def __init__(self, start):
                self.count = start
            def bump(self, by=1):
                self.count += by
                return self.count
        """
    )
    request = {"execution_type": "class", "class_name": "Counter", "class_code": code, "constructor_args": [enc(10)], "method_name": "bump", "instance_id": "Counter_abc", "create_new_instance": True}
    first = run({**request, "args": [enc(5)]})
    second = run({**request, "create_new_instance": False})
    assert (dec(first["result"]), dec(second["result"])) == (15, 16)
    assert second["instance_id"] == "Counter_abc" and second["instance_info"]["method_calls"] == 2
    other = run({**request, "instance_id": "Counter_other"})
    assert dec(other["result"]) == 11


def test_edited_code_runs_at_the_next_call() -> None:
    assert dec(run(fn("v", "def v():\n    return 1\n"))["result"]) == 1
    assert dec(run(fn("v", "def v():\n    return 2\n"))["result"]) == 2


def test_a_source_run_again_is_not_compiled_again_and_its_namespace_is_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: List[str] = []
    real = compile

    def counting(source: Any, filename: str, mode: str, *args: Any, **kwargs: Any) -> Any:
        compiled.append(filename)
        return real(source, filename, mode, *args, **kwargs)

    monkeypatch.setattr(flash, "compile", counting, raising=False)
    code = "calls = []\ndef once():\n    calls.append(1)\n    return len(calls)\n"
    assert [dec(run(fn("once", code))["result"]) for _ in range(3)] == [1, 1, 1]
    assert compiled == ["<flash function once>"]
    assert dec(run(fn("once", code.replace("return len(calls)", "return -len(calls)")))["result"]) == -1
    assert compiled == ["<flash function once>"] * 2


def test_a_missing_dependency_fails_naming_it_and_the_local_install_command() -> None:
    code = "def f():\n    import surely_not_installed_pkg\n"
    out = run({**fn("f", code), "dependencies": ["cloudpickle", "surely-not-installed-pkg>=1.0"]})
    assert out["success"] is False
    assert "surely-not-installed-pkg" in out["error"] and "cloudpickle," not in out["error"]
    assert f"{sys.executable} -m pip install 'surely-not-installed-pkg>=1.0'" in out["error"]


def test_an_installed_dependency_lets_the_call_run() -> None:
    out = run({**fn("f", "def f():\n    import cloudpickle\n    return 'ok'\n"), "dependencies": ["cloudpickle>=1"]})
    assert dec(out["result"]) == "ok"


def test_local_modules_are_importable_during_the_call() -> None:
    request = {**fn("f", "def f():\n    from helpers.text import shout\n    return shout('hi')\n"), "modules": {"helpers/__init__.py": "", "helpers/text.py": "def shout(s):\n    return s.upper()\n"}}
    assert dec(run(request)["result"]) == "HI"
    assert "helpers.text" not in sys.modules


def test_a_module_path_outside_its_folder_is_refused() -> None:
    out = run({**fn("f", "def f():\n    return 1\n"), "modules": {"../escape.py": "x = 1\n"}})
    assert out["success"] is False and "leaves the module folder" in out["error"]


def test_an_input_that_is_not_a_request_is_an_error_response() -> None:
    out = asyncio.run(flash.handler({"id": "j", "input": "nope"}))
    assert out["success"] is False and out["error"].startswith("Error in handler:")


def test_requirement_names() -> None:
    assert [flash.requirement_name(s) for s in ["numpy>=2", "torch[cuda]==2.1", " scikit-learn ", "pkg @ https://x"]] == ["numpy", "torch", "scikit-learn", "pkg"]


def test_the_worker_serves_its_handler_on_minipods_job_loop_without_the_service_library(monkeypatch: pytest.MonkeyPatch) -> None:
    from minipod.runtimes import job_loop

    served: List[Any] = []
    monkeypatch.setattr(job_loop, "serve", served.append)
    monkeypatch.setitem(sys.modules, "runpod", None)  # importing it would fail
    monkeypatch.delenv("FLASH_RESOURCE_NAME", raising=False)
    flash.main()
    assert served == [flash.handler]


def test_a_system_dependency_not_on_path_is_noted_with_its_install_command_never_installed() -> None:
    out = run({**fn("f", "def f():\n    return 'ran'\n"), "system_dependencies": ["surely-not-a-system-tool", "sh"]})
    assert dec(out["result"]) == "ran"
    assert out["stdout"] == "minipod: system dependency 'surely-not-a-system-tool' is not on PATH, and minipod installs nothing; install it on this machine, e.g. with: sudo apt-get install -y surely-not-a-system-tool\n"


def test_a_calls_capture_is_its_own_and_the_worker_is_left_as_it_was() -> None:
    import logging
    import threading

    root = logging.getLogger()
    handlers, level, stdout, stderr = list(root.handlers), root.level, sys.stdout, sys.stderr
    code = """
    import logging, sys, threading
    late = []
    def noisy(n):
        print(f"out {n}")
        print(f"err {n}", file=sys.stderr)
        logging.getLogger("user").info("log %d", n)
        logging.getLogger("user").debug("not at debug %d", n)
        if n == 1:
            logging.getLogger().setLevel(logging.ERROR)  # the call's own change is undone after it
        return n
    """
    try:
        for start in (logging.WARNING, logging.DEBUG, logging.NOTSET):
            root.setLevel(start)
            outs = [run(fn("noisy", code, n)) for n in (1, 2, 3)]
            for n, out in enumerate(outs, 1):
                assert out["stdout"] == f"out {n}\nerr {n}\nINFO user: log {n}\n"
            assert root.level == start and root.handlers == handlers
            assert sys.stdout is stdout and sys.stderr is stderr
        # Records of another thread go to the call running, not to the next one.
        root.setLevel(logging.WARNING)
        started, go = threading.Event(), threading.Event()

        def other() -> None:
            started.set()
            go.wait(10)
            logging.getLogger("other").warning("outside any call")

        thread = threading.Thread(target=other)
        thread.start()
        started.wait(10)
        first = run(fn("noisy", code, 1))
        go.set()
        thread.join(10)
        second = run(fn("noisy", code, 2))
        assert "outside" not in first["stdout"] + second["stdout"]
    finally:
        root.setLevel(level)


def test_a_traceback_shows_the_lines_of_the_source_that_ran_edited_or_not() -> None:
    first = "def v():\n    raise ValueError('first')\n"
    second = "def v():\n    raise KeyError('second')\n"
    for code, line in [(first, "raise ValueError('first')"), (second, "raise KeyError('second')"), (first, "raise ValueError('first')")]:
        out = run(fn("v", code))
        assert out["success"] is False and line in out["error"]


def test_a_json_result_of_any_shape_json_takes_is_answered_as_it() -> None:
    def call(code: str) -> Dict[str, Any]:
        return run({"function_name": "f", "function_code": code, "args": [], "serialization_format": "json"})

    assert call("def f():\n    return {'a': [1, 2.5, None, True, {'b': 'c'}]}\n")["json_result"] == {"a": [1, 2.5, None, True, {"b": "c"}]}
    assert call("def f():\n    return (1, {2: 3})\n")["json_result"] == (1, {2: 3})  # json writes tuples and int keys
    assert call("def f():\n    return list(range(1000))\n")["json_result"] == list(range(1000))
    out = call("def f():\n    return {'a': [1, {'b': {1, 2}}]}\n")
    assert out["success"] is False and "must be JSON-serializable" in out["error"] and "set is not JSON serializable" in out["error"]
    out = call("def f():\n    x = []\n    x.append(x)\n    return x\n")
    assert out["success"] is False and "Circular reference" in out["error"]
