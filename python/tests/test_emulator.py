"""Emulator on its own (no fixture): the manual clock, a wait that moves it, and stop."""
import importlib.util
import json
import urllib.request

import pytest

import handlers
from minipod import Emulator, MinipodError


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={"authorization": "k"})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read())


def test_the_manual_clock_moves_only_when_told():
    config = {"endpoints": [{"id": "work", "handler": "scripted", "workersMin": 0, "coldStartMs": 2000}]}
    with Emulator(config=config, clock="manual") as emu:
        assert emu.clock()["mode"] == "manual"
        job = post(f"{emu.v2_url}/work/run", {"input": {"sleepMs": 5000, "output": "done"}})
        before = emu.now()
        with pytest.raises(MinipodError, match=r"did not reach COMPLETED within 1000 virtual ms"):
            emu.wait_for_job("work", job["id"], within_ms=1000)
        done = emu.wait_for_job("work", job["id"])
        assert done["output"] == "done" and done["executionTime"] == 5000
        assert emu.now() - before == 7000  # cold start and the run, no more: nothing waited in wall time
        url = emu.url
    with pytest.raises(MinipodError, match="minipod is not running"):
        emu.url  # noqa: B018 (the property raises once stopped)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/_emulator/clock", timeout=5)


@pytest.mark.skipif(importlib.util.find_spec("runpod") is None, reason="the service's library runpod is not installed: pip install runpod")
def test_wait_for_job_on_the_manual_clock_waits_for_a_worker_process_instead_of_timing_it_out():
    config = {"endpoints": [{"id": "py", "handler": "external"}], "externalWorkers": {"pingIntervalMs": 1000}}
    with Emulator(config=config, clock="manual") as emu:
        emu.worker(handlers.nap, endpoint="py")
        job = post(f"{emu.v2_url}/py/run", {"input": {"seconds": 2}})
        # The job's execution timeout (600 s) is the only timer ahead: a wait that moved time to it
        # would time the job out while the worker still ran it.
        done = emu.wait_for_job("py", job["id"])
        assert done["status"] == "COMPLETED" and done["output"] == {"slept": 2}
