/**
 * Loaded into a minipod process by the bench (`node --import bench/lib/process-probe.mjs`, with
 * MINIPOD_PROBE_FILE set): every MINIPOD_PROBE_MS (default 250) it appends one JSON line to that
 * file with `process.memoryUsage()` and the longest event-loop delay since the line before (from
 * `perf_hooks.monitorEventLoopDelay`, 5 ms resolution). It changes nothing in minipod; without the
 * variable it does nothing.
 */
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.MINIPOD_PROBE_FILE;
if (file) {
  const every = Number(process.env.MINIPOD_PROBE_MS ?? 250);
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const started = performance.now();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const line = {
      t: Math.round(performance.now() - started),
      wall: Date.now(),
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      // Nanoseconds to ms; the histogram's max is the longest a 5 ms timer waited past its time.
      loopMaxMs: Math.round(loop.max / 1e4) / 100,
    };
    loop.reset();
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, every);
  timer.unref();
}
