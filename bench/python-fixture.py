"""
The Python fixture's costs: starting minipod from Python (Emulator.start, what a pytest session
pays once) and a reset (what each test pays), with the package of python/ and this clone's CLI.

    python3 -m venv --system-site-packages .venv && .venv/bin/pip install --no-build-isolation ./python
    npm run build && .venv/bin/python bench/python-fixture.py      # writes bench/RESULTS-python.md

Wall time, on whatever else the machine runs: the median and the slowest of each.
"""
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from minipod import Emulator

STARTS = 7
RESETS = 200
CONFIG = {"endpoints": [{"id": "echo", "handler": "echo", "workersMin": 1, "coldStartMs": 0}, {"id": "py", "handler": "external"}]}


def timed(fn) -> float:
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def main() -> None:
    starts, stops = [], []
    for _ in range(STARTS):
        emulator = Emulator(config=CONFIG)
        starts.append(timed(emulator.start))
        stops.append(timed(emulator.stop))
    with Emulator(config=CONFIG) as emulator:
        for _ in range(10):
            emulator.reset()  # warm-up
        resets = [timed(emulator.reset) for _ in range(RESETS)]
    root = Path(__file__).resolve().parent.parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    row = lambda what, xs: f"| {what} | {len(xs)} | {statistics.median(xs):.0f} ms | {max(xs):.0f} ms |"
    text = "\n".join(
        [
            "# The Python fixture: start and reset",
            "",
            "Written by `bench/python-fixture.py`. Do not edit by hand.",
            "",
            f"- date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
            f"- machine: {os.cpu_count()} cores, {platform.system().lower()} {platform.release()}; Python {platform.python_version()}; node {node}; minipod commit {commit}",
            f"- load average (1 min) when it ran: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (others' work included)",
            "- wall time from Python, through the package's Emulator (a child `node bin/minipod.js --port 0`, found ready by its first line)",
            "",
            "| what | runs | median | slowest |",
            "|---|---:|---:|---:|",
            row("start: Emulator(config).start(), until it listens (once per pytest session)", starts),
            row("stop: Emulator.stop() (SIGTERM, until it exits)", stops),
            row("reset: POST /_emulator/reset (before each test)", resets),
            "",
        ]
    )
    (root / "bench" / "RESULTS-python.md").write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
