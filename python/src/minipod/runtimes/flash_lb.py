"""
The worker of runpod-flash's load-balanced images (`runpod/flash-lb`, `runpod/flash-lb-cpu`) in
live mode, minipod's own: an HTTP server on `PORT` whose `POST /execute` takes a FunctionRequest
(or `{"input": FunctionRequest}`) and answers its FunctionResponse, run as minipod's Flash worker
runs a queue job (`minipod.runtimes.flash.execute`: the function's or class's source, its
arguments, the offline rule for dependencies); `GET /ping` answers 200.

    python -m minipod.runtimes.flash_lb

The routes a deployed app declares (`FLASH_ENDPOINT_TYPE=lb`, the build's handler module) are not
served by this runtime.
"""
from __future__ import annotations

from typing import Any, Tuple

from .api import run, serve
from .flash import execute


def dispatch(method: str, path: str, body: Any) -> Tuple[int, Any]:
    if path != "/execute" or method != "POST":
        return 404, {"error": f"no route {method} {path}: a live Flash load-balanced worker serves POST /execute"}
    request = body.get("input", body) if isinstance(body, dict) else None
    if not isinstance(request, dict):
        return 400, {"success": False, "error": "the body is not a FunctionRequest object"}
    return 200, run(execute(request))


def main() -> None:
    serve("Flash load-balanced", dispatch)


if __name__ == "__main__":
    main()


__all__ = ["dispatch", "main"]
