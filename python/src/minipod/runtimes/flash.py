"""
The worker of the `runpod/flash*` images, minipod's own: a queue worker (minipod's job loop,
`minipod.runtimes.job_loop`, one job at a time) whose jobs are runpod-flash's `FunctionRequest`s
and whose results are `FunctionResponse`s, run in the Python environment minipod starts it with.

    python -m minipod.runtimes.flash          # what minipod runs for an endpoint of such an image

A request carries a function's source (`function_code`, `function_name`) or a class's
(`class_code`, `class_name`, `constructor_args`/`constructor_kwargs`, `method_name`,
`instance_id`), its arguments as base64 cloudpickle (or plain JSON with
`serialization_format: "json"`), the packages it needs (`dependencies`, `system_dependencies`) and
local modules it imports (`modules`, `{relative path: source}`). The answer: `success`, `result`
(base64 cloudpickle) or `json_result`, `error` (the message and the traceback), `stdout` (what the
call printed or logged, also written to the worker's own output, so minipod's worker logs show
it) and, for a class, `instance_id`.

Offline: nothing is installed. A dependency that the worker's interpreter can import lets the call
run; one it cannot fails the call with an error naming it and the command that installs it there.
An instance of a class is kept per `instance_id` for the life of the worker process, so calls on
the same remote object share its state; code is executed afresh on every call, so an edited
function runs with its new source at once.

A worker of a deployed app's endpoint (`FLASH_RESOURCE_NAME` set) serves its build's handler
instead, taking plain JSON: see `minipod.runtimes.flash_deployed`.
"""
from __future__ import annotations

import base64
import contextlib
import importlib.metadata
import importlib.util
import inspect
import io
import json
import linecache
import logging
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
import traceback
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

#: Instances of remote classes, by instance_id: (the class source they were made from, the object, info).
_INSTANCES: Dict[str, Tuple[str, Any, Dict[str, Any]]] = {}

_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(spec: str) -> str:
    """The distribution a requirement names: "numpy>=2" -> "numpy", "torch[cuda]" -> "torch"."""
    match = _NAME.match(spec)
    return match.group(1) if match else spec.strip()


def is_installed(name: str) -> bool:
    """Whether the interpreter has the distribution `name`, or can import a module of that name."""
    try:
        importlib.metadata.distribution(name)
        return True
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        return importlib.util.find_spec(name.replace("-", "_")) is not None
    except (ImportError, ValueError):
        return False


def missing_dependencies(dependencies: Optional[List[str]]) -> List[str]:
    """The requirements of `dependencies` that this interpreter does not have."""
    return [spec for spec in dependencies or [] if not is_installed(requirement_name(spec))]


def missing_error(missing: List[str]) -> str:
    names = ", ".join(requirement_name(spec) for spec in missing)
    command = " ".join([shlex.quote(sys.executable), "-m", "pip", "install", *(shlex.quote(s) for s in missing)])
    return (
        f"dependencies not installed in the worker's Python ({sys.executable}): {names}. "
        f"minipod installs nothing from the network; install them there with: {command}"
    )


def system_notes(packages: Optional[List[str]]) -> List[str]:
    """
    A note for each system dependency not found on PATH (the service installs them with apt-get at
    the worker's start; minipod installs nothing): its name and the command that installs it here.
    """
    return [
        f"minipod: system dependency {name!r} is not on PATH, and minipod installs nothing; "
        f"install it on this machine, e.g. with: sudo apt-get install -y {shlex.quote(name)}"
        for name in packages or []
        if isinstance(name, str) and shutil.which(name) is None
    ]


def _traceback(e: BaseException, runtime_files: Tuple[str, ...] = ()) -> str:
    """The traceback from the user's code on (the runtimes' own frames left out)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in (__file__, *runtime_files):
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(e), e, tb))
    return text if text.startswith("Traceback") else "Traceback (most recent call last):\n" + text


def _loads(value: Any) -> Any:
    import cloudpickle

    return cloudpickle.loads(base64.b64decode(value))


def _dumps(value: Any) -> str:
    import cloudpickle

    return base64.b64encode(cloudpickle.dumps(value)).decode("ascii")


def _arguments(request: Dict[str, Any], args_key: str, kwargs_key: str) -> Tuple[List[Any], Dict[str, Any]]:
    args = list(request.get(args_key) or [])
    kwargs = dict(request.get(kwargs_key) or {})
    if request.get("serialization_format") == "json":
        return args, kwargs
    return [_loads(a) for a in args], {k: _loads(v) for k, v in kwargs.items()}


class _Tee(io.TextIOBase):
    """Writes to the capture and to the stream it replaces (the worker's own output)."""

    def __init__(self, capture: io.StringIO, echo: Any) -> None:
        self.capture = capture
        self.echo = echo

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.capture.write(text)
        try:
            self.echo.write(text)
        except (OSError, ValueError):
            pass
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.echo.flush()


#: How a log record of a call is written to its capture (a Formatter keeps no state of a record: one serves every call).
_LOG_FORMAT = logging.Formatter("%(levelname)s %(name)s: %(message)s")


class _Captured:
    """
    stdout, stderr and log records (INFO and up) of the call go to `capture`, and on to the
    worker's output: a log handler and two tees of the call's own (a record or a write of another
    thread that finishes after the call lands in that call's capture, never in the next one's),
    the root logger's level lowered to INFO during the call if it was higher, then set back.
    """

    __slots__ = ("capture", "handler", "level", "saved")

    def __init__(self, capture: io.StringIO) -> None:
        self.capture = capture

    def __enter__(self) -> None:
        capture = self.capture
        handler = self.handler = logging.StreamHandler(capture)
        handler.setLevel(logging.INFO)
        handler.setFormatter(_LOG_FORMAT)
        root = logging.root
        level = self.level = root.level
        root.addHandler(handler)
        if level > logging.INFO or level == logging.NOTSET:
            root.setLevel(logging.INFO)
        self.saved = sys.stdout, sys.stderr
        sys.stdout = _Tee(capture, self.saved[0])
        sys.stderr = _Tee(capture, self.saved[1])

    def __exit__(self, *exc: Any) -> None:
        sys.stdout, sys.stderr = self.saved
        root = logging.root
        root.removeHandler(self.handler)
        if root.level != self.level:
            root.setLevel(self.level)


@contextlib.contextmanager
def _local_modules(modules: Optional[Dict[str, str]]) -> Iterator[None]:
    """The request's local modules, importable during the call, forgotten after it (the next call may ship new ones)."""
    if not modules:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="minipod-flash-modules-") as folder:
        root = Path(folder).resolve()
        for relative, source in modules.items():
            target = (root / relative).resolve()
            if root not in target.parents:
                raise ValueError(f"module path {relative!r} leaves the module folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source, encoding="utf-8")
        sys.path.insert(0, str(root))
        before = set(sys.modules)
        try:
            yield
        finally:
            with contextlib.suppress(ValueError):
                sys.path.remove(str(root))
            for name in set(sys.modules) - before:
                if str(getattr(sys.modules[name], "__file__", "") or "").startswith(str(root)):
                    del sys.modules[name]


async def _call(fn: Any, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    result = fn(*args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


#: Code objects of the sources last run, by (source, filename), each with its linecache entry: a
#: warm call of the same source is executed afresh without being compiled again; an edited source
#: is another key.
_COMPILED: "OrderedDict[Tuple[str, str], Tuple[Any, Tuple[int, None, List[str], str]]]" = OrderedDict()
_COMPILED_MAX = 64


def _compiled(code: str, filename: str) -> Tuple[Any, Tuple[int, None, List[str], str]]:
    key = (code, filename)
    known = _COMPILED.get(key)
    if known is None:
        known = _COMPILED[key] = (compile(code, filename, "exec"), (len(code), None, code.splitlines(True), filename))
        if len(_COMPILED) > _COMPILED_MAX:
            _COMPILED.popitem(last=False)
    else:
        _COMPILED.move_to_end(key)
    return known


def _namespace(code: str, filename: str, module_name: str = "__minipod_flash__") -> Dict[str, Any]:
    compiled, lines = _compiled(code, filename)
    # Known to linecache (unless it already has these lines), so a traceback through the code shows its lines.
    if linecache.cache.get(filename) is not lines:
        linecache.cache[filename] = lines
    namespace: Dict[str, Any] = {"__name__": module_name}
    exec(compiled, namespace)
    return namespace


#: The types json.dumps writes whatever their value (bool is an int).
_JSON_SCALARS = (str, int, float, bool, type(None))


def _plain_json(value: Any) -> bool:
    """
    True when `value` is surely JSON-serializable: a scalar, or a small list or dict with string
    keys of them, of exact types (a few levels, a few dozen values); False when unsure (json.dumps tells).
    """
    budget = 64
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        kind = type(item)
        if kind in _JSON_SCALARS:
            continue
        budget -= 1
        if budget < 0 or depth > 8:
            return False
        if kind is dict:
            for k, v in item.items():
                if type(k) is not str:
                    return False
                pending.append((v, depth + 1))
        elif kind is list:
            pending.extend((v, depth + 1) for v in item)
        else:
            return False
        if len(pending) > 64:
            return False
    return True


async def _run_function(request: Dict[str, Any]) -> Any:
    name = request.get("function_name")
    if not request.get("function_code"):
        raise ValueError(
            f"no function_code for {name!r}: a live call sends the function's source "
            "(a deployed app's worker, with FLASH_RESOURCE_NAME, takes plain JSON instead)"
        )
    namespace = _namespace(request["function_code"], f"<flash function {name}>")
    if name not in namespace:
        raise NameError(f"function {name!r} is not defined by the function_code sent")
    args, kwargs = _arguments(request, "args", "kwargs")
    return await _call(namespace[name], args, kwargs)


async def _run_method(request: Dict[str, Any]) -> Tuple[Any, str]:
    class_name = request.get("class_name")
    code = request.get("class_code") or ""
    instance_id = request.get("instance_id") or f"{class_name}_{os.urandom(4).hex()}"
    known = _INSTANCES.get(instance_id)
    if known is None or known[0] != code:
        if not code:
            raise ValueError(f"no class_code for {class_name!r}")
        namespace = _namespace(code, f"<flash class {class_name}>")
        if class_name not in namespace:
            raise NameError(f"class {class_name!r} is not defined by the class_code sent")
        args, kwargs = _arguments(request, "constructor_args", "constructor_kwargs")
        instance = namespace[class_name](*args, **kwargs)
        known = (code, instance, {"class_name": class_name, "created_at": time.time(), "method_calls": 0})
        _INSTANCES[instance_id] = known
    _, instance, info = known
    method_name = request.get("method_name") or "__call__"
    method = getattr(instance, method_name, None)
    if method is None:
        raise AttributeError(f"{class_name!r} has no method {method_name!r}")
    info["method_calls"] += 1
    info["last_used"] = time.time()
    args, kwargs = _arguments(request, "args", "kwargs")
    return await _call(method, args, kwargs), instance_id


async def execute(request: Dict[str, Any]) -> Dict[str, Any]:
    """Runs one FunctionRequest (a dict) in this process; returns its FunctionResponse (a dict)."""
    dependencies = request.get("dependencies")
    missing = missing_dependencies(dependencies) if dependencies else None
    if missing:
        return {"success": False, "error": missing_error(missing), "stdout": ""}
    capture = io.StringIO()
    system = request.get("system_dependencies")
    notes = system_notes(system) if system else ()
    response: Dict[str, Any] = {}
    with _Captured(capture):
        for note in notes:
            print(note)
        try:
            modules = request.get("modules")
            with _local_modules(modules) if modules else contextlib.nullcontext():
                if request.get("execution_type") == "class":
                    result, instance_id = await _run_method(request)
                    response["instance_id"] = instance_id
                    response["instance_info"] = dict(_INSTANCES[instance_id][2])
                else:
                    result = await _run_function(request)
            if request.get("serialization_format") == "json":
                try:
                    if not _plain_json(result):
                        json.dumps(result)
                except (TypeError, ValueError) as e:
                    raise TypeError(f"return value must be JSON-serializable with serialization_format 'json': {e}") from e
                response.update(success=True, json_result=result)
            else:
                response.update(success=True, result=_dumps(result))
        except Exception as e:  # the user's code failed: the caller gets its error and traceback
            response = {"success": False, "error": f"{e}\n{_traceback(e)}", **({"instance_id": response["instance_id"]} if "instance_id" in response else {})}
    response["stdout"] = capture.getvalue()
    return response


async def handler(job: Dict[str, Any]) -> Dict[str, Any]:
    """The worker runtime's handler: a job's input is a FunctionRequest."""
    request = job.get("input")
    if not isinstance(request, dict):
        return {"success": False, "error": "Error in handler: the job's input is not a FunctionRequest object"}
    try:
        return await execute(request)
    except Exception as e:  # a fault of the request itself (undecodable arguments...)
        return {"success": False, "error": f"Error in handler: {e}\n{traceback.format_exc()}"}


def main() -> None:
    from .job_loop import serve

    # A deployed app's worker (FLASH_RESOURCE_NAME) serves its build's handler, taking plain JSON.
    if os.environ.get("FLASH_RESOURCE_NAME"):
        from .flash_deployed import handler_of

        serve(handler_of())
    else:
        serve(handler)


if __name__ == "__main__":
    main()


__all__ = ["execute", "handler", "is_installed", "missing_dependencies", "requirement_name", "main", "system_notes"]
