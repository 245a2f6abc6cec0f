"""
The deployed path of minipod's SDK 2.x workers: a worker of an endpoint that `rp flash deploy`
saved into a Flash environment (image `runpod/queue*` or `runpod/api*`), with `FLASH_RESOURCE_NAME`
(or `RUNPOD_RESOURCE_NAME`) naming its resource.

The build's artifact is fetched and unpacked as for runpod-flash's deployed workers
(`minipod.runtimes.flash_deployed`): the project's files at the top, the packages the deploy
vendored under `env/`, and `runpod_manifest.json`; or, as the service's bootstrap reads them, a
folder `RUNPOD_PREBUILT_APP_DIR` names is used as it is, and one `RUNPOD_APP_DIR` names is
reused when a build was unpacked there before (`.rp-unpacked`), else the build is unpacked there
(`app_dir`). The unpacked folder leads `sys.path`;
`env/` is put after the interpreter's own paths, so the worker's Python environment (yours) is
what runs, and the vendored packages only fill what it lacks. The manifest's entry of the resource
names the module to import; its `@app.queue` function (or `@app.api` class) whose name is the
resource's is served, after its `@init` hook ran:

- queue: each job's input is the function's keyword arguments (plain JSON, `__empty` for a call
  without any); its return value is the job's output; a generator's items are streamed, and the
  job's output is their list; a coroutine is awaited; an exception fails the job.
- api: the class's routes, as minipod's api runtime serves a synced class (`minipod.runtimes.api`).

Offline: the resource's `dependencies` and the build's `excludedPackages` must be importable (from
the interpreter or `env/`), else the worker fails each job (each request) naming them and the
command that installs them; the resource's `systemDependencies` are never installed, each one not
on PATH noted in the worker's log with the command that installs it. What cannot be served (no build deployed, no such resource) is every
job's error rather than a worker that does not start.
"""
from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict

from .flash import missing_dependencies, missing_error, system_notes
from .flash_deployed import _artifact_bytes, unpack, unpacked_app

MANIFEST = "runpod_manifest.json"
#: What the service's bootstrap leaves in a folder it has unpacked a build into.
UNPACK_MARKER = ".rp-unpacked"

#: What each kind serves of the handle the SDK's decorator made: the function, or the class or ASGI app factory.
_SERVED = {"queue": (("_fn",), "@app.queue function"), "api": (("_cls", "_asgi_factory"), "@app.api class or ASGI app factory")}


def resource_name() -> str:
    """The deployed resource this worker serves ("" in live mode)."""
    return os.environ.get("FLASH_RESOURCE_NAME") or os.environ.get("RUNPOD_RESOURCE_NAME") or ""


def handle_in(app_dir: Path, resource: str, kind: str) -> Any:
    """The SDK's handle of `resource` in the unpacked build `app_dir`, its module imported."""
    manifest_file = app_dir / MANIFEST
    if not manifest_file.is_file():
        raise RuntimeError(f"the build artifact has no {MANIFEST}")
    manifest = json.loads(manifest_file.read_text())
    entries = [r for r in manifest.get("resources") or [] if isinstance(r, dict)]
    entry = next((r for r in entries if r.get("name") == resource), None)
    if entry is None:
        names = ", ".join(sorted(str(r.get("name")) for r in entries)) or "none"
        raise RuntimeError(f"the build's manifest has no resource {resource!r} (it has: {names})")
    env_dir = app_dir / "env"
    if env_dir.is_dir() and str(env_dir) not in sys.path:
        sys.path.append(str(env_dir))
        importlib.invalidate_caches()
    missing = missing_dependencies([*(manifest.get("excludedPackages") or []), *(entry.get("dependencies") or [])])
    if missing:
        raise RuntimeError(missing_error(missing))
    for note in system_notes(entry.get("systemDependencies")):
        print(note, file=sys.stderr, flush=True)
    module_name = entry.get("module")
    if not isinstance(module_name, str) or not module_name:
        raise RuntimeError(f"the manifest's resource {resource!r} names no module")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] != module_name.split(".")[0]:
            raise RuntimeError(f"module {module_name!r} imports {e.name!r}: {missing_error([e.name.split('.')[0]])}") from e
        raise
    attrs, what = _SERVED[kind]
    for value in vars(module).values():
        if getattr(getattr(value, "spec", None), "name", None) == resource and any(getattr(value, a, None) is not None for a in attrs):
            return value
    raise RuntimeError(f"module {module_name!r} has no {what} named {resource!r}")


def run_init(hook: Any) -> None:
    """Runs the resource's `@init` hook (a coroutine awaited) before the worker serves; raises saying it failed."""
    if hook is None:
        return
    try:
        result = hook()
        if inspect.isawaitable(result):
            asyncio.run(_awaited(result))
    except Exception as e:
        raise RuntimeError(f"the @init hook of the deployed resource {resource_name()!r} failed: {type(e).__name__}: {e}") from e


async def _awaited(value: Any) -> Any:
    return await value


def app_dir() -> Path:
    """
    The build's folder, located as the service's bootstrap locates it: `RUNPOD_PREBUILT_APP_DIR`
    when it names a folder (used as it is, nothing unpacked); else `RUNPOD_APP_DIR` when it holds
    `.rp-unpacked` (unpacked before: reused); else the artifact unpacked into `RUNPOD_APP_DIR`,
    which then gets that marker. Without `RUNPOD_APP_DIR`, a folder of the worker's own
    (`minipod.runtimes.flash_deployed.unpacked_app`) rather than the image's `/app`. The folder
    becomes the working directory and leads `sys.path`, and `RUNPOD_APP_DIR` names it.
    """
    prebuilt = os.environ.get("RUNPOD_PREBUILT_APP_DIR")
    named = os.environ.get("RUNPOD_APP_DIR")
    if prebuilt and Path(prebuilt).is_dir():
        root = Path(prebuilt)
        print(f"minipod: using the unpacked app at {root} (RUNPOD_PREBUILT_APP_DIR)", file=sys.stderr, flush=True)
    elif named:
        root = Path(named)
        if (root / UNPACK_MARKER).is_file():
            print(f"minipod: the app is already unpacked at {root} (RUNPOD_APP_DIR)", file=sys.stderr, flush=True)
        else:
            root.mkdir(parents=True, exist_ok=True)
            unpack(_artifact_bytes(), root)
            (root / UNPACK_MARKER).write_text(str(time.time()))
    else:
        root = unpacked_app()  # its folder made the working directory and the path's first entry
        os.environ["RUNPOD_APP_DIR"] = str(root)
        return root
    root = root.resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    importlib.invalidate_caches()
    os.environ["RUNPOD_APP_DIR"] = str(root)
    return root


def loaded(kind: str) -> Any:
    """The handle of this worker's resource, from the build's folder; raises saying why it cannot be served."""
    resource = resource_name()
    try:
        return handle_in(app_dir(), resource, kind)
    except Exception as e:
        raise RuntimeError(f"minipod's SDK 2.x {kind} worker cannot serve the deployed resource {resource!r}: {e}") from e


def _kwargs(job: Dict[str, Any]) -> Dict[str, Any]:
    given = job.get("input")
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise TypeError(f"a deployed function's input is an object of its keyword arguments, not {type(given).__name__}")
    return {k: v for k, v in given.items() if k != "__empty"}


def queue_handler(handle: Any) -> Callable[[Dict[str, Any]], Any]:
    """The job loop's handler for a deployed `@app.queue` function: its keyword arguments in, its result out."""
    fn = handle._fn
    if inspect.isasyncgenfunction(fn):

        async def agen(job: Dict[str, Any]) -> Any:
            async for item in fn(**_kwargs(job)):
                yield item

        return agen
    if inspect.isgeneratorfunction(fn):

        async def gen(job: Dict[str, Any]) -> Any:
            for item in fn(**_kwargs(job)):
                yield item

        return gen

    async def call(job: Dict[str, Any]) -> Any:
        result = fn(**_kwargs(job))
        if inspect.isawaitable(result):
            result = await result
        return result

    return call


def serve_queue() -> None:
    """Serves the deployed `@app.queue` function on minipod's job loop (what cannot be, each job's error)."""
    from .sdk_concurrency import serve

    try:
        handle = loaded("queue")
        run_init(getattr(handle, "_init_fn", None))
        handler = queue_handler(handle)
    except Exception as e:  # reported on every job, so the caller reads why
        print(str(e), file=sys.stderr, flush=True)
        failure = {"error": str(e)}
        handler = lambda job: failure  # noqa: E731 - one answer for every job
    # A generator's items are streamed and, as the service's runtime does, gathered as the output.
    serve(handler, aggregate_stream=True)


__all__ = ["app_dir", "handle_in", "loaded", "queue_handler", "resource_name", "run_init", "serve_queue"]
