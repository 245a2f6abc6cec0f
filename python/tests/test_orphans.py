"""A process that started minipod and is killed with SIGKILL leaves no minipod, worker or temp folder behind."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("runpod", reason="the service's library runpod is not installed: pip install runpod")

SCRIPT = """
import json, runpod
from minipod import Emulator
emu = Emulator(config={"endpoints": [{"id": "py", "handler": "external"}], "externalWorkers": {"pingIntervalMs": 1000}}, clock="real").start()
worker = emu.worker("handlers:greet", endpoint="py")
runpod.endpoint_url_base = emu.v2_url
runpod.api_key = "k"
handler = runpod.Endpoint("py").run_sync({"name": "x"}, timeout=60)["pid"]
print(json.dumps({"minipod": emu.pid, "minipod worker": worker.process.pid, "handler": handler}), flush=True)
import time
time.sleep(600)
"""


def running(pid):
    """Whether the process runs (a zombie not reaped yet runs no more code)."""
    try:
        return not Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def test_a_parent_killed_with_sigkill_leaves_nothing_running(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = parent.stdout.readline()
        assert line, parent.stderr.read()
        pids = json.loads(line)
        assert all(running(pid) for pid in pids.values())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
    deadline = time.monotonic() + 2.0
    while any(running(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.025)
    left = [name for name, pid in pids.items() if running(pid)]
    for name in left:
        os.kill(pids[name], signal.SIGKILL)
    assert left == []
    assert list(tmp.iterdir()) == []
