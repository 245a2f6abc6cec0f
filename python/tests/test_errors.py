"""What a missing Node.js, a missing CLI or a bad config says."""
import pytest

from minipod import Emulator, MinipodError


def test_no_node_on_path_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("MINIPOD_NODE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MinipodError, match=r"Node.js 20 or later, and no `node` is on PATH.*MINIPOD_NODE"):
        Emulator().start()


def test_a_node_too_old_is_named(tmp_path):
    old = tmp_path / "node"
    old.write_text("#!/bin/sh\necho v18.19.0\n")
    old.chmod(0o755)
    with pytest.raises(MinipodError, match=r"is v18.19.0"):
        Emulator(node=str(old)).start()


def test_a_missing_cli_is_named(monkeypatch):
    with pytest.raises(MinipodError, match=r"MINIPOD_CLI \(or cli=\) names /nowhere/minipod.js, which does not exist"):
        Emulator(cli="/nowhere/minipod.js").start()


def test_a_bad_config_stops_the_start_with_minipods_message():
    with pytest.raises(MinipodError, match=r"minipod did not start[\s\S]*workersMax"):
        Emulator(config={"endpoints": [{"id": "x", "workersMax": -1}]}).start()
