"""
minipod's own function runtimes: what the service's runtime images run on a worker, written for
minipod from the contract those images follow, run in the user's own Python environment.

- `minipod.runtimes.flash`: the worker of the `runpod/flash*` images (runpod-flash's `@Endpoint`
  functions and classes), a queue worker of minipod's own job loop.
- `minipod.runtimes.job_loop`: that job loop, the worker protocol in the standard library alone
  (held job-take, job-done, heartbeat, stop channel, SIGTERM).
- `minipod.runtimes.queue`: the worker of the SDK 2.x's `runpod/queue*` images in live mode
  (`rp flash dev`'s calls of `@app.queue` functions), on the same job loop.
- `minipod.runtimes.api`: the worker of the SDK 2.x's `runpod/api*` images in live mode, an HTTP
  server serving the `@app.api` class of the module source synced to it.
- `minipod.runtimes.sdk_deployed`: the deployed path of the queue and api workers (`rp flash
  deploy`'s endpoints, `FLASH_RESOURCE_NAME` set): the build located as the service's bootstrap
  locates it, or unpacked as `minipod.runtimes.flash_deployed` unpacks runpod-flash's, the
  resource's function, class or ASGI app served.
- `minipod.runtimes.sdk_concurrency`: the SDK 2.x queue workers' `RUNPOD_MAX_CONCURRENCY`, up to
  N jobs held at once, as tasks of the worker's event loop.
- `minipod.runtimes.sdk_asgi`: an `@app.api` ASGI app factory's app, served on the api worker's
  own HTTP/1.1 server.
- `minipod.runtimes.flash_lb`: the worker of runpod-flash's `runpod/flash-lb*` images in live
  mode, an HTTP server whose `POST /execute` runs a FunctionRequest.
"""
