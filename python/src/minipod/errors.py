"""The one exception the package raises."""
from typing import Optional


class MinipodError(Exception):
    """minipod could not be started or reached, or refused a control request: the message says why and what to do."""

    def __init__(self, message: str, *, status: Optional[int] = None) -> None:
        super().__init__(message)
        #: The HTTP status of a refused control request (404 for an unknown snapshot), else None.
        self.status = status
