"""The `minipod` command this package installs: minipod's CLI (the one a wheel carries), run on the Node.js on PATH."""
from __future__ import annotations

import os
import sys
from typing import List, Optional

from ._launch import find_cli, find_node
from .errors import MinipodError


def main(argv: Optional[List[str]] = None) -> None:
    """Runs `minipod ARGS...` (`minipod`, `minipod worker`, `minipod hub-test`...): Node replaces this process."""
    args = sys.argv[1:] if argv is None else argv
    try:
        node = find_node()
        # The CLI the wheel carries; from a source install, the clone's (see find_cli).
        command = find_cli(node)
    except MinipodError as e:
        sys.stderr.write(f"minipod: {e}\n")
        sys.exit(2)
    sys.stdout.flush()
    os.execv(command[0], [*command, *args])


if __name__ == "__main__":
    main()
