import { afterEach, describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/domain/simulated-workers.js";
import { inProcess } from "../support/in-process.js";

// One job's path from /run to COMPLETED reads top to bottom in the scheduler: it asks its pools
// for a decision once per pump, and a pool calls back only to start a job it matched or when a
// cold start ends. Counted here: every call into a pool from outside it (its methods and getters),
// and every call a pool makes to a function it was given (the scheduler's callbacks).

const undo: Array<() => void> = [];
afterEach(() => {
  while (undo.length) undo.pop()!();
});

function countCalls(): { calls: string[] } {
  const seen = { calls: [] as string[] };
  let depth = 0;
  const proto = WorkerPool.prototype as unknown as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === "constructor") continue;
    const d = Object.getOwnPropertyDescriptor(proto, name)!;
    const wrap =
      <F extends (...a: never[]) => unknown>(f: F): F =>
      function (this: unknown, ...args: never[]) {
        // The caller's file: the pool's own timers (a cold start's end) call it from inside.
        const caller = /\/src\/([\w/-]+\.ts)/.exec(new Error().stack?.split("\n")[2] ?? "")?.[1];
        if (depth === 0 && caller !== "domain/simulated-workers.ts") seen.calls.push(`${caller} → pool.${name}`);
        depth++;
        try {
          return f.apply(this, args);
        } finally {
          depth--;
        }
      } as F;
    const wrapped: PropertyDescriptor = { ...d };
    if (d.value instanceof Function) wrapped.value = wrap(d.value as never);
    if (d.get) wrapped.get = wrap(d.get as never);
    Object.defineProperty(proto, name, wrapped);
    undo.push(() => Object.defineProperty(proto, name, d));
  }
  return seen;
}

/** Wraps the callbacks a pool was given (functions of its own fields, one level down too). */
function countCallbacks(pool: object, seen: { calls: string[] }, skip: string[]): void {
  const fields = pool as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    if (skip.includes(key)) continue;
    if (typeof value === "function") {
      fields[key] = (...args: unknown[]) => {
        seen.calls.push(`pool → ${key}`);
        return (value as (...a: unknown[]) => unknown)(...args);
      };
    } else if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
      countCallbacks(value, seen, skip);
    }
  }
}

describe("one job's path through the scheduler and its pool", () => {
  it("crosses between the scheduler and the simulated-worker pool at most 9 times, cold start included", async () => {
    const seen = countCalls();
    const e = await inProcess({ config: { clock: { mode: "manual" }, endpoints: [{ id: "q", handler: "echo", workersMin: 0, coldStartMs: 1000 }] } });
    try {
      // The worker ids, the worker observer and the clock are no part of the scheduler.
      for (const pool of [e.core.scheduler.pool("q")!, e.core.scheduler.batchPool("q")!]) countCallbacks(pool, seen, ["newId", "observer", "clock", "spec", "workers"]);
      seen.calls.length = 0;
      const run = await e.post("/v2/q/run", { input: { n: 1 } });
      expect(run.status).toBe(200);
      const done = await e.core.waitForJob("q", run.body.id, "COMPLETED", 5000);
      expect(done.status).toBe("COMPLETED");
      // Before the pool's decisions were one call (dispatch), the same job crossed 27 times.
      expect(seen.calls.length, seen.calls.join("\n")).toBeLessThanOrEqual(9);
    } finally {
      e.close();
    }
  });
});
