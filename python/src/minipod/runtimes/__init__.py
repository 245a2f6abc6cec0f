"""
minipod's own function runtimes: what the service's runtime images run on a worker, written for
minipod from the contract those images follow, run in the user's own Python environment.

- `minipod.runtimes.flash`: the worker of the `runpod/flash*` images (runpod-flash's `@Endpoint`
  functions and classes), a queue worker of the service's worker runtime (`runpod.serverless`).
- `minipod.runtimes.queue`: the worker of the SDK 2.x's `runpod/queue*` images in live mode
  (`rp flash dev`'s calls of `@app.queue` functions).
"""
