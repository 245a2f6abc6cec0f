"""A worker as deployed: a script that starts the runtime itself."""
import os

import runpod


def handler(job):
    return {"shout": job["input"]["text"].upper(), "mode": os.environ.get("GREETING_MODE", "plain")}


runpod.serverless.start({"handler": handler})
