"""A worker process of minipod's own job loop (minipod.runtimes.job_loop), for test_job_loop.py."""
import asyncio

from minipod.runtimes.job_loop import serve

RELEASE = asyncio.Event()


async def handler(job):
    what = job["input"].get("do")
    if what == "fail":
        return {"success": False, "error": "it went wrong", "stdout": "x"}
    if what == "raise":
        raise ValueError("no luck")
    if what == "hold":
        await RELEASE.wait()  # never set: only a stop ends it
    return {"echo": job["input"].get("text")}


serve(handler)
