"""Build hook: an installed copy remembers the clone it was built from, to find minipod's CLI there."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithOrigin(build_py):
    """Writes minipod/_origin.py with the clone's path when the package is built inside one."""

    def run(self) -> None:
        super().run()
        clone = Path(__file__).resolve().parent.parent
        if (clone / "bin" / "minipod.js").is_file():
            target = Path(self.build_lib) / "minipod" / "_origin.py"
            target.write_text(f'"""Where this copy was built: a clone of minipod."""\nCLONE = {str(clone)!r}\n')


setup(cmdclass={"build_py": BuildWithOrigin})
