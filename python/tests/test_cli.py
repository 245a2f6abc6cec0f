"""The `minipod` command the package installs: minipod's command line, found as the Emulator finds it."""
import subprocess
import sys
from pathlib import Path


def test_the_minipod_command_runs_the_command_line():
    command = Path(sys.executable).parent / "minipod"
    assert command.is_file(), "pip did not install the minipod command beside this Python"
    version = subprocess.run([str(command), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip().split(".")[0].isdigit()
    usage = subprocess.run([str(command), "worker", "--help"], capture_output=True, text=True, timeout=60)
    assert usage.stdout.startswith("Usage: minipod worker ")


def test_without_node_it_says_what_to_install():
    command = Path(sys.executable).parent / "minipod"
    result = subprocess.run([str(command), "--help"], capture_output=True, text=True, timeout=60, env={"PATH": "/nonexistent"})
    assert result.returncode == 2
    assert "minipod: minipod runs on Node.js 20 or later, and no `node` is on PATH. Install Node.js" in result.stderr
