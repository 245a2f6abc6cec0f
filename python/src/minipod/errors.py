"""The one exception the package raises."""


class MinipodError(Exception):
    """minipod could not be started or reached, or refused a control request: the message says why and what to do."""
