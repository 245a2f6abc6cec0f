"""minipod's Flash worker on the deployed path (minipod.runtimes.flash_deployed): a build's artifact
unpacked, its manifest read, the resource's handler serving plain JSON."""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from artifacts import artifact
from minipod.runtimes import flash_deployed

GENERATED = '''
import importlib
greet = importlib.import_module("main").greet

def handler(job):
    try:
        return greet(**(job.get("input") or {}))
    except Exception as e:
        return {"success": False, "error": str(e)}
'''

MAIN = '''
import os

def greet(name):
    print(f"greeting {name}")
    return {"hello": name, "cwd": os.getcwd()}

async def double(x):
    return x * 2
'''



def manifest(**resources) -> str:
    return json.dumps({"version": "1.0", "resources": resources})


def serve(monkeypatch, tmp_path: Path, files: dict, resource: str, job_input):
    path = tmp_path / "artifact.tar.gz"
    path.write_bytes(artifact(files))
    monkeypatch.setenv("FLASH_BUILD_ARTIFACT_PATH", str(path))
    monkeypatch.setenv("FLASH_APP_DIR", str(tmp_path / "app"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("main", "handler_greeter"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    handler = flash_deployed.handler_of(resource)
    return asyncio.run(handler({"id": "job-1", "input": job_input}))


def test_the_generated_handler_serves_plain_json_in_the_unpacked_folder(monkeypatch, tmp_path):
    files = {"flash_manifest.json": manifest(greeter={"handler_file": "handler_greeter.py", "functions": []}), "handler_greeter.py": GENERATED, "main.py": MAIN}
    out = serve(monkeypatch, tmp_path, files, "greeter", {"name": "world"})
    assert out == {"hello": "world", "cwd": str((tmp_path / "app").resolve())}


def test_without_a_handler_file_the_resource_s_function_is_called_with_the_input_as_keywords(monkeypatch, tmp_path):
    files = {"flash_manifest.json": manifest(doubler={"module_path": "main", "functions": [{"name": "double", "module": "main", "is_async": True}]}), "main.py": MAIN}
    assert serve(monkeypatch, tmp_path, files, "doubler", {"x": 21}) == 42


def test_what_cannot_be_served_is_every_job_s_error(monkeypatch, tmp_path):
    files = {"flash_manifest.json": manifest(other={})}
    out = serve(monkeypatch, tmp_path, files, "greeter", {})
    assert out == {"error": "minipod's Flash worker cannot serve the deployed resource 'greeter': the build's manifest has no resource 'greeter' (it has: other)"}


def test_no_artifact_at_all_says_to_deploy(monkeypatch, tmp_path):
    monkeypatch.delenv("FLASH_BUILD_ARTIFACT_PATH", raising=False)
    monkeypatch.delenv("MINIPOD_FLASH_ARTIFACT", raising=False)
    monkeypatch.chdir(tmp_path)
    out = asyncio.run(flash_deployed.handler_of("greeter")({"input": {}}))
    assert "has no build deployed (run flash deploy)" in out["error"]


def test_an_artifact_member_outside_its_folder_is_refused(tmp_path):
    try:
        flash_deployed.unpack(artifact({"../escape.py": "x = 1"}), tmp_path / "app")
    except RuntimeError as e:
        assert "outside its folder" in str(e)
    else:
        raise AssertionError("unpacked a member outside the folder")
    assert not (tmp_path / "escape.py").exists()
