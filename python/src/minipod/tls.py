"""
The environment the service's SDKs need to call minipod's load-balancing endpoints the way they
call the service's: `https://{endpoint_id}.{host of RUNPOD_ENDPOINT_BASE_URL}` (the SDK 2.x's
`@app.api` routes, runpod-flash's load-balanced functions), always https.

minipod answers TLS on its own port with a certificate of its local authority; `reach(emulator)`
makes this process trust that authority and resolve `{name}.{minipod's host}` (and
`{name}.localhost`) to 127.0.0.1, and undoes both when it ends::

    with Emulator(config=...) as emu, minipod.tls.reach(emu):
        ...  # runpod.App / runpod_flash calls reach minipod over https

The SDKs are left as they are: only what they run in changes. `SSL_CERT_FILE` (and
`REQUESTS_CA_BUNDLE`) name a bundle of the system's authorities plus minipod's, which httpx,
requests and `ssl.create_default_context()` read when they make a context; aiohttp made its shared
default context when it was imported, so while the scope lasts that one is swapped for one that
trusts the bundle too; `socket.getaddrinfo` answers 127.0.0.1 for the names under minipod's host.
A program started from here (`rp flash dev`) gets the same with `python -m minipod.tls -- CMD`
(see `main`), or the variables of `environ(emulator)` and an /etc/hosts line per endpoint.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import ssl
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

#: Names that resolve to loopback under any of these parents (`{endpoint_id}.localhost`).
_LOOPBACK_PARENTS = ("localhost",)


def system_bundle() -> Optional[str]:
    """The file of the system's trusted authorities OpenSSL uses here, or certifi's, or None."""
    paths = ssl.get_default_verify_paths()
    for candidate in (os.environ.get("SSL_CERT_FILE"), paths.cafile, paths.openssl_cafile, "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and os.path.isfile(candidate):
            return candidate
    try:
        import certifi  # type: ignore[import-not-found]

        return str(certifi.where())
    except ImportError:
        return None


def bundle(ca_file: str, folder: Optional[str] = None) -> str:
    """A file of the system's authorities followed by minipod's, for `SSL_CERT_FILE`; written in `folder` (a temp one by default)."""
    parts: List[str] = []
    system = system_bundle()
    if system is not None:
        parts.append(Path(system).read_text(encoding="utf-8", errors="replace").rstrip("\n") + "\n")
    parts.append(Path(ca_file).read_text(encoding="utf-8"))
    target = Path(folder or tempfile.mkdtemp(prefix="minipod-ca-")) / "ca-bundle.pem"
    target.write_text("".join(parts), encoding="utf-8")
    return str(target)


def _parents(host: str) -> List[str]:
    host = host.strip("[]").lower()
    return [host, *(p for p in _LOOPBACK_PARENTS if p != host)]


def resolves_here(name: str, host: str) -> bool:
    """Whether `name` is `{label}.{host}` or `{label}.localhost`: a name of minipod's, resolved to 127.0.0.1."""
    name = name.rstrip(".").lower()
    return any(name.endswith("." + parent) and "." not in name[: -len(parent) - 1] for parent in _parents(host))


def _resolver(original: Callable[..., Any], host: str) -> Callable[..., Any]:
    def getaddrinfo(name: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        text = name.decode("idna") if isinstance(name, bytes) else name
        if isinstance(text, str) and resolves_here(text, host):
            return original("127.0.0.1", port, *args, **kwargs)
        return original(name, port, *args, **kwargs)

    getaddrinfo.__wrapped__ = original  # type: ignore[attr-defined]
    return getaddrinfo


def environ(emulator: Any) -> Dict[str, str]:
    """
    The variables a process started from here needs to trust minipod (`python -m minipod.tls` reads
    MINIPOD_RESOLVE_HOST). The bundle is made once per Emulator and kept while this process runs,
    so a worker started during a test and kept after it never names a file that is gone.
    """
    ca = emulator.ca_file
    if ca is None:
        raise RuntimeError("this minipod serves no TLS (started with --tls off)")
    path = _BUNDLES.get(ca)
    if path is None or not os.path.isfile(path):
        folder = tempfile.mkdtemp(prefix="minipod-ca-")
        atexit.register(shutil.rmtree, folder, True)
        path = _BUNDLES[ca] = bundle(ca, folder)
    return {"SSL_CERT_FILE": path, "REQUESTS_CA_BUNDLE": path, "MINIPOD_RESOLVE_HOST": emulator.host}


#: The bundle made for each authority's certificate file, in this process.
_BUNDLES: Dict[str, str] = {}


@contextlib.contextmanager
def reach(emulator: Any) -> Iterator[Dict[str, str]]:
    """For the scope: this process trusts minipod's authority and resolves its names (see the module); undone at the end."""
    variables = environ(emulator)
    saved_env = {k: os.environ.get(k) for k in variables}
    original = socket.getaddrinfo
    connector = sys.modules.get("aiohttp.connector")
    saved_context = getattr(connector, "_SSL_CONTEXT_VERIFIED", None) if connector is not None else None
    os.environ.update(variables)
    socket.getaddrinfo = _resolver(original, emulator.host)
    if saved_context is not None:
        connector._SSL_CONTEXT_VERIFIED = _like(saved_context, variables["SSL_CERT_FILE"])  # type: ignore[union-attr]
    try:
        yield variables
    finally:
        socket.getaddrinfo = original
        if saved_context is not None:
            connector._SSL_CONTEXT_VERIFIED = saved_context  # type: ignore[union-attr]
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _like(context: ssl.SSLContext, cafile: str) -> ssl.SSLContext:
    """A default context as aiohttp makes its own, trusting `cafile`."""
    fresh = ssl.create_default_context(cafile=cafile)
    fresh.options = context.options
    fresh.check_hostname = context.check_hostname
    fresh.verify_mode = context.verify_mode
    return fresh


def main(argv: Optional[Sequence[str]] = None) -> None:
    """
    `python -m minipod.tls -- CMD [ARGS...]`: runs a Python program's command (a console script such
    as `rp`, or `script.py`) in this interpreter with minipod's names resolved, for programs the
    test starts itself; the trust comes from SSL_CERT_FILE in the environment (`environ(emu)`).
    MINIPOD_RESOLVE_HOST names minipod's host (127.0.0.1 by default).
    """
    import runpy

    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: python -m minipod.tls -- CMD [ARGS...]")
    socket.getaddrinfo = _resolver(socket.getaddrinfo, os.environ.get("MINIPOD_RESOLVE_HOST") or "127.0.0.1")
    program = args[0]
    path = program if os.path.sep in program or program.endswith(".py") else shutil.which(program)
    if path is None:
        sys.exit(f"minipod.tls: {program}: command not found")
    sys.argv = [path, *args[1:]]
    runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()
