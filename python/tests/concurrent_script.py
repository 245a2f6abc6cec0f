"""A worker process of minipod's SDK 2.x job loop holding up to RUNPOD_MAX_CONCURRENCY jobs, for test_sdk_concurrency.py."""
import asyncio
from collections import defaultdict

from minipod.runtimes.sdk_concurrency import serve

EVENTS = defaultdict(asyncio.Event)


async def handler(job):
    given = job["input"]
    if "set" in given:
        EVENTS[given["set"]].set()
        return {"set": given["set"]}
    await EVENTS[given["wait"]].wait()  # only a job run beside this one sets it
    return {"waited": given["wait"]}


serve(handler)
