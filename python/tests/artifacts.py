"""A build artifact as the service's deploy uploads one: a gzipped tar of the given files."""
import io
import tarfile
from typing import Dict


def artifact(files: Dict[str, str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()
