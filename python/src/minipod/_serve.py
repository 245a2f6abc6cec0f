"""`python -m minipod._serve module:function`: runs that handler under the service's worker runtime.

What `Emulator.worker(handler)` starts, so that a handler needs no script of its own; the process
is what a deployed worker runs: `runpod.serverless.start({"handler": ...})`, with the options the
test gave (MINIPOD_HANDLER_OPTIONS, JSON).
"""
import importlib
import json
import os
import sys


def main() -> None:
    if len(sys.argv) != 2 or ":" not in sys.argv[1]:
        sys.exit("usage: python -m minipod._serve module:function")
    module_name, _, attribute = sys.argv[1].partition(":")
    target = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    try:
        import runpod
    except ImportError:
        sys.exit("minipod: the worker needs the service's library, runpod: pip install runpod")
    options = json.loads(os.environ.get("MINIPOD_HANDLER_OPTIONS") or "{}")
    # The runtime reads its own flags from the command line: leave it none of ours.
    sys.argv = sys.argv[:1]
    runpod.serverless.start({"handler": target, **options})


if __name__ == "__main__":
    main()
