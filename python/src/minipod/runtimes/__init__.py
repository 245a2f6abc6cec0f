"""
minipod's own function runtimes: what the service's runtime images run on a worker, written for
minipod from the contract those images follow, run in the user's own Python environment.

- `minipod.runtimes.flash`: the worker of the `runpod/flash*` images (runpod-flash's `@Endpoint`
  functions and classes), a queue worker of the service's worker runtime (`runpod.serverless`).
"""
