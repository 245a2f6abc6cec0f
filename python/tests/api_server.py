"""minipod's api runtime's HTTP server (minipod.runtimes.api) on 127.0.0.1 port 0, in a thread, for the tests."""
import contextlib
import threading
from http.server import ThreadingHTTPServer
from typing import Any, Callable, Iterator

from minipod.runtimes import api


@contextlib.contextmanager
def api_server(dispatch: Callable[..., Any]) -> Iterator[int]:
    """Serves `dispatch` (api._dispatch: a live worker; api.dispatch_deployed: a deployed one); yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), api._Handler)
    server.daemon_threads = True
    server.dispatch = dispatch  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
