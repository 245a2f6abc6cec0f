"""minipod's SDK 2.x queue worker runtime (minipod.runtimes.queue), called in-process with the requests `rp flash dev` sends."""
import asyncio
import textwrap
from typing import Any, Dict, List

import pytest

pytest.importorskip("cloudpickle", reason="minipod.runtimes.queue needs cloudpickle (pip install cloudpickle)")

from minipod.runtimes import queue  # noqa: E402

MODULE = textwrap.dedent(
    """
    import logging

    class Handle:  # stands for the SDK's FunctionHandle: the worker calls what it wraps
        def __init__(self, fn):
            self._fn = fn

    def hello(name):
        print(f"greeting {name}")
        return f"hello {name}!"

    hello = Handle(hello)

    def count(n):
        for i in range(n):
            yield {"i": i}

    async def acount(n):
        for i in range(n):
            yield i * 10

    async def later(x):
        return x + 1

    def broken():
        raise RuntimeError("no luck")
    """
)


def run(name: str, *args: Any, **extra: Any) -> List[Dict[str, Any]]:
    request = {"function_name": name, "function_code": MODULE, "args": list(args), "kwargs": {}, "serialization_format": "json", **extra}

    async def collect() -> List[Dict[str, Any]]:
        return [out async for out in queue.handler({"id": "j", "input": request})]

    return asyncio.run(collect())


def test_a_function_of_the_module_answers_one_response_with_its_output() -> None:
    assert run("hello", "world") == [{"success": True, "json_result": "hello world!", "stdout": "greeting world\n"}]


def test_a_generator_answers_one_envelope_per_item() -> None:
    assert run("count", 2) == [{"success": True, "__stream__": True, "json_result": {"i": 0}}, {"success": True, "__stream__": True, "json_result": {"i": 1}}]
    assert [o["json_result"] for o in run("acount", 3)] == [0, 10, 20]


def test_a_coroutine_is_awaited() -> None:
    assert run("later", 41)[0]["json_result"] == 42


def test_an_error_answers_its_traceback_from_the_module() -> None:
    [out] = run("broken")
    assert out["success"] is False
    assert "RuntimeError: no luck" in out["error"] and 'raise RuntimeError("no luck")' in out["error"] and "minipod/runtimes" not in out["error"]


def test_a_missing_dependency_or_function_fails_naming_it() -> None:
    [out] = run("hello", "x", dependencies=["surely-not-installed-pkg"])
    assert out["success"] is False and "surely-not-installed-pkg" in out["error"] and "pip install" in out["error"]
    [missing] = run("nope")
    assert missing["success"] is False and "'nope' is not defined" in missing["error"]


def test_the_worker_serves_its_handler_on_minipods_job_loop_with_the_streams_gathered(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from minipod.runtimes import job_loop

    served: List[Any] = []
    monkeypatch.setattr(job_loop, "serve", lambda handler, **options: served.append((handler, options)))
    monkeypatch.setitem(sys.modules, "runpod", None)  # importing it would fail
    queue.main()
    assert served == [(queue.handler, {"aggregate_stream": True})]


def test_a_system_dependency_not_on_path_is_noted_in_the_output_never_installed() -> None:
    [out] = run("hello", "world", system_dependencies=["surely-not-a-system-tool", "sh"])
    assert out["success"] is True and out["json_result"] == "hello world!"
    note = "minipod: system dependency 'surely-not-a-system-tool' is not on PATH, and minipod installs nothing; install it on this machine, e.g. with: sudo apt-get install -y surely-not-a-system-tool\n"
    assert out["stdout"] == note + "greeting world\n"  # sh is on PATH: nothing said of it


def test_generators_run_beside_each_other() -> None:
    # The module is executed afresh for each call: the two calls meet through a module both import.
    meeting = textwrap.dedent(
        """
        import asyncio, sys, types

        place = sys.modules.setdefault("minipod_test_meeting", types.ModuleType("minipod_test_meeting"))
        if not hasattr(place, "event"):
            place.event = asyncio.Event()

        async def wait_then_count(n):
            await place.event.wait()  # only the other call sets it
            for i in range(n):
                yield i

        async def arrive():
            place.event.set()
            yield "arrived"
        """
    )

    async def both() -> List[List[Dict[str, Any]]]:
        async def collect(name: str, *args: Any) -> List[Dict[str, Any]]:
            request = {"function_name": name, "function_code": meeting, "args": list(args), "kwargs": {}, "serialization_format": "json"}
            return [out async for out in queue.handler({"id": name, "input": request})]

        return list(await asyncio.wait_for(asyncio.gather(collect("wait_then_count", 2), collect("arrive")), timeout=10))

    import sys

    try:
        waited, arrived = asyncio.run(both())
    finally:
        sys.modules.pop("minipod_test_meeting", None)
    assert [o["json_result"] for o in waited] == [0, 1] and [o["json_result"] for o in arrived] == ["arrived"]
