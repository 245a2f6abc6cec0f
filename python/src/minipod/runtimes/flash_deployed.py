"""
The deployed path of minipod's Flash worker: a worker of an endpoint that `flash deploy` saved
into a Flash environment, with `FLASH_RESOURCE_NAME` naming its resource. (The SDK 2.x's deployed
workers, of `rp flash deploy`, unpack the artifact the same way: `minipod.runtimes.sdk_deployed`.)

The worker gets its build's artifact (the tar.gz the deploy uploaded to minipod): from the file
`FLASH_BUILD_ARTIFACT_PATH` names when it exists, else from minipod at the path minipod gives in
`MINIPOD_FLASH_ARTIFACT` (joined to minipod's URL, `RUNPOD_ENDPOINT_BASE_URL` without its `/v2`).
It unpacks it into a folder of its own (`FLASH_APP_DIR`, else a new temporary one), which becomes
its working directory and the first entry of `sys.path`, reads `flash_manifest.json` there, and
serves the resource's handler: the `handler_<resource>.py` the build generated (its `handler_file`),
or, without one, the resource's one function called with the job's input as keyword arguments.
Jobs take plain JSON, not FunctionRequests.

What cannot be served (no artifact, no manifest entry for the resource) fails each job with an
error saying so, rather than the worker: its jobs are answered.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import json
import os
import sys
import tarfile
import tempfile
import traceback
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Optional

Handler = Callable[[Dict[str, Any]], Any]


def _artifact_bytes() -> bytes:
    path = os.environ.get("FLASH_BUILD_ARTIFACT_PATH")
    if path and Path(path).is_file():
        return Path(path).read_bytes()
    where = os.environ.get("MINIPOD_FLASH_ARTIFACT")
    if not where:
        raise RuntimeError(
            "no build artifact: the endpoint's Flash environment has no build deployed "
            "(run flash deploy), and FLASH_BUILD_ARTIFACT_PATH names no file"
        )
    base = os.environ.get("RUNPOD_ENDPOINT_BASE_URL", "").rstrip("/")
    if base.endswith("/v2"):
        base = base[: -len("/v2")]
    with urllib.request.urlopen(f"{base}{where}", timeout=60) as answer:  # minipod's own route: no network
        return answer.read()


def unpack(data: bytes, into: Path) -> None:
    """Extracts the tar.gz `data` into `into`, refusing members that would land outside it."""
    root = into.resolve()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            target = (root / member.name).resolve()
            if target != root and root not in target.parents:
                raise RuntimeError(f"the artifact's member {member.name!r} would be written outside its folder")
            if member.issym() or member.islnk():
                raise RuntimeError(f"the artifact's member {member.name!r} is a link, which minipod does not unpack")
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later: the safe filter, and no warning
            tar.extractall(root, filter="data")
        else:
            tar.extractall(root)


def _from_file(path: Path, resource: str) -> Handler:
    spec = importlib.util.spec_from_file_location(f"handler_{resource}", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path.name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler = getattr(module, "handler", None)
    if not callable(handler):
        raise RuntimeError(f"{path.name} has no handler function")
    return handler


def _from_functions(entry: Dict[str, Any], resource: str) -> Handler:
    functions = entry.get("functions") or []
    if len(functions) != 1:
        raise RuntimeError(f"resource {resource!r} has {len(functions)} functions in the manifest and no handler_file: minipod serves one")
    spec = functions[0]
    fn = getattr(importlib.import_module(spec.get("module") or entry.get("module_path")), spec["name"])

    def handler(job: Dict[str, Any]) -> Any:
        kwargs = job.get("input") or {}
        if not isinstance(kwargs, dict):
            return {"success": False, "error": f"Malformed input: expected dict, got {type(kwargs).__name__}"}
        kwargs.pop("__empty", None)
        try:
            return fn(**kwargs)
        except Exception as e:  # the user's function failed: the caller gets its error
            return {"success": False, "error": str(e), "traceback": traceback.format_exc()}

    return handler


def load(app_dir: Path, resource: str) -> Handler:
    """The handler of `resource` in an unpacked artifact."""
    manifest_file = app_dir / "flash_manifest.json"
    if not manifest_file.is_file():
        raise RuntimeError("the build artifact has no flash_manifest.json")
    resources = json.loads(manifest_file.read_text()).get("resources") or {}
    entry = resources.get(resource)
    if entry is None:
        raise RuntimeError(f"the build's manifest has no resource {resource!r} (it has: {', '.join(sorted(resources)) or 'none'})")
    handler_file = app_dir / (entry.get("handler_file") or f"handler_{resource}.py")
    if handler_file.resolve().parent != app_dir.resolve():
        raise RuntimeError(f"the handler of {resource!r} is outside the artifact's folder")
    return _from_file(handler_file, resource) if handler_file.is_file() else _from_functions(entry, resource)


def unpacked_app() -> Path:
    """
    The build's artifact unpacked into the worker's folder (`FLASH_APP_DIR`, else a new temporary
    one), which becomes the working directory and the first entry of `sys.path`. Shared by every
    deployed worker minipod runs (runpod-flash's and the SDK 2.x's).
    """
    app_dir = Path(os.environ.get("FLASH_APP_DIR") or tempfile.mkdtemp(prefix="minipod-flash-app-"))
    app_dir.mkdir(parents=True, exist_ok=True)
    unpack(_artifact_bytes(), app_dir)
    sys.path.insert(0, str(app_dir))
    os.chdir(app_dir)
    importlib.invalidate_caches()
    return app_dir


def prepare(resource: str) -> Handler:
    """Unpacks the build and loads the resource's handler; what fails becomes every job's error."""
    try:
        return load(unpacked_app(), resource)
    except Exception as e:  # reported on every job, so the caller reads why
        reason = f"minipod's Flash worker cannot serve the deployed resource {resource!r}: {e}"
        print(reason, file=sys.stderr, flush=True)
        failure = {"error": reason}
        return lambda job: failure


def handler_of(resource: Optional[str] = None) -> Callable[[Dict[str, Any]], Any]:
    """The worker runtime's handler for the deployed resource (FLASH_RESOURCE_NAME): plain JSON in and out."""
    loaded = prepare(resource or os.environ["FLASH_RESOURCE_NAME"])

    async def handler(job: Dict[str, Any]) -> Any:
        result = loaded(job)
        if inspect.isawaitable(result):
            result = await result
        return result

    return handler


__all__ = ["handler_of", "load", "prepare", "unpack", "unpacked_app"]
