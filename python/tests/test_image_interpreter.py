"""An endpoint of one of the service's runtime images, started from the package: its worker processes run this interpreter."""
import json
import sys
import urllib.request
from typing import Any, Dict

import pytest

pytest.importorskip("cloudpickle", reason="minipod's Flash worker needs cloudpickle (pip install cloudpickle)")
pytest.importorskip("runpod.serverless", reason="minipod's Flash worker runs under the service's worker runtime (pip install runpod)")

from minipod import Emulator  # noqa: E402


def post(url: str, body: Dict[str, Any]) -> Dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"authorization": "Bearer k", "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as res:
        return json.loads(res.read())


def test_a_flash_endpoint_runs_on_the_interpreter_that_started_minipod() -> None:
    with Emulator(clock="auto") as emu:
        saved = post(f"{emu.url}/graphql", {
            "query": "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id } }",
            "variables": {"input": {"name": "which", "instanceIds": ["cpu3c-1-2"], "template": {"name": "which", "imageName": "runpod/flash-cpu:py3.12-latest"}}},
        })
        endpoint = saved["data"]["saveEndpoint"]["id"]
        code = "def where():\n    import sys\n    return sys.executable\n"
        job = post(f"{emu.url}/v2/{endpoint}/runsync", {"input": {"function_name": "where", "function_code": code, "serialization_format": "json"}})
        if job["status"] != "COMPLETED":
            job = emu.wait_for_job(endpoint, job["id"], within_ms=600_000)
        assert job["output"]["json_result"] == sys.executable
