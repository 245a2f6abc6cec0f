"""
Contract tests: one suite that runs against minipod and, unchanged, against the real service.

The target comes from the environment (`MINIPOD_TARGET_URL`, the queue API up to `/v2`;
`MINIPOD_TARGET_KEY`; `MINIPOD_TARGET_ENDPOINTS`, the suite's endpoint names mapped to the
target's ids, `worker=abc123,echo=def456`); without it, a minipod is started. Tests of what only
minipod has (faults, the virtual clock, the journal) are marked `@pytest.mark.minipod_emulator_only`
and skipped, saying why, against another target. `job_problems`, `error_problems` and
`handler_error` hold a job or an error to what the service answers.
"""
from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .emulator import Emulator
from .errors import MinipodError

#: The environment variables that name another target.
TARGET_ENV = {"url": "MINIPOD_TARGET_URL", "key": "MINIPOD_TARGET_KEY", "endpoints": "MINIPOD_TARGET_ENDPOINTS"}

#: The statuses a job ends in.
FINAL_STATUSES = ("COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT")


def remote_target(env: Optional[Mapping[str, str]] = None) -> bool:
    """Whether the environment names a target other than a minipod of the suite's own."""
    env = os.environ if env is None else env
    return bool((env.get(TARGET_ENV["url"]) or "").strip())


def emulator_only_reason(needs: str = "minipod's control API (faults, clock, journal)", env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Why a test of what only minipod has is skipped here; None when the target is a minipod of the suite's own."""
    env = os.environ if env is None else env
    if not remote_target(env):
        return None
    return f"needs {needs}, which {env[TARGET_ENV['url']].strip()} has not ({TARGET_ENV['url']})"


class Target:
    """Where a contract suite sends its requests (see `contract_target`)."""

    def __init__(self, remote: bool, base_url: str, api_key: str, ids: Optional[Dict[str, str]], emulator: Optional[Emulator]) -> None:
        #: True when the environment named the target: minipod's own routes (/_emulator) are not there.
        self.remote = remote
        #: The queue API's base, up to /v2 (`runpod.endpoint_url_base`).
        self.base_url = base_url
        self.api_key = api_key
        #: The minipod started for the suite; None against a target the environment named.
        self.emulator = emulator
        self._ids = ids

    def endpoint(self, name: str) -> str:
        """The target's id of the endpoint the suite calls `name` (on minipod, `name` itself)."""
        if self._ids is None:
            return name
        if name not in self._ids:
            have = ", ".join(self._ids) or "none"
            raise MinipodError(f"{TARGET_ENV['endpoints']} names no endpoint {name!r} (it has {have}): add {name}=<endpoint id>")
        return self._ids[name]

    def call(self, method: str, path: str, body: Any = None, timeout: float = 120.0) -> Tuple[int, Any]:
        """A request to the queue API (`path` after /v2), with the key: the status and the body (JSON, else text)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"authorization": f"Bearer {self.api_key}"}
        if data is not None:
            headers["content-type"] = "application/json"
        req = urllib.request.Request(self.base_url + ("" if path.startswith("/") else "/") + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                status, text = res.status, res.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode(errors="replace")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def close(self) -> None:
        """Stops the minipod started, if one was."""
        if self.emulator is not None:
            self.emulator.stop()


def _ids_from(text: str) -> Dict[str, str]:
    ids: Dict[str, str] = {}
    for pair in (p.strip() for p in text.split(",")):
        if not pair:
            continue
        parts = [s.strip() for s in pair.split("=")]
        if len(parts) != 2 or not all(parts):
            raise MinipodError(f"{TARGET_ENV['endpoints']}: {pair!r} is not name=id (e.g. worker=abc123,echo=def456)")
        ids[parts[0]] = parts[1]
    return ids


def target_from_env(env: Optional[Mapping[str, str]] = None) -> Optional[Target]:
    """The target the environment names, or None; raises MinipodError on a half-given or malformed one."""
    env = os.environ if env is None else env
    url = (env.get(TARGET_ENV["url"]) or "").strip()
    if not url:
        return None
    if not re.match(r"^https?://[^/]", url):
        raise MinipodError(f"{TARGET_ENV['url']} must be an http(s) URL up to /v2 (https://api.runpod.ai/v2), got {url!r}")
    key = (env.get(TARGET_ENV["key"]) or "").strip()
    if not key:
        raise MinipodError(f"{TARGET_ENV['url']} is set, so {TARGET_ENV['key']} must hold the target's API key")
    return Target(True, url.rstrip("/"), key, _ids_from(env.get(TARGET_ENV["endpoints"]) or ""), None)


def target_on(emulator: Emulator) -> Target:
    """A minipod already running (the `minipod` fixture's) as the target."""
    return Target(False, emulator.v2_url, "minipod-contract-key", None, emulator)


def contract_target(config: Any = None, clock: str = "auto", env: Optional[Mapping[str, str]] = None) -> Target:
    """The suite's target: the one the environment names, else a minipod started with `config` and `clock`."""
    named = target_from_env(env)
    if named is not None:
        return named
    return target_on(Emulator(config=config, clock=clock).start())


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def job_problems(job: Any, status: str) -> List[str]:
    """
    What is wrong with `job` (a /run, /runsync or /status answer) as the service would answer it
    in `status`: [] when nothing. The service's facts: `id` and `status` always; `delayTime` and
    `executionTime`, when there, integer milliseconds (a COMPLETED job reports both); a FAILED job
    carries `error`, a string; `workerId` a string and `retries` an integer when there. What the
    service leaves unsaid is not required (a TIMED_OUT job's `error`, for one).
    """
    if not isinstance(job, dict):
        return [f"expected a JSON object, got {job!r}"]
    problems: List[str] = []
    if not isinstance(job.get("id"), str) or not job.get("id"):
        problems.append(f"id: expected a non-empty string, got {job.get('id')!r}")
    if job.get("status") != status:
        error = f" (error: {job['error']})" if isinstance(job.get("error"), str) else ""
        problems.append(f"status: expected {status}, got {job.get('status')!r}{error}")
    for key in ("delayTime", "executionTime", "retries"):
        if key in job and not _is_int(job[key]):
            problems.append(f"{key}: expected an integer of ms, got {job[key]!r}")
    if status == "COMPLETED":
        problems += [f"{key}: a COMPLETED job reports it" for key in ("delayTime", "executionTime") if key not in job]
    if status == "FAILED" and not isinstance(job.get("error"), str):
        problems.append(f"error: a FAILED job carries its error as a string, got {job.get('error')!r}")
    if "workerId" in job and not isinstance(job["workerId"], str):
        problems.append(f"workerId: expected a string, got {job['workerId']!r}")
    return problems


def handler_error(job: Mapping[str, Any]) -> Dict[str, str]:
    """
    A FAILED job's error as a test reads it: `{"message", "type"?, "traceback"?}`. The service's
    worker runtime reports a handler's exception as JSON text (`error_type`, `error_message`,
    `error_traceback`, with the host and worker); a handler in minipod's process, or a worker
    returning `{"error": "..."}`, as the message itself.
    """
    error = job.get("error")
    if not isinstance(error, str):
        raise MinipodError(f"the job has no error string: {dict(job)!r}")
    try:
        parsed = json.loads(error)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error_message"), str):
        out = {"message": parsed["error_message"]}
        if isinstance(parsed.get("error_type"), str):
            out["type"] = parsed["error_type"]
        if isinstance(parsed.get("error_traceback"), str):
            out["traceback"] = parsed["error_traceback"]
        return out
    return {"message": error}


def error_problems(status: int, body: Any, expected: int, surface: str) -> List[str]:
    """
    What is wrong with an error answer as the service gives it on `surface`: "queue" (its error
    bodies are not documented: only the status is the contract) or "rest" (problem+json: `title`,
    `status` equal to the HTTP status, `detail`, and `errors`, strings, when a body failed validation).
    """
    if surface not in ("queue", "rest"):
        raise MinipodError(f'surface must be "queue" or "rest", got {surface!r}')
    problems = [] if status == expected else [f"status: expected {expected}, got {status}"]
    if surface == "queue":
        return problems
    if not isinstance(body, dict):
        return problems + [f"body: expected problem+json, got {body!r}"]
    if not isinstance(body.get("title"), str):
        problems.append("title: expected a string")
    if body.get("status") != status:
        problems.append(f"status: the body's ({body.get('status')!r}) is not the answer's ({status})")
    if not isinstance(body.get("detail"), str):
        problems.append("detail: expected a string")
    if "errors" in body and not (isinstance(body["errors"], list) and all(isinstance(e, str) for e in body["errors"])):
        problems.append("errors: expected a list of strings")
    return problems
