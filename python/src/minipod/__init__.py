"""
minipod from Python: start minipod (a local emulator of a serverless GPU job-queue service) in a
test or a script, drive its virtual clock, faults, journal and reset, and run handlers under the
service's own worker runtime. The pytest fixture `minipod` comes with the package.
"""
from .emulator import Emulator, Faults
from .errors import MinipodError
from .worker import Worker

__all__ = ["Emulator", "Faults", "MinipodError", "Worker"]
__version__ = "0.1.0"
