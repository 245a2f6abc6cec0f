"""Jobs submitted and read over minipod's REST v2, as a client of the test endpoints does (urllib, the test key)."""
import json
import urllib.request
from typing import Any, Dict

AUTH = {"authorization": "Bearer test"}


def submit(minipod: Any, endpoint: str, payload: Dict[str, Any]) -> str:
    """POST /v2/{endpoint}/run with `payload` as the input; the new job's id."""
    req = urllib.request.Request(f"{minipod.url}/v2/{endpoint}/run", data=json.dumps({"input": payload}).encode(), method="POST", headers={"content-type": "application/json", **AUTH})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read())["id"]


def status(minipod: Any, endpoint: str, job_id: str) -> str:
    """The job's status, from GET /v2/{endpoint}/status/{job_id}."""
    with urllib.request.urlopen(urllib.request.Request(f"{minipod.url}/v2/{endpoint}/status/{job_id}", headers=AUTH), timeout=30) as res:
        return json.loads(res.read())["status"]
