"""Where this copy was built: a clone of minipod (written by setup.py at install; None in the source tree)."""
from typing import Optional

CLONE: Optional[str] = None
