"""Finding Node.js and minipod's command line: what starts the emulator and its workers."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import List, Mapping, Optional

from . import _origin
from .errors import MinipodError

NODE_MAJOR_MIN = 20

_NODE_MISSING = (
    "minipod runs on Node.js {min} or later, and {what}. Install Node.js (https://nodejs.org, or "
    "your system's package, e.g. `apt-get install nodejs`), put `node` on PATH, or set MINIPOD_NODE "
    "to its path. Python itself needs nothing more than this package and `runpod`."
)


def find_node(node: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> str:
    """The path of a Node.js of version 20 or later: `node`, else MINIPOD_NODE, else `node` on PATH."""
    env = os.environ if env is None else env
    given = node or env.get("MINIPOD_NODE")
    path = shutil.which(given, path=env.get("PATH")) if given else shutil.which("node", path=env.get("PATH"))
    if path is None:
        what = f"{given!r} was not found" if given else "no `node` is on PATH"
        raise MinipodError(_NODE_MISSING.format(min=NODE_MAJOR_MIN, what=what))
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError as e:
        raise MinipodError(_NODE_MISSING.format(min=NODE_MAJOR_MIN, what=f"{path} did not run ({e})")) from e
    match = re.match(r"v(\d+)\.", out)
    if not match or int(match.group(1)) < NODE_MAJOR_MIN:
        raise MinipodError(_NODE_MISSING.format(min=NODE_MAJOR_MIN, what=f"{path} is {out or 'of an unknown version'}"))
    return path


#: minipod itself, in a copy of the package installed from its wheel (`npm run build:wheel`).
BUNDLED = Path(__file__).resolve().parent / "_node"


def bundled_cli(node: str) -> Optional[List[str]]:
    """The command of the CLI this package carries (a wheel's), after a check that `node` can run it; None when it carries none."""
    script = BUNDLED / "bin" / "minipod.js"
    if not script.is_file():
        return None
    check_binding(node)
    return [node, str(script)]


def check_binding(node: str) -> None:
    """Raises MinipodError, saying what to install, when the SQLite binding the package carries was built for another Node ABI than `node`'s."""
    try:
        shipped = json.loads((BUNDLED / "binding.json").read_text())
    except (OSError, ValueError):
        return
    try:
        out = subprocess.run([node, "-p", "process.versions.modules + ' ' + process.version + ' ' + process.platform + '-' + process.arch"], capture_output=True, text=True, timeout=30).stdout.split()
    except OSError as e:
        raise MinipodError(f"{node} did not run: {e}") from e
    abi, version, platform = (out + ["?", "?", "?"])[:3]
    built = shipped.get("bindings", [])
    here = f"{shipped.get('platform')}-{shipped.get('arch')}"
    if platform == here and any(b.get("abi") == abi for b in built):
        return
    nodes = " or ".join(f"Node.js {b.get('node')} (ABI {b.get('abi')})" for b in built)
    raise MinipodError(
        f"this copy of minipod carries its SQLite binding (better-sqlite3) built for {nodes} on {here}, "
        f"and {node} is Node.js {version} (ABI {abi}) on {platform}: install Node.js {' or '.join(str(b.get('node')) for b in built)} "
        f"(https://nodejs.org/en/download, or your system's package) and put it first on PATH, or set MINIPOD_NODE to it; "
        f"or install minipod with npm (`npm install minipod`), which builds the binding for your Node"
    )


def _clone_candidates() -> List[Path]:
    """Clones this copy may belong to: the one recorded at install, then the source tree it is in."""
    found: List[Path] = []
    if _origin.CLONE:
        found.append(Path(_origin.CLONE))
    here = Path(__file__).resolve()
    # python/src/minipod/_launch.py in a clone (an editable install, or run from the source tree)
    if len(here.parents) > 3:
        found.append(here.parents[3])
    return found


def find_cli(node: str, cli: Optional[str] = None, env: Optional[Mapping[str, str]] = None, cwd: Optional[Path] = None) -> List[str]:
    """
    The command that runs minipod's CLI: `cli` or MINIPOD_CLI (a `bin/minipod.js`, or an executable);
    else the CLI this package carries (installed from its wheel); else the clone this package was installed from; else a minipod installed with npm in the project
    (`node_modules/minipod`, looked for from `cwd` upwards); else `npx --no-install minipod`.
    """
    env = os.environ if env is None else env
    given = cli or env.get("MINIPOD_CLI")
    if given:
        path = Path(given).expanduser()
        if not path.exists():
            raise MinipodError(f"MINIPOD_CLI (or cli=) names {given}, which does not exist: give the path of bin/minipod.js in a clone of minipod (after `npm ci` there)")
        return [node, str(path)] if path.suffix in (".js", ".mjs", ".cjs") else [str(path)]
    bundled = bundled_cli(node)
    if bundled is not None:
        return bundled
    looked: List[str] = []
    for clone in _clone_candidates():
        script = clone / "bin" / "minipod.js"
        if script.is_file():
            if not (clone / "dist" / "minipod.js").is_file():
                raise MinipodError(f"minipod's clone at {clone} is not built: run `npm ci` there (it builds dist/), then try again")
            return [node, str(script)]
        looked.append(str(script))
    start = (cwd or Path.cwd()).resolve()
    for folder in [start, *start.parents]:
        script = folder / "node_modules" / "minipod" / "bin" / "minipod.js"
        if script.is_file():
            return [node, str(script)]
    looked.append(f"node_modules/minipod from {start} upwards")
    npx = shutil.which("npx", path=env.get("PATH"))
    if npx:
        return [npx, "--no-install", "minipod"]
    raise MinipodError(
        "cannot find minipod's command line: looked at " + ", ".join(looked) + ", and no `npx` is on PATH. "
        "Install this package from a clone of minipod (`pip install ./python` there, after `npm ci`), "
        "set MINIPOD_CLI to the path of a clone's bin/minipod.js, or install minipod in the project with npm."
    )
