"""The benchmark's worker: the service's worker runtime (unchanged) with a handler that returns its
input. BENCH_CONCURRENCY sets a concurrency_modifier."""
import os

import runpod


def handler(job):
    return {"echo": job["input"]}


config = {"handler": handler}
if os.environ.get("BENCH_CONCURRENCY"):
    concurrency = int(os.environ["BENCH_CONCURRENCY"])
    config["concurrency_modifier"] = lambda current: concurrency

runpod.serverless.start(config)
