"""
Writes a wheel (PEP 427) of a staged package folder: `write_wheel.py STAGE OUT VERSION PLATFORM README`.

STAGE holds the import package `minipod/`; the wheel gets its .dist-info (METADATA, WHEEL,
entry_points.txt with the `minipod` command and the pytest plugin, RECORD with each file's
sha256) and is written to OUT as minipod-VERSION-py3-none-PLATFORM.whl. Only the standard
library: no setuptools or wheel package is needed, nor a network.
"""
import base64
import hashlib
import os
import stat
import sys
import zipfile
from pathlib import Path

stage, out, version, platform, readme = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4], Path(sys.argv[5])
name = "minipod"
tag = f"py3-none-{platform}"
info = f"{name}-{version}.dist-info"

metadata = f"""Metadata-Version: 2.1
Name: {name}
Version: {version}
Summary: minipod, a local emulator of a serverless GPU job-queue service, with its command line, an Emulator class and a pytest fixture
License: MIT
Requires-Python: >=3.9
Provides-Extra: runpod
Requires-Dist: runpod; extra == "runpod"
Description-Content-Type: text/markdown

{readme.read_text()}"""
wheel = f"""Wheel-Version: 1.0
Generator: minipod scripts/write_wheel.py
Root-Is-Purelib: false
Tag: {tag}
"""
entry_points = f"""[console_scripts]
minipod = minipod._cli:main

[pytest11]
minipod = minipod.pytest_plugin
"""


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


path = out / f"{name}-{version}-{tag}.whl"
records = []
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as whl:

    def add(arcname: str, data: bytes, mode: int = 0o644) -> None:
        entry = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        entry.external_attr = (stat.S_IFREG | mode) << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        whl.writestr(entry, data)
        records.append(f"{arcname},{digest(data)},{len(data)}")

    for file in sorted(p for p in stage.rglob("*") if p.is_file()):
        arcname = file.relative_to(stage).as_posix()
        add(arcname, file.read_bytes(), 0o755 if os.access(file, os.X_OK) else 0o644)
    add(f"{info}/METADATA", metadata.encode())
    add(f"{info}/WHEEL", wheel.encode())
    add(f"{info}/entry_points.txt", entry_points.encode())
    add(f"{info}/top_level.txt", f"{name}\n".encode())
    records.append(f"{info}/RECORD,,")
    whl.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(records) + "\n")
print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
