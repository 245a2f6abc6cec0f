"""What the JavaScript Emulator has, from Python: webhooks, snapshots, endpoints, scaled workers, per-test configuration."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from minipod import MinipodError

runpod = pytest.importorskip("runpod", reason="the service's library runpod is not installed: pip install runpod")

LOAD_BALANCED = {"endpoints": [{"id": "lb", "type": "LOAD_BALANCER", "handler": "external", "workersMin": 0, "workersMax": 2}]}
ONE_ENDPOINT = {"endpoints": [{"id": "only", "handler": "echo", "workersMin": 1, "coldStartMs": 0}]}


def eventually(probe, seconds=30.0):
    """What `probe` answers once it answers something truthy; bounded."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


@pytest.fixture
def receiver():
    """A webhook receiver on a free port: the URL, and the bodies it got."""
    got = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            got.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", got
    server.shutdown()


def test_webhooks_of_a_job(minipod, receiver):
    url, got = receiver
    job = runpod.Endpoint("echo").run({"input": {"n": 1}, "webhook": url})
    minipod.wait_for_job("echo", job.job_id)
    deliveries = eventually(lambda: minipod.webhooks(job.job_id))
    assert [(d["jobId"], d["url"], d["attempt"], d["status"]) for d in deliveries] == [(job.job_id, url, 1, 200)]
    assert got[0]["id"] == job.job_id and got[0]["output"] == {"n": 1}
    assert minipod.webhooks("no-such-job") == []


def test_endpoints_with_their_jobs(minipod):
    runpod.Endpoint("parked").run({"n": 1})
    endpoints = {e["id"]: e for e in minipod.endpoints()}
    assert {"echo", "work", "parked", "py"} <= set(endpoints)
    assert endpoints["parked"]["jobs"]["IN_QUEUE"] == 1 and endpoints["parked"]["workersMax"] == 0


def test_snapshot_restore_and_delete(minipod):
    parked = runpod.Endpoint("parked")
    first = parked.run({"n": 1})
    saved = minipod.snapshot("one-waiting")
    assert saved["name"] == "one-waiting" and saved["bytes"] > 0
    parked.run({"n": 2})
    assert parked.health()["jobs"]["inQueue"] == 2
    assert minipod.restore("one-waiting")["name"] == "one-waiting"
    assert parked.health()["jobs"]["inQueue"] == 1
    assert first.status() == "IN_QUEUE"
    assert [s["name"] for s in minipod.snapshots()] == ["one-waiting"]
    assert minipod.delete_snapshot("one-waiting") is True
    assert minipod.delete_snapshot("one-waiting") is False
    with pytest.raises(MinipodError, match="404"):
        minipod.restore("one-waiting")


def test_requests_filtered_by_the_worker_protocol(minipod):
    minipod.worker("handlers:greet", endpoint="py")
    assert runpod.Endpoint("py").run_sync({"name": "x"}, timeout=60)["greeting"] == "hello, x"
    worker_ops = {r["operation"] for r in minipod.requests(worker="only")["requests"]}
    client_ops = {r["operation"] for r in minipod.requests(worker="exclude")["requests"]}
    assert "job-done" in worker_ops and "runsync" not in worker_ops
    assert "runsync" in client_ops and "job-done" not in client_ops


@pytest.mark.minipod(config=LOAD_BALANCED, clock="real")
def test_scaled_workers_serve_a_load_balancing_endpoint(minipod):
    minipod.scale_workers(script=Path(__file__).with_name("lb_server.py"), endpoint="lb")
    res = requests.get(f"{minipod.url}/lb/lb/hello", headers={"authorization": "any-key"}, timeout=60)
    assert res.status_code == 200 and res.json()["path"] == "/hello"
    with pytest.raises(MinipodError, match='"type": "LOAD_BALANCER" and "handler": "external"'):
        minipod.scale_workers(["true"], endpoint="nope")


@pytest.mark.minipod(config=ONE_ENDPOINT, clock="manual")
def test_a_marker_gives_the_test_its_own_configuration(minipod):
    assert [e["id"] for e in minipod.endpoints()] == ["only"]
    assert minipod.clock()["mode"] == "manual"
    assert runpod.endpoint_url_base == minipod.v2_url
    assert runpod.Endpoint("only").run_sync({"a": 1}, timeout=30) == {"a": 1}
    test_a_marker_gives_the_test_its_own_configuration.url = minipod.url


@pytest.mark.minipod(config=ONE_ENDPOINT, clock="manual")
def test_the_same_marker_reuses_its_minipod_reset(minipod):
    assert minipod.url == test_a_marker_gives_the_test_its_own_configuration.url
    assert minipod.requests()["count"] == 0


def test_unmarked_tests_keep_the_session_minipod(minipod):
    assert "echo" in [e["id"] for e in minipod.endpoints()]


def test_a_factory_starts_one_for_the_test(minipod_factory):
    emu = minipod_factory(config=ONE_ENDPOINT, clock="manual")
    assert [e["id"] for e in emu.endpoints()] == ["only"] and emu.clock()["mode"] == "manual"
    assert runpod.endpoint_url_base == emu.v2_url
    with pytest.raises(MinipodError, match='unknown setting \'clok\' of minipod: did you mean "clock"'):
        minipod_factory(clok="manual")
