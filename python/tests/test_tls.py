"""The fixture lets the service's SDKs reach minipod's load-balancing endpoints as they call them:
`https://{endpoint_id}.{host of RUNPOD_ENDPOINT_BASE_URL}` (minipod.tls)."""
import asyncio
import json
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request

import pytest

from minipod import Emulator, tls

LB = {"endpoints": [{"id": "ep1", "type": "LOAD_BALANCER", "handler": "echo", "workersMin": 1, "coldStartMs": 0}]}


def _lb_url(emu: Emulator, path: str) -> str:
    """The URL both SDKs make for an endpoint from RUNPOD_ENDPOINT_BASE_URL (`https://{id}.{netloc}{path}`)."""
    netloc = urllib.parse.urlsplit(os.environ["RUNPOD_ENDPOINT_BASE_URL"]).netloc
    assert netloc == urllib.parse.urlsplit(emu.url).netloc
    return f"https://ep1.{netloc}{path}"


def _get(url: str) -> dict:
    req = urllib.request.Request(url, data=b'{"prompt": "hi"}', headers={"Authorization": "Bearer k", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read())


@pytest.mark.minipod(config=LB)
def test_the_fixture_makes_the_sdks_https_url_reach_the_endpoint(minipod: Emulator) -> None:
    assert minipod.ca_file and os.path.isfile(minipod.ca_file)
    answer = _get(_lb_url(minipod, "/generate?x=1"))
    assert answer["method"] == "POST" and answer["path"] == "/generate" and answer["query"] == {"x": "1"} and answer["body"] == {"prompt": "hi"}
    # The bundle trusts the system's authorities too: minipod's is added, none taken away.
    bundle = open(os.environ["SSL_CERT_FILE"]).read()
    assert bundle.endswith(open(minipod.ca_file).read())


@pytest.mark.minipod(config=LB)
def test_aiohttp_as_the_sdk_2_calls_it(minipod: Emulator) -> None:
    aiohttp = pytest.importorskip("aiohttp")

    async def call() -> dict:
        # As runpod/apps/targets.py does: a session of aiohttp's defaults, no ssl= given.
        async with aiohttp.ClientSession() as session:
            async with session.post(_lb_url(minipod, "/generate"), json={"prompt": "hi"}, headers={"Authorization": "Bearer k"}) as res:
                res.raise_for_status()
                return await res.json()

    assert asyncio.run(call())["body"] == {"prompt": "hi"}


@pytest.mark.minipod(config=LB)
def test_httpx_as_runpod_flash_calls_it(minipod: Emulator) -> None:
    httpx = pytest.importorskip("httpx")
    with httpx.Client() as client:
        res = client.post(_lb_url(minipod, "/execute"), json={"prompt": "hi"}, headers={"Authorization": "Bearer k"})
    assert res.status_code == 200 and res.json()["path"] == "/execute"


def test_the_scope_ends_with_everything_as_it_was() -> None:
    before = (socket.getaddrinfo, os.environ.get("SSL_CERT_FILE"))
    emu = Emulator(config=LB).start()
    try:
        with tls.reach(emu) as variables:
            assert socket.getaddrinfo("ep1.127.0.0.1", 443)[0][4][0] == "127.0.0.1"
            assert socket.getaddrinfo("anything.localhost", 443)[0][4][0] == "127.0.0.1"
            assert os.environ["SSL_CERT_FILE"] == variables["SSL_CERT_FILE"]
            # Names of two labels under minipod's host only: a deeper one is not minipod's.
            assert not tls.resolves_here("a.b.127.0.0.1", "127.0.0.1") and not tls.resolves_here("ep1.example.com", "127.0.0.1")
        assert (socket.getaddrinfo, os.environ.get("SSL_CERT_FILE")) == before
        # The bundle stays for this process's life: a worker started meanwhile may still name it.
        assert tls.environ(emu)["SSL_CERT_FILE"] == variables["SSL_CERT_FILE"] and os.path.isfile(variables["SSL_CERT_FILE"])
        # Without the scope the name is not resolved, and minipod's certificate is not trusted.
        with pytest.raises(urllib.error.URLError):
            _get(f"https://ep1.{urllib.parse.urlsplit(emu.url).netloc}/x")
        with pytest.raises(urllib.error.URLError) as refused:
            urllib.request.urlopen(f"https://127.0.0.1:{urllib.parse.urlsplit(emu.url).port}/v2/x/health", timeout=30)
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
    finally:
        emu.stop()
