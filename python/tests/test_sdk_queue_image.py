"""An SDK 2.x queue endpoint (the runpod/queue image) started by minipod from the package, pointed at a
folder: its worker serves the build found there (RUNPOD_PREBUILT_APP_DIR) and holds
RUNPOD_MAX_CONCURRENCY jobs at once."""
import json
import urllib.request
from pathlib import Path
from typing import Any, Dict

from minipod import Emulator

# A build as `rp flash deploy` leaves it unpacked: the manifest and the module; the SDK's handle
# stood in for (what a worker reads of it: the spec's name and the function).
MODULE = '''
import asyncio
from collections import defaultdict

class Spec:
    def __init__(self, name):
        self.name = name

class FunctionHandle:
    def __init__(self, name, fn):
        self.spec, self._fn, self._init_fn = Spec(name), fn, None

EVENTS = defaultdict(asyncio.Event)

async def _meet(wait=None, set=None):
    if set:
        EVENTS[set].set()
        return {"set": set}
    await EVENTS[wait].wait()  # only a job run beside this one sets it
    return {"waited": wait}

meet = FunctionHandle("meet", _meet)
'''
MANIFEST = {"version": 1, "app": "shop", "resources": [{"kind": "queue", "name": "meet", "module": "main", "qualname": "meet"}]}


def post(url: str, body: Dict[str, Any]) -> Dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"authorization": "Bearer k", "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as res:
        return json.loads(res.read())


def test_a_worker_pointed_at_a_built_folder_runs_two_jobs_at_once(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(MODULE)
    (tmp_path / "runpod_manifest.json").write_text(json.dumps(MANIFEST))
    env = {"FLASH_RESOURCE_NAME": "meet", "RUNPOD_PREBUILT_APP_DIR": str(tmp_path), "RUNPOD_MAX_CONCURRENCY": "2"}
    with Emulator(clock="auto") as emu:
        # One worker process (workersMax 1): both jobs go to it, its module's events shared.
        saved = post(f"{emu.url}/graphql", {
            "query": "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id } }",
            "variables": {"input": {"name": "meet", "instanceIds": ["cpu3c-1-2"], "workersMax": 1, "template": {
                "name": "meet", "imageName": "runpod/queue:py3.11-latest", "env": [{"key": k, "value": v} for k, v in env.items()],
            }}},
        })
        endpoint = saved["data"]["saveEndpoint"]["id"]
        first = post(f"{emu.url}/v2/{endpoint}/run", {"input": {"wait": "a"}})["id"]
        emu.wait_for_job(endpoint, first, status="IN_PROGRESS", within_ms=600_000)
        second = post(f"{emu.url}/v2/{endpoint}/run", {"input": {"set": "a"}})["id"]
        # With one job at a time the first would hold the worker for good: bounded, the wait fails.
        assert emu.wait_for_job(endpoint, second, within_ms=30_000)["output"] == {"set": "a"}
        assert emu.wait_for_job(endpoint, first, within_ms=30_000)["output"] == {"waited": "a"}
