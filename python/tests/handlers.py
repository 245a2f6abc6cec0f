"""Handlers as a worker author writes them, run by the tests under the service's worker runtime."""
import os
import time


def greet(job):
    return {"greeting": f"hello, {job['input']['name']}", "pid": os.getpid()}


def count(job):
    for i in range(job["input"]["n"]):
        yield {"i": i}



def nap(job):
    """Real work: the process is busy for `seconds` of wall time."""
    time.sleep(job["input"]["seconds"])
    return {"slept": job["input"]["seconds"]}
